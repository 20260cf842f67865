// Stage 8 (stages.h cross_check): left-right consistency of one level.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// Reads both input maps, writes both checked maps (out-of-place, which is
// the specification's "against the other's input values").
cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream);

}  // namespace cs::cuda
