#include "engine_setup.h"

#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "cuda_context.h"
#include "cuda_context_scope.h"
#include "engine_factory.h"
#include "error_text.h"
#include "pinned_allocator.h"
#include "property_enums.h"
#include "produce.h"

namespace cs_gst {

// Developer detail for a debug string: the error text's own detail and the
// engine factory's (the failing CUDA call), either of which may be empty.
static std::string join_details(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty() || a == b) return a;
  return a + "; " + b;
}

bool open_engine(GstCudaStereo* self, const Settings& s) {
  GstCudaStereoPrivate* priv = PRIV(self);
  const auto backend = static_cast<Backend>(s.backend);
  const bool overlap = s.frames_in_flight > 1;
  EngineChoice choice;
#if HAVE_GST_CUDA
  GstCudaContext* ctx = nullptr;
  if (backend != Backend::Cpu) {
    const std::string cuda_error = open_cuda_context(self, s.cuda_device_id, &ctx);
    if (ctx) {
      // The engine adopts the pushed context (device_id -1): its memory,
      // stream and graph live in the context the pipeline shares.
      gst_cuda_context_push(ctx);
      choice = create_engine(backend, -1, s.params, overlap);
      gst_cuda_context_pop(nullptr);
    } else if (backend == Backend::Cuda) {
      choice.error = "backend=cuda was requested but " + cuda_error;
    } else {
      choice = create_engine(Backend::Cpu, -1, s.params, overlap);
      if (choice.engine) choice.notice = "backend=auto runs on the CPU: " + cuda_error;
    }
  } else {
    choice = create_engine(backend, s.cuda_device_id, s.params, overlap);
  }
  if (choice.engine && ctx && std::strcmp(choice.engine->backend_name(), "cuda") == 0)
    priv->engine_ctx = ctx;
  else if (ctx)
    gst_object_unref(ctx);
#else
  choice = create_engine(backend, s.cuda_device_id, s.params, overlap);
#endif
  if (!choice.engine) {
    const cs::ErrorParts error = cs::split_error_text(choice.error);
    const std::string detail = join_details(error.detail, choice.debug);
    GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("No stereo engine: %s", error.message.c_str()),
                      ("backend=%s, cuda-device-id=%d%s%s",
                       g_enum_get_value(G_ENUM_CLASS(g_type_class_peek(gst_cuda_stereo_backend_get_type())), s.backend)
                           ->value_nick,
                       s.cuda_device_id, detail.empty() ? "" : "; ", detail.c_str()));
    return false;
  }
  if (!choice.notice.empty() && !priv->notice_posted) {
    // Once per element: repeated start/stop cycles would otherwise repeat it.
    priv->notice_posted = true;
    const cs::ErrorParts notice = cs::split_error_text(choice.notice);
    const std::string detail = join_details(notice.detail, choice.debug);
    GST_ELEMENT_WARNING(self, LIBRARY, INIT, ("%s", notice.message.c_str()),
                        ("set backend=cpu to choose the CPU explicitly and silence this%s%s",
                         detail.empty() ? "" : "; ", detail.c_str()));
  }
  priv->engine = std::move(choice.engine);
  priv->backend_name = priv->engine->backend_name();
  // Holding frames back gains nothing when the engine finishes each in submit().
  priv->in_flight_limit = priv->engine->overlaps_frames() ? static_cast<size_t>(s.frames_in_flight) : 1;
  if (std::strcmp(priv->backend_name, "cuda") == 0) {
    GstObject* alloc_ctx = nullptr;
#if HAVE_GST_CUDA
    alloc_ctx = GST_OBJECT(priv->engine_ctx);
#endif
    GstAllocator* pinned = gst_cuda_stereo_pinned_allocator_new(alloc_ctx);
    // Pinned memory is an optimisation: without it (a locked-memory limit,
    // say) buffers stay in plain memory and the engine copies through staging.
    GstMemory* probe = gst_allocator_alloc(pinned, 4096, nullptr);
    if (probe) {
      gst_memory_unref(probe);
      std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
      gst_object_replace(reinterpret_cast<GstObject**>(&priv->pinned_allocator), GST_OBJECT(pinned));
    } else {
      GST_WARNING_OBJECT(self, "no pinned host memory: system-memory frames are copied through staging");
    }
    gst_object_unref(pinned);
  }
  if (engine_uploads_ahead(priv->engine.get())) {
    priv->uploads_ahead.start(priv->engine.get(), engine_context(priv));
  }
  // Pin in place needs the GstCudaContext the engine runs in: a
  // registration lives as long as the memory it pins, in that context, which
  // each registration keeps alive meanwhile. Without GStreamer's CUDA
  // library there is none, and system memory is gathered as before.
  priv->host_pins.start(engine_context(priv));
  GST_INFO_OBJECT(self, "engine: %s", priv->backend_name);
  return true;
}

void close_engine(GstCudaStereoPrivate* priv) {
  // Probes stop pinning (what was pinned stays so until its memory is
  // freed) and uploading; uploads never processed go back.
  priv->host_pins.stop();
  priv->uploads_ahead.stop();
  {
    // The engine frees its device memory in the context it was made in,
    // after the frames in flight (never pushed now) are done.
    CudaContextScope cuda_scope(engine_context(priv));
    drop_outputs(priv);
    priv->engine.reset();
  }
#if HAVE_GST_CUDA
  gst_clear_object(&priv->engine_ctx);
  release_cuda_context(priv);
#endif
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    gst_clear_object(&priv->pinned_allocator);  // pools still holding buffers keep their own reference
  }
}

}  // namespace cs_gst
