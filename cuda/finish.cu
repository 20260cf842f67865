#include "finish.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

// Adds a per-thread count to a global counter, one atomic per warp.
__device__ __forceinline__ void warp_count(bool flag, unsigned long long* counter) {
  const unsigned active = __activemask();
  const unsigned votes = __ballot_sync(active, flag);
  if ((threadIdx.x & 31) == __ffs(active) - 1 && votes) atomicAdd(counter, static_cast<unsigned long long>(__popc(votes)));
}

__global__ void finish_kernel(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                              ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                              FrameCounters* counters) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= disparity.width || y >= disparity.height) return;
  const int d = drow(disparity, y)[x];
  int q4 = 0;
  if (d >= 0) {
    q4 = d * 16;
    if (subpixel_offset.data) q4 += drow(subpixel_offset, y)[x];
  }
  drow(disparity_q4, y)[x] = static_cast<uint16_t>(q4 < 0 ? 0 : q4);
  warp_count(d >= 0, &counters->valid_pixels);
  warp_count(mask.data ? drow(mask, y)[x] != 0 : true, &counters->foreground_pixels);
}

}  // namespace

cudaError_t enqueue_finish(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                           ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                           FrameCounters* counters, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  finish_kernel<<<grid_for(disparity.width, disparity.height, block), block, 0, stream>>>(
      disparity, subpixel_offset, mask, disparity_q4, counters);
  return cudaGetLastError();
}

}  // namespace cs::cuda
