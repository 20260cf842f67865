#include "allocation.h"

#include <gst/video/video.h>

#include "cuda_memory.h"
#include "pinned_allocator.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#endif

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_stereo_debug);
#define GST_CAT_DEFAULT gst_cuda_stereo_debug

namespace cs_gst {

// Configures `pool` for video frames of `caps` with video meta; *size gets
// the buffer size the pool settled on (a CUDA pool pads rows to the GPU's
// pitch). False when the pool refuses the configuration.
static bool configure_video_pool(GstBufferPool* pool, GstCaps* caps, const GstVideoInfo& info, guint min, guint max,
                                 guint* size) {
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), min, max);
  if (!gst_buffer_pool_set_config(pool, config)) return false;
  config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_get_params(config, nullptr, size, nullptr, nullptr);
  gst_structure_free(config);
  return true;
}

// Downstream's first pool is replaced when there is one (update), else ours is added.
static void put_pool(GstQuery* query, bool update, GstBufferPool* pool, guint size, guint min, guint max) {
  if (update)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool(query, pool, size, min, max);
}

void propose_input_pool(GstObject* log_object, GstQuery* query, GstCudaContext* cuda_ctx, GstAllocator* pinned) {
  GstCaps* caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation(query, &caps, &need_pool);
  GstVideoInfo info;
  if (!need_pool || !caps || !gst_video_info_from_caps(&info, caps)) return;
  GstBufferPool* pool = nullptr;
  bool cuda_caps = false;
#if HAVE_GST_CUDA
  cuda_caps = caps_have_cuda_memory(caps);
  if (cuda_caps) {
    if (!cuda_ctx) return;  // upstream allocates in its own context
    pool = gst_cuda_buffer_pool_new(cuda_ctx);
  }
#else
  (void)cuda_ctx;
#endif
  if (!cuda_caps && pinned) {
    guint size = 0;
    pool = gst_cuda_stereo_pinned_pool_new(pinned, caps, 0, 0, &size);
    if (pool) {
      GST_DEBUG_OBJECT(log_object, "proposing a pinned pool for %" GST_PTR_FORMAT, caps);
      gst_query_add_allocation_pool(query, pool, size, 0, 0);
      gst_object_unref(pool);
      return;
    }
  }
  if (!pool) pool = gst_video_buffer_pool_new();
  guint size = GST_VIDEO_INFO_SIZE(&info);
  if (!configure_video_pool(pool, caps, info, 0, 0, &size)) {
    GST_WARNING_OBJECT(log_object, "could not configure the proposed input pool");
    gst_object_unref(pool);
    return;
  }
  gst_query_add_allocation_pool(query, pool, size, 0, 0);
  gst_object_unref(pool);
}

OutputPool decide_output_pool(GstObject* log_object, GstQuery* query, GstCudaContext* engine_ctx,
                              GstAllocator* pinned) {
  GstCaps* caps = nullptr;
  gst_query_parse_allocation(query, &caps, nullptr);
  bool cuda_caps = false;
#if HAVE_GST_CUDA
  cuda_caps = caps_have_cuda_memory(caps);
#endif
  if (pinned && caps && !cuda_caps) {
    GstBufferPool* theirs = nullptr;
    guint min = 0, max = 0;
    const bool update = gst_query_get_n_allocation_pools(query) > 0;
    if (update) gst_query_parse_nth_allocation_pool(query, 0, &theirs, nullptr, &min, &max);
    const bool plain = !theirs || G_OBJECT_TYPE(theirs) == GST_TYPE_BUFFER_POOL ||
                       G_OBJECT_TYPE(theirs) == GST_TYPE_VIDEO_BUFFER_POOL;
    if (theirs) gst_object_unref(theirs);
    guint size = 0;
    GstBufferPool* pool = plain ? gst_cuda_stereo_pinned_pool_new(pinned, caps, min, max, &size) : nullptr;
    if (pool) {
      put_pool(query, update, pool, size, min, max);
      gst_object_unref(pool);
      GST_DEBUG_OBJECT(log_object, "output in pinned system memory");
      return OutputPool::kPinned;
    }
  }
#if HAVE_GST_CUDA
  if (engine_ctx && cuda_caps) {
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps)) return OutputPool::kFailed;
    GstBufferPool* pool = nullptr;
    guint size = GST_VIDEO_INFO_SIZE(&info), min = 0, max = 0;
    const bool update = gst_query_get_n_allocation_pools(query) > 0;
    if (update) {
      gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
      if (pool && !(GST_IS_CUDA_BUFFER_POOL(pool) && GST_CUDA_BUFFER_POOL(pool)->context == engine_ctx))
        gst_clear_object(&pool);
    }
    if (!pool) pool = gst_cuda_buffer_pool_new(engine_ctx);
    if (!configure_video_pool(pool, caps, info, min, max, &size)) {
      GST_ERROR_OBJECT(log_object, "the CUDA buffer pool refused its configuration");
      gst_object_unref(pool);
      return OutputPool::kFailed;
    }
    put_pool(query, update, pool, size, min, max);
    gst_object_unref(pool);
    return OutputPool::kCuda;
  }
#else
  (void)engine_ctx;
#endif
  return OutputPool::kDefault;
}

}  // namespace cs_gst
