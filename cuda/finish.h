// Stage 9 (stages.h finish_disparity): Q4 output of the final left map, plus
// the frame's counts for FrameStats.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// Device-side counters of one frame; zeroed by the caller before the frame.
struct FrameCounters {
  unsigned long long valid_pixels;        // left level 0, d >= 0
  unsigned long long foreground_pixels;   // left level 0 mask != 0
  unsigned long long tests[2 * 8];        // background tests per view and level
};

// subpixel_offset may have data == nullptr (no sub-pixel); mask may too
// (background off: every pixel counts as foreground). With right.data set,
// disparity is the unchecked left map and each pixel first gets the
// left-right check against right (stages.h cross_check, the left map's
// rule), which then needs no pass of its own at level 0.
cudaError_t enqueue_finish(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                           ImageView<const uint8_t> mask, ImageView<uint16_t> disparity_q4,
                           FrameCounters* counters, cudaStream_t stream,
                           ImageView<const int16_t> right = {}, int tolerance = 0);

}  // namespace cs::cuda
