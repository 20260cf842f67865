#include "cuda_context.h"

#include <mutex>
#include <string>

#if HAVE_GST_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

namespace cs_gst {

#if HAVE_GST_CUDA
std::string open_cuda_context(GstCudaStereo* self, int device_id, GstCudaContext** ctx) {
  GstCudaStereoPrivate* priv = PRIV(self);
  *ctx = nullptr;
  if (!gst_cuda_load_library())
    return "the CUDA driver library (libcuda.so.1) could not be loaded: no NVIDIA driver on this machine";
  gst_cuda_memory_init_once();
  // Not under ctx_lock: ensure_element_context takes a lock of its own and
  // queries the neighbours, whose own ensure may query us meanwhile (a lock
  // order inversion). It writes priv->cuda_ctx only while none is held, as
  // set_context does, and nothing else writes it before stop.
  const gboolean found = gst_cuda_ensure_element_context(GST_ELEMENT(self), device_id, &priv->cuda_ctx);
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  if (!found || !priv->cuda_ctx) {
    return device_id < 0 ? std::string("no CUDA context could be opened (no usable GPU?)")
                         : "no CUDA context could be opened on cuda-device-id=" + std::to_string(device_id) +
                               " (no such GPU, or it is unusable)";
  }
  *ctx = static_cast<GstCudaContext*>(gst_object_ref(priv->cuda_ctx));
  return "";
}
#endif

void take_context(GstCudaStereo* self, GstContext* context) {
#if HAVE_GST_CUDA
  GstCudaStereoPrivate* priv = PRIV(self);
  int device_id;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    device_id = priv->settings.cuda_device_id;
  }
  {
    // Takes the context only while none is held, and only of our device.
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    gst_cuda_handle_set_context(GST_ELEMENT(self), context, device_id, &priv->cuda_ctx);
  }
#else
  (void)self;
  (void)context;
#endif
}

bool answer_context_query(GstCudaStereo* self, GstQuery* query) {
#if HAVE_GST_CUDA
  GstCudaStereoPrivate* priv = PRIV(self);
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  return gst_cuda_handle_context_query(GST_ELEMENT(self), query, priv->cuda_ctx);
#else
  (void)self;
  (void)query;
  return false;
#endif
}

}  // namespace cs_gst
