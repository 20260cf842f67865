#include "cross_check.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

__global__ void cross_check_kernel(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                   ImageView<int16_t> left_checked, ImageView<int16_t> right_checked) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  const int w = left.width;
  if (x >= w || y >= left.height) return;
  const int16_t* lrow = drow(left, y);
  const int16_t* rrow = drow(right, y);
  int dl = lrow[x];
  if (dl >= 0) {
    const int xr = x - dl;
    const int dr = (xr >= 0 && xr < w) ? rrow[xr] : -1;
    if (dr < 0 || abs(dl - dr) > tolerance) dl = -1;
  }
  drow(left_checked, y)[x] = static_cast<int16_t>(dl < 0 ? -1 : dl);
  int dr = rrow[x];
  if (dr >= 0) {
    const int xl = x + dr;
    const int dl2 = (xl >= 0 && xl < w) ? lrow[xl] : -1;
    if (dl2 < 0 || abs(dr - dl2) > tolerance) dr = -1;
  }
  drow(right_checked, y)[x] = static_cast<int16_t>(dr < 0 ? -1 : dr);
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
