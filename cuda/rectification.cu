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
};

// A thread a rectified pixel, blockIdx.z the view: the four source pixels'
// colours (as convert_to_rgb reads them) blended as remap_rgba_pixel says.
template <PixelFormat F>
__global__ void __launch_bounds__(kThreadsX * kThreadsY) rectify_kernel(RectifyViews v) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kThreadsX + threadIdx.x, y = blockIdx.y * kThreadsY + threadIdx.y;
  const ImageView<uint32_t>& out = v.out[view];
  if (x >= out.width || y >= out.height) return;
  const FrameView& in = v.in[view];
  const auto at = [&](int sx, int sy) {
    uint32_t rgb = 0;
    convert_one<F, true>(in, false, sx, sy, &rgb);
    return rgb;
  };
  drow(out, y)[x] = remap_rgba_pixel(drow(v.map[view], y)[x], in.width, in.height, at);
}

}  // namespace

cudaError_t rectify_pair_call(const FrameView& left, const FrameView& right, const ImageView<const RemapPoint> map[2],
                              const ImageView<uint32_t> out[2], KernelCall* call) {
  if (left.format != right.format || left.width != right.width || left.height != right.height) return cudaErrorInvalidValue;
  RectifyViews v;
  v.in[0] = left;
  v.in[1] = right;
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
