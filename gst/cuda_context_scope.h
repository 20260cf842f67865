// Makes a GstCudaContext current on the calling thread for a scope (a push
// in the constructor, the pop in the destructor), so that the engine's and
// the allocator's CUDA calls run in the context the element shares with its
// neighbours. A null context, or a build without gstreamer-cuda-1.0, makes
// it a no-op.
#ifndef CS_GST_CUDA_CONTEXT_SCOPE_H
#define CS_GST_CUDA_CONTEXT_SCOPE_H

#include <gst/gst.h>

#include "config.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#endif

class CudaContextScope {
 public:
  // context: a GstCudaContext, or null.
  explicit CudaContextScope(gpointer context) {
#if HAVE_GST_CUDA
    if (context) pushed_ = gst_cuda_context_push(GST_CUDA_CONTEXT(context));
#else
    (void)context;
#endif
  }
  ~CudaContextScope() {
#if HAVE_GST_CUDA
    if (pushed_) gst_cuda_context_pop(nullptr);
#endif
  }
  CudaContextScope(const CudaContextScope&) = delete;
  CudaContextScope& operator=(const CudaContextScope&) = delete;

 private:
  bool pushed_ = false;
};

#endif  // CS_GST_CUDA_CONTEXT_SCOPE_H
