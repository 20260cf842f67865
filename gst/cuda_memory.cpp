#include "cuda_memory.h"

#if HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>

namespace cs_gst {

bool caps_have_cuda_memory(const GstCaps* caps) {
  if (!caps || gst_caps_is_any(caps)) return false;
  for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
    GstCapsFeatures* f = gst_caps_get_features(caps, i);
    if (f && !gst_caps_features_is_any(f) && gst_caps_features_contains(f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
      return true;
  }
  return false;
}

bool readable_on_device(GstBuffer* buf, GstCudaContext* ctx) {
  if (!ctx) return false;
  const guint n = gst_buffer_n_memory(buf);
  if (n == 0) return false;
  for (guint i = 0; i < n; ++i) {
    GstMemory* mem = gst_buffer_peek_memory(buf, i);
    if (!gst_is_cuda_memory(mem)) return false;
    GstCudaContext* other = GST_CUDA_MEMORY_CAST(mem)->context;
    if (other != ctx && !gst_cuda_context_can_access_peer(ctx, other)) return false;
  }
  return true;
}

bool holds_cuda_memory(GstBuffer* buf) {
  for (guint i = 0; i < gst_buffer_n_memory(buf); ++i)
    if (gst_is_cuda_memory(gst_buffer_peek_memory(buf, i))) return true;
  return false;
}

}  // namespace cs_gst
#endif
