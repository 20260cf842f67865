#include "cross_check.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

// Pixel x of a view's checked map (stage 8; the raw value without lr_check):
// `own` is the view's input row, `other` the other view's, sign -1 for the
// left view (matched column x - d), +1 for the right.
__device__ __forceinline__ int checked_value(const int16_t* own, const int16_t* other, int x, int w, int sign,
                                             bool lr_check, int tolerance) {
  const int d = own[x];
  if (d < 0) return -1;
  return !lr_check || lr_consistent(d, x + sign * d, w, other, tolerance) ? d : -1;
}

// One view's output at (x, y): checked, then kept only with min_support
// agreeing neighbours among the 8 inside the image (stage 8b).
__device__ __forceinline__ int16_t check_and_support_one(ImageView<const int16_t> own, ImageView<const int16_t> other,
                                                         int x, int y, int sign, bool lr_check, int tolerance,
                                                         int min_support) {
  const int w = own.width, h = own.height;
  const int d = checked_value(drow(own, y), drow(other, y), x, w, sign, lr_check, tolerance);
  if (d < 0 || min_support <= 0) return static_cast<int16_t>(d);
  int agree = 0;
  for (int v = maxi(y - 1, 0); v <= mini(y + 1, h - 1); ++v) {
    const int16_t* orow = drow(own, v);
    const int16_t* xrow = drow(other, v);
    for (int u = maxi(x - 1, 0); u <= mini(x + 1, w - 1); ++u)
      if ((u != x || v != y) && supports(d, checked_value(orow, xrow, u, w, sign, lr_check, tolerance))) ++agree;
  }
  return static_cast<int16_t>(agree >= min_support ? d : -1);
}

__global__ void __launch_bounds__(kBlockX * kBlockY)
    check_and_support_kernel(ImageView<const int16_t> left, ImageView<const int16_t> right, bool lr_check,
                             int tolerance, int min_support, ImageView<int16_t> left_out,
                             ImageView<int16_t> right_out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= left.width || y >= left.height) return;
  drow(left_out, y)[x] = check_and_support_one(left, right, x, y, -1, lr_check, tolerance, min_support);
  drow(right_out, y)[x] = check_and_support_one(right, left, x, y, +1, lr_check, tolerance, min_support);
}

}  // namespace

cudaError_t enqueue_check_and_support(ImageView<const int16_t> left, ImageView<const int16_t> right, bool lr_check,
                                      int tolerance, int min_support, ImageView<int16_t> left_out,
                                      ImageView<int16_t> right_out, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  check_and_support_kernel<<<grid_for(left.width, left.height, block), block, 0, stream>>>(
      left, right, lr_check, tolerance, min_support, left_out, right_out);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream) {
  return enqueue_check_and_support(left, right, true, tolerance, 0, left_checked, right_checked, stream);
}

}  // namespace cs::cuda
