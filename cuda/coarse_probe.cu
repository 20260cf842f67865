#include "coarse_probe.h"

#include "cuda_util.h"

namespace cs::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = 8;

// A block counts kRowsPerBlock rows into its shared histogram, then adds
// the bins it saw to the global one.
__global__ void __launch_bounds__(kThreads) histogram_kernel(ImageView<const int16_t> map, unsigned* counts, int bins) {
  extern __shared__ unsigned s_counts[];
  for (int i = threadIdx.x; i < bins; i += kThreads) s_counts[i] = 0;
  __syncthreads();
  const int y0 = blockIdx.x * kRowsPerBlock;
  const int y1 = min(y0 + kRowsPerBlock, map.height);
  for (int y = y0; y < y1; ++y) {
    const int16_t* row = drow(map, y);
    for (int x = threadIdx.x; x < map.width; x += kThreads) {
      const int d = row[x];
      if (d >= 0 && d < bins) atomicAdd(&s_counts[d], 1u);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < bins; i += kThreads)
    if (s_counts[i]) atomicAdd(&counts[i], s_counts[i]);
}

}  // namespace

cudaError_t enqueue_disparity_histogram(ImageView<const int16_t> map, unsigned* counts, int bins,
                                        cudaStream_t stream) {
  if (bins <= 0) return cudaSuccess;
  cudaError_t e = cudaMemsetAsync(counts, 0, static_cast<size_t>(bins) * sizeof(unsigned), stream);
  if (e != cudaSuccess || map.height <= 0) return e;
  // The probe's range is at most the level's width (at most 16384 / 2):
  // 32 KiB of shared bins. Beyond 48 KiB the kernel would need the opt-in.
  const size_t shared = static_cast<size_t>(bins) * sizeof(unsigned);
  if (shared > 48 * 1024) return cudaErrorInvalidValue;
  const int blocks = (map.height + kRowsPerBlock - 1) / kRowsPerBlock;
  histogram_kernel<<<blocks, kThreads, shared, stream>>>(map, counts, bins);
  return cudaGetLastError();
}

}  // namespace cs::cuda
