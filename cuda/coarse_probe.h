// The automatic coarse range's probe on the GPU (stages.h 6b): what it
// reads back instead of the probe's map.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// counts[d] = pixels of `map` holding d, for 0 <= d < bins (invalid pixels,
// -1, and values from bins up are not counted); counts is zeroed first.
// coarse_factor_from_histogram (stages.h) reads it.
cudaError_t enqueue_disparity_histogram(ImageView<const int16_t> map, unsigned* counts, int bins,
                                        cudaStream_t stream);

}  // namespace cs::cuda
