#include "tile_order.h"

#include "cuda_util.h"

namespace cs::cuda {
namespace {

constexpr int kThreads = 1024;
// Times are sorted by bucket: a quarter of an octave each (the leading bit
// and the two after it), longest first. Finer sorting would not help: a
// tile's time varies that much from launch to launch with what shares its SM.
constexpr int kBuckets = 32 * 4;

__device__ __forceinline__ int bucket_of(uint32_t cycles) {
  if (cycles < 4) return static_cast<int>(cycles);
  const int top = 31 - __clz(cycles);  // >= 2
  return top * 4 + static_cast<int>((cycles >> (top - 2)) & 3u);
}

// A counting sort of the last launch's tiles by bucket, longest first.
__global__ void __launch_bounds__(kThreads) tile_order_kernel(TileSchedule s) {
  __shared__ unsigned s_start[kBuckets];
  const int tid = threadIdx.x;
  const unsigned n = s.counts[0];
  if (n == 0 || n > s.capacity) {
    if (tid == 0) s.counts[1] = 0;
    return;
  }
  for (int b = tid; b < kBuckets; b += kThreads) s_start[b] = 0;
  __syncthreads();
  for (unsigned i = tid; i < n; i += kThreads) atomicAdd(&s_start[bucket_of(s.costs[i])], 1u);
  __syncthreads();
  // Exclusive prefix from the longest bucket down (128 entries: one warp).
  if (tid < 32) {
    unsigned v[kBuckets / 32];
    unsigned sum = 0;
#pragma unroll
    for (int k = 0; k < kBuckets / 32; ++k) {
      v[k] = s_start[kBuckets - 1 - (tid * (kBuckets / 32) + k)];
      sum += v[k];
    }
    unsigned at = warp_inclusive_sum(sum) - sum;
#pragma unroll
    for (int k = 0; k < kBuckets / 32; ++k) {
      s_start[kBuckets - 1 - (tid * (kBuckets / 32) + k)] = at;
      at += v[k];
    }
  }
  __syncthreads();
  for (unsigned i = tid; i < n; i += kThreads) s.order[atomicAdd(&s_start[bucket_of(s.costs[i])], 1u)] = i;
  if (tid == 0) s.counts[1] = n;
}

}  // namespace

cudaError_t enqueue_tile_order(const TileSchedule& schedule, cudaStream_t stream) {
  if (!schedule.on()) return cudaSuccess;
  tile_order_kernel<<<1, kThreads, 0, stream>>>(schedule);
  return cudaGetLastError();
}

}  // namespace cs::cuda
