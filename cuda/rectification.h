// Stage 0 on the GPU (stages.h rectify_view): both views resampled through
// their maps into RGBA, one launch, the frame's first kernel when the engine
// rectifies (its input changes from frame to frame: described as a
// KernelCall, kernel_call.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "encode.h"
#include "kernel_call.h"
#include "remap_math.h"
#include "stereo.h"

namespace cs::cuda {

// left and right in any input format (device memory, the same size as the
// maps); out: R,G,B,0 packed, the maps' size.
cudaError_t rectify_pair_call(const FrameView& left, const FrameView& right, const ImageView<const RemapPoint> map[2],
                              const ImageView<uint32_t> out[2], KernelCall* call);

// The views as matching sees them into an output frame (encode.h
// encode_views; encode.views and encode.format say how): rectified through
// `maps` (both views'), or their colour as stage 1 reads it when maps is
// null. dst: device memory, 4-byte aligned, as is pitch.
cudaError_t enqueue_views_output(const FrameView& left, const FrameView& right,
                                 const ImageView<const RemapPoint>* maps, const EncodeParams& encode, uint8_t* dst,
                                 std::ptrdiff_t pitch, cudaStream_t stream);

}  // namespace cs::cuda
