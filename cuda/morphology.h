// Stage 3b (stages.h close_mask): dilation then erosion with a (2r+1)^2
// square, each over the window's pixels inside the image.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// scratch must have the size of `in`; radius 0 copies.
cudaError_t enqueue_close_mask(ImageView<const uint8_t> in, int radius, ImageView<uint8_t> scratch,
                               ImageView<uint8_t> out, cudaStream_t stream);

}  // namespace cs::cuda
