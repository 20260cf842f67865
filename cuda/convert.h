// Stage 1 (stages.h convert_to_gray / convert_to_rgb) on the GPU.
#pragma once

#include <cuda_runtime.h>

#include "stereo.h"

namespace cs::cuda {

// `in` must be in device memory. rgb may have data == nullptr (background
// model off): then only the matching intensity is written.
cudaError_t enqueue_convert(const FrameView& in, ImageView<uint8_t> gray, ImageView<uint32_t> rgb,
                            cudaStream_t stream);

}  // namespace cs::cuda
