// Stage 0 on the GPU (stages.h rectify_view): both views resampled through
// their maps into RGBA, one launch, the frame's first kernel when the engine
// rectifies (its input changes from frame to frame: described as a
// KernelCall, kernel_call.h).
#pragma once

#include <cuda_runtime.h>

#include "kernel_call.h"
#include "remap_math.h"
#include "stereo.h"

namespace cs::cuda {

// left and right in any input format (device memory, the same size as the
// maps); out: R,G,B,0 packed, the maps' size.
cudaError_t rectify_pair_call(const FrameView& left, const FrameView& right, const ImageView<const RemapPoint> map[2],
                              const ImageView<uint32_t> out[2], KernelCall* call);

}  // namespace cs::cuda
