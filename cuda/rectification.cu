#include "rectification.h"

#include "cuda_util.h"
#include "pixel_read.cuh"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32, kThreadsY = 8;

struct RectifyViews {
  FrameView in[2];
  ImageView<const RemapPoint> map[2];
  ImageView<uint32_t> out[2];
  bool words;  // 4-byte pixels on 4-byte aligned rows: one load a pixel
};

// Rectified pixel (x, y) of `in`: the four source pixels' colours (as
// convert_to_rgb reads them) blended as remap_rgba_pixel says.
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

// A thread a rectified pixel, blockIdx.z the view.
template <PixelFormat F>
__global__ void __launch_bounds__(kThreadsX * kThreadsY) rectify_kernel(RectifyViews v) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kThreadsX + threadIdx.x, y = blockIdx.y * kThreadsY + threadIdx.y;
  const ImageView<uint32_t>& out = v.out[view];
  if (x >= out.width || y >= out.height) return;
  drow(out, y)[x] = rectified_rgb<F>(v.in[view], v.words, v.map[view], x, y);
}

struct ViewsArgs {
  FrameView in[2];
  ImageView<const RemapPoint> map[2];
  uint8_t* dst;
  std::ptrdiff_t pitch;
  int right_x, right_y;  // where the right view starts in the output
  OutputFormat format;
  bool words;
};

// A thread an output pixel of one view (blockIdx.z): its colour, rectified
// with kRemap, as encode_views writes it.
template <PixelFormat F, bool kRemap>
__global__ void __launch_bounds__(kThreadsX * kThreadsY) views_kernel(ViewsArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kThreadsX + threadIdx.x, y = blockIdx.y * kThreadsY + threadIdx.y;
  const FrameView& in = a.in[view];
  if (x >= in.width || y >= in.height) return;
  uint32_t rgb = 0;
  if (kRemap)
    rgb = rectified_rgb<F>(in, a.words, a.map[view], x, y);
  else
    convert_one<F, true>(in, a.words, x, y, &rgb);
  uint8_t* row = a.dst + static_cast<std::ptrdiff_t>(y + view * a.right_y) * a.pitch;
  reinterpret_cast<uint32_t*>(row)[x + view * a.right_x] = view_output_pixel(rgb, a.format);
}

}  // namespace

cudaError_t enqueue_views_output(const FrameView& left, const FrameView& right,
                                 const ImageView<const RemapPoint>* maps, const EncodeParams& encode, uint8_t* dst,
                                 std::ptrdiff_t pitch, cudaStream_t stream) {
  if (left.format != right.format || left.width != right.width || left.height != right.height ||
      encode.views == ViewsOutput::None || output_bytes_per_pixel(encode.format) != 4)
    return cudaErrorInvalidValue;
  ViewsArgs a;
  a.in[0] = left;
  a.in[1] = right;
  if (maps)
    for (int k = 0; k < 2; ++k) {
      if (maps[k].width != left.width || maps[k].height != left.height) return cudaErrorInvalidValue;
      a.map[k] = maps[k];
    }
  a.dst = dst;
  a.pitch = pitch;
  a.right_x = encode.views == ViewsOutput::SideBySide ? left.width : 0;
  a.right_y = encode.views == ViewsOutput::TopBottom ? left.height : 0;
  a.format = encode.format;
  a.words = rows_aligned(left.plane[0], left.pitch[0], 4) && rows_aligned(right.plane[0], right.pitch[0], 4);
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid((left.width + kThreadsX - 1) / kThreadsX, (left.height + kThreadsY - 1) / kThreadsY, 2);
  switch (left.format) {
#define CS_FORMAT(F)                                                                 \
  case PixelFormat::F:                                                               \
    if (maps)                                                                        \
      views_kernel<PixelFormat::F, true><<<grid, block, 0, stream>>>(a);             \
    else                                                                             \
      views_kernel<PixelFormat::F, false><<<grid, block, 0, stream>>>(a);            \
    break;
    CS_FOR_EACH_PIXEL_FORMAT(CS_FORMAT)
#undef CS_FORMAT
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t rectify_pair_call(const FrameView& left, const FrameView& right, const ImageView<const RemapPoint> map[2],
                              const ImageView<uint32_t> out[2], KernelCall* call) {
  if (left.format != right.format || left.width != right.width || left.height != right.height) return cudaErrorInvalidValue;
  RectifyViews v;
  v.in[0] = left;
  v.in[1] = right;
  v.words = rows_aligned(left.plane[0], left.pitch[0], 4) && rows_aligned(right.plane[0], right.pitch[0], 4);
  for (int k = 0; k < 2; ++k) {
    if (map[k].width != left.width || map[k].height != left.height || out[k].width != left.width ||
        out[k].height != left.height)
      return cudaErrorInvalidValue;
    v.map[k] = map[k];
    v.out[k] = out[k];
  }
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid((left.width + kThreadsX - 1) / kThreadsX, (left.height + kThreadsY - 1) / kThreadsY, 2);
  switch (left.format) {
#define CS_FORMAT(F) \
  case PixelFormat::F: call->set(rectify_kernel<PixelFormat::F>, grid, block, 0, v); break;
    CS_FOR_EACH_PIXEL_FORMAT(CS_FORMAT)
#undef CS_FORMAT
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace cs::cuda
