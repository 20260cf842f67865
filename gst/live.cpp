#include "live.h"

#include <mutex>

namespace cs_gst {

void note_processing_time(GstCudaStereo* self, guint64 processing_ns) {
  GstCudaStereoPrivate* priv = PRIV(self);
  priv->processing_times.add(processing_ns);
  const GstClockTime latency = priv->processing_times.latency_for(priv->reported_latency);
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->stats.processing_time = priv->processing_times.recent_max();
    priv->stats.latency = latency;
  }
  if (latency == priv->reported_latency) return;
  GST_INFO_OBJECT(self, "matching takes up to %" GST_TIME_FORMAT " a frame: latency %" GST_TIME_FORMAT
                  " -> %" GST_TIME_FORMAT, GST_TIME_ARGS(priv->processing_times.recent_max()),
                  GST_TIME_ARGS(priv->reported_latency), GST_TIME_ARGS(latency));
  priv->reported_latency = latency;
  gst_aggregator_set_latency(GST_AGGREGATOR(self), latency, latency);
}

bool skip_late_frame(GstCudaStereo* self, GstClockTime running_time, GstClockTime pts, GstClockTime duration) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!priv->active.qos) return false;
  QosState::Verdict verdict;
  guint64 processed, skipped;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    verdict = priv->qos.judge(running_time, priv->processing_times.recent_max());
    if (!verdict.late) return false;
    skipped = ++priv->stats.qos_skipped;
    processed = priv->stats.frames;
  }
  priv->discont_pending = true;
  GST_DEBUG_OBJECT(self, "QoS: skipping the frame at running time %" GST_TIME_FORMAT ", it would be %" GST_STIME_FORMAT
                   " late", GST_TIME_ARGS(running_time), GST_STIME_ARGS(verdict.jitter));
  GstClockTime stream_time = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    GST_OBJECT_LOCK(self);
    stream_time = gst_segment_to_stream_time(&GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(self))->segment,
                                             GST_FORMAT_TIME, pts);
    GST_OBJECT_UNLOCK(self);
  }
  const gboolean live = GST_CLOCK_TIME_IS_VALID(gst_aggregator_get_latency(GST_AGGREGATOR(self)));
  GstMessage* msg = gst_message_new_qos(GST_OBJECT(self), live, running_time, stream_time, pts, duration);
  gst_message_set_qos_values(msg, verdict.jitter, verdict.proportion, 1000000);
  gst_message_set_qos_stats(msg, GST_FORMAT_BUFFERS, processed, skipped);
  gst_element_post_message(GST_ELEMENT(self), msg);
  return true;
}

void observe_qos(GstCudaStereo* self, GstEvent* event) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstQOSType type;
  gdouble proportion;
  GstClockTimeDiff diff;
  GstClockTime timestamp;
  gst_event_parse_qos(event, &type, &proportion, &diff, &timestamp);
  GST_LOG_OBJECT(self, "QoS: proportion %f, diff %" GST_STIME_FORMAT ", timestamp %" GST_TIME_FORMAT, proportion,
                 GST_STIME_ARGS(diff), GST_TIME_ARGS(timestamp));
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->qos.observe(proportion, diff, timestamp);
}

}  // namespace cs_gst
