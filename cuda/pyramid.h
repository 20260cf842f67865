// Stage 2 (stages.h downsample): level l + 1 from level l.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// coarse must be fine.width / 2 x fine.height / 2.
cudaError_t enqueue_downsample(ImageView<const uint8_t> fine, ImageView<uint8_t> coarse, cudaStream_t stream);
cudaError_t enqueue_downsample(ImageView<const uint32_t> fine, ImageView<uint32_t> coarse, cudaStream_t stream);

}  // namespace cs::cuda
