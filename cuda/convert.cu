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

// Both views of a pair in one launch: blockIdx.z picks the view. Taken by
// value: a reference chosen at run time between two parameters makes the
// compiler copy the parameters to local memory.
struct Views {
  FrameView in[2];
  ImageView<uint8_t> gray[2];
  ImageView<uint32_t> rgb[2];
  bool words;  // 4-byte pixels on 4-byte aligned rows: one load a pixel
};

template <PixelFormat F, bool kRgb>
__global__ void convert_packed(const __grid_constant__ Views w) {
  const int z = blockIdx.z;
  const FrameView& in = w.in[z];
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  constexpr PackedLayout L = packed_layout(F);
  const uint8_t* p = in.plane[0] + y * in.pitch[0] + x * L.bytes;
  int r, g, b;
  if (L.bytes == 4 && w.words) {
    const uint32_t px = *reinterpret_cast<const uint32_t*>(p);
    r = (px >> (8 * L.r)) & 255;
    g = (px >> (8 * L.g)) & 255;
    b = (px >> (8 * L.b)) & 255;
  } else {
    r = p[L.r];
    g = p[L.g];
    b = p[L.b];
  }
  drow(w.gray[z], y)[x] = luma_from_rgb(r, g, b);
  if (kRgb) drow(w.rgb[z], y)[x] = pack_rgb(r, g, b);
}

template <bool kRgb>
__global__ void convert_gray8(const __grid_constant__ Views w) {
  const int z = blockIdx.z;
  const FrameView& in = w.in[z];
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const int v = in.plane[0][y * in.pitch[0] + x];
  drow(w.gray[z], y)[x] = static_cast<uint8_t>(v);
  if (kRgb) drow(w.rgb[z], y)[x] = pack_rgb(v, v, v);
}

// I420 (kNv12 = false) and NV12: matching uses Y as is; the colour of pixel
// (x, y) takes the chroma sample at (x / 2, y / 2).
template <bool kNv12, bool kRgb>
__global__ void convert_yuv(const __grid_constant__ Views w) {
  const int z = blockIdx.z;
  const FrameView& in = w.in[z];
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const int luma = in.plane[0][y * in.pitch[0] + x];
  drow(w.gray[z], y)[x] = static_cast<uint8_t>(luma);
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
  drow(w.rgb[z], y)[x] = pack_rgb(c[0], c[1], c[2]);
}

template <bool kRgb>
cudaError_t launch(const Views& w, int count, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  dim3 grid = grid_for(w.in[0].width, w.in[0].height, block);
  grid.z = count;
  switch (w.in[0].format) {
#define CS_PACKED(F) \
  case PixelFormat::F: convert_packed<PixelFormat::F, kRgb><<<grid, block, 0, stream>>>(w); break;
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
    case PixelFormat::GRAY8: convert_gray8<kRgb><<<grid, block, 0, stream>>>(w); break;
    case PixelFormat::I420: convert_yuv<false, kRgb><<<grid, block, 0, stream>>>(w); break;
    case PixelFormat::NV12: convert_yuv<true, kRgb><<<grid, block, 0, stream>>>(w); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t convert_views(const FrameView* in, const ImageView<uint8_t>* gray, const ImageView<uint32_t>* rgb,
                          int count, cudaStream_t stream) {
  Views w{};
  w.words = true;
  for (int i = 0; i < count; ++i) {
    w.in[i] = in[i];
    w.gray[i] = gray[i];
    w.rgb[i] = rgb[i];
    w.words = w.words && (reinterpret_cast<uintptr_t>(in[i].plane[0]) & 3) == 0 && (in[i].pitch[0] & 3) == 0;
  }
  return rgb[0].data ? launch<true>(w, count, stream) : launch<false>(w, count, stream);
}

}  // namespace

cudaError_t enqueue_convert(const FrameView& in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb,
                            cudaStream_t stream) {
  return convert_views(&in, &gray, &rgb, 1, stream);
}

cudaError_t enqueue_convert_pair(const FrameView& left, const FrameView& right, ImageView<uint8_t> gray_left,
                                 ImageView<uint8_t> gray_right, ImageView<uint32_t> rgb_left,
                                 ImageView<uint32_t> rgb_right, cudaStream_t stream) {
  if (left.format != right.format || left.width != right.width || left.height != right.height ||
      (rgb_left.data == nullptr) != (rgb_right.data == nullptr))
    return cudaErrorInvalidValue;
  const FrameView in[2] = {left, right};
  const ImageView<uint8_t> gray[2] = {gray_left, gray_right};
  const ImageView<uint32_t> rgb[2] = {rgb_left, rgb_right};
  return convert_views(in, gray, rgb, 2, stream);
}

}  // namespace cs::cuda
