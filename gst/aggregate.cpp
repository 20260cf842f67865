#include "aggregate.h"

#include <cstring>
#include <mutex>
#include <string>

#include "configure.h"
#include "cuda_context_scope.h"
#include "geometry.h"
#include "input.h"
#include "live.h"
#include "pairing.h"
#include "produce.h"

namespace cs_gst {

static void post_unpaired_warning(GstCudaStereo* self, const std::string& why) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GST_INFO_OBJECT(self, "placeholder output: %s", why.c_str());
  if (priv->warned_unpaired) return;
  priv->warned_unpaired = true;
  GST_ELEMENT_WARNING(self, STREAM, FAILED, ("Stereo input frame without a partner: %s", why.c_str()),
                      ("It gets an all-invalid output frame (disparity 0, GstCudaStereoMeta.placeholder = TRUE). "
                       "Further cases are only logged; the `stats` property counts them (unpaired-frames)."));
}

static GstClockTime running_time_of(GstAggregatorPad* pad, GstBuffer* buf) {
  GstClockTime ts = GST_BUFFER_PTS_IS_VALID(buf) ? GST_BUFFER_PTS(buf) : GST_BUFFER_DTS(buf);
  if (!GST_CLOCK_TIME_IS_VALID(ts)) return GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK(pad);
  const GstClockTime rt = gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME, ts);
  GST_OBJECT_UNLOCK(pad);
  return rt;
}

static GstClockTime output_pts_for(GstCudaStereo* self, GstClockTime running_time) {
  if (!GST_CLOCK_TIME_IS_VALID(running_time)) return GST_CLOCK_TIME_NONE;
  GstAggregator* agg = GST_AGGREGATOR(self);
  GST_OBJECT_LOCK(self);
  const GstClockTime pts =
      gst_segment_position_from_running_time(&GST_AGGREGATOR_PAD(agg->srcpad)->segment, GST_FORMAT_TIME, running_time);
  GST_OBJECT_UNLOCK(self);
  return pts;
}

static bool is_gap(GstBuffer* buf) {
  return GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(buf) == 0;
}

static void count_uploaded_ahead(GstCudaStereoPrivate* priv) {
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->stats.uploaded_ahead++;
}

// How host planes go to the GPU is counted with the CUDA engine only (the
// CPU engine reads them where they lie).
static bool counts_host_uploads(const GstCudaStereoPrivate* priv) {
  return std::strcmp(priv->backend_name, "cuda") == 0;
}

// The way of a frame made of two mapped host pictures (or one, twice): any
// gathered plane makes it gathered.
static HostPins::Upload upload_of(const GstVideoFrame& a, const GstVideoFrame& b) {
  const HostPins::Upload ua = HostPins::upload_of(a), ub = &a == &b ? ua : HostPins::upload_of(b);
  if (ua == HostPins::Upload::Gathered || ub == HostPins::Upload::Gathered) return HostPins::Upload::Gathered;
  if (ua == HostPins::Upload::PinnedInPlace || ub == HostPins::Upload::PinnedInPlace)
    return HostPins::Upload::PinnedInPlace;
  return HostPins::Upload::PinnedPool;
}

static void count_host_upload(GstCudaStereoPrivate* priv, HostPins::Upload how) {
  if (how == HostPins::Upload::PinnedPool) return;
  std::lock_guard<std::mutex> guard(priv->lock);
  (how == HostPins::Upload::PinnedInPlace ? priv->stats.pinned_in_place : priv->stats.gathered)++;
}

// ---------------------------------------------------------------- packed input

static GstFlowReturn aggregate_packed(GstCudaStereo* self, GstAggregatorPad* pad) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstBuffer* buf = gst_aggregator_pad_pop_buffer(pad);
  if (!buf) return gst_aggregator_pad_is_eos(pad) ? GST_FLOW_EOS : GST_FLOW_OK;
  UploadsAhead::Taken upload(&priv->uploads_ahead, GST_PAD(pad), buf);
  if (!priv->geometry.valid) {
    const bool gap = is_gap(buf);
    gst_buffer_unref(buf);
    if (gap) return GST_FLOW_OK;  // nothing known yet to make a frame of
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("A frame arrived on `sink` before usable caps: upstream must send video/x-raw caps first"),
                      ("a buffer arrived without (valid) caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const GstClockTime rt = running_time_of(pad, buf);
  const GstClockTime pts = output_pts_for(self, rt);
  const GstClockTime duration = GST_BUFFER_DURATION(buf);
  if (!is_gap(buf) && skip_late_frame(self, rt, pts, duration)) {
    priv->last_output_rt = rt;
    gst_buffer_unref(buf);
    return GST_FLOW_OK;
  }
  GstFlowReturn ret;
  if (is_gap(buf)) {
    ret = produce(self, nullptr, nullptr, pts, duration, true);
  } else {
    GstVideoFrame frame;
    const bool device = input_on_device(self, buf);
    bool gpu_failed = false;
    if (!map_input(self, buf, priv->packed_in.info, "sink", device, &frame, &gpu_failed)) {
      ret = gpu_failed ? GST_FLOW_ERROR : produce(self, nullptr, nullptr, pts, duration, false);
    } else {
      cs::FrameView whole;
      const bool ahead = !device && upload.device_copy_of(frame, &whole);
      if (!ahead) whole_frame_view(frame, device, &whole);
      cs::FrameView a = frame_view(frame, whole, priv->geometry, 0);
      cs::FrameView b = frame_view(frame, whole, priv->geometry, 1);
      const bool host = !device && counts_host_uploads(priv);
      const HostPins::Upload how = host ? upload_of(frame, frame) : HostPins::Upload::PinnedPool;
      if (host) HostPins::log_upload(GST_OBJECT(self), frame, how);
      bool engine_took = false;
      InputHold hold;  // the mapping now belongs to the frame in flight
      hold.keep(buf, &frame);
      ret = priv->geometry.right_first ? produce(self, &b, &a, pts, duration, false, &hold, &engine_took)
                                       : produce(self, &a, &b, pts, duration, false, &hold, &engine_took);
      if (ahead && engine_took) {
        upload.taken_by_engine();
        count_uploaded_ahead(priv);
      }
      if (engine_took) count_host_upload(priv, how);
    }
  }
  priv->last_output_rt = rt;
  gst_buffer_unref(buf);
  return ret;
}

// ---------------------------------------------------------------- two pads

// The head frame of a two-pad sink as the pairing rules see it.
static PadHead pad_head(GstAggregatorPad* pad, GstBuffer* head) {
  PadHead h;
  h.has_frame = head != nullptr;
  if (head) {
    h.running_time = running_time_of(pad, head);
    h.duration = GST_BUFFER_DURATION(head);
  }
  h.eos = gst_aggregator_pad_is_eos(pad);
  return h;
}

static GstFlowReturn aggregate_two_pads(GstCudaStereo* self, GstAggregatorPad* lpad, GstAggregatorPad* rpad,
                                        gboolean timeout) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstBuffer* lb = gst_aggregator_pad_peek_buffer(lpad);
  GstBuffer* rb = gst_aggregator_pad_peek_buffer(rpad);
  const PadHead lhead = pad_head(lpad, lb), rhead = pad_head(rpad, rb);
  GstFlowReturn ret = GST_FLOW_OK;
  const uint64_t tolerance = pairing_tolerance(lhead, rhead, priv->geometry.fps_n, priv->geometry.fps_d);
  const Decision decision = decide_pairing(lhead, rhead, tolerance, timeout);
  if (lb) gst_buffer_unref(lb);
  if (rb) gst_buffer_unref(rb);
  if (decision.action == Decision::kEndOfStream) return GST_FLOW_EOS;
  if (decision.action == Decision::kWait) return GST_FLOW_OK;

  const GstClockTime lt = lhead.running_time, rt = rhead.running_time;
  const bool take_left = decision.action != Decision::kRightAlone;
  const bool take_right = decision.action != Decision::kLeftAlone;
  const std::string& why = decision.why_unpaired;
  lb = take_left ? gst_aggregator_pad_pop_buffer(lpad) : nullptr;
  rb = take_right ? gst_aggregator_pad_pop_buffer(rpad) : nullptr;
  UploadsAhead::Taken lup(&priv->uploads_ahead, GST_PAD(lpad), lb);
  UploadsAhead::Taken rup(&priv->uploads_ahead, GST_PAD(rpad), rb);
  GstBuffer* primary = lb ? lb : rb;
  if (!primary) return GST_FLOW_OK;  // flushed meanwhile
  const GstClockTime out_rt = lb ? lt : rt;
  const GstClockTime duration = GST_BUFFER_DURATION(primary);

  if (is_late(out_rt, priv->last_output_rt)) {
    // Its partner already went out as a placeholder at this time.
    GST_INFO_OBJECT(self, "dropping late frame at running time %" GST_TIME_FORMAT, GST_TIME_ARGS(out_rt));
    if (!priv->warned_late) {
      priv->warned_late = true;
      GST_ELEMENT_WARNING(self, STREAM, FAILED,
                          ("Late stereo frame dropped: it came after its partner had gone out alone; raise the "
                           "`latency` property when the two sources lag each other"),
                          ("A frame at running time %" GST_TIME_FORMAT
                           " arrived after an output at that time was made (its partner went out unpaired).",
                           GST_TIME_ARGS(out_rt)));
    }
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->stats.dropped_frames++;
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    return GST_FLOW_OK;
  }

  if (!priv->geometry.valid) {
    const bool gaps_only = (!lb || is_gap(lb)) && (!rb || is_gap(rb));
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    if (gaps_only) return GST_FLOW_OK;
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("A frame arrived before both sink_left and sink_right had usable caps: upstream must send "
                       "video/x-raw caps on both first"),
                      ("a buffer arrived before both pads had valid caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const GstClockTime pts = output_pts_for(self, out_rt);
  const OutputKind kind = output_kind(lb && rb, lb && is_gap(lb), rb && is_gap(rb));
  if (kind != OutputKind::kGap && skip_late_frame(self, out_rt, pts, duration)) {
    priv->last_output_rt = out_rt;
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    return GST_FLOW_OK;
  }
  if (kind == OutputKind::kDisparity) {
    GstVideoFrame lf, rf;
    // The engine takes both views from one kind of memory: when only one
    // view is on the GPU, both are read on the host.
    const bool device = input_on_device(self, lb) && input_on_device(self, rb);
    bool gpu_failed = false;
    const bool lok = map_input(self, lb, priv->left_in.info, "sink_left", device, &lf, &gpu_failed);
    const bool rok = !gpu_failed && map_input(self, rb, priv->right_in.info, "sink_right", device, &rf, &gpu_failed);
    if (gpu_failed) {
      ret = GST_FLOW_ERROR;
    } else if (lok && rok) {
      // Both views from upload slots, or neither: one kind of memory.
      cs::FrameView lwhole, rwhole;
      const bool ahead = !device && lup.device_copy_of(lf, &lwhole) && rup.device_copy_of(rf, &rwhole);
      if (!ahead) {
        whole_frame_view(lf, device, &lwhole);
        whole_frame_view(rf, device, &rwhole);
      }
      cs::FrameView l = frame_view(lf, lwhole, priv->geometry, 0);
      cs::FrameView r = frame_view(rf, rwhole, priv->geometry, 0);
      const bool host = !device && counts_host_uploads(priv);
      const HostPins::Upload how = host ? upload_of(lf, rf) : HostPins::Upload::PinnedPool;
      if (host) {
        HostPins::log_upload(GST_OBJECT(self), lf, how);
        HostPins::log_upload(GST_OBJECT(self), rf, how);
      }
      bool engine_took = false;
      InputHold hold;  // the mappings now belong to the frame in flight
      hold.keep(lb, &lf);
      hold.keep(rb, &rf);
      ret = produce(self, &l, &r, pts, duration, false, &hold, &engine_took);
      if (ahead && engine_took) {
        lup.taken_by_engine();
        rup.taken_by_engine();
        count_uploaded_ahead(priv);
      }
      if (engine_took) count_host_upload(priv, how);
    } else {
      if (lok) gst_video_frame_unmap(&lf);
      if (rok) gst_video_frame_unmap(&rf);
      ret = produce(self, nullptr, nullptr, pts, duration, false);
    }
  } else {
    if (lb && rb && kind == OutputKind::kPlaceholder)
      GST_INFO_OBJECT(self, "%s is a gap: placeholder output", is_gap(lb) ? "sink_left" : "sink_right");
    if (!(lb && rb) && kind == OutputKind::kPlaceholder) post_unpaired_warning(self, why);
    ret = produce(self, nullptr, nullptr, pts, duration, kind == OutputKind::kGap);
  }
  priv->last_output_rt = out_rt;
  if (lb) gst_buffer_unref(lb);
  if (rb) gst_buffer_unref(rb);
  return ret;
}

// ---------------------------------------------------------------- the aggregator's calls

GstFlowReturn aggregate(GstCudaStereo* self, gboolean timeout) {
  GstCudaStereoPrivate* priv = PRIV(self);

  GstAggregatorPad *sink = nullptr, *left = nullptr, *right = nullptr;
  GST_OBJECT_LOCK(self);
  if (priv->sink_pad) sink = GST_AGGREGATOR_PAD(gst_object_ref(priv->sink_pad));
  if (priv->left_pad) left = GST_AGGREGATOR_PAD(gst_object_ref(priv->left_pad));
  if (priv->right_pad) right = GST_AGGREGATOR_PAD(gst_object_ref(priv->right_pad));
  GST_OBJECT_UNLOCK(self);

  CudaContextScope cuda_scope(engine_context(priv));
  GstFlowReturn ret = GST_FLOW_OK;
  if ((left || right) && !(left && right)) {
    GST_ELEMENT_ERROR(self, CORE, PAD,
                      ("Two-pad input needs both sink_left and sink_right, but only %s was requested: request and "
                       "link the other one too, or use the packed `sink` pad",
                       left ? "sink_left" : "sink_right"),
                      (nullptr));
    ret = GST_FLOW_ERROR;
  } else if (!apply_settings(self)) {
    ret = GST_FLOW_ERROR;
  } else if (left && right) {
    if (priv->two_pad_caps_dirty && priv->left_in.configured && priv->right_in.configured) {
      priv->two_pad_caps_dirty = false;
      if (!update_geometry(self)) ret = GST_FLOW_NOT_NEGOTIATED;
      // What depends on the views' size (the rectification's maps) before
      // the first pair of this geometry.
      else if (!apply_settings(self)) ret = GST_FLOW_ERROR;
    }
    if (ret == GST_FLOW_OK) ret = aggregate_two_pads(self, left, right, timeout);
  } else if (sink) {
    ret = aggregate_packed(self, sink);
  } else {
    ret = GST_FLOW_EOS;
  }
  // Frames in flight: while the next input already waits, up to the limit
  // stay with the engine, which works on them while that input is taken in
  // (the next aggregate call comes at once). Otherwise every frame is
  // finished and pushed now: a live source that keeps up gets each frame as
  // soon as it is done, and an application that pushes one frame and waits
  // for its output (appsrc, a harness) never waits for a frame held back.
  // EOS, an error or a live timeout push everything too.
  size_t keep = 0;
  if (ret == GST_FLOW_OK && priv->in_flight_limit > 1 && !priv->pending.empty()) {
    auto next_waits = [&] {
      return left && right ? gst_aggregator_pad_has_buffer(left) && gst_aggregator_pad_has_buffer(right)
                           : sink && gst_aggregator_pad_has_buffer(sink);
    };
    // Upstream was woken when this frame left its pad: let it queue the
    // next one before deciding (a thread switch, not a wait).
    bool waits = next_waits();
    if (!waits) {
      g_thread_yield();
      waits = next_waits();
    }
    if (waits) keep = priv->in_flight_limit - 1;
  }
  const GstFlowReturn pushed = complete_outputs(self, keep);
  if (ret == GST_FLOW_OK || ret == GST_FLOW_EOS) {
    if (pushed != GST_FLOW_OK) ret = pushed;
  }
  if (sink) gst_object_unref(sink);
  if (left) gst_object_unref(left);
  if (right) gst_object_unref(right);
  return ret;
}

GstClockTime next_time(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstClockTime next = GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK(self);
  GstAggregatorPad* pads[3] = {priv->sink_pad, priv->left_pad, priv->right_pad};
  for (GstAggregatorPad*& p : pads)
    if (p) gst_object_ref(p);
  GST_OBJECT_UNLOCK(self);
  for (GstAggregatorPad* p : pads) {
    if (!p) continue;
    if (GstBuffer* b = gst_aggregator_pad_peek_buffer(p)) {
      const GstClockTime t = running_time_of(p, b);
      if (GST_CLOCK_TIME_IS_VALID(t) && (!GST_CLOCK_TIME_IS_VALID(next) || t < next)) next = t;
      gst_buffer_unref(b);
    }
    gst_object_unref(p);
  }
  return next;
}

}  // namespace cs_gst
