// Stage 4 (stages.h census_transform): 5x5 census, reads clamped to the image.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream);

// Several images (every level of both views) in one launch; each pair
// gray[j] -> census[j] as enqueue_census. count <= kMaxCensusBatch.
constexpr int kMaxCensusBatch = 16;
cudaError_t enqueue_census_batch(const ImageView<const uint8_t>* gray, const ImageView<uint32_t>* census, int count,
                                 cudaStream_t stream);

}  // namespace cs::cuda
