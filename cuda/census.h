// Stage 4 (stages.h census_transform): 5x5 census, reads clamped to the image.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream);

}  // namespace cs::cuda
