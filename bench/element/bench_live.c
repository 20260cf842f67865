/* cs-bench-live: how a stereo element behaves in a live pipeline it cannot
 * keep up with. A live source (videotestsrc is-live=true, one side-by-side
 * frame or one source per view) runs at its own rate into the element and a
 * sink that syncs to the clock and drops what comes too late, as a video
 * sink does:
 *
 *   videotestsrc is-live=true ! caps ! cudastereo ! GRAY16_LE ! fakesink sync=true qos=true max-lateness=20ms
 *
 * After --seconds of wall time it prints one markdown row: frames the
 * source made, frames the element matched, frames it skipped for QoS
 * (`stats` qos-skipped, when the element has it), the element's QoS
 * messages and the skipped count the last one carried, frames the sink
 * rendered and dropped (its `stats`), the latency the pipeline configured,
 * and the lateness of the buffers as they reached the sink (clock time of
 * arrival minus the time they were due: running time plus the configured
 * latency): its maximum, its maximum after the first second (once the
 * pipeline had the chance to take a new latency into account) and its value
 * at the end.
 *
 * --qos on|off sets the element's `qos` property; `keep` leaves it alone
 * (an element without the property, as before issue 16).
 */
#include <gst/base/gstbasesink.h>
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *backend;
  int width, height;  /* one view */
  int fps;
  int disparities;
  gboolean two_pads;
  const char *qos;     /* on | off | keep */
  const char *pattern; /* videotestsrc pattern */
  double seconds;
  double sink_max_lateness_ms;
  gboolean header;
} Options;

typedef struct {
  GstElement *sink;
  GMutex lock;
  guint64 source_frames;
  guint64 arrived;
  gint64 max_lateness;  /* ns */
  gint64 last_lateness; /* ns */
  gint64 max_lateness_settled; /* ns, buffers after the first second of running time */
  guint64 settled;
  guint64 qos_messages;
  guint64 qos_last_dropped;
  guint64 qos_last_processed;
} Watch;

static GstPadProbeReturn count_source(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
  Watch *w = user_data;
  (void)pad;
  (void)info;
  g_mutex_lock(&w->lock);
  w->source_frames++;
  g_mutex_unlock(&w->lock);
  return GST_PAD_PROBE_OK;
}

/* Lateness on arrival at the sink: the clock now against the time the sink
 * will render the buffer at (its running time plus the configured latency). */
static GstPadProbeReturn time_arrival(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
  Watch *w = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  GstEvent *ev = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
  GstClock *clock = gst_element_get_clock(w->sink);
  if (ev && clock && GST_BUFFER_PTS_IS_VALID(buf)) {
    const GstSegment *seg;
    gst_event_parse_segment(ev, &seg);
    const GstClockTime rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
    const GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(w->sink);
    const GstClockTime latency = gst_base_sink_get_latency(GST_BASE_SINK(w->sink));
    if (GST_CLOCK_TIME_IS_VALID(rt)) {
      const gint64 late = GST_CLOCK_DIFF(rt + latency, now);
      g_mutex_lock(&w->lock);
      w->arrived++;
      if (w->arrived == 1 || late > w->max_lateness) w->max_lateness = late;
      w->last_lateness = late;
      if (rt > GST_SECOND) {
        if (w->settled == 0 || late > w->max_lateness_settled) w->max_lateness_settled = late;
        w->settled++;
      }
      g_mutex_unlock(&w->lock);
    }
  }
  if (ev) gst_event_unref(ev);
  if (clock) gst_object_unref(clock);
  return GST_PAD_PROBE_OK;
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [options]\n"
          "  --backend auto|cuda|cpu   (default cpu)\n"
          "  --size WxH                one view (default 320x240)\n"
          "  --fps N                   source frame rate (default 30)\n"
          "  --disparities D           max-disparity (default 64)\n"
          "  --input sbs|pads          one side-by-side source or one per view (default sbs)\n"
          "  --qos on|off|keep         the element's qos property (default keep: not set)\n"
          "  --pattern NAME            videotestsrc pattern (default smpte, as videotestsrc)\n"
          "  --seconds S               wall time to run (default 15)\n"
          "  --sink-max-lateness MS    the sink drops buffers later than this (default 20, as video sinks)\n"
          "  --header                  print the markdown header first\n",
          argv0);
  return 2;
}

static gboolean parse(int argc, char **argv, Options *o) {
  *o = (Options){"cpu", 320, 240, 30, 64, FALSE, "keep", "smpte", 15.0, 20.0, FALSE};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--header")) {
      o->header = TRUE;
      continue;
    }
    if (!v) return FALSE;
    ++i;
    if (!strcmp(a, "--backend")) {
      o->backend = v;
    } else if (!strcmp(a, "--size")) {
      if (sscanf(v, "%dx%d", &o->width, &o->height) != 2) return FALSE;
    } else if (!strcmp(a, "--fps")) {
      o->fps = atoi(v);
    } else if (!strcmp(a, "--disparities")) {
      o->disparities = atoi(v);
    } else if (!strcmp(a, "--input")) {
      if (strcmp(v, "sbs") && strcmp(v, "pads")) return FALSE;
      o->two_pads = !strcmp(v, "pads");
    } else if (!strcmp(a, "--qos")) {
      if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "keep")) return FALSE;
      o->qos = v;
    } else if (!strcmp(a, "--pattern")) {
      o->pattern = v;
    } else if (!strcmp(a, "--seconds")) {
      o->seconds = atof(v);
    } else if (!strcmp(a, "--sink-max-lateness")) {
      o->sink_max_lateness_ms = atof(v);
    } else {
      return FALSE;
    }
  }
  return o->width > 0 && o->height > 0 && o->fps > 0 && o->seconds > 0;
}

static guint64 structure_u64(const GstStructure *s, const char *name, gboolean *have) {
  guint64 v = 0;
  const gboolean ok = s && gst_structure_get_uint64(s, name, &v);
  if (have) *have = ok;
  return ok ? v : 0;
}

static void print_header(void) {
  printf("| backend | view size | D | input | fps in | qos | seconds | source frames | matched | qos-skipped | "
         "QoS messages (last: skipped) | sink rendered | sink dropped late | latency ms | max lateness ms | "
         "max lateness after 1 s, ms | final lateness ms |\n");
  printf("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | "
         "---: | ---: |\n");
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  Options o;
  if (!parse(argc, argv, &o)) return usage(argv[0]);
  if (o.header) print_header();

  gchar *caps;
  gchar *desc;
  const char *format = "I420";
  const char *qos_prop = !strcmp(o.qos, "keep") ? "" : (!strcmp(o.qos, "on") ? " qos=true" : " qos=false");
  const gint64 max_lateness = (gint64)(o.sink_max_lateness_ms * 1e6);
  if (o.two_pads) {
    caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=%d/1", format, o.width, o.height, o.fps);
    desc = g_strdup_printf(
        "cudastereo name=stereo backend=%s max-disparity=%d%s ! video/x-raw,format=GRAY16_LE ! "
        "fakesink name=sink sync=true qos=true max-lateness=%" G_GINT64_FORMAT " "
        "videotestsrc name=src is-live=true pattern=%s ! %s ! stereo.sink_left "
        "videotestsrc is-live=true pattern=%s ! %s ! stereo.sink_right",
        o.backend, o.disparities, qos_prop, max_lateness, o.pattern, caps, o.pattern, caps);
  } else {
    caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=%d/1", format, 2 * o.width, o.height,
                           o.fps);
    desc = g_strdup_printf(
        "videotestsrc name=src is-live=true pattern=%s ! %s ! cudastereo name=stereo backend=%s "
        "input-layout=side-by-side max-disparity=%d%s ! video/x-raw,format=GRAY16_LE ! "
        "fakesink name=sink sync=true qos=true max-lateness=%" G_GINT64_FORMAT,
        o.pattern, caps, o.backend, o.disparities, qos_prop, max_lateness);
  }
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &err);
  if (!pipeline || err) {
    fprintf(stderr, "cs-bench-live: cannot build '%s': %s\n", desc, err ? err->message : "?");
    return 1;
  }
  Watch w = {0};
  g_mutex_init(&w.lock);
  w.sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
  GstPad *src_pad = gst_element_get_static_pad(src, "src");
  GstPad *sink_pad = gst_element_get_static_pad(w.sink, "sink");
  gst_pad_add_probe(src_pad, GST_PAD_PROBE_TYPE_BUFFER, count_source, &w, NULL);
  gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_BUFFER, time_arrival, &w, NULL);

  GstBus *bus = gst_element_get_bus(pipeline);
  int rc = 0;
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    fprintf(stderr, "cs-bench-live: the pipeline did not start\n");
    rc = 1;
  }
  const gint64 end = g_get_monotonic_time() + (gint64)(o.seconds * 1e6);
  while (rc == 0) {
    const gint64 left = end - g_get_monotonic_time();
    if (left <= 0) break;
    GstMessage *m = gst_bus_timed_pop(bus, (GstClockTime)left * 1000);
    if (!m) break;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error(m, &e, NULL);
      fprintf(stderr, "cs-bench-live: error from %s: %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e->message);
      g_error_free(e);
      rc = 1;
    } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_QOS && GST_MESSAGE_SRC(m) == GST_OBJECT(stereo)) {
      GstFormat fmt;
      guint64 processed = 0, dropped = 0;
      gst_message_parse_qos_stats(m, &fmt, &processed, &dropped);
      w.qos_messages++;
      w.qos_last_dropped = dropped;
      w.qos_last_processed = processed;
    } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_LATENCY) {
      gst_bin_recalculate_latency(GST_BIN(pipeline));
    }
    gst_message_unref(m);
  }
  /* Counts at the end of the run, before stopping loses what is in flight. */
  GstStructure *stats = NULL, *sink_stats = NULL;
  g_object_get(stereo, "stats", &stats, NULL);
  g_object_get(w.sink, "stats", &sink_stats, NULL);
  const GstClockTime latency = gst_base_sink_get_latency(GST_BASE_SINK(w.sink));
  g_mutex_lock(&w.lock);
  const guint64 source_frames = w.source_frames;
  const gint64 max_late = w.max_lateness, last_late = w.last_lateness, settled_late = w.max_lateness_settled;
  g_mutex_unlock(&w.lock);
  gst_element_set_state(pipeline, GST_STATE_NULL);

  gboolean have_skipped = FALSE;
  const guint64 frames = structure_u64(stats, "frames", NULL);
  const guint64 unpaired = structure_u64(stats, "unpaired-frames", NULL);
  const guint64 skipped = structure_u64(stats, "qos-skipped", &have_skipped);
  gchar *skipped_text = have_skipped ? g_strdup_printf("%" G_GUINT64_FORMAT, skipped) : g_strdup("n/a");
  gchar *qos_text = w.qos_messages ? g_strdup_printf("%" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT ")", w.qos_messages,
                                                     w.qos_last_dropped)
                                   : g_strdup("0");
  printf("| %s | %dx%d | %d | %s | %d | %s | %.0f | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " | %s | %s | %" G_GUINT64_FORMAT
         " | %" G_GUINT64_FORMAT " | %.1f | %.1f | %.1f | %.1f |\n",
         o.backend, o.width, o.height, o.disparities, o.two_pads ? "pads" : "sbs", o.fps,
         !strcmp(o.qos, "keep") ? "(not set)" : o.qos, o.seconds, source_frames, frames - unpaired, skipped_text,
         qos_text, structure_u64(sink_stats, "rendered", NULL), structure_u64(sink_stats, "dropped", NULL),
         GST_CLOCK_TIME_IS_VALID(latency) ? latency / 1e6 : -1.0, max_late / 1e6, settled_late / 1e6, last_late / 1e6);
  g_free(skipped_text);
  g_free(qos_text);
  if (stats) gst_structure_free(stats);
  if (sink_stats) gst_structure_free(sink_stats);
  gst_object_unref(bus);
  gst_object_unref(src_pad);
  gst_object_unref(sink_pad);
  gst_object_unref(src);
  gst_object_unref(stereo);
  gst_object_unref(w.sink);
  gst_object_unref(pipeline);
  g_free(caps);
  g_free(desc);
  return rc;
}
