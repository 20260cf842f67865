#include "finish.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// A block covers kBlockX * kPixelsPerThread x kBlockY pixels; each thread
// takes kPixelsPerThread of a row, kBlockX apart (coalesced). The frame's
// counts are summed per block and added with one atomic per block and
// counter (add_frame_counts in finish.h).
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kPixelsPerThread = 4;

template <bool kConfidence>
__global__ void __launch_bounds__(kBlockX * kBlockY) finish_kernel(ImageView<const int16_t> disparity,
                                                                   ImageView<const int8_t> subpixel_offset,
                                                                   ImageView<const uint8_t> mask,
                                                                   ImageView<uint16_t> disparity_q4,
                                                                   FrameCounters* counters,
                                                                   ImageView<const int16_t> right, int tolerance,
                                                                   FinishConfidence confidence) {
  __shared__ unsigned block_valid, block_foreground;
  if (threadIdx.x == 0 && threadIdx.y == 0) block_valid = block_foreground = 0;
  __syncthreads();
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  unsigned valid = 0, foreground = 0;
  if (y < disparity.height) {
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k) {
      const int x = blockIdx.x * kBlockX * kPixelsPerThread + k * kBlockX + threadIdx.x;
      if (x >= disparity.width) break;
      int d = drow(disparity, y)[x];
      if (right.data && d >= 0 && !lr_consistent(d, x - d, disparity.width, drow(right, y), tolerance)) d = -1;
      int q4 = 0;
      if (d >= 0) {
        q4 = d * 16;
        if (subpixel_offset.data) q4 += drow(subpixel_offset, y)[x];
      }
      drow(disparity_q4, y)[x] = static_cast<uint16_t>(q4 < 0 ? 0 : q4);
      if (kConfidence)
        drow(confidence.confidence, y)[x] =
            d >= 0 ? confidence_from_costs(drow(confidence.best, y)[x], drow(confidence.rival, y)[x]) : 0;
      valid += d >= 0;
      foreground += mask.data ? drow(mask, y)[x] != 0 : 1u;
    }
  }
  add_frame_counts(valid, foreground, block_valid, block_foreground, counters);
}

}  // namespace

cudaError_t enqueue_finish(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                           ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                           FrameCounters* counters, cudaStream_t stream, ImageView<const int16_t> right,
                           int tolerance, const FinishConfidence& confidence) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((disparity.width + kBlockX * kPixelsPerThread - 1) / (kBlockX * kPixelsPerThread),
                  (disparity.height + kBlockY - 1) / kBlockY);
  if (confidence.confidence.data)
    finish_kernel<true><<<grid, block, 0, stream>>>(disparity, subpixel_offset, mask, disparity_q4, counters, right,
                                                    tolerance, confidence);
  else
    finish_kernel<false><<<grid, block, 0, stream>>>(disparity, subpixel_offset, mask, disparity_q4, counters, right,
                                                     tolerance, confidence);
  return cudaGetLastError();
}

}  // namespace cs::cuda
