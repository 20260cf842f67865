#include "cross_check.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

__global__ void __launch_bounds__(kBlockX * kBlockY)
    cross_check_kernel(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                       ImageView<int16_t> left_checked, ImageView<int16_t> right_checked) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  const int w = left.width;
  if (x >= w || y >= left.height) return;
  const int16_t* lrow = drow(left, y);
  const int16_t* rrow = drow(right, y);
  const int dl = lrow[x], dr = rrow[x];
  drow(left_checked, y)[x] = static_cast<int16_t>(dl >= 0 && lr_consistent(dl, x - dl, w, rrow, tolerance) ? dl : -1);
  drow(right_checked, y)[x] = static_cast<int16_t>(dr >= 0 && lr_consistent(dr, x + dr, w, lrow, tolerance) ? dr : -1);
}

}  // namespace

cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  cross_check_kernel<<<grid_for(left.width, left.height, block), block, 0, stream>>>(left, right, tolerance,
                                                                                      left_checked, right_checked);
  return cudaGetLastError();
}

}  // namespace cs::cuda
