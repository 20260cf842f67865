#include "finish.h"

#include "cuda_util.h"
#include "matching.h"
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

template <bool kConfidence, bool kEncode>
__global__ void __launch_bounds__(kBlockX * kBlockY) finish_kernel(ImageView<const int16_t> disparity,
                                                                   ImageView<const int8_t> subpixel_offset,
                                                                   ImageView<const uint8_t> mask,
                                                                   ImageView<uint16_t> disparity_q4,
                                                                   FrameCounters* counters,
                                                                   ImageView<const int16_t> right, int tolerance,
                                                                   FinishConfidence confidence,
                                                                   EncodeTarget encode,
                                                                   ImageView<const uint32_t> right_keys,
                                                                   const unsigned long long* mask_pixels) {
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  // A mask without a pixel (its count made before this kernel, the same
  // for every thread): no disparity and no foreground anywhere, so nothing
  // is read and nothing counted; the outputs are written as for a pixel
  // without a disparity (a still 1080p frame's finish: 3.8 M warp
  // instructions and 7.0 us with the counts and the barriers, H200).
  if (mask.data && mask_pixels && *mask_pixels == 0) {
    if (y >= disparity.height) return;
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k) {
      const int x = blockIdx.x * kBlockX * kPixelsPerThread + threadIdx.x + k * kBlockX;
      if (x >= disparity.width) break;
      if (!kEncode) drow(disparity_q4, y)[x] = 0;
      if (kEncode) store_encoded(encode, x, y, 0, false);
      if (kConfidence) drow(confidence.confidence, y)[x] = 0;
    }
    return;
  }
  __shared__ unsigned block_valid, block_foreground;
  if (threadIdx.x == 0 && threadIdx.y == 0) block_valid = block_foreground = 0;
  __syncthreads();
  unsigned valid = 0, foreground = 0;
  if (y < disparity.height) {
    // In phases over the thread's pixels, so that each phase's loads are in
    // flight together: the compiler cannot move a pixel's loads above the
    // last pixel's store (the views might overlap), and one pixel after the
    // other the frame's last kernel waited on twelve dependent loads a thread.
    const int x_first = blockIdx.x * kBlockX * kPixelsPerThread + threadIdx.x;
    // With the background model the map holds nothing where the mask is
    // background (it is written around the foreground alone: stages.h
    // stage 3): -1 there, read alongside rather than after the mask.
    int d[kPixelsPerThread];
    unsigned fg[kPixelsPerThread];
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k) {
      const int x = x_first + k * kBlockX;
      const bool inside = x < disparity.width;
      d[k] = inside ? drow(disparity, y)[x] : -1;
      fg[k] = inside && (!mask.data || drow(mask, y)[x] != 0);
    }
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k)
      if (!fg[k]) d[k] = -1;
    if (right.data || right_keys.data) {
      int dr[kPixelsPerThread];
#pragma unroll
      for (int k = 0; k < kPixelsPerThread; ++k) {
        const int xr = x_first + k * kBlockX - d[k];
        const bool inside = d[k] >= 0 && xr >= 0;
        if (right_keys.data)
          dr[k] = inside ? key_disparity(drow(right_keys, y)[xr]) : -1;
        else
          dr[k] = inside ? drow(right, y)[xr] : -1;
      }
      // lr_consistent (stereo_math.h) with the other view's value read above.
#pragma unroll
      for (int k = 0; k < kPixelsPerThread; ++k)
        if (d[k] >= 0 && !lr_agree(d[k], dr[k], tolerance)) d[k] = -1;
    }
    int offset[kPixelsPerThread] = {};
    int conf[kPixelsPerThread] = {};
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k) {
      const int x = x_first + k * kBlockX;
      if (subpixel_offset.data && d[k] >= 0) offset[k] = drow(subpixel_offset, y)[x];
      if (kConfidence && d[k] >= 0)
        conf[k] = confidence_from_costs(drow(confidence.best, y)[x], drow(confidence.rival, y)[x]);
    }
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k) {
      const int x = x_first + k * kBlockX;
      if (x >= disparity.width) break;
      const int q4 = d[k] >= 0 && d[k] * 16 + offset[k] > 0 ? d[k] * 16 + offset[k] : 0;
      if (!kEncode) drow(disparity_q4, y)[x] = static_cast<uint16_t>(q4);
      if (kEncode) store_encoded(encode, x, y, q4, fg[k] != 0);
      if (kConfidence) drow(confidence.confidence, y)[x] = static_cast<uint8_t>(conf[k]);
      valid += d[k] >= 0;
      foreground += fg[k];
    }
  }
  add_frame_counts(valid, foreground, block_valid, block_foreground, counters);
}

}  // namespace

cudaError_t finish_call(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                        ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4, FrameCounters* counters,
                        KernelCall* call, ImageView<const int16_t> right, int tolerance,
                        const FinishConfidence& confidence, const EncodeTarget& encode,
                        ImageView<const uint32_t> right_keys, const unsigned long long* mask_pixels) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((disparity.width + kBlockX * kPixelsPerThread - 1) / (kBlockX * kPixelsPerThread),
                  (disparity.height + kBlockY - 1) / kBlockY);
  if ((disparity_q4.data == nullptr) == (encode.dst == nullptr)) return cudaErrorInvalidValue;
  // A form per output (the Q4 map, or another encoding) and confidence.
  auto kernel = confidence.confidence.data ? (encode.dst ? finish_kernel<true, true> : finish_kernel<true, false>)
                                           : (encode.dst ? finish_kernel<false, true> : finish_kernel<false, false>);
  call->set(kernel, grid, block, 0, disparity, subpixel_offset, mask, disparity_q4, counters, right, tolerance,
            confidence, encode, right_keys, mask_pixels);
  return cudaSuccess;
}

cudaError_t enqueue_finish(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                           ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                           FrameCounters* counters, cudaStream_t stream, ImageView<const int16_t> right,
                           int tolerance, const FinishConfidence& confidence, const EncodeTarget& encode,
                           ImageView<const uint32_t> right_keys, const unsigned long long* mask_pixels) {
  KernelCall call;
  const cudaError_t e = finish_call(disparity, subpixel_offset, mask, disparity_q4, counters, &call, right, tolerance,
                                    confidence, encode, right_keys, mask_pixels);
  return e != cudaSuccess ? e : call.launch(stream);
}

}  // namespace cs::cuda
