#include "pyramid.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

// blockIdx.z picks the view: both views of a level in one launch.
__global__ void __launch_bounds__(kBlockX * kBlockY)
    downsample_gray(ImageView<const uint8_t> fine0, ImageView<uint8_t> coarse0, ImageView<const uint8_t> fine1,
                    ImageView<uint8_t> coarse1) {
  // By value: a reference chosen at run time between two parameters makes
  // the compiler copy the parameters to local memory.
  const ImageView<const uint8_t> fine = blockIdx.z ? fine1 : fine0;
  const ImageView<uint8_t> coarse = blockIdx.z ? coarse1 : coarse0;
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= coarse.width || y >= coarse.height) return;
  const uint8_t* r0 = drow(fine, 2 * y);
  const uint8_t* r1 = drow(fine, 2 * y + 1);
  drow(coarse, y)[x] = average4(r0[2 * x], r0[2 * x + 1], r1[2 * x], r1[2 * x + 1]);
}


}  // namespace

cudaError_t enqueue_downsample(ImageView<const uint8_t> fine, ImageView<uint8_t> coarse, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  downsample_gray<<<grid_for(coarse.width, coarse.height, block), block, 0, stream>>>(fine, coarse, fine, coarse);
  return cudaGetLastError();
}

cudaError_t enqueue_downsample_pair(ImageView<const uint8_t> fine_left, ImageView<uint8_t> coarse_left,
                                    ImageView<const uint8_t> fine_right, ImageView<uint8_t> coarse_right,
                                    cudaStream_t stream) {
  if (coarse_left.width != coarse_right.width || coarse_left.height != coarse_right.height)
    return cudaErrorInvalidValue;
  const dim3 block(kBlockX, kBlockY);
  dim3 grid = grid_for(coarse_left.width, coarse_left.height, block);
  grid.z = 2;
  downsample_gray<<<grid, block, 0, stream>>>(fine_left, coarse_left, fine_right, coarse_right);
  return cudaGetLastError();
}

}  // namespace cs::cuda
