// Live behaviour of cudastereo on the CPU backend (issue 16): the latency it
// reports is the processing time it measured, and QoS from a clock-synced
// sink makes it skip late frames before matching (qos=true), or not at all
// (qos=false: one output per input). First exact checks on harnesses with
// hand-made QoS events, then real live pipelines the CPU cannot keep up
// with: a live videotestsrc at 60 fps of 320x240 views (one matched frame
// takes about 100 ms on a 2-core machine) into fakesink sync=true qos=true
// max-lateness=20ms, as a video sink is.
#include <gst/base/gstbasesink.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pipeline_helpers.h"

using namespace pipeline_helpers;

namespace {

constexpr int kW = 64;  // one view
constexpr int kH = 48;
constexpr GstClockTime kFrame = 40 * GST_MSECOND;
constexpr GstClockTime kMs = GST_MSECOND;

// A GRAY8 frame of noise (a view, or both side by side).
GstBuffer* gray_frame(int w, int h, GstClockTime pts, guint32 seed) {
  return noise_buffer(static_cast<gsize>(w) * h, pts, kFrame, seed * 2654435761u + 1);
}

std::string gray_caps(int w, int h) {
  return "video/x-raw,format=GRAY8,width=" + std::to_string(w) + ",height=" + std::to_string(h) + ",framerate=25/1";
}

GstElement* make_stereo(const char* props) {
  GstElement* e = gst_element_factory_make("cudastereo", nullptr);
  fail_unless(e != nullptr, "cudastereo not found: is GST_PLUGIN_PATH_1_0 set?");
  g_object_set(e, "max-disparity", 16, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "backend", "cpu");
  gchar** kv = g_strsplit(props, " ", -1);
  for (gchar** p = kv; *p; ++p) {
    if (!**p) continue;
    gchar** pair = g_strsplit(*p, "=", 2);
    gst_util_set_object_arg(G_OBJECT(e), pair[0], pair[1]);
    g_strfreev(pair);
  }
  g_strfreev(kv);
  return e;
}

struct Harnessed {
  GstHarness* h;      // packed `sink`, or sink_left (with the src pad)
  GstHarness* right;  // sink_right, or null
  GstBus* bus;
};

Harnessed packed_harness(const char* props) {
  GstElement* e = make_stereo((std::string("input-layout=side-by-side ") + props).c_str());
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src");
  gst_object_unref(e);
  gst_harness_set_live(h, TRUE);
  gst_harness_set_sink_caps_str(h, "video/x-raw,format=GRAY16_LE");
  gst_harness_set_src_caps_str(h, gray_caps(2 * kW, kH).c_str());
  return {h, nullptr, bus};
}

Harnessed two_pad_harness(const char* props) {
  GstElement* e = make_stereo(props);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  GstHarness* l = gst_harness_new_with_element(e, "sink_left", "src");
  GstHarness* r = gst_harness_new_with_element(e, "sink_right", nullptr);
  gst_object_unref(e);
  gst_harness_set_live(l, TRUE);
  gst_harness_set_live(r, TRUE);
  gst_harness_set_sink_caps_str(l, "video/x-raw,format=GRAY16_LE");
  gst_harness_set_src_caps_str(l, gray_caps(kW, kH).c_str());
  gst_harness_set_src_caps_str(r, gray_caps(kW, kH).c_str());
  return {l, r, bus};
}

void teardown(Harnessed& t) {
  if (t.right) gst_harness_teardown(t.right);
  gst_harness_teardown(t.h);
  gst_bus_set_flushing(t.bus, TRUE);
  gst_object_unref(t.bus);
}

// One frame (or pair) at `pts` into the element.
void push(Harnessed& t, GstClockTime pts, guint32 seed) {
  if (t.right) {
    fail_unless_equals_int(gst_harness_push(t.h, gray_frame(kW, kH, pts, seed)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(t.right, gray_frame(kW, kH, pts, seed + 1)), GST_FLOW_OK);
  } else {
    fail_unless_equals_int(gst_harness_push(t.h, gray_frame(2 * kW, kH, pts, seed)), GST_FLOW_OK);
  }
}

// The sink's QoS event as a clock-synced sink sends it upstream: the frame
// at `timestamp` was rendered `jitter` late.
void send_qos(Harnessed& t, double proportion, GstClockTimeDiff jitter, GstClockTime timestamp) {
  fail_unless(gst_harness_push_upstream_event(t.h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, proportion, jitter,
                                                                     timestamp)));
}

struct QosMessage {
  GstClockTime running_time, stream_time, timestamp, duration;
  gint64 jitter;
  gdouble proportion;
  gint quality;
  GstFormat format;
  guint64 processed, dropped;
};

// Waits for the element's next QoS message.
bool next_qos_message(GstBus* bus, QosMessage* q, GstClockTime wait = 5 * GST_SECOND) {
  GstMessage* m = gst_bus_timed_pop_filtered(bus, wait, GST_MESSAGE_QOS);
  if (!m) return false;
  gboolean live;
  gst_message_parse_qos(m, &live, &q->running_time, &q->stream_time, &q->timestamp, &q->duration);
  gst_message_parse_qos_values(m, &q->jitter, &q->proportion, &q->quality);
  gst_message_parse_qos_stats(m, &q->format, &q->processed, &q->dropped);
  gst_message_unref(m);
  return true;
}

GstClockTime query_min_latency(GstHarness* h) {
  GstQuery* q = gst_query_new_latency();
  fail_unless(gst_pad_peer_query(h->sinkpad, q));
  gboolean live = FALSE;
  GstClockTime min = 0, max = 0;
  gst_query_parse_latency(q, &live, &min, &max);
  gst_query_unref(q);
  fail_unless(live);
  return min;
}

// The QoS rule on exact numbers, for one input mode: four frames matched,
// then the sink says the frame at 120 ms was rendered 200 ms late, so
// everything before 320 ms plus the processing time would be late.
void check_qos_skips(Harnessed t) {
  for (int i = 0; i < 4; ++i) {
    push(t, i * kFrame, i);
    gst_buffer_unref(gst_harness_pull(t.h));
  }
  GstElement* e = t.h->element;
  const GstClockTime processing = stat_u64(e, "processing-time");
  fail_unless(processing > 0);
  fail_unless(processing < 300 * kMs, "matching a 64x48 frame took %" GST_TIME_FORMAT, GST_TIME_ARGS(processing));
  send_qos(t, 0.5, 200 * kMs, 3 * kFrame);

  // 160 ms and 200 ms: late. Skipped without an output, announced.
  for (int i = 4; i < 6; ++i) {
    push(t, i * kFrame, i);
    QosMessage q;
    fail_unless(next_qos_message(t.bus, &q), "no QoS message for the late frame %d", i);
    fail_unless_equals_uint64(q.running_time, i * kFrame);
    fail_unless_equals_uint64(q.stream_time, i * kFrame);
    fail_unless_equals_uint64(q.timestamp, i * kFrame);
    fail_unless_equals_uint64(q.duration, kFrame);
    // It would be this late: the earliest time on time, plus matching it, minus its own time.
    fail_unless_equals_int64(q.jitter, static_cast<gint64>(320 * kMs + processing - i * kFrame));
    fail_unless(q.proportion == 0.5);
    fail_unless_equals_int(q.quality, 1000000);
    fail_unless_equals_int(q.format, GST_FORMAT_BUFFERS);
    fail_unless_equals_uint64(q.processed, 4);
    fail_unless_equals_uint64(q.dropped, i - 3);
    fail_unless_equals_uint64(stat_u64(e, "qos-skipped"), i - 3);
  }
  fail_unless(gst_harness_try_pull(t.h) == nullptr, "a late frame was matched and pushed");

  // Far enough ahead: matched, and flagged DISCONT after the skips.
  push(t, 2 * GST_SECOND, 9);
  GstBuffer* out = gst_harness_pull(t.h);
  fail_unless_equals_uint64(GST_BUFFER_PTS(out), 2 * GST_SECOND);
  fail_unless(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(out);
  push(t, 2 * GST_SECOND + kFrame, 10);
  out = gst_harness_pull(t.h);
  fail_if(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(out);
  fail_unless_equals_uint64(stat_u64(e, "frames"), 6);
  fail_unless_equals_uint64(stat_u64(e, "qos-skipped"), 2);

  // A flush forgets the observation (it belongs to the old timeline).
  send_qos(t, 1.0, 10 * GST_SECOND, 2 * GST_SECOND);
  // Every pad flushes with one sequence number, as a flushing seek does (the
  // aggregator flushes once all its pads did).
  const guint32 seqnum = gst_util_seqnum_next();
  for (GstHarness* h : {t.h, t.right}) {
    if (!h) continue;
    GstEvent* ev = gst_event_new_flush_start();
    gst_event_set_seqnum(ev, seqnum);
    fail_unless(gst_harness_push_event(h, ev));
  }
  for (GstHarness* h : {t.h, t.right}) {
    if (!h) continue;
    GstEvent* ev = gst_event_new_flush_stop(FALSE);
    gst_event_set_seqnum(ev, seqnum);
    fail_unless(gst_harness_push_event(h, ev));
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&seg)));  // a flush clears the segment
  }
  push(t, 3 * GST_SECOND, 11);
  gst_buffer_unref(gst_harness_pull(t.h));
  fail_unless_equals_uint64(stat_u64(e, "qos-skipped"), 2);
  teardown(t);
}

// qos=false: the same QoS event skips nothing, says nothing.
void check_qos_off(Harnessed t) {
  for (int i = 0; i < 4; ++i) {
    push(t, i * kFrame, i);
    gst_buffer_unref(gst_harness_pull(t.h));
  }
  send_qos(t, 0.5, 200 * kMs, 3 * kFrame);
  for (int i = 4; i < 8; ++i) {
    push(t, i * kFrame, i);
    GstBuffer* out = gst_harness_pull(t.h);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), i * kFrame);
    gst_buffer_unref(out);
  }
  fail_unless(gst_bus_pop_filtered(t.bus, GST_MESSAGE_QOS) == nullptr, "QoS message with qos=false");
  fail_unless_equals_uint64(stat_u64(t.h->element, "qos-skipped"), 0);
  fail_unless_equals_uint64(stat_u64(t.h->element, "frames"), 8);
  teardown(t);
}

}  // namespace

GST_START_TEST(test_qos_property) {
  GstElement* e = gst_element_factory_make("cudastereo", nullptr);
  gboolean qos = FALSE;
  g_object_get(e, "qos", &qos, nullptr);
  fail_unless(qos, "qos is on by default, as in video filters");
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "qos");
  fail_unless(spec->flags & GST_PARAM_MUTABLE_PLAYING);
  gst_object_unref(e);
}
GST_END_TEST;

GST_START_TEST(test_qos_skips_late_frames_packed) { check_qos_skips(packed_harness("")); }
GST_END_TEST;

GST_START_TEST(test_qos_skips_late_pairs) { check_qos_skips(two_pad_harness("")); }
GST_END_TEST;

GST_START_TEST(test_qos_off_packed) { check_qos_off(packed_harness("qos=false")); }
GST_END_TEST;

GST_START_TEST(test_qos_off_pairs) { check_qos_off(two_pad_harness("qos=false")); }
GST_END_TEST;

// The latency query answers what matching measured: nothing before a frame,
// then the robust recent maximum of the frames' processing times (the
// third largest here, as each frame's is in its post-messages message) plus
// a quarter, rounded up to a millisecond; a LATENCY message says so. The
// `latency` property of GstAggregator adds to it, as before.
GST_START_TEST(test_latency_is_measured_processing_time) {
  Harnessed t = packed_harness("post-messages=true");
  fail_unless_equals_uint64(query_min_latency(t.h), 0);
  std::vector<guint64> times;
  for (int i = 0; i < 6; ++i) {
    push(t, i * kFrame, i);
    gst_buffer_unref(gst_harness_pull(t.h));
  }
  bool latency_posted = false;
  while (GstMessage* m = gst_bus_pop(t.bus)) {
    guint64 ns = 0;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT &&
        gst_structure_get_uint64(gst_message_get_structure(m), "processing-time", &ns))
      times.push_back(ns);
    latency_posted = latency_posted || GST_MESSAGE_TYPE(m) == GST_MESSAGE_LATENCY;
    gst_message_unref(m);
  }
  fail_unless_equals_int(times.size(), 6);
  std::sort(times.begin(), times.end(), std::greater<guint64>());
  const guint64 recent_max = times[2];
  fail_unless_equals_uint64(stat_u64(t.h->element, "processing-time"), recent_max);
  const GstClockTime min = query_min_latency(t.h);
  fail_unless(min >= recent_max, "latency %" GST_TIME_FORMAT " below the processing time %" GST_TIME_FORMAT,
              GST_TIME_ARGS(min), GST_TIME_ARGS(recent_max));
  fail_unless(min >= times[5], "latency below the fastest frame");
  fail_unless_equals_uint64(min, stat_u64(t.h->element, "latency"));
  fail_unless_equals_uint64(min % GST_MSECOND, 0);
  fail_unless(min <= recent_max + recent_max / 4 + GST_MSECOND);
  fail_unless(latency_posted, "no LATENCY message when the latency grew");
  g_object_set(t.h->element, "latency", static_cast<guint64>(50 * GST_MSECOND), nullptr);
  fail_unless_equals_uint64(query_min_latency(t.h), min + 50 * GST_MSECOND);
  teardown(t);
}
GST_END_TEST;

// ---------------------------------------------------------------- live pipelines

namespace {

// Lateness of each buffer as it reaches the sink: the clock on arrival
// against the time it is due (running time + the configured latency).
struct Lateness {
  GstElement* sink = nullptr;
  GMutex lock;
  std::vector<std::pair<GstClockTime, gint64>> samples;  // running time, lateness
};

GstPadProbeReturn lateness_probe(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
  Lateness* l = static_cast<Lateness*>(data);
  GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
  GstEvent* ev = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
  GstClock* clock = gst_element_get_clock(l->sink);
  if (ev && clock) {
    const GstSegment* seg;
    gst_event_parse_segment(ev, &seg);
    const GstClockTime rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
    const GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(l->sink);
    const GstClockTime latency = gst_base_sink_get_latency(GST_BASE_SINK(l->sink));
    g_mutex_lock(&l->lock);
    l->samples.emplace_back(rt, GST_CLOCK_DIFF(rt + latency, now));
    g_mutex_unlock(&l->lock);
  }
  if (ev) gst_event_unref(ev);
  if (clock) gst_object_unref(clock);
  return GST_PAD_PROBE_OK;
}

struct LiveRun {
  guint64 source_frames = 0, outputs = 0, frames = 0, unpaired = 0, skipped = 0, dropped = 0;
  guint64 qos_messages = 0, last_dropped = 0, last_processed = 0;
  GstClockTime latency = 0;
  gint64 max_late_after_start = G_MININT64;  // ns, frames after the first half second
  gint64 max_late = G_MININT64;
};

// A live source the CPU backend cannot keep up with, into a sink that syncs
// and drops what is more than 20 ms late, until the source's EOS.
LiveRun run_live(bool two_pads, bool qos, int frames) {
  const std::string caps = std::string("video/x-raw,format=I420,width=") + (two_pads ? "320" : "640") +
                           ",height=240,framerate=60/1";
  const std::string stereo = std::string("cudastereo name=stereo backend=cpu max-disparity=64 qos=") +
                             (qos ? "true" : "false") + (two_pads ? "" : " input-layout=side-by-side");
  const std::string src = "videotestsrc is-live=true num-buffers=" + std::to_string(frames) + " ! " + caps;
  const std::string sink = " ! video/x-raw,format=GRAY16_LE ! fakesink name=sink sync=true qos=true max-lateness=20000000";
  const std::string desc = two_pads ? stereo + sink + " " + src + " ! stereo.sink_left " + src + " ! stereo.sink_right"
                                    : src + " ! " + stereo + sink;
  GstElement* pipeline = launch(desc);
  GstElement* element = by_name(pipeline, "stereo");
  Lateness late;
  g_mutex_init(&late.lock);
  late.sink = by_name(pipeline, "sink");
  GstPad* sink_pad = gst_element_get_static_pad(late.sink, "sink");
  gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_BUFFER, lateness_probe, &late, nullptr);
  gst_object_unref(sink_pad);
  Counter outputs;
  count_on(pipeline, "stereo", "src", &outputs);

  LiveRun run;
  GstBus* bus = gst_element_get_bus(pipeline);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  const gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  for (bool eos = false; !eos;) {
    fail_unless(g_get_monotonic_time() < end, "no EOS within a minute");
    GstMessage* m = gst_bus_timed_pop(bus, 100 * GST_MSECOND);
    if (!m) continue;
    switch (GST_MESSAGE_TYPE(m)) {
      case GST_MESSAGE_EOS: eos = true; break;
      case GST_MESSAGE_ERROR: {
        const std::string text = error_text(m);
        gst_message_unref(m);
        fail("pipeline error: %s", text.c_str());
        break;
      }
      case GST_MESSAGE_LATENCY: gst_bin_recalculate_latency(GST_BIN(pipeline)); break;
      case GST_MESSAGE_QOS:
        if (GST_MESSAGE_SRC(m) == GST_OBJECT(element)) {
          GstFormat format;
          gst_message_parse_qos_stats(m, &format, &run.last_processed, &run.last_dropped);
          run.qos_messages++;
        }
        break;
      default: break;
    }
    gst_message_unref(m);
  }
  run.latency = gst_base_sink_get_latency(GST_BASE_SINK(late.sink));
  run.outputs = g_atomic_int_get(&outputs.buffers);
  run.frames = stat_u64(element, "frames");
  run.unpaired = stat_u64(element, "unpaired-frames");
  run.skipped = stat_u64(element, "qos-skipped");
  run.dropped = stat_u64(element, "dropped-frames");
  g_mutex_lock(&late.lock);
  for (const auto& s : late.samples) {
    run.max_late = std::max(run.max_late, s.second);
    if (s.first > 500 * kMs) run.max_late_after_start = std::max(run.max_late_after_start, s.second);
  }
  g_mutex_unlock(&late.lock);
  GST_INFO("live %s qos=%d: %d frames in, %" G_GUINT64_FORMAT " out (%" G_GUINT64_FORMAT " placeholders), %" G_GUINT64_FORMAT
           " skipped, %" G_GUINT64_FORMAT " QoS messages, latency %" GST_TIME_FORMAT ", lateness max %" G_GINT64_FORMAT
           " ms, after 0.5 s %" G_GINT64_FORMAT " ms",
           two_pads ? "pads" : "sbs", qos, frames, run.outputs, run.unpaired, run.skipped, run.qos_messages,
           GST_TIME_ARGS(run.latency), run.max_late / 1000000, run.max_late_after_start / 1000000);
  g_printerr("live %s qos=%s: %d frames in, %" G_GUINT64_FORMAT " out (%" G_GUINT64_FORMAT " unpaired), %" G_GUINT64_FORMAT
             " skipped, %" G_GUINT64_FORMAT " QoS messages, latency %.1f ms, lateness max %.1f ms (after 0.5 s: %.1f ms)\n",
             two_pads ? "pads" : "sbs", qos ? "true" : "false", frames, run.outputs, run.unpaired, run.skipped,
             run.qos_messages, run.latency / 1e6, run.max_late / 1e6, run.max_late_after_start / 1e6);
  set_state_within(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(late.sink);
  gst_object_unref(element);
  gst_object_unref(pipeline);
  g_mutex_clear(&late.lock);
  return run;
}

// qos=true: every input frame is either matched or skipped; what was skipped
// was announced, with the counts the stats have; lateness stays bounded (a
// few processing times at most, where without QoS it grows with every
// frame); the reported latency covers the processing time.
void check_live_qos(bool two_pads) {
  const int frames = 120;  // 2 s at 60 fps
  const LiveRun run = run_live(two_pads, true, frames);
  fail_unless_equals_uint64(run.outputs, run.frames);
  fail_unless(run.skipped > 0, "a CPU backend this slow skipped nothing");
  // Each frame was matched or skipped. (A live pair that a late view split
  // counts once or twice, as its views went out or were skipped alone.)
  if (!two_pads) fail_unless_equals_uint64(run.frames + run.skipped, frames);
  if (two_pads) fail_unless(run.frames + run.skipped >= static_cast<guint64>(frames));
  fail_unless_equals_uint64(run.qos_messages, run.skipped);
  fail_unless_equals_uint64(run.last_dropped, run.skipped);
  fail_unless(run.last_processed <= run.frames);
  fail_unless(run.max_late_after_start < static_cast<gint64>(run.latency),
              "lateness %" G_GINT64_FORMAT " ms after the start, latency %" GST_TIME_FORMAT,
              run.max_late_after_start / 1000000, GST_TIME_ARGS(run.latency));
  fail_unless(run.max_late_after_start < static_cast<gint64>(500 * kMs));
}

// qos=false: one output per input frame, however late. Two live pads: a
// view whose partner missed the deadline (a loaded machine) goes out alone
// as a placeholder, and its partner alone after it or, arriving after that
// time went out, dropped; every view of every pair is still accounted for
// exactly once (matched, in a placeholder, or dropped).
void check_live_no_qos(bool two_pads) {
  const int frames = 16;  // about 1.6 s of matching
  const LiveRun run = run_live(two_pads, false, frames);
  if (!two_pads) {
    fail_unless_equals_uint64(run.outputs, frames);
  } else {
    fail_unless_equals_uint64(run.outputs, run.frames);
    fail_unless(run.unpaired <= run.outputs);
    fail_unless_equals_uint64(2 * (run.outputs - run.unpaired) + run.unpaired + run.dropped, 2 * frames);
  }
  fail_unless_equals_uint64(run.skipped, 0);
  fail_unless_equals_uint64(run.qos_messages, 0);
  // The frames pile up: the last is late by about all the matching that had
  // to wait for it.
  fail_unless(run.max_late > static_cast<gint64>(200 * kMs), "max lateness %" G_GINT64_FORMAT " ms: not a slow run?",
              run.max_late / 1000000);
}

}  // namespace

GST_START_TEST(test_live_qos_packed) { check_live_qos(false); }
GST_END_TEST;

GST_START_TEST(test_live_qos_pairs) { check_live_qos(true); }
GST_END_TEST;

GST_START_TEST(test_live_no_qos_packed) { check_live_no_qos(false); }
GST_END_TEST;

GST_START_TEST(test_live_no_qos_pairs) { check_live_no_qos(true); }
GST_END_TEST;

static Suite* cudastereo_live_suite(void) {
  Suite* s = suite_create("cudastereo-live");
  TCase* tc = tcase_create("live");
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_qos_property);
  tcase_add_test(tc, test_qos_skips_late_frames_packed);
  tcase_add_test(tc, test_qos_skips_late_pairs);
  tcase_add_test(tc, test_qos_off_packed);
  tcase_add_test(tc, test_qos_off_pairs);
  tcase_add_test(tc, test_latency_is_measured_processing_time);
  tcase_add_test(tc, test_live_qos_packed);
  tcase_add_test(tc, test_live_qos_pairs);
  tcase_add_test(tc, test_live_no_qos_packed);
  tcase_add_test(tc, test_live_no_qos_pairs);
  return s;
}

GST_CHECK_MAIN(cudastereo_live);
