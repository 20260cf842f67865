// A pixel of a frame in any input format (stages.h convert_to_gray and
// convert_to_rgb) on the GPU: its matching intensity and its colour, read
// where it lies. Shared by the conversion (convert.cu) and the
// rectification (rectify.cu), which reads the colours it resamples.
#pragma once

#include <cstdint>

#include "cuda_util.h"
#include "remap_math.h"
#include "stereo.h"
#include "stereo_math.h"

namespace cs::cuda {

// Calls M(F) for every input format the engine reads (a dispatch from the
// run-time format to a kernel's template, kernel_call.h).
#define CS_FOR_EACH_PIXEL_FORMAT(M) \
  M(RGBA) M(BGRA) M(RGBx) M(BGRx) M(xRGB) M(xBGR) M(ARGB) M(ABGR) M(RGB) M(BGR) M(GRAY8) M(I420) M(NV12) M(YUY2) M(UYVY)

// Byte offsets of R, G, B within a packed pixel, and its size.
struct PackedLayout {
  int r, g, b, bytes;
};

__host__ __device__ constexpr PackedLayout packed_layout(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGBA: return {0, 1, 2, 4};
    case PixelFormat::BGRA: return {2, 1, 0, 4};
    case PixelFormat::RGBx: return {0, 1, 2, 4};
    case PixelFormat::BGRx: return {2, 1, 0, 4};
    case PixelFormat::xRGB: return {1, 2, 3, 4};
    case PixelFormat::xBGR: return {3, 2, 1, 4};
    case PixelFormat::ARGB: return {1, 2, 3, 4};
    case PixelFormat::ABGR: return {3, 2, 1, 4};
    case PixelFormat::RGB: return {0, 1, 2, 3};
    case PixelFormat::BGR: return {2, 1, 0, 3};
    default: return {0, 0, 0, 1};
  }
}

// Byte offsets within a YUY2/UYVY macropixel (stages.h convert_to_rgb): the
// first Y (the second is two bytes on), U and V.
struct MacropixelLayout {
  int y0, u, v;
};

__host__ __device__ constexpr MacropixelLayout macropixel_layout(PixelFormat f) {
  return f == PixelFormat::UYVY ? MacropixelLayout{1, 0, 2} : MacropixelLayout{0, 1, 3};
}

__device__ __forceinline__ uint32_t pack_rgb(int r, int g, int b) {
  return static_cast<uint32_t>(r) | (static_cast<uint32_t>(g) << 8) | (static_cast<uint32_t>(b) << 16);
}

// The matching intensity of pixel (x, y) of `in` and, with kRgb, its colour.
template <PixelFormat F, bool kRgb>
__device__ __forceinline__ uint8_t convert_one(const FrameView& in, bool words, int x, int y, uint32_t* rgb) {
  if (F == PixelFormat::GRAY8) {
    const int v = in.plane[0][y * in.pitch[0] + x];
    if (kRgb) *rgb = pack_rgb(v, v, v);
    return static_cast<uint8_t>(v);
  }
  if (F == PixelFormat::I420 || F == PixelFormat::NV12) {
    // Matching uses Y as is; the colour of pixel (x, y) takes the chroma
    // sample at (x / 2, y / 2).
    const int luma = in.plane[0][y * in.pitch[0] + x];
    if (kRgb) {
      int u, v;
      if (F == PixelFormat::NV12) {
        const uint8_t* uv = in.plane[1] + (y / 2) * in.pitch[1] + (x / 2) * 2;
        u = uv[0];
        v = uv[1];
      } else {
        u = in.plane[1][(y / 2) * in.pitch[1] + x / 2];
        v = in.plane[2][(y / 2) * in.pitch[2] + x / 2];
      }
      uint8_t c[3];
      rgb_from_yuv(luma, u, v, c);
      *rgb = pack_rgb(c[0], c[1], c[2]);
    }
    return static_cast<uint8_t>(luma);
  }
  if (F == PixelFormat::YUY2 || F == PixelFormat::UYVY) {
    constexpr MacropixelLayout M = macropixel_layout(F);
    const uint8_t* row = in.plane[0] + y * in.pitch[0];
    const int luma = row[2 * x + M.y0];
    if (kRgb) {
      const uint8_t* macropixel = row + 4 * (x / 2);
      uint8_t c[3];
      rgb_from_yuv(luma, macropixel[M.u], macropixel[M.v], c);
      *rgb = pack_rgb(c[0], c[1], c[2]);
    }
    return static_cast<uint8_t>(luma);
  }
  constexpr PackedLayout L = packed_layout(F);
  const uint8_t* p = in.plane[0] + y * in.pitch[0] + x * L.bytes;
  int r, g, b;
  if (L.bytes == 4 && words) {
    const uint32_t px = *reinterpret_cast<const uint32_t*>(p);
    r = (px >> (8 * L.r)) & 255;
    g = (px >> (8 * L.g)) & 255;
    b = (px >> (8 * L.b)) & 255;
  } else {
    r = p[L.r];
    g = p[L.g];
    b = p[L.b];
  }
  if (kRgb) *rgb = pack_rgb(r, g, b);
  return luma_from_rgb(r, g, b);
}

// Stage 0 (stages.h rectify_view) at pixel (x, y) of the rectified view:
// the colours of the four source pixels of `in` around map(x, y) (as
// convert_one reads them) blended as remap_rgba_pixel says; R,G,B,0 packed.
template <PixelFormat F>
__device__ __forceinline__ uint32_t rectified_rgb(const FrameView& in, bool words,
                                                  const ImageView<const RemapPoint>& map, int x, int y) {
  const auto at = [&](int sx, int sy) {
    uint32_t rgb = 0;
    convert_one<F, true>(in, words, sx, sy, &rgb);
    return rgb;
  };
  return remap_rgba_pixel(drow(map, y)[x], in.width, in.height, at);
}

// The matching intensity of a colour packed as pack_rgb packs it.
__device__ __forceinline__ uint8_t luma_of(uint32_t rgb) {
  return luma_from_rgb(rgb & 255u, rgb >> 8 & 255u, rgb >> 16 & 255u);
}

}  // namespace cs::cuda
