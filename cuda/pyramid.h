// Stage 2 (stages.h downsample): level l + 1 from level l.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// coarse must be fine.width / 2 x fine.height / 2.
cudaError_t enqueue_downsample(ImageView<const uint8_t> fine, ImageView<uint8_t> coarse, cudaStream_t stream);
// Both views of a level (same sizes) in one launch.
cudaError_t enqueue_downsample_pair(ImageView<const uint8_t> fine_left, ImageView<uint8_t> coarse_left,
                                    ImageView<const uint8_t> fine_right, ImageView<uint8_t> coarse_right,
                                    cudaStream_t stream);

}  // namespace cs::cuda
