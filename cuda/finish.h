// Stage 9 (stages.h finish_disparity): Q4 output of the final left map, plus
// the frame's counts for FrameStats.
#pragma once

#include <cuda_runtime.h>

#include "cuda_util.h"
#include "encode_output.h"
#include "kernel_call.h"
#include "stereo.h"

namespace cs::cuda {

// Foreground tile lists a level may have (progressive: census, matching,
// check).
constexpr int kFrameTileLists = 4;

// Device-side counters of one frame, zeroed by the frame's first kernel
// (the conversion's clear: no memset node in the frame's graph) and read
// after its last (the finish).
struct FrameCounters {
  unsigned long long valid_pixels;        // left level 0, d >= 0
  unsigned long long foreground_pixels;   // left level 0 mask != 0
  unsigned long long matched[8];          // left foreground pixels per level (background.h MaskViews)
  unsigned long long right_foreground;    // right level 0 mask != 0 (background.h MaskViews)
  // The lengths of a method's foreground tile lists (foreground_tiles.h),
  // per level and list.
  unsigned tiles[8][kFrameTileLists];
  unsigned masks_done;      // the mask pass's blocks done (background.h MaskViews::choice)
  unsigned pixel_tests[2];  // per view: pixels given their own background test (background.h ModelViews)
  unsigned unused;
};
constexpr int kFrameCounterWords = sizeof(FrameCounters) / sizeof(unsigned long long);
static_assert(sizeof(FrameCounters) % sizeof(unsigned long long) == 0, "whole words");

#if defined(__CUDACC__)
// Adds a thread's valid and foreground counts to the frame's: summed per
// warp, then per block in the shared block_valid / block_foreground (zeroed
// by the caller before a barrier), and added with one atomic per block and
// counter: one atomic per warp on two addresses made a kernel wait on the L2
// (about 40 us at 1024x768 on an H100 for a 3 us copy). Every thread of the
// block calls it (warp sums and a barrier).
__device__ __forceinline__ void add_frame_counts(unsigned valid, unsigned foreground, unsigned& block_valid,
                                                 unsigned& block_foreground, FrameCounters* counters) {
  valid = warp_sum(valid);
  foreground = warp_sum(foreground);
  if (threadIdx.x == 0) {
    atomicAdd(&block_valid, valid);
    atomicAdd(&block_foreground, foreground);
  }
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    if (block_valid) atomicAdd(&counters->valid_pixels, static_cast<unsigned long long>(block_valid));
    if (block_foreground) atomicAdd(&counters->foreground_pixels, static_cast<unsigned long long>(block_foreground));
  }
}
#endif

// The confidence of the final left map (stages.h confidence_map) from the
// SweepCosts of the sweep that made it; confidence.data == nullptr: none.
struct FinishConfidence {
  ImageView<const int32_t> best, rival;
  ImageView<uint8_t> confidence;
};

// subpixel_offset may have data == nullptr (no sub-pixel); mask may too
// (background off: every pixel counts as foreground). With right.data set,
// disparity is the unchecked left map and each pixel first gets the
// left-right check against right (stages.h cross_check, the left map's
// rule), which then needs no pass of its own at level 0. With
// confidence.confidence set, each pixel's confidence follows from the final
// value (a form of the kernel of its own: the plain one is unchanged). The
// output is either the Q4 map (disparity_q4) or, with encode.dst set (and
// disparity_q4.data == nullptr), its encoding (encode_pixel, what
// enqueue_encode would make of the map), never both. right_keys: the right
// map as match keys (matching.h key_disparity), read in place of right.
// mask_pixels (device memory, optional): the mask's foreground pixels,
// counted before the kernel runs (the model's FrameCounters::matched[0]);
// where it is 0 the kernel reads neither the maps nor the mask (a still
// frame: no disparity and no foreground anywhere, the same output).
cudaError_t enqueue_finish(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                           ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                           FrameCounters* counters, cudaStream_t stream,
                           ImageView<const int16_t> right = {}, int tolerance = 0,
                           const FinishConfidence& confidence = {}, const EncodeTarget& encode = {},
                           ImageView<const uint32_t> right_keys = {},
                           const unsigned long long* mask_pixels = nullptr);

// The launch enqueue_finish above makes, with the same checks, as a
// description (kernel_call.h) in place of the stream: the engine launches it
// or writes it into the last node of its frame's graph. Its KernelShape
// follows the output (the Q4 map or an encoding), the confidence and the
// size; the views, the encoding's arguments and the counters are arguments.
cudaError_t finish_call(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                        ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4, FrameCounters* counters,
                        KernelCall* call, ImageView<const int16_t> right = {}, int tolerance = 0,
                        const FinishConfidence& confidence = {}, const EncodeTarget& encode = {},
                        ImageView<const uint32_t> right_keys = {},
                        const unsigned long long* mask_pixels = nullptr);

}  // namespace cs::cuda
