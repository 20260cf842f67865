#include "convert.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

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

__device__ __forceinline__ uint32_t pack_rgb(int r, int g, int b) {
  return static_cast<uint32_t>(r) | (static_cast<uint32_t>(g) << 8) | (static_cast<uint32_t>(b) << 16);
}

template <PixelFormat F, bool kRgb>
__global__ void convert_packed(FrameView in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  constexpr PackedLayout L = packed_layout(F);
  const uint8_t* p = in.plane[0] + y * in.pitch[0] + x * L.bytes;
  const int r = p[L.r], g = p[L.g], b = p[L.b];
  drow(gray, y)[x] = luma_from_rgb(r, g, b);
  if (kRgb) drow(rgb, y)[x] = pack_rgb(r, g, b);
}

template <bool kRgb>
__global__ void convert_gray8(FrameView in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const int v = in.plane[0][y * in.pitch[0] + x];
  drow(gray, y)[x] = static_cast<uint8_t>(v);
  if (kRgb) drow(rgb, y)[x] = pack_rgb(v, v, v);
}

// I420 (kNv12 = false) and NV12: matching uses Y as is; the colour of pixel
// (x, y) takes the chroma sample at (x / 2, y / 2).
template <bool kNv12, bool kRgb>
__global__ void convert_yuv(FrameView in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const int luma = in.plane[0][y * in.pitch[0] + x];
  drow(gray, y)[x] = static_cast<uint8_t>(luma);
  if (!kRgb) return;
  int u, v;
  if (kNv12) {
    const uint8_t* uv = in.plane[1] + (y / 2) * in.pitch[1] + (x / 2) * 2;
    u = uv[0];
    v = uv[1];
  } else {
    u = in.plane[1][(y / 2) * in.pitch[1] + x / 2];
    v = in.plane[2][(y / 2) * in.pitch[2] + x / 2];
  }
  uint8_t c[3];
  rgb_from_yuv(luma, u, v, c);
  drow(rgb, y)[x] = pack_rgb(c[0], c[1], c[2]);
}

template <bool kRgb>
cudaError_t launch(const FrameView& in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid = grid_for(in.width, in.height, block);
  switch (in.format) {
#define CS_PACKED(F) \
  case PixelFormat::F: convert_packed<PixelFormat::F, kRgb><<<grid, block, 0, stream>>>(in, gray, rgb); break;
    CS_PACKED(RGBA)
    CS_PACKED(BGRA)
    CS_PACKED(RGBx)
    CS_PACKED(BGRx)
    CS_PACKED(xRGB)
    CS_PACKED(xBGR)
    CS_PACKED(ARGB)
    CS_PACKED(ABGR)
    CS_PACKED(RGB)
    CS_PACKED(BGR)
#undef CS_PACKED
    case PixelFormat::GRAY8: convert_gray8<kRgb><<<grid, block, 0, stream>>>(in, gray, rgb); break;
    case PixelFormat::I420: convert_yuv<false, kRgb><<<grid, block, 0, stream>>>(in, gray, rgb); break;
    case PixelFormat::NV12: convert_yuv<true, kRgb><<<grid, block, 0, stream>>>(in, gray, rgb); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t enqueue_convert(const FrameView& in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb,
                            cudaStream_t stream) {
  return rgb.data ? launch<true>(in, gray, rgb, stream) : launch<false>(in, gray, rgb, stream);
}

}  // namespace cs::cuda
