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
__device__ __forceinline__ void census_tile(const ImageView<const uint8_t>& gray, const ImageView<uint32_t>& census,
                                            int bx, int by) {
  __shared__ uint8_t tile[kSharedY][kSharedX + 4];
  const int x0 = bx * kTileX - kR;
  const int y0 = by * kTileY - kR;
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  for (int i = tid; i < kSharedX * kSharedY; i += kTileX * kTileY) {
    const int sy = i / kSharedX, sx = i % kSharedX;
    const int gx = clampi(x0 + sx, 0, gray.width - 1);
    const int gy = clampi(y0 + sy, 0, gray.height - 1);
    tile[sy][sx] = drow(gray, gy)[gx];
  }
  __syncthreads();
  const int x = bx * kTileX + threadIdx.x;
  const int y = by * kTileY + threadIdx.y;
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

// Every image of the batch in one launch: blocks [first[j], first[j + 1])
// are image j's tiles, row by row.
struct Batch {
  ImageView<const uint8_t> gray[kMaxCensusBatch];
  ImageView<uint32_t> census[kMaxCensusBatch];
  int first[kMaxCensusBatch + 1];
  int tiles_x[kMaxCensusBatch];
  int count;
};

__global__ void census_batch_kernel(const __grid_constant__ Batch b) {
  int j = 0;
  while (j + 1 < b.count && static_cast<int>(blockIdx.x) >= b.first[j + 1]) ++j;
  const int t = static_cast<int>(blockIdx.x) - b.first[j];
  census_tile(b.gray[j], b.census[j], t % b.tiles_x[j], t / b.tiles_x[j]);
}

}  // namespace

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream) {
  return enqueue_census_batch(&gray, &census, 1, stream);
}

cudaError_t enqueue_census_batch(const ImageView<const uint8_t>* gray, const ImageView<uint32_t>* census, int count,
                                 cudaStream_t stream) {
  if (count < 1 || count > kMaxCensusBatch) return cudaErrorInvalidValue;
  Batch b{};
  b.count = count;
  int blocks = 0;
  for (int j = 0; j < count; ++j) {
    b.gray[j] = gray[j];
    b.census[j] = census[j];
    b.tiles_x[j] = (gray[j].width + kTileX - 1) / kTileX;
    b.first[j] = blocks;
    blocks += b.tiles_x[j] * ((gray[j].height + kTileY - 1) / kTileY);
  }
  b.first[count] = blocks;
  census_batch_kernel<<<blocks, dim3(kTileX, kTileY), 0, stream>>>(b);
  return cudaGetLastError();
}

}  // namespace cs::cuda
