// Output encoding (encode.h encode_output) on the GPU: raw Q4, depth, 8-bit
// and false colour, with the same per-pixel rules (stereo_math.h).
#pragma once

#include <cuda_runtime.h>

#include "encode.h"
#include "stereo.h"

namespace cs::cuda {

// luts: device copy of the three colour maps, 768 bytes each, in the order
// of the Colormap enum. mask: 255 = foreground (used for alpha).
// confidence: what OutputFormat::Confidence copies (data == nullptr there:
// zeros, as encode_output); other formats ignore it.
cudaError_t enqueue_encode(ImageView<const uint16_t> disparity_q4, ImageView<const uint8_t> mask,
                           const EncodeParams& params, const uint8_t* luts, uint8_t* dst, std::ptrdiff_t dst_pitch,
                           cudaStream_t stream, ImageView<const uint8_t> confidence = {});

}  // namespace cs::cuda
