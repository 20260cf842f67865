// Reading an input buffer: whether the CUDA engine can take it where it
// lies on the GPU, and mapping it, checking that it holds what its caps
// promise (a short or malformed buffer gets a placeholder output and one
// warning; CUDA memory the GPU cannot give back is an error).
#pragma once

#include "element_private.h"

namespace cs_gst {

// True when the CUDA engine can read `buf` where it lies on the GPU.
bool input_on_device(GstCudaStereo* self, GstBuffer* buf);

// Maps an input buffer, checking that it holds what its caps promise.
// `device`: map CUDA memory for the GPU (GST_MAP_CUDA: device pointers);
// otherwise CUDA memory is downloaded to its host staging by the map.
// False: not mapped; a buffer that does not hold what its caps say gets a
// placeholder output, but when *gpu_failed is set the GPU failed to give
// CUDA memory back (an error was posted) and the stream must stop.
bool map_input(GstCudaStereo* self, GstBuffer* buf, const GstVideoInfo& info, const char* pad_name, bool device,
               GstVideoFrame* frame, bool* gpu_failed);

}  // namespace cs_gst
