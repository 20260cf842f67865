#include "produce.h"

#include <chrono>
#include <mutex>
#include <string>
#include <utility>

#include "encode.h"
#include "error_text.h"
#include "gstcudastereometa.h"
#include "live.h"
#include "rectify.h"
#include "stats.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>

#include "cuda_memory.h"
#endif

namespace cs_gst {

static void record_output(GstCudaStereo* self, bool placeholder, const cs::FrameStats& fs) {
  GstCudaStereoPrivate* priv = PRIV(self);
  const auto now = std::chrono::steady_clock::now();
  if (priv->fps_window_frames == 0) priv->fps_window_start = now;
  priv->fps_window_frames++;
  const double elapsed = std::chrono::duration<double>(now - priv->fps_window_start).count();
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->stats.frames++;
  if (placeholder) priv->stats.unpaired_frames++;
  if (elapsed >= 1.0) {
    priv->stats.fps = (priv->fps_window_frames - 1) / elapsed;
    priv->fps_window_frames = 0;
  }
  if (!placeholder) priv->stats.engine = fs;
  priv->stats.backend = priv->backend_name;
}

// The element message of one output frame (post-messages), so that an
// application can react to what the camera sees from the bus instead of
// polling `stats`. `fs`: the engine's numbers for this frame, null for a
// placeholder (nothing matched: no foreground, nothing valid).
static void post_frame_message(GstCudaStereo* self, GstClockTime pts, GstClockTime duration,
                               const cs::FrameStats* fs, guint64 processing_ns) {
  GstCudaStereoPrivate* priv = PRIV(self);
  guint64 frame_index;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    frame_index = priv->stats.frames - 1;  // record_output counted this frame
  }
  GstClockTime running_time = GST_CLOCK_TIME_NONE, stream_time = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    const GstSegment* seg = &GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(self))->segment;
    GST_OBJECT_LOCK(self);
    running_time = gst_segment_to_running_time(seg, GST_FORMAT_TIME, pts);
    stream_time = gst_segment_to_stream_time(seg, GST_FORMAT_TIME, pts);
    GST_OBJECT_UNLOCK(self);
  }
  GstStructure* s =
      frame_message_structure(pts, running_time, stream_time, duration, fs, processing_ns, frame_index);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
}

// An output buffer: from the negotiated pool for CUDA memory or our pinned
// pool, else plain system memory. Anything but GST_FLOW_OK: no buffer (an
// error was posted where the stream must stop).
static GstFlowReturn acquire_output_buffer(GstCudaStereo* self, GstBuffer** outbuf) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstFlowReturn alloc_ret = GST_FLOW_OK;
  GstBufferPool* pool = priv->out_cuda_memory || priv->out_pinned_pool
                            ? gst_aggregator_get_buffer_pool(GST_AGGREGATOR(self))
                            : nullptr;
  if (pool) {
    if (!gst_buffer_pool_is_active(pool) && !gst_buffer_pool_set_active(pool, TRUE)) {
      gst_object_unref(pool);
      if (priv->out_cuda_memory) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not activate the CUDA output buffer pool"), (nullptr));
        return GST_FLOW_ERROR;
      }
      // Pinned memory is only faster, never needed: go on in plain memory.
      GST_WARNING_OBJECT(self, "could not activate the pinned output pool; output goes to plain system memory");
      priv->out_pinned_pool = false;
    } else {
      // Frames in flight hold pool buffers: when the pool has none left,
      // they are pushed (and give theirs back in time) before waiting.
      if (!priv->pending.empty()) {
        GstBufferPoolAcquireParams dontwait = {};
        dontwait.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
        alloc_ret = gst_buffer_pool_acquire_buffer(pool, outbuf, &dontwait);
        if (alloc_ret == GST_FLOW_EOS) {
          alloc_ret = complete_outputs(self, 0);
          if (alloc_ret == GST_FLOW_OK) alloc_ret = gst_buffer_pool_acquire_buffer(pool, outbuf, nullptr);
        }
      } else {
        alloc_ret = gst_buffer_pool_acquire_buffer(pool, outbuf, nullptr);
      }
      gst_object_unref(pool);
      if (alloc_ret != GST_FLOW_OK && (priv->out_cuda_memory || alloc_ret == GST_FLOW_FLUSHING)) {
        GST_DEBUG_OBJECT(self, "no output buffer from the pool: %s", gst_flow_get_name(alloc_ret));
        // A pool posts nothing on the bus: an error here would end the
        // stream with EOS and no word of why.
        if (alloc_ret == GST_FLOW_ERROR)
          GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                            ("Could not get an output frame in CUDA memory (out of GPU memory?)"), (nullptr));
        return alloc_ret;
      }
      if (alloc_ret != GST_FLOW_OK) {
        GST_WARNING_OBJECT(self, "no buffer from the pinned output pool (%s); output goes to plain system memory",
                           gst_flow_get_name(alloc_ret));
        priv->out_pinned_pool = false;
        *outbuf = nullptr;
      }
    }
  }
  if (!*outbuf) *outbuf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&priv->out_info), nullptr);
  return GST_FLOW_OK;
}

// The engine's error for a frame (at submit or at finish), as the element's
// error: the sentence for the user, the source location in the debug string.
static void post_matching_error(GstCudaStereo* self, const std::string& text) {
  const cs::ErrorParts e = cs::split_error_text(text);
  GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Stereo matching failed: %s", e.message.c_str()), ("%s", e.detail.c_str()));
}

// Maps `outbuf` into `p` and has the engine's result for the views written
// into it (submitted: finished later), or writes an all-invalid placeholder
// when they are not both given. On failure (an error was posted) `outbuf`
// is dropped.
static GstFlowReturn start_output(GstCudaStereo* self, const cs::FrameView* left, const cs::FrameView* right,
                                  GstBuffer* outbuf, PendingOutput* p, bool* engine_took) {
  GstCudaStereoPrivate* priv = PRIV(self);
  const bool placeholder = !(left && right);
  // The engine writes device memory directly when the inputs are on the
  // device too (CUDA in, CUDA out: nothing crosses the host). Host inputs or
  // placeholders write through the CUDA memory's host staging instead.
  bool out_device = false;
#if HAVE_GST_CUDA
  out_device = !placeholder && priv->engine_ctx && left->memory == cs::Memory::Device &&
               readable_on_device(outbuf, priv->engine_ctx);
#endif
  const GstMapFlags out_flags =
#if HAVE_GST_CUDA
      out_device ? static_cast<GstMapFlags>(GST_MAP_WRITE | GST_MAP_CUDA) :
#endif
                 GST_MAP_WRITE;
  if (!gst_video_frame_map(&p->out, &priv->out_info, outbuf, out_flags)) {
    gst_buffer_unref(outbuf);
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Could not map the output buffer"), (nullptr));
    return GST_FLOW_ERROR;
  }
  cs::EncodeParams enc = encode_params(priv->active, priv->out_format);
  enc.views = views_output(priv->active, priv->geometry.top_bottom());
  cs::OutputFrame dst;
  dst.data = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&p->out, 0));
  dst.pitch = GST_VIDEO_FRAME_PLANE_STRIDE(&p->out, 0);
  cs::output_frame_size(enc.views, priv->geometry.view_width, priv->geometry.view_height, &dst.width, &dst.height);
  dst.memory = out_device ? cs::Memory::Device : cs::Memory::Host;
  p->submitted = std::chrono::steady_clock::now();
  if (!placeholder) {
    // The buffer is pushed only after the engine's finish(): with a device
    // output, GStreamer 1.22's CUDA memory carries no stream, so a
    // downstream CUDA element could not otherwise order its reads after
    // our writes.
    if (engine_took) *engine_took = true;
    const std::string error = priv->engine->submit(*left, *right, enc, dst);
    if (!error.empty()) {
      gst_video_frame_unmap(&p->out);
      gst_buffer_unref(outbuf);
      post_matching_error(self, error);
      return GST_FLOW_ERROR;
    }
    p->engine = true;
  } else if (enc.views != cs::ViewsOutput::None) {
    // No pair: both views black.
    const cs::ImageView<const uint32_t> none{nullptr, priv->geometry.view_width, priv->geometry.view_height, 0};
    cs::encode_views(none, none, enc, dst.data, dst.pitch);
  } else {
    cs::encode_output(static_cast<const cs::Image<uint16_t>&>(priv->invalid_q4).view(), nullptr, enc, dst.data, dst.pitch);
  }
  p->outbuf = outbuf;
  p->out_mapped = true;
  return GST_FLOW_OK;
}

// Stamps, describes (GstCudaStereoMeta, stats, the frame message) and
// pushes a filled output buffer.
static GstFlowReturn finish_output(GstCudaStereo* self, const PendingOutput& p, guint64 processing_ns,
                                   const cs::FrameStats& fs) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstBuffer* outbuf = p.outbuf;
  const GstClockTime pts = p.pts, duration = p.duration;
  const bool placeholder = p.placeholder;
  const Settings& active = p.active;
  GST_BUFFER_PTS(outbuf) = pts;
  GST_BUFFER_DURATION(outbuf) = duration;
  if (p.gap) GST_BUFFER_FLAG_SET(outbuf, GST_BUFFER_FLAG_GAP);
  if (p.discont) GST_BUFFER_FLAG_SET(outbuf, GST_BUFFER_FLAG_DISCONT);  // frames were skipped (QoS)

  GstCudaStereoMeta* meta = gst_buffer_add_cuda_stereo_meta(outbuf);
  meta->scale = 16;
  meta->invalid_value = 0;
  meta->min_disparity = active.params.min_disparity;
  meta->max_disparity = active.params.max_disparity;
  meta->foreground_fraction = placeholder ? 0.0 : fs.foreground_fraction;
  meta->matched_fraction = placeholder ? 0.0 : fs.matched_fraction();
  meta->levels = p.levels;
  meta->backend = g_intern_string(priv->backend_name);
  meta->depth = active.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
  meta->confidence = confidence_output(active);
  meta->rectified_views = rectified_output(active);
  meta->placeholder = placeholder;
  meta->frame_index = fs.frame_index;
  GstCustomMeta* custom = gst_buffer_add_cuda_stereo_custom_meta(outbuf, meta, active.baseline_m, active.focal_px);
  // With a calibration: its Q, for reprojecting to 3-D (gstcudastereometa.h).
  if (custom && active.params.rectification) {
    GValue q = G_VALUE_INIT;
    gst_value_array_init(&q, 16);
    for (double v : active.params.rectification->geometry.Q) {
      GValue d = G_VALUE_INIT;
      g_value_init(&d, G_TYPE_DOUBLE);
      g_value_set_double(&d, v);
      gst_value_array_append_and_take_value(&q, &d);
    }
    gst_structure_take_value(gst_custom_meta_get_structure(custom), "rectification-q", &q);
  }

  record_output(self, placeholder, fs);
  if (!placeholder) note_processing_time(self, processing_ns);
  if (active.post_messages) post_frame_message(self, pts, duration, placeholder ? nullptr : &fs, processing_ns);

  GstAggregator* agg = GST_AGGREGATOR(self);
  {
    GstSegment* seg = &GST_AGGREGATOR_PAD(agg->srcpad)->segment;
    GST_OBJECT_LOCK(self);
    if (GST_CLOCK_TIME_IS_VALID(pts))
      seg->position = GST_CLOCK_TIME_IS_VALID(duration) ? pts + duration : pts;
    GST_OBJECT_UNLOCK(self);
  }
  GST_LOG_OBJECT(self, "output %" GST_TIME_FORMAT "%s", GST_TIME_ARGS(pts), placeholder ? " (placeholder)" : "");
  return gst_aggregator_finish_buffer(agg, outbuf);
}

GstFlowReturn produce(GstCudaStereo* self, const cs::FrameView* left, const cs::FrameView* right, GstClockTime pts,
                      GstClockTime duration, bool gap, InputHold* inputs, bool* engine_took) {
  GstCudaStereoPrivate* priv = PRIV(self);
  InputHold held;
  if (inputs) std::swap(held, *inputs);
  if (!priv->out_configured && priv->geometry.valid) {
    // New output caps: the frames made for the old ones go first.
    const GstFlowReturn ret = complete_outputs(self, 0);
    if (ret != GST_FLOW_OK) {
      held.release();
      return ret;
    }
    gst_aggregator_negotiate(GST_AGGREGATOR(self));
  }
  if (!priv->out_configured) {
    held.release();
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("No output format could be agreed with downstream for %dx%d views: cudastereo gives "
                       "GRAY16_LE, GRAY8, RGBA, BGRA, RGBx or BGRx (GRAY16_LE only with output-mode=depth, GRAY8 "
                       "only with output-mode=confidence, no GRAY with output-mode=rectified); put videoconvert after it or ask for one of these",
                       priv->geometry.view_width, priv->geometry.view_height),
                      (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const bool placeholder = !(left && right);
  GstBuffer* outbuf = nullptr;
  GstFlowReturn ret = acquire_output_buffer(self, &outbuf);
  if (ret != GST_FLOW_OK) {
    held.release();
    return ret;
  }
  PendingOutput p;
  ret = start_output(self, left, right, outbuf, &p, engine_took);
  if (ret != GST_FLOW_OK) {
    held.release();
    return ret;
  }
  p.inputs = held;
  p.placeholder = placeholder;
  p.gap = gap;
  p.discont = priv->discont_pending;
  priv->discont_pending = false;
  p.pts = pts;
  p.duration = duration;
  p.active = priv->active;
  p.levels = cs::pipeline_levels(priv->active.params, priv->geometry.view_width, priv->geometry.view_height);
  priv->pending.push_back(std::move(p));
  if (priv->pending.size() > 1 && !placeholder) {
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->stats.overlapped++;
  }
  return GST_FLOW_OK;
}

// The oldest frame in flight, finished: its buffer unmapped, its inputs
// released; the engine's outcome in *result.
static PendingOutput finish_oldest(GstCudaStereoPrivate* priv, cs::Engine::FrameResult* result) {
  PendingOutput p = std::move(priv->pending.front());
  priv->pending.pop_front();
  *result = p.engine ? priv->engine->finish() : cs::Engine::FrameResult();
  if (p.out_mapped) gst_video_frame_unmap(&p.out);
  p.out_mapped = false;
  p.inputs.release();
  return p;
}

GstFlowReturn complete_outputs(GstCudaStereo* self, size_t keep) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstFlowReturn ret = GST_FLOW_OK;
  while (priv->pending.size() > keep) {
    cs::Engine::FrameResult r;
    PendingOutput p = finish_oldest(priv, &r);
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref(p.outbuf);
      continue;
    }
    if (!r.error.empty()) {
      gst_buffer_unref(p.outbuf);
      post_matching_error(self, r.error);
      ret = GST_FLOW_ERROR;
      continue;
    }
    const guint64 processing_ns =
        p.placeholder ? 0
                      : std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                             p.submitted)
                            .count();
    ret = finish_output(self, p, processing_ns, r.stats);
  }
  return ret;
}

void drop_outputs(GstCudaStereoPrivate* priv) {
  while (!priv->pending.empty()) {
    cs::Engine::FrameResult r;
    PendingOutput p = finish_oldest(priv, &r);
    gst_buffer_unref(p.outbuf);
  }
}

}  // namespace cs_gst
