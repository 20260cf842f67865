// Buffer pools: the pool the element proposes upstream for its input and the
// one it picks for its output: page-locked (pinned) system memory when the
// CUDA engine gives a pinned allocator, CUDA memory for memory:CUDAMemory
// caps, else plain video pools.
#pragma once

#include <gst/gst.h>

#include "config.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#else
typedef struct _GstCudaContext GstCudaContext;
#endif

namespace cs_gst {

// Answers an upstream ALLOCATION query with a pool for the input: CUDA
// memory in `cuda_ctx` (the shared context; none: upstream allocates in its
// own), else pinned memory from `pinned` (may be null), else a video pool.
// `log_object` names the element in the debug log.
void propose_input_pool(GstObject* log_object, GstQuery* query, GstCudaContext* cuda_ctx, GstAllocator* pinned);

enum class OutputPool {
  kPinned,    // a pinned pool is in the query
  kCuda,      // a CUDA pool of engine_ctx is in the query
  kFailed,    // the CUDA pool refused its configuration (or the caps are bad)
  kDefault,   // neither applies: the base class decides
};

// Puts the output pool into a downstream ALLOCATION query: pinned memory for
// system-memory caps when `pinned` is given and downstream's pool is a plain
// one, a CUDA pool of `engine_ctx` for memory:CUDAMemory caps.
OutputPool decide_output_pool(GstObject* log_object, GstQuery* query, GstCudaContext* engine_ctx,
                              GstAllocator* pinned);

}  // namespace cs_gst
