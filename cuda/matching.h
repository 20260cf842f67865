// Stages 6 and 7 (stages.h match_full_range, refine_level): winner-takes-all
// over each reference pixel's candidate disparities with the adaptive window.
#pragma once

#include <cuda_runtime.h>

#include "stages.h"

namespace cs::cuda {

struct MatchViews {
  ImageView<const uint32_t> census_ref, census_other;
  ImageView<const uint8_t> mask_ref, mask_other;  // data == nullptr: all foreground
  // The checked map of the next coarser level; data == nullptr: coarsest
  // level, every pixel searches the whole range.
  ImageView<const int16_t> coarser;
  ImageView<int16_t> disparity;  // out: -1 = invalid
  // Optional (left reference at level 0 only): the sub-pixel offset in 1/16
  // pixel of finish_disparity, computed here from the costs already at hand.
  ImageView<int8_t> subpixel_offset;
};

struct MatchParams {
  Reference reference = Reference::Left;
  Range range{0, 0};
  int radius = 2;
  int best = 2;  // 0, 1, 2 or 4 (WindowVariant)
  int hole_radius = 2;
};

// Shared memory one block needs for this radius (for the caller's checks).
size_t match_shared_bytes(int radius);

cudaError_t enqueue_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream);

// Raises the kernels' dynamic shared-memory limit to what `radius` needs;
// call once per engine set-up (idempotent; never lowers the limit).
cudaError_t prepare_match(int radius);

}  // namespace cs::cuda
