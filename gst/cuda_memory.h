// Which caps and buffers are CUDA device memory the engine can use, with
// GStreamer's CUDA library (HAVE_GST_CUDA); nothing without it.
#pragma once

#include "config.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/gst.h>

namespace cs_gst {

// True when some structure of `caps` names memory:CUDAMemory itself (ANY
// caps or ANY features, as videoconvert has for passing metas, do not count:
// such elements read system memory).
bool caps_have_cuda_memory(const GstCaps* caps);

// True when every memory of `buf` is CUDA device memory that kernels running
// in `ctx` can read (the same context, or a peer with access enabled).
bool readable_on_device(GstBuffer* buf, GstCudaContext* ctx);

// True when some memory of `buf` is CUDA device memory: mapping it copies
// through the GPU, so a failed map is the GPU's (or its driver's) failure,
// not a malformed buffer.
bool holds_cuda_memory(GstBuffer* buf);

}  // namespace cs_gst
#endif
