// output-mode=rectified on the GPU (encode.h encode_views): the views as
// matching sees them, rectified (stage 0, stages.h rectify_view) or not,
// written into the output frame. Within a matched frame stage 0 is fused
// into the conversion (convert.h: each pixel read through its map).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "encode.h"
#include "remap_math.h"
#include "stereo.h"

namespace cs::cuda {

// The views as matching sees them into an output frame (encode.h
// encode_views; encode.views and encode.format say how): rectified through
// `maps` (both views'), or their colour as stage 1 reads it when maps is
// null. dst: device memory, 4-byte aligned, as is pitch.
cudaError_t enqueue_views_output(const FrameView& left, const FrameView& right,
                                 const ImageView<const RemapPoint>* maps, const EncodeParams& encode, uint8_t* dst,
                                 std::ptrdiff_t pitch, cudaStream_t stream);

}  // namespace cs::cuda
