#include "cuda_context.h"

#include <map>
#include <mutex>
#include <string>

#if HAVE_GST_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

namespace cs_gst {

#if HAVE_GST_CUDA
namespace {

// One GstCudaContext a GPU for the elements of this process that find none
// in their pipeline: held weakly, so it lives while an element (or a
// neighbour that took it) holds it and is made anew after.
//
// Why (issue 36): a pipeline keeps one CUDA context, the last announced. In
// one pipeline whose branches alternate between two GPUs (gst-launch-1.0 with
// one chain a camera), every element asking the pipeline is handed the other
// GPU's context, refuses it, and GStreamer's gst_cuda_ensure_element_context
// makes it a context of its own: one context a branch, and a GPU running
// kernels of eight contexts in turn (time-sliced) instead of one.
GstCudaContext* device_context(guint device) {
  static std::mutex lock;
  static auto* contexts = new std::map<guint, GWeakRef>();  // never freed: outlives every element
  std::lock_guard<std::mutex> guard(lock);
  auto it = contexts->find(device);
  if (it == contexts->end()) {
    it = contexts->emplace(device, GWeakRef{}).first;
    g_weak_ref_init(&it->second, nullptr);
  }
  auto* ctx = static_cast<GstCudaContext*>(g_weak_ref_get(&it->second));
  if (ctx) return ctx;
  ctx = gst_cuda_context_new(device);
  if (ctx) g_weak_ref_set(&it->second, ctx);
  return ctx;
}

bool holds_context(GstCudaStereoPrivate* priv) {
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  return priv->cuda_ctx != nullptr;
}

// Asks the peers of the element's pads of one direction for their CUDA
// context (a CONTEXT query); takes the first of our device.
void ask_peers(GstCudaStereo* self, GstPadDirection direction) {
  GstElement* element = GST_ELEMENT(self);
  GstIterator* it = direction == GST_PAD_SRC ? gst_element_iterate_src_pads(element)
                                             : gst_element_iterate_sink_pads(element);
  GValue item = G_VALUE_INIT;
  bool done = false;
  while (!done && !holds_context(PRIV(self))) {
    switch (gst_iterator_next(it, &item)) {
      case GST_ITERATOR_OK: {
        GstQuery* query = gst_query_new_context(GST_CUDA_CONTEXT_TYPE);
        if (gst_pad_peer_query(GST_PAD(g_value_get_object(&item)), query)) {
          GstContext* context = nullptr;
          gst_query_parse_context(query, &context);
          if (context) take_context(self, context);
        }
        gst_query_unref(query);
        g_value_reset(&item);
        break;
      }
      case GST_ITERATOR_RESYNC:
        gst_iterator_resync(it);
        break;
      default:
        done = true;
        break;
    }
  }
  g_value_unset(&item);
  gst_iterator_free(it);
}

}  // namespace

std::string acquire_cuda_context(GstCudaStereo* self, int device_id) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!gst_cuda_load_library())
    return "the CUDA driver library (libcuda.so.1) could not be loaded: no NVIDIA driver on this machine";
  gst_cuda_memory_init_once();
  {
    // A context of another GPU (cuda-device-id changed since it was taken) goes.
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    if (priv->cuda_ctx && device_id >= 0) {
      guint held = 0;
      g_object_get(priv->cuda_ctx, "cuda-device-id", &held, nullptr);
      if (static_cast<int>(held) != device_id) gst_clear_object(&priv->cuda_ctx);
    }
    if (priv->cuda_ctx) return "";
  }
  // The GstContext protocol, as GStreamer's CUDA elements follow it:
  // downstream neighbours, upstream ones, then the application and the bins
  // (a NEED_CONTEXT message, answered through set_context). Not under
  // ctx_lock: the neighbours' answers may query us meanwhile.
  ask_peers(self, GST_PAD_SRC);
  ask_peers(self, GST_PAD_SINK);
  if (!holds_context(priv))
    gst_element_post_message(GST_ELEMENT(self),
                             gst_message_new_need_context(GST_OBJECT(self), GST_CUDA_CONTEXT_TYPE));
  if (holds_context(priv)) return "";
  // None of our GPU: the process's context for it, announced so that the
  // neighbours that start after us (upstream ones: cudaupload, decoders)
  // share it.
  GstCudaContext* shared = device_context(device_id < 0 ? 0 : static_cast<guint>(device_id));
  if (!shared) {
    return device_id < 0 ? std::string("no CUDA context could be opened (no usable GPU?)")
                         : "no CUDA context could be opened on cuda-device-id=" + std::to_string(device_id) +
                               " (no such GPU, or it is unusable)";
  }
  GstContext* context = gst_context_new_cuda_context(shared);
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    if (!priv->cuda_ctx) priv->cuda_ctx = static_cast<GstCudaContext*>(gst_object_ref(shared));
  }
  gst_object_unref(shared);
  GST_INFO_OBJECT(self, "announcing the CUDA context of device %d", device_id < 0 ? 0 : device_id);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_have_context(GST_OBJECT(self), context));
  return "";
}

std::string open_cuda_context(GstCudaStereo* self, int device_id, GstCudaContext** ctx) {
  GstCudaStereoPrivate* priv = PRIV(self);
  *ctx = nullptr;
  const std::string error = acquire_cuda_context(self, device_id);
  if (!error.empty()) return error;
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  if (!priv->cuda_ctx) return "no CUDA context could be opened";
  *ctx = static_cast<GstCudaContext*>(gst_object_ref(priv->cuda_ctx));
  return "";
}

void release_cuda_context(GstCudaStereoPrivate* priv) {
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  gst_clear_object(&priv->cuda_ctx);
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
