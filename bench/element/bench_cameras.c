/* cs-bench-cameras: many cudastereo elements in one process (issue 16).
 *
 * N streams, each with its own source and its own cudastereo element
 * (side by side, max-disparity D), each ending in fakesink sync=false:
 *
 *   cuda          appsrc ! cudaupload ! (CUDAMemory) ! imagefreeze ! cudastereo ! caps ! fakesink
 *   system        appsrc ! imagefreeze ! cudastereo ...       (plain pageable buffer)
 *   pool          appsrc ! imagefreeze ! cudastereo ...       (the frame copied once into a
 *                                                              buffer of the pool the element
 *                                                              proposes: pinned with CUDA)
 *   videoconvert  appsrc (RGB) ! videoconvert ! RGBA ! imagefreeze ! cudastereo ...
 *                 (what a pipeline gets without help: whether videoconvert's
 *                 allocation query reaches the element through imagefreeze is
 *                 reported, not assumed)
 *   h264          filesrc ! qtdemux ! h264parse ! nvh264dec ! cudastereo ...
 *
 * appsrc hands the one frame over once; imagefreeze repeats it, so after
 * the first frame the source costs nothing and, from CUDA memory, nothing
 * crosses the host. Without --live the sources run as fast as the element
 * takes frames; with --live FPS imagefreeze paces them like cameras.
 *
 * A still picture is what the background model likes best. --sequence DIR
 * plays a moving scene instead (camera_sequence.h: cs-bench-engine's
 * surveillance frames, its warm-up once, then objects moving), with the
 * source cuda (the frames uploaded once, then pushed from CUDA memory) or
 * system (every frame crosses PCIe):
 *
 *   cuda          appsrc (CUDAMemory, a thread pushing) ! cudastereo ! caps ! fakesink
 *   system        appsrc (system memory, a thread pushing) ! cudastereo ...
 *
 * Measured, per stream and in total, over a window after a warm-up:
 *  - fps: output buffers leaving the element (a probe on its src pad)
 *    during the window, over the window's length;
 *  - latency: from a buffer entering the element's sink pad to the output
 *    with the same timestamp leaving its src pad (pad probes), median and
 *    p99, per stream and over all streams' frames together;
 *  - GPU memory: device memory in use (cuMemGetInfo, through the driver
 *    loaded with dlopen) after the warm-up minus before the pipelines
 *    existed, per device, divided by the streams on it;
 *  - evidence: the memory type of the buffers the element receives, the
 *    allocation queries that reached it, the CUDA contexts made, the
 *    element's uploaded-ahead count, outputs out of order or without a
 *    matching input, the CPU time of the process (cores busy) and its
 *    thread count, and the latency the element reports to a query.
 *
 * Prints one `stream` line per stream and one `result` line, key=value
 * (error="..." when something failed, naming it). bench/cameras.sh turns
 * them into tables. A watchdog ends the process (exit code 4) if a run or
 * its teardown exceeds --timeout, so a stuck pipeline never hangs a caller.
 *
 * Also: --make-h264 FILE writes the side-by-side frame as an H.264 mp4
 * (openh264enc; each frame with its own small sensor-like noise, so the
 * decoder works as on a camera stream) and --write-frame FILE writes it as
 * PPM; both then stop.
 *
 * This file builds the streams, measures and prints; camera_options.c
 * reads the command line, camera_frame.c makes the still picture (and
 * --make-h264, --write-frame), camera_gpu_memory.c reads device memory and
 * camera_sequence.c plays --sequence.
 *
 * Exit codes: 0 measured, 1 failed (the result line says why), 2 bad
 * options, 3 not available here (an element missing), 4 timed out.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "camera_frame.h"
#include "camera_gpu_memory.h"
#include "camera_options.h"
#include "camera_sequence.h"

#define LATENCY_RING 128

/* ---------------------------------------------------------------- streams */

typedef struct Bench Bench;

typedef struct {
  int index, device;
  Bench *bench;
  GstElement *pipeline; /* not owned: Bench.pipelines owns them */
  GstElement *stereo;
  GstElement *appsrc;
  GstPad *stereo_sink, *stereo_src;
  GMutex lock;
  /* Inputs seen on the sink pad, newest last: timestamp and arrival. */
  GstClockTime ring_pts[LATENCY_RING];
  gint64 ring_us[LATENCY_RING];
  guint ring_next;
  guint64 frames_out;
  GArray *latency_ms; /* during the window */
  guint64 out_of_order, unmatched;
  GstClockTime last_out_pts;
  gboolean eos;
  char input_memory[64];
  guint alloc_queries;
  GstQuery *own_query; /* the bench's own allocation query (pool source), not counted */
} Stream;

struct Bench {
  const Options *o;
  Stream *streams;
  GPtrArray *pipelines;
  volatile gint measuring;
  GMutex lock; /* below */
  char *error;
  char *warning;
  guint warnings;
  GPtrArray *contexts;               /* distinct GstCudaContext objects seen (refs) */
  GstContext *shared[MAX_DEVICES];   /* per device, when shared */
  GstBufferPool **pools;             /* pool source: one per stream */
};

/* The watchdog (below) names the first error too, if it has to end the run. */
static GMutex watchdog_lock;
static char watchdog_error[400];

static void set_error(Bench *b, char *text /* taken */) {
  g_mutex_lock(&b->lock);
  if (!b->error) {
    b->error = text;
    g_mutex_lock(&watchdog_lock);
    g_strlcpy(watchdog_error, text, sizeof watchdog_error);
    for (char *c = watchdog_error; *c; ++c)
      if (*c == '"' || *c == '\n') *c = '\'';
    g_mutex_unlock(&watchdog_lock);
    text = NULL;
  }
  g_mutex_unlock(&b->lock);
  g_free(text);
}

static gboolean has_error(Bench *b) {
  g_mutex_lock(&b->lock);
  const gboolean e = b->error != NULL;
  g_mutex_unlock(&b->lock);
  return e;
}

static GstPadProbeReturn on_input(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
  (void)pad;
  Stream *s = data;
  if (info->type & GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM) {
    GstQuery *q = GST_PAD_PROBE_INFO_QUERY(info);
    if (GST_QUERY_TYPE(q) == GST_QUERY_ALLOCATION) {
      g_mutex_lock(&s->lock);
      if (q != s->own_query) s->alloc_queries++;
      g_mutex_unlock(&s->lock);
    }
    return GST_PAD_PROBE_OK;
  }
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  const gint64 now = g_get_monotonic_time();
  g_mutex_lock(&s->lock);
  const guint slot = s->ring_next++ % LATENCY_RING;
  s->ring_pts[slot] = GST_BUFFER_PTS(buf);
  s->ring_us[slot] = now;
  if (!s->input_memory[0]) {
    GstMemory *m = gst_buffer_n_memory(buf) > 0 ? gst_buffer_peek_memory(buf, 0) : NULL;
    const char *type = m && m->allocator && m->allocator->mem_type ? m->allocator->mem_type : "none";
    g_strlcpy(s->input_memory, type, sizeof s->input_memory);
  }
  g_mutex_unlock(&s->lock);
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn on_output(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
  (void)pad;
  Stream *s = data;
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_EOS) {
      g_mutex_lock(&s->lock);
      s->eos = TRUE;
      g_mutex_unlock(&s->lock);
    }
    return GST_PAD_PROBE_OK;
  }
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  const gint64 now = g_get_monotonic_time();
  const GstClockTime pts = GST_BUFFER_PTS(buf);
  const gboolean measuring = g_atomic_int_get(&s->bench->measuring);
  g_mutex_lock(&s->lock);
  s->frames_out++;
  if (GST_CLOCK_TIME_IS_VALID(s->last_out_pts) && GST_CLOCK_TIME_IS_VALID(pts) && pts <= s->last_out_pts)
    s->out_of_order++;
  s->last_out_pts = pts;
  gboolean found = FALSE;
  for (guint k = 1; k <= LATENCY_RING && k <= s->ring_next; ++k) {
    const guint slot = (s->ring_next - k) % LATENCY_RING;
    if (s->ring_pts[slot] == pts) {
      if (measuring) {
        const double ms = (now - s->ring_us[slot]) / 1000.0;
        g_array_append_val(s->latency_ms, ms);
      }
      found = TRUE;
      break;
    }
  }
  if (!found) s->unmatched++;
  g_mutex_unlock(&s->lock);
  return GST_PAD_PROBE_OK;
}

/* The device a CUDA element works on: its cuda-device-id when it has one
 * set, else the stream's. */
static int element_device(GstObject *src, int fallback) {
  if (G_IS_OBJECT(src) && g_object_class_find_property(G_OBJECT_GET_CLASS(src), "cuda-device-id")) {
    GValue v = G_VALUE_INIT, i = G_VALUE_INIT;
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(src), "cuda-device-id");
    g_value_init(&v, ps->value_type);
    g_object_get_property(G_OBJECT(src), "cuda-device-id", &v);
    g_value_init(&i, G_TYPE_INT64);
    int dev = -1;
    if (g_value_transform(&v, &i)) dev = (int)g_value_get_int64(&i);
    g_value_unset(&v);
    g_value_unset(&i);
    if (dev >= 0 && dev < MAX_DEVICES) return dev;
  }
  return fallback < 0 ? 0 : fallback;
}

typedef struct {
  Bench *bench;
  int device; /* of the pipeline's streams; -1: automatic */
} BusContext;

/* Streaming-thread messages: errors are recorded with the element that
 * posted them; CUDA contexts are counted and, with --context shared,
 * handed from the first element on a device to every later one (what an
 * application with one pipeline per camera does). */
static GstBusSyncReply on_message(GstBus *bus, GstMessage *m, gpointer data) {
  (void)bus;
  BusContext *bc = data;
  Bench *b = bc->bench;
  switch (GST_MESSAGE_TYPE(m)) {
    case GST_MESSAGE_ERROR: {
      GError *e = NULL;
      char *dbg = NULL;
      gst_message_parse_error(m, &e, &dbg);
      fprintf(stderr, PROGRAM ": error from %s: %s\n  %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
              e ? e->message : "?", dbg ? dbg : "");
      set_error(b, g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "error"));
      g_clear_error(&e);
      g_free(dbg);
      break;
    }
    case GST_MESSAGE_WARNING: {
      GError *e = NULL;
      gst_message_parse_warning(m, &e, NULL);
      fprintf(stderr, PROGRAM ": warning from %s: %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "?");
      g_mutex_lock(&b->lock);
      b->warnings++;
      if (!b->warning)
        b->warning = g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "warning");
      g_mutex_unlock(&b->lock);
      g_clear_error(&e);
      break;
    }
    case GST_MESSAGE_HAVE_CONTEXT: {
      GstContext *ctx = NULL;
      gst_message_parse_have_context(m, &ctx);
      if (ctx && !g_strcmp0(gst_context_get_context_type(ctx), "gst.cuda.context")) {
        const GValue *v = gst_structure_get_value(gst_context_get_structure(ctx), "gst.cuda.context");
        GObject *cuda = v && G_VALUE_HOLDS_OBJECT(v) ? g_value_get_object(v) : NULL;
        const int dev = cuda ? element_device(GST_OBJECT(cuda), bc->device) : -1;
        g_mutex_lock(&b->lock);
        if (cuda && !g_ptr_array_find(b->contexts, cuda, NULL)) g_ptr_array_add(b->contexts, g_object_ref(cuda));
        if (dev >= 0 && !b->shared[dev]) b->shared[dev] = gst_context_ref(ctx);
        g_mutex_unlock(&b->lock);
      }
      if (ctx) gst_context_unref(ctx);
      break;
    }
    case GST_MESSAGE_NEED_CONTEXT: {
      const char *type = NULL;
      if (!b->o->shared_context || !gst_message_parse_context_type(m, &type) || g_strcmp0(type, "gst.cuda.context"))
        break;
      const int dev = element_device(GST_MESSAGE_SRC(m), bc->device);
      g_mutex_lock(&b->lock);
      GstContext *ctx = b->shared[dev] ? gst_context_ref(b->shared[dev]) : NULL;
      g_mutex_unlock(&b->lock);
      if (ctx) {
        gst_element_set_context(GST_ELEMENT(GST_MESSAGE_SRC(m)), ctx);
        gst_context_unref(ctx);
      }
      break;
    }
    default:
      break;
  }
  return GST_BUS_PASS;
}


/* --------------------------------------------------------------- pipeline */

static gboolean factory_exists(const char *name) {
  GstElementFactory *f = gst_element_factory_find(name);
  if (f) gst_object_unref(f);
  return f != NULL;
}

static char *decoder_for(const Options *o, int device) {
  if (!strcmp(o->decoder, "nvh264dec") && device > 0) return g_strdup_printf("nvh264device%ddec", device);
  return g_strdup(o->decoder);
}

/* The elements this run needs; NULL, or the first missing one. */
static char *missing_element(const Options *o) {
  const char *common[] = {"cudastereo", "fakesink"};
  for (size_t i = 0; i < G_N_ELEMENTS(common); ++i)
    if (!factory_exists(common[i])) return g_strdup(common[i]);
  const char *per_source[N_SOURCES][4] = {
      {"appsrc", "cudaupload", "imagefreeze", NULL},
      {"appsrc", "imagefreeze", NULL},
      {"appsrc", "imagefreeze", NULL},
      {"appsrc", "videoconvert", "imagefreeze", NULL},
      {"filesrc", "qtdemux", "h264parse", NULL},
  };
  for (int i = 0; per_source[o->source][i]; ++i)
    if (!factory_exists(per_source[o->source][i])) return g_strdup(per_source[o->source][i]);
  if (o->source == SOURCE_H264) {
    const int nd = o->n_devices ? o->n_devices : 1;
    for (int i = 0; i < nd; ++i) {
      char *dec = decoder_for(o, o->n_devices ? o->devices[i] : 0);
      if (!factory_exists(dec)) return dec;
      g_free(dec);
    }
  }
  return NULL;
}

static void append_stream(GString *d, const Options *o, int i, int device) {
  char dev[40] = "";
  if (device >= 0) snprintf(dev, sizeof dev, " cuda-device-id=%d", device);
  const int fps = o->live_fps ? o->live_fps : 60;
  const char *live = o->live_fps ? " is-live=true" : "";
  if (o->sequence) {
    g_string_append_printf(d, "appsrc name=src%d format=time ! ", i); /* a player pushes (camera_sequence.h) */
  } else switch (o->source) {
    case SOURCE_CUDA:
      g_string_append_printf(d,
                             "appsrc name=src%d format=time ! cudaupload%s ! video/x-raw(memory:CUDAMemory) ! "
                             "imagefreeze%s ! video/x-raw(memory:CUDAMemory),framerate=%d/1 ! ",
                             i, dev, live, fps);
      break;
    case SOURCE_SYSTEM:
    case SOURCE_POOL:
      g_string_append_printf(d, "appsrc name=src%d format=time ! imagefreeze%s ! video/x-raw,framerate=%d/1 ! ", i,
                             live, fps);
      break;
    case SOURCE_VIDEOCONVERT:
      /* Converted once (the frames that cross PCIe are in --format), or
       * every frame on a CPU thread (--convert-each: what the reduction
       * costs against the bytes it saves). */
      if (o->convert_each)
        g_string_append_printf(d,
                               "appsrc name=src%d format=time ! imagefreeze%s ! video/x-raw,framerate=%d/1 ! "
                               "videoconvert n-threads=1 ! video/x-raw,format=%s ! ",
                               i, live, fps, o->format);
      else
        g_string_append_printf(d,
                               "appsrc name=src%d format=time ! videoconvert ! video/x-raw,format=%s ! "
                               "imagefreeze%s ! video/x-raw,framerate=%d/1 ! ",
                               i, o->format, live, fps);
      break;
    case SOURCE_H264: {
      char *dec = decoder_for(o, device);
      g_string_append_printf(d, "filesrc name=file%d ! qtdemux ! h264parse ! %s ! ", i, dec);
      g_free(dec);
      break;
    }
  }
  const char *out_caps = o->output == OUTPUT_RAW    ? "video/x-raw,format=GRAY16_LE"
                         : o->output == OUTPUT_COLOR ? "video/x-raw,format=RGBA"
                                                     : "video/x-raw(memory:CUDAMemory),format=RGBA";
  if (o->identity) {
    /* The stage's pads keep their names, so the probes measure the same way.
     * NVIDIA decoders keep their CUDA-memory output, as into cudastereo
     * (fakesink alone would have them download to system memory). */
    const gboolean cuda_out = o->source == SOURCE_H264 && g_str_has_prefix(o->decoder, "nv");
    g_string_append_printf(d, "%sidentity name=stereo%d ! fakesink name=sink%d sync=false ",
                           cuda_out ? "video/x-raw(memory:CUDAMemory) ! " : "", i, i);
    return;
  }
  g_string_append_printf(d,
                         "cudastereo name=stereo%d backend=%s max-disparity=%d input-layout=side-by-side%s ! %s ! "
                         "fakesink name=sink%d sync=false ",
                         i, o->backend, o->disparities, dev, out_caps, i);
}

/* Copies the frame into a buffer of the pool stream s's element proposes
 * upstream (an allocation query sent to its sink pad, as an upstream element
 * would), or returns why not. */
static char *pool_buffer(Bench *b, Stream *s, GstCaps *caps, GstBuffer *frame, GstBuffer **out) {
  GstQuery *q = gst_query_new_allocation(caps, TRUE);
  GstBufferPool *pool = NULL;
  g_mutex_lock(&s->lock);
  s->own_query = q;
  g_mutex_unlock(&s->lock);
  const gboolean answered = gst_pad_query(s->stereo_sink, q);
  g_mutex_lock(&s->lock);
  s->own_query = NULL;
  g_mutex_unlock(&s->lock);
  if (answered && gst_query_get_n_allocation_pools(q) > 0) gst_query_parse_nth_allocation_pool(q, 0, &pool, NULL, NULL, NULL);
  gst_query_unref(q);
  if (!pool) return g_strdup_printf("stereo%d proposed no pool", s->index);
  if (!gst_buffer_pool_set_active(pool, TRUE)) {
    gst_object_unref(pool);
    return g_strdup_printf("stereo%d's proposed pool could not be activated", s->index);
  }
  b->pools[s->index] = pool;
  GstBuffer *buf = NULL;
  if (gst_buffer_pool_acquire_buffer(pool, &buf, NULL) != GST_FLOW_OK)
    return g_strdup_printf("no buffer from stereo%d's proposed pool", s->index);
  if (gst_buffer_get_size(buf) != gst_buffer_get_size(frame)) {
    char *why = g_strdup_printf("stereo%d's proposed pool has another layout (%zu bytes, the frame %zu)", s->index,
                                gst_buffer_get_size(buf), gst_buffer_get_size(frame));
    gst_buffer_unref(buf);
    return why;
  }
  GstMapInfo m;
  if (!gst_buffer_map(frame, &m, GST_MAP_READ)) {
    gst_buffer_unref(buf);
    return g_strdup_printf("the frame for stereo%d cannot be mapped for reading", s->index);
  }
  gst_buffer_fill(buf, 0, m.data, m.size);
  gst_buffer_unmap(frame, &m);
  *out = buf;
  return NULL;
}

static int cmp_double(const void *x, const void *y) {
  const double a = *(const double *)x, c = *(const double *)y;
  return a < c ? -1 : a > c;
}

/* The q-quantile of sorted values: the nearest rank, ceil(q * n). */
static double quantile(const double *v, guint n, double q) {
  if (!n) return 0;
  guint rank = (guint)(q * n);
  if (rank < q * n) rank++;
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return v[rank - 1];
}

static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  int n = -1;
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* ---------------------------------------------------------------- watchdog */

static void print_result_start(const Options *o, const char *frame_what);

static GCond watchdog_cond;
static gboolean watchdog_done;
static const char *watchdog_stage = "starting";

static void watchdog_stage_set(const char *stage) {
  g_mutex_lock(&watchdog_lock);
  watchdog_stage = stage;
  g_mutex_unlock(&watchdog_lock);
}

/* Ends the process when the run overruns --timeout: a pipeline stuck in a
 * streaming thread or a state change must not hang whoever runs the bench. */
static gpointer watchdog(gpointer data) {
  const Options *o = data;
  const gint64 end = g_get_monotonic_time() + (gint64)(o->timeout_s * G_USEC_PER_SEC);
  g_mutex_lock(&watchdog_lock);
  while (!watchdog_done)
    if (!g_cond_wait_until(&watchdog_cond, &watchdog_lock, end)) break;
  if (!watchdog_done) {
    print_result_start(o, "-");
    printf(" error=\"timed out after %.0f s while %s%s%s\"\n", o->timeout_s, watchdog_stage,
           watchdog_error[0] ? ", after: " : "", watchdog_error);
    fflush(stdout);
    fprintf(stderr, PROGRAM ": timed out after %.0f s while %s\n", o->timeout_s, watchdog_stage);
    _exit(4);
  }
  g_mutex_unlock(&watchdog_lock);
  return NULL;
}

/* ------------------------------------------------------------------- main */

static void print_result_start(const Options *o, const char *frame_what) {
  GString *devs = g_string_new(NULL);
  for (int i = 0; i < o->n_devices; ++i) g_string_append_printf(devs, "%s%d", i ? "," : "", o->devices[i]);
  GString *props = g_string_new(NULL);
  for (guint i = 0; i < o->props->len; ++i)
    g_string_append_printf(props, "%s%s", i ? ";" : "", (const char *)g_ptr_array_index(o->props, i));
  printf("result label=%s source=%s streams=%d devices=%s pipelines=%s context=%s backend=%s view=%dx%d D=%d "
         "output=%s live_fps=%d props=%s frame=%s stage=%s format=%s convert=%s",
         o->label, source_names[o->source], o->streams, devs->len ? devs->str : "auto",
         o->one_pipeline ? "one" : "per-stream", o->shared_context ? "shared" : "own", o->backend, o->width, o->height,
         o->disparities, output_names[o->output], o->live_fps, props->len ? props->str : "-", frame_what,
         o->identity ? "identity" : "stereo", o->source == SOURCE_VIDEOCONVERT ? o->format : "RGBA",
         o->source == SOURCE_VIDEOCONVERT ? (o->convert_each ? "each" : "once") : "-");
  g_string_free(devs, TRUE);
  g_string_free(props, TRUE);
}

/* Means of the element's foreground-fraction and matched-fraction (stats)
 * over the measured window; only frames with the background model count,
 * and only once the model has learnt (a warming-up frame is all foreground:
 * the stats may still show the last warm-up frame when the window opens). */
typedef struct {
  double foreground, matched;
  guint n, warming_up;
} ModelSamples;

static void sample_model(GstElement *stereo, ModelSamples *m) {
  gboolean on = FALSE;
  if (!g_object_class_find_property(G_OBJECT_GET_CLASS(stereo), "background")) return;
  g_object_get(stereo, "background", &on, NULL);
  if (!on) return;
  GstStructure *st = NULL;
  g_object_get(stereo, "stats", &st, NULL);
  double fg = 0, matched = 0;
  gboolean warming_up = FALSE;
  if (st && gst_structure_get_boolean(st, "warming-up", &warming_up) && warming_up) {
    m->warming_up++;
  } else if (st && gst_structure_get_double(st, "foreground-fraction", &fg) &&
      gst_structure_get_double(st, "matched-fraction", &matched)) {
    m->foreground += fg;
    m->matched += matched;
    m->n++;
  }
  if (st) gst_structure_free(st);
}

static int run(const Options *o, const Frame *frame, const CameraSequence *seq) {
  int rc = 1;
  char *missing = missing_element(o);
  if (missing) {
    print_result_start(o, frame->what);
    printf(" error=\"element %s not found\"\n", missing);
    g_free(missing);
    return 3;
  }

  Bench b = {0};
  b.o = o;
  g_mutex_init(&b.lock);
  b.contexts = g_ptr_array_new_with_free_func(g_object_unref);
  b.pipelines = g_ptr_array_new();
  b.streams = g_new0(Stream, o->streams);
  b.pools = g_new0(GstBufferPool *, o->streams);
  GPtrArray *bus_contexts = g_ptr_array_new_with_free_func(g_free);

  Driver drv;
  const gboolean want_gpu = strcmp(o->backend, "cpu") != 0;
  const gboolean have_driver = want_gpu && driver_open(&drv);
  int64_t used_before[MAX_DEVICES], used_after[MAX_DEVICES], used_unloaded[MAX_DEVICES];
  for (int i = 0; i < MAX_DEVICES; ++i) used_before[i] = used_after[i] = used_unloaded[i] = -1;

  /* A sequence from CUDA memory: uploaded once per GPU before the streams
   * exist (its memory and the context it makes are reported apart, as
   * sequence_mib, not as the streams'). */
  GPtrArray *seq_frames[MAX_DEVICES] = {0};
  if (have_driver)
    for (int i = 0; i < drv.count; ++i) used_unloaded[i] = driver_used(&drv, i);
  if (seq && o->source == SOURCE_CUDA) {
    watchdog_stage_set("uploading the sequence");
    const int n_dev = o->n_devices ? o->n_devices : 1;
    for (int k = 0; k < n_dev && !has_error(&b); ++k) {
      const int dev = o->n_devices ? o->devices[k] : -1;
      if (seq_frames[dev < 0 ? 0 : dev]) continue; /* a device named twice */
      BusContext *bc = g_new0(BusContext, 1);
      bc->bench = &b;
      bc->device = dev;
      g_ptr_array_add(bus_contexts, bc);
      char *why = NULL;
      seq_frames[dev < 0 ? 0 : dev] = camera_sequence_upload(seq, dev, on_message, bc, &why);
      if (why) set_error(&b, g_strdup_printf("the sequence's upload: %s", why));
      g_free(why);
    }
  }
  if (have_driver)
    for (int i = 0; i < drv.count; ++i) used_before[i] = driver_used(&drv, i);

  /* The frame as one buffer that every appsrc shares: RGBA side by side,
   * or RGB for videoconvert to convert. */
  GstCaps *frame_caps = NULL;
  GstBuffer *frame_buf = NULL;
  if (seq) {
    frame_caps = gst_caps_copy(seq->caps);
    if (o->source == SOURCE_CUDA)
      gst_caps_set_features(frame_caps, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
  } else if (o->source != SOURCE_H264) {
    const int fw = 2 * frame->view_w, fh = frame->view_h;
    GstVideoInfo vinfo;
    const gboolean rgb = o->source == SOURCE_VIDEOCONVERT;
    gst_video_info_set_format(&vinfo, rgb ? GST_VIDEO_FORMAT_RGB : GST_VIDEO_FORMAT_RGBA, fw, fh);
    GST_VIDEO_INFO_FPS_N(&vinfo) = o->live_fps ? o->live_fps : 60;
    GST_VIDEO_INFO_FPS_D(&vinfo) = 1;
    frame_caps = gst_video_info_to_caps(&vinfo);
    guint8 *pixels = g_malloc(GST_VIDEO_INFO_SIZE(&vinfo));
    for (int y = 0; y < fh; ++y) {
      const guint8 *in = frame->rgba + (size_t)y * fw * 4;
      guint8 *out = pixels + (size_t)y * GST_VIDEO_INFO_PLANE_STRIDE(&vinfo, 0);
      if (rgb)
        for (int x = 0; x < fw; ++x) memcpy(out + 3 * x, in + 4 * x, 3);
      else
        memcpy(out, in, (size_t)fw * 4);
    }
    frame_buf = gst_buffer_new_wrapped(pixels, GST_VIDEO_INFO_SIZE(&vinfo));
  }

  for (int i = 0; i < o->streams; ++i) {
    Stream *s = &b.streams[i];
    s->index = i;
    s->device = o->n_devices ? o->devices[i % o->n_devices] : -1;
    s->bench = &b;
    g_mutex_init(&s->lock);
    s->latency_ms = g_array_new(FALSE, FALSE, sizeof(double));
    s->last_out_pts = GST_CLOCK_TIME_NONE;
  }

  /* Pipelines. */
  watchdog_stage_set("building the pipelines");
  GString *all = g_string_new(NULL);
  for (int i = 0; i < o->streams; ++i) {
    Stream *s = &b.streams[i];
    GString *d = o->one_pipeline ? all : g_string_new(NULL);
    append_stream(d, o, i, s->device);
    if (i == 0) fprintf(stderr, PROGRAM ": stream 0: %s\n", d->str);
    if (!o->one_pipeline || i == o->streams - 1) {
      GError *err = NULL;
      GstElement *p = gst_parse_launch(d->str, &err);
      if (!p || err) {
        set_error(&b, g_strdup_printf("pipeline of stream %d: %s", i, err ? err->message : "did not parse"));
        g_clear_error(&err);
        if (p) gst_object_unref(p);
        if (!o->one_pipeline) g_string_free(d, TRUE);
        break;
      }
      g_ptr_array_add(b.pipelines, p);
      BusContext *bc = g_new0(BusContext, 1);
      bc->bench = &b;
      bc->device = o->one_pipeline ? -1 : s->device;
      g_ptr_array_add(bus_contexts, bc);
      GstBus *bus = gst_element_get_bus(p);
      gst_bus_set_sync_handler(bus, on_message, bc, NULL);
      gst_object_unref(bus);
    }
    if (!o->one_pipeline) g_string_free(d, TRUE);
  }
  g_string_free(all, TRUE);

  /* Elements, properties and probes. */
  for (int i = 0; i < o->streams && !has_error(&b) && b.pipelines->len; ++i) {
    Stream *s = &b.streams[i];
    s->pipeline = g_ptr_array_index(b.pipelines, o->one_pipeline ? 0 : (guint)i);
    char name[32];
    snprintf(name, sizeof name, "stereo%d", i);
    s->stereo = gst_bin_get_by_name(GST_BIN(s->pipeline), name);
    snprintf(name, sizeof name, "src%d", i);
    s->appsrc = gst_bin_get_by_name(GST_BIN(s->pipeline), name);
    if (o->source == SOURCE_H264) {
      snprintf(name, sizeof name, "file%d", i);
      GstElement *file = gst_bin_get_by_name(GST_BIN(s->pipeline), name);
      g_object_set(file, "location", o->h264, NULL);
      gst_object_unref(file);
    } else {
      g_object_set(s->appsrc, "caps", frame_caps, NULL);
    }
    for (guint k = 0; k < o->props->len; ++k) {
      const char *nv = g_ptr_array_index(o->props, k);
      const char *eq = strchr(nv, '=');
      char *prop = g_strndup(nv, eq - nv);
      if (!g_object_class_find_property(G_OBJECT_GET_CLASS(s->stereo), prop))
        set_error(&b, g_strdup_printf("--set %s: cudastereo has no property '%s'", nv, prop));
      else
        gst_util_set_object_arg(G_OBJECT(s->stereo), prop, eq + 1);
      g_free(prop);
    }
    s->stereo_sink = gst_element_get_static_pad(s->stereo, "sink");
    s->stereo_src = gst_element_get_static_pad(s->stereo, "src");
    gst_pad_add_probe(s->stereo_sink, GST_PAD_PROBE_TYPE_BUFFER, on_input, s, NULL);
    gst_pad_add_probe(s->stereo_sink, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM | GST_PAD_PROBE_TYPE_PUSH, on_input, s,
                      NULL);
    gst_pad_add_probe(s->stereo_src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, on_output, s,
                      NULL);
  }

  /* Start: every pipeline, then the frame into every appsrc (once). */
  watchdog_stage_set("starting the pipelines");
  for (guint p = 0; p < b.pipelines->len && !has_error(&b); ++p) {
    GstElement *pl = g_ptr_array_index(b.pipelines, p);
    if (gst_element_set_state(pl, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      char *e = camera_pop_bus_error(pl);
      set_error(&b, g_strdup_printf("pipeline %u did not start%s%s", p, e ? ": " : "", e ? e : ""));
      g_free(e);
    }
  }
  CameraPlayer **players = g_new0(CameraPlayer *, o->streams);
  for (int i = 0; i < o->streams && !has_error(&b) && seq; ++i) {
    Stream *s = &b.streams[i];
    GPtrArray *frames = o->source == SOURCE_CUDA ? seq_frames[s->device < 0 ? 0 : s->device] : seq->frames;
    if (!frames) {
      set_error(&b, g_strdup_printf("no frames of the sequence on GPU %d for stream %d", s->device, i));
      break;
    }
    players[i] = camera_player_start(seq, frames, GST_APP_SRC(s->appsrc), i);
  }
  for (int i = 0; i < o->streams && !has_error(&b) && o->source != SOURCE_H264 && !seq; ++i) {
    Stream *s = &b.streams[i];
    GstBuffer *buf = NULL;
    if (o->source == SOURCE_POOL) {
      char *why = pool_buffer(&b, s, frame_caps, frame_buf, &buf);
      if (why) {
        set_error(&b, why);
        break;
      }
    } else if (o->own_frames) {
      GstMapInfo m;
      if (!gst_buffer_map(frame_buf, &m, GST_MAP_READ)) {
        set_error(&b, g_strdup_printf("the frame for stream %d cannot be mapped for its own copy", i));
        break;
      }
      buf = gst_buffer_new_wrapped(g_memdup2(m.data, m.size), m.size);
      gst_buffer_unmap(frame_buf, &m);
    } else {
      buf = gst_buffer_new();
      gst_buffer_append_memory(buf, gst_buffer_get_all_memory(frame_buf));
    }
    GST_BUFFER_PTS(buf) = 0;
    GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(1, GST_SECOND, o->live_fps ? o->live_fps : 60);
    if (gst_app_src_push_buffer(GST_APP_SRC(s->appsrc), buf) != GST_FLOW_OK) {
      set_error(&b, g_strdup_printf("appsrc of stream %d refused the frame", i));
      break;
    }
    /* imagefreeze keeps the frame and drops this EOS. */
    gst_app_src_end_of_stream(GST_APP_SRC(s->appsrc));
  }

  /* Wait for every stream's first output, warm up, measure. */
  const gint64 t_start = g_get_monotonic_time();
  watchdog_stage_set("waiting for every stream's first output");
  for (;;) {
    if (has_error(&b)) break;
    int waiting = 0;
    for (int i = 0; i < o->streams; ++i) {
      g_mutex_lock(&b.streams[i].lock);
      waiting += b.streams[i].frames_out == 0;
      g_mutex_unlock(&b.streams[i].lock);
    }
    if (!waiting) break;
    if (g_get_monotonic_time() - t_start > (gint64)(0.8 * o->timeout_s * G_USEC_PER_SEC)) {
      GString *ids = g_string_new(NULL);
      for (int i = 0; i < o->streams; ++i)
        if (b.streams[i].frames_out == 0) g_string_append_printf(ids, "%s%d", ids->len ? "," : "", i);
      set_error(&b, g_strdup_printf("no output within %.1f s from stream(s) %s", 0.8 * o->timeout_s, ids->str));
      g_string_free(ids, TRUE);
      break;
    }
    g_usleep(5000);
  }
  const double startup_s = (g_get_monotonic_time() - t_start) / 1e6;
  watchdog_stage_set("warming up");
  const gint64 warm_end = g_get_monotonic_time() + (gint64)(o->warmup_s * G_USEC_PER_SEC);
  while (!has_error(&b) && g_get_monotonic_time() < warm_end) g_usleep(10000);
  /* A sequence's warm-up frames (the background model learning the scene,
   * all foreground) and the first tested frame come out of every stream
   * before the window: on a slow backend --warmup's seconds may not cover
   * them. */
  for (int pending = seq != NULL; pending && !has_error(&b);) {
    pending = 0;
    for (int i = 0; i < o->streams; ++i) {
      g_mutex_lock(&b.streams[i].lock);
      pending += b.streams[i].frames_out <= (guint64)seq->warmup;
      g_mutex_unlock(&b.streams[i].lock);
    }
    if (!pending) break;
    if (g_get_monotonic_time() - t_start > (gint64)(0.8 * o->timeout_s * G_USEC_PER_SEC)) {
      set_error(&b, g_strdup_printf("the sequence's %d warm-up frames did not come out of every stream within %.1f s",
                                    seq->warmup, 0.8 * o->timeout_s));
      break;
    }
    g_usleep(5000);
  }
  if (have_driver && !has_error(&b))
    for (int i = 0; i < drv.count; ++i) used_after[i] = driver_used(&drv, i);

  watchdog_stage_set("measuring");
  guint64 *count0 = g_new0(guint64, o->streams), *count1 = g_new0(guint64, o->streams);
  gboolean ended_by_eos = FALSE;
  double window_s = 0, cpu_s = 0;
  ModelSamples model = {0};
  if (!has_error(&b)) {
    for (int i = 0; i < o->streams; ++i) {
      g_mutex_lock(&b.streams[i].lock);
      count0[i] = b.streams[i].frames_out;
      g_mutex_unlock(&b.streams[i].lock);
    }
    const double cpu0 = cpu_seconds();
    const gint64 t0 = g_get_monotonic_time();
    g_atomic_int_set(&b.measuring, 1);
    const gint64 end = t0 + (gint64)(o->duration_s * G_USEC_PER_SEC);
    for (guint tick = 0; !has_error(&b) && g_get_monotonic_time() < end && !ended_by_eos; ++tick) {
      g_usleep(5000);
      /* The model's share of the frame and of the matching, a stream at a
       * time (the element's last frame when asked). */
      if (b.streams[tick % o->streams].stereo) sample_model(b.streams[tick % o->streams].stereo, &model);
      for (int i = 0; i < o->streams && !ended_by_eos; ++i) {
        g_mutex_lock(&b.streams[i].lock);
        ended_by_eos = b.streams[i].eos;
        g_mutex_unlock(&b.streams[i].lock);
      }
    }
    for (int i = 0; i < o->streams; ++i) {
      g_mutex_lock(&b.streams[i].lock);
      count1[i] = b.streams[i].frames_out;
      g_mutex_unlock(&b.streams[i].lock);
    }
    const gint64 t1 = g_get_monotonic_time();
    g_atomic_int_set(&b.measuring, 0);
    window_s = (t1 - t0) / 1e6;
    cpu_s = cpu_seconds() - cpu0;
    guint64 in_window = 0;
    for (int i = 0; i < o->streams; ++i) in_window += count1[i] - count0[i];
    if (ended_by_eos && in_window == 0)
      set_error(&b, g_strdup_printf("the stream ended before the measured window began (%.1f s of warm-up): "
                                    "a longer file (--make-h264 --frames) or a shorter --warmup",
                                    o->warmup_s));
  }
  const int threads = thread_count();

  /* What the element says: its stats, and its answer to a latency query. */
  char backend_used[64] = "-";
  guint64 uploaded_ahead = 0, pinned_in_place = 0, gathered = 0;
  double reported_latency_ms = -1;
  gboolean reported_live = FALSE;
  for (int i = 0; i < o->streams && b.streams[i].stereo; ++i) {
    GstStructure *st = NULL;
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(b.streams[i].stereo), "stats"))
      g_object_get(b.streams[i].stereo, "stats", &st, NULL);
    if (st) {
      guint64 up = 0;
      if (gst_structure_get_uint64(st, "uploaded-ahead", &up)) uploaded_ahead += up;
      /* System memory: frames moved by DMA from memory pinned in place, and
       * frames gathered through the engine's staging (absent before them). */
      if (gst_structure_get_uint64(st, "pinned-in-place-frames", &up)) pinned_in_place += up;
      if (gst_structure_get_uint64(st, "gathered-frames", &up)) gathered += up;
      const char *be = gst_structure_get_string(st, "backend");
      if (i == 0 && be && *be) g_strlcpy(backend_used, be, sizeof backend_used);
      gst_structure_free(st);
    }
  }
  if (b.streams[0].stereo_src && !has_error(&b)) {
    GstQuery *q = gst_query_new_latency();
    if (gst_pad_query(b.streams[0].stereo_src, q)) {
      GstClockTime min_l = 0, max_l = 0;
      gst_query_parse_latency(q, &reported_live, &min_l, &max_l);
      reported_latency_ms = min_l / 1e6;
    }
    gst_query_unref(q);
  }

  /* Teardown, under the watchdog. */
  watchdog_stage_set("stopping the pipelines (set_state NULL)");
  for (guint p = 0; p < b.pipelines->len; ++p)
    gst_element_set_state(GST_ELEMENT(g_ptr_array_index(b.pipelines, p)), GST_STATE_NULL);
  /* Stopped appsrcs refuse the players' next frames. */
  guint64 pushed = 0;
  for (int i = 0; i < o->streams; ++i)
    if (players[i]) pushed += camera_player_join(players[i]);
  g_free(players);
  watchdog_stage_set("reporting");

  /* Report. */
  GArray *pooled = g_array_new(FALSE, FALSE, sizeof(double));
  double total_fps = 0, fps_min = 1e30, fps_max = 0, worst_p99 = 0;
  guint64 out_of_order = 0, unmatched = 0, alloc_queries = 0;
  GString *memories = g_string_new(NULL);
  for (int i = 0; i < o->streams; ++i) {
    Stream *s = &b.streams[i];
    const double fps = window_s > 0 ? (count1[i] - count0[i]) / window_s : 0;
    total_fps += fps;
    if (fps < fps_min) fps_min = fps;
    if (fps > fps_max) fps_max = fps;
    g_array_sort(s->latency_ms, cmp_double);
    const double *lat = (const double *)(void *)s->latency_ms->data;
    const double med = quantile(lat, s->latency_ms->len, 0.5), p99 = quantile(lat, s->latency_ms->len, 0.99);
    if (p99 > worst_p99) worst_p99 = p99;
    g_array_append_vals(pooled, lat, s->latency_ms->len);
    out_of_order += s->out_of_order;
    unmatched += s->unmatched;
    alloc_queries += s->alloc_queries;
    const char *mem = s->input_memory[0] ? s->input_memory : "none";
    if (!strstr(memories->str, mem)) g_string_append_printf(memories, "%s%s", memories->len ? "+" : "", mem);
    printf("stream label=%s source=%s streams=%d index=%d device=%d frames=%" G_GUINT64_FORMAT
           " fps=%.1f lat_median_ms=%.2f lat_p99_ms=%.2f input_memory=%s alloc_queries=%u out_of_order=%" G_GUINT64_FORMAT
           " unmatched=%" G_GUINT64_FORMAT "\n",
           o->label, source_names[o->source], o->streams, i, s->device, count1[i] - count0[i], fps, med, p99, mem,
           s->alloc_queries, s->out_of_order, s->unmatched);
  }
  if (fps_min > fps_max) fps_min = 0;
  g_array_sort(pooled, cmp_double);
  const double *pl = (const double *)(void *)pooled->data;

  /* GPU memory per device: the streams' share. */
  GString *gpu = g_string_new(NULL);
  double gpu_total_mib = 0;
  gboolean gpu_known = FALSE;
  if (have_driver) {
    for (int d = 0; d < drv.count; ++d) {
      if (used_before[d] < 0 || used_after[d] < 0) continue;
      const double mib = (used_after[d] - used_before[d]) / 1048576.0;
      g_string_append_printf(gpu, "%s%d:%.0f", gpu->len ? "," : "", d, mib);
      gpu_total_mib += mib;
      gpu_known = TRUE;
    }
  }

  print_result_start(o, frame->what);
  printf(" backend_used=%s total_fps=%.1f fps_min=%.1f fps_mean=%.1f fps_max=%.1f lat_median_ms=%.2f lat_p99_ms=%.2f "
         "worst_stream_p99_ms=%.2f",
         backend_used, total_fps, fps_min, o->streams ? total_fps / o->streams : 0, fps_max,
         quantile(pl, pooled->len, 0.5), quantile(pl, pooled->len, 0.99), worst_p99);
  if (gpu_known)
    printf(" gpu_mib_per_stream=%.1f gpu_mib_by_device=%s", gpu_total_mib / o->streams, gpu->str);
  else
    printf(" gpu_mib_per_stream=n/a gpu_mib_by_device=n/a");
  printf(" cuda_contexts=%u input_memory=%s alloc_queries=%" G_GUINT64_FORMAT " uploaded_ahead=%" G_GUINT64_FORMAT
         " pinned_in_place=%" G_GUINT64_FORMAT " gathered=%" G_GUINT64_FORMAT
         " out_of_order=%" G_GUINT64_FORMAT " unmatched=%" G_GUINT64_FORMAT
         " window_s=%.2f ended=%s startup_s=%.2f cpu_cores=%.2f threads=%d reported_latency_ms=%.2f reported_live=%d "
         "warnings=%u",
         b.contexts->len, memories->len ? memories->str : "none", alloc_queries, uploaded_ahead, pinned_in_place,
         gathered, out_of_order, unmatched,
         window_s, ended_by_eos ? "eos" : "time", startup_s, window_s > 0 ? cpu_s / window_s : 0, threads,
         reported_latency_ms, reported_live, b.warnings);
  if (!gpu_known && want_gpu) printf(" gpu_note=\"%s\"", have_driver ? "no reading" : drv.why);
  if (model.n)
    printf(" fg_fraction=%.4f matched=%.4f model_samples=%u", model.foreground / model.n, model.matched / model.n,
           model.n);
  if (model.warming_up) printf(" warming_up_samples=%u", model.warming_up);
  if (seq) {
    double seq_mib = 0;
    if (have_driver)
      for (int d = 0; d < drv.count; ++d)
        if (used_unloaded[d] >= 0 && used_before[d] >= 0) seq_mib += (used_before[d] - used_unloaded[d]) / 1048576.0;
    printf(" sequence_frames=%u warmup_frames=%d frames_pushed=%" G_GUINT64_FORMAT " sequence_mib=%.0f",
           seq->frames->len, seq->warmup, pushed, seq_mib);
  }
  if (b.warning) {
    for (char *c = b.warning; *c; ++c)
      if (*c == '"') *c = '\'';
    printf(" first_warning=\"%s\"", b.warning);
  }
  if (b.error) {
    for (char *c = b.error; *c; ++c)
      if (*c == '"' || *c == '\n') *c = '\'';
    printf(" error=\"%s\"\n", b.error);
    rc = 1;
  } else {
    printf("\n");
    rc = 0;
  }
  fflush(stdout);

  g_string_free(gpu, TRUE);
  g_string_free(memories, TRUE);
  g_array_free(pooled, TRUE);
  g_free(count0);
  g_free(count1);
  for (int i = 0; i < o->streams; ++i) {
    Stream *s = &b.streams[i];
    if (s->stereo_sink) gst_object_unref(s->stereo_sink);
    if (s->stereo_src) gst_object_unref(s->stereo_src);
    if (s->stereo) gst_object_unref(s->stereo);
    if (s->appsrc) gst_object_unref(s->appsrc);
    g_array_free(s->latency_ms, TRUE);
    g_mutex_clear(&s->lock);
  }
  for (guint p = 0; p < b.pipelines->len; ++p) gst_object_unref(g_ptr_array_index(b.pipelines, p));
  g_ptr_array_free(b.pipelines, TRUE);
  for (int i = 0; i < o->streams; ++i)
    if (b.pools[i]) {
      gst_buffer_pool_set_active(b.pools[i], FALSE);
      gst_object_unref(b.pools[i]);
    }
  g_free(b.pools);
  for (int d = 0; d < MAX_DEVICES; ++d)
    if (b.shared[d]) gst_context_unref(b.shared[d]);
  g_ptr_array_free(b.contexts, TRUE);
  g_ptr_array_free(bus_contexts, TRUE);
  for (int d = 0; d < MAX_DEVICES; ++d)
    if (seq_frames[d]) g_ptr_array_unref(seq_frames[d]);
  if (frame_buf) gst_buffer_unref(frame_buf);
  if (frame_caps) gst_caps_unref(frame_caps);
  g_free(b.streams);
  g_free(b.error);
  g_free(b.warning);
  if (have_driver) driver_close(&drv);
  return rc;
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  Options o;
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return camera_usage(), 0;
  if (!camera_parse_options(argc, argv, &o)) return camera_usage();
  /* Encoding a long file takes longer than a run. */
  if (o.make_h264 && !o.timeout_given) o.timeout_s = 600;

  g_mutex_init(&watchdog_lock);
  g_cond_init(&watchdog_cond);
  GThread *dog = g_thread_new("watchdog", watchdog, &o);

  Frame frame = {0};
  CameraSequence seq = {0};
  int rc;
  watchdog_stage_set("reading the views");
  char *why = NULL;
  if (o.sequence) {
    why = camera_sequence_load(o.sequence, &seq);
    /* The files' size is the views' (--size does not apply). */
    o.width = frame.view_w = seq.view_w;
    o.height = frame.view_h = seq.view_h;
    g_strlcpy(frame.what, seq.what, sizeof frame.what);
  } else if (o.source == SOURCE_H264 && !o.make_h264 && !o.write_frame) {
    char *base = g_path_get_basename(o.h264);
    g_strlcpy(frame.what, base, sizeof frame.what);
    for (char *c = frame.what; *c; ++c)
      if (*c == ' ') *c = '-';
    g_free(base);
  } else {
    why = camera_make_frame(&o, &frame);
  }
  if (why) {
    fprintf(stderr, PROGRAM ": %s\n", why);
    print_result_start(&o, "-");
    printf(" error=\"%s\"\n", why);
    g_free(why);
    rc = 1;
  } else if (o.write_frame) {
    why = camera_write_ppm(&frame, o.write_frame);
    if (why) fprintf(stderr, PROGRAM ": %s\n", why);
    else printf("wrote %s: %dx%d side by side (%s)\n", o.write_frame, 2 * frame.view_w, frame.view_h, frame.what);
    rc = why ? 1 : 0;
    g_free(why);
  } else if (o.make_h264) {
    watchdog_stage_set("encoding H.264");
    rc = camera_write_h264(&o, &frame);
  } else {
    rc = run(&o, &frame, o.sequence ? &seq : NULL);
  }
  fflush(stdout);
  g_mutex_lock(&watchdog_lock);
  watchdog_done = TRUE;
  g_cond_signal(&watchdog_cond);
  g_mutex_unlock(&watchdog_lock);
  g_thread_join(dog);
  g_free(frame.rgba);
  camera_sequence_clear(&seq);
  g_ptr_array_free(o.props, TRUE);
  return rc;
}
