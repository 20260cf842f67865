#include "census.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kTileX = 32;
constexpr int kTileY = 8;
constexpr int kR = kCensusRadius;
constexpr int kSharedX = kTileX + 2 * kR;
constexpr int kSharedY = kTileY + 2 * kR;

// The tile plus its clamped halo goes through shared memory once; each
// pixel then reads its 25 neighbours from there.
__global__ void census_kernel(ImageView<const uint8_t> gray, ImageView<uint32_t> census) {
  __shared__ uint8_t tile[kSharedY][kSharedX + 4];
  const int x0 = blockIdx.x * kTileX - kR;
  const int y0 = blockIdx.y * kTileY - kR;
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  for (int i = tid; i < kSharedX * kSharedY; i += kTileX * kTileY) {
    const int sy = i / kSharedX, sx = i % kSharedX;
    const int gx = clampi(x0 + sx, 0, gray.width - 1);
    const int gy = clampi(y0 + sy, 0, gray.height - 1);
    tile[sy][sx] = drow(gray, gy)[gx];
  }
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x;
  const int y = blockIdx.y * kTileY + threadIdx.y;
  if (x >= gray.width || y >= gray.height) return;
  const int centre = tile[threadIdx.y + kR][threadIdx.x + kR];
  // Neighbour i in row-major order (centre skipped) is bit i (stages.h).
  uint32_t code = 0;
  int bit = 0;
#pragma unroll
  for (int j = -kR; j <= kR; ++j)
#pragma unroll
    for (int i = -kR; i <= kR; ++i) {
      if (i == 0 && j == 0) continue;
      code |= (tile[threadIdx.y + kR + j][threadIdx.x + kR + i] < centre ? 1u : 0u) << bit;
      ++bit;
    }
  drow(census, y)[x] = code;
}

}  // namespace

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream) {
  const dim3 block(kTileX, kTileY);
  census_kernel<<<grid_for(gray.width, gray.height, block), block, 0, stream>>>(gray, census);
  return cudaGetLastError();
}

}  // namespace cs::cuda
