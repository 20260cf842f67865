#include "pyramid.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__global__ void downsample_gray(ImageView<const uint8_t> fine, ImageView<uint8_t> coarse) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= coarse.width || y >= coarse.height) return;
  const uint8_t* r0 = drow(fine, 2 * y);
  const uint8_t* r1 = drow(fine, 2 * y + 1);
  drow(coarse, y)[x] = average4(r0[2 * x], r0[2 * x + 1], r1[2 * x], r1[2 * x + 1]);
}

__global__ void downsample_rgb(ImageView<const uint32_t> fine, ImageView<uint32_t> coarse) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= coarse.width || y >= coarse.height) return;
  const uint32_t* r0 = drow(fine, 2 * y);
  const uint32_t* r1 = drow(fine, 2 * y + 1);
  const uint32_t a = r0[2 * x], b = r0[2 * x + 1], c = r1[2 * x], d = r1[2 * x + 1];
  uint32_t out = 0;
#pragma unroll
  for (int ch = 0; ch < 3; ++ch) {
    const int s = 8 * ch;
    out |= static_cast<uint32_t>(average4((a >> s) & 255, (b >> s) & 255, (c >> s) & 255, (d >> s) & 255)) << s;
  }
  drow(coarse, y)[x] = out;
}

}  // namespace

cudaError_t enqueue_downsample(ImageView<const uint8_t> fine, ImageView<uint8_t> coarse, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  downsample_gray<<<grid_for(coarse.width, coarse.height, block), block, 0, stream>>>(fine, coarse);
  return cudaGetLastError();
}

cudaError_t enqueue_downsample(ImageView<const uint32_t> fine, ImageView<uint32_t> coarse, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  downsample_rgb<<<grid_for(coarse.width, coarse.height, block), block, 0, stream>>>(fine, coarse);
  return cudaGetLastError();
}

}  // namespace cs::cuda
