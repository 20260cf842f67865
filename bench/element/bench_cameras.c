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
 * Exit codes: 0 measured, 1 failed (the result line says why), 2 bad
 * options, 3 not available here (an element missing), 4 timed out.
 */
#include <dlfcn.h>
#include <errno.h>
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

#include "camera_sequence.h"

#define PROGRAM "cs-bench-cameras"
#define MAX_DEVICES 16
#define LATENCY_RING 128

enum { SOURCE_CUDA, SOURCE_SYSTEM, SOURCE_POOL, SOURCE_VIDEOCONVERT, SOURCE_H264, N_SOURCES };
static const char *const source_names[N_SOURCES] = {"cuda", "system", "pool", "videoconvert", "h264"};
enum { OUTPUT_RAW, OUTPUT_COLOR, OUTPUT_COLOR_CUDA, N_OUTPUTS };
static const char *const output_names[N_OUTPUTS] = {"raw", "color", "color-cuda"};

typedef struct {
  int streams;
  int source;
  const char *left, *right;
  const char *sequence; /* --sequence DIR: a moving scene (camera_sequence.h) */
  int width, height; /* one view */
  const char *h264;
  const char *decoder;
  const char *backend;
  int disparities;
  int output;
  int devices[MAX_DEVICES];
  int n_devices;
  gboolean one_pipeline;
  gboolean own_frames; /* system memory: each stream its own copy of the frame */
  gboolean shared_context;
  int live_fps;
  GPtrArray *props; /* "name=value" for every cudastereo */
  gboolean identity; /* --stage identity: no cudastereo, what the source alone gives */
  const char *format;     /* --source videoconvert: the format videoconvert makes (default RGBA) */
  gboolean convert_each;  /* --source videoconvert: converted every frame (after imagefreeze), not once */
  double warmup_s, duration_s, timeout_s;
  gboolean timeout_given;
  const char *label;
  /* --make-h264 / --write-frame */
  const char *make_h264;
  const char *write_frame;
  int frames, noise, gop;
  guint bitrate;
} Options;

/* ------------------------------------------------------------------ frame */

typedef struct {
  int view_w, view_h;
  guint8 *rgba; /* both views side by side: 2 * view_w x view_h, stride 8 * view_w */
  char what[320];
} Frame;

static uint32_t hash3(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = x * 374761393u + y * 668265263u + seed * 2246822519u;
  h = (h ^ (h >> 13)) * 1274126177u;
  return h ^ (h >> 16);
}

/* A generated view (synthetic, when no files are given): value noise on a
 * 4-pixel lattice; the right view sees the left one shifted by a disparity
 * that grows from 10 % to 90 % of the range across the row. */
static void generate_view(guint8 *dst, int stride, int w, int h, gboolean right, int disparities) {
  for (int y = 0; y < h; ++y) {
    guint8 *row = dst + (size_t)y * stride;
    for (int x = 0; x < w; ++x) {
      const int d = right ? disparities / 10 + (int)((int64_t)x * (disparities * 8 / 10) / w) : 0;
      const int u = x + d, gx = u >> 2, gy = y >> 2, fx = u & 3, fy = y & 3;
      const int a = hash3(gx, gy, 1) & 255, b = hash3(gx + 1, gy, 1) & 255;
      const int c = hash3(gx, gy + 1, 1) & 255, e = hash3(gx + 1, gy + 1, 1) & 255;
      const int top = a * (4 - fx) + b * fx, bottom = c * (4 - fx) + e * fx;
      const int v = 20 + (top * (4 - fy) + bottom * fy) / 16 * 200 / 255;
      guint8 *p = row + (size_t)x * 4;
      p[0] = p[1] = p[2] = (guint8)v;
      p[3] = 255;
    }
  }
}

/* First error on a bus, as "element: message", or NULL. */
static char *pop_bus_error(GstElement *pipeline) {
  GstBus *bus = gst_element_get_bus(pipeline);
  char *text = NULL;
  GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (m) {
    GError *e = NULL;
    gst_message_parse_error(m, &e, NULL);
    text = g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "error");
    g_clear_error(&e);
    gst_message_unref(m);
  }
  gst_object_unref(bus);
  return text;
}

/* Any image GStreamer decodes, scaled to w x h by videoscale, as RGBA. */
static char *decode_view(const char *path, int w, int h, guint8 *dst, int dst_stride) {
  char desc[512];
  snprintf(desc, sizeof desc,
           "filesrc name=file ! decodebin ! videoconvert ! videoscale add-borders=false ! "
           "video/x-raw,format=RGBA,width=%d,height=%d ! appsink name=out sync=false",
           w, h);
  GError *err = NULL;
  GstElement *p = gst_parse_launch(desc, &err);
  if (!p || err) {
    char *why = g_strdup_printf("cannot decode %s: %s", path, err ? err->message : "pipeline did not parse");
    g_clear_error(&err);
    if (p) gst_object_unref(p);
    return why;
  }
  GstElement *file = gst_bin_get_by_name(GST_BIN(p), "file");
  GstElement *out = gst_bin_get_by_name(GST_BIN(p), "out");
  g_object_set(file, "location", path, NULL);
  char *why = NULL;
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 30 * GST_SECOND);
  if (!s) {
    char *e = pop_bus_error(p);
    why = g_strdup_printf("cannot decode %s: %s", path, e ? e : "no frame within 30 s");
    g_free(e);
  } else {
    GstVideoInfo info;
    GstVideoFrame vf;
    if (!gst_video_info_from_caps(&info, gst_sample_get_caps(s)) ||
        !gst_video_frame_map(&vf, &info, gst_sample_get_buffer(s), GST_MAP_READ)) {
      why = g_strdup_printf("cannot decode %s: the decoded frame could not be mapped", path);
    } else {
      for (int y = 0; y < h; ++y)
        memcpy(dst + (size_t)y * dst_stride,
               (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&vf, 0) + (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0),
               (size_t)w * 4);
      gst_video_frame_unmap(&vf);
    }
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(file);
  gst_object_unref(out);
  gst_object_unref(p);
  return why;
}

/* One view into the RGBA frame: a PGM/PPM of exactly the view's size is
 * taken as it is (a grey value g becomes R = G = B = g, whose luma is g
 * again, so the element matches exactly the PGM's pixels); anything else is
 * decoded and scaled by GStreamer. *how says which. */
static char *load_view(const char *path, int w, int h, guint8 *dst, int dst_stride, const char **how) {
  int pw = 0, ph = 0, channels = 1;
  guint8 *pix = NULL;
  char *why = camera_read_pnm(path, &pw, &ph, &channels, &pix);
  if (!why && pw == w && ph == h) {
    camera_pnm_to_rgba(pix, w, h, channels, dst, dst_stride);
    g_free(pix);
    *how = "as read";
    return NULL;
  }
  g_free(pix);
  g_free(why);
  *how = "scaled by videoscale";
  return decode_view(path, w, h, dst, dst_stride);
}

static char *make_frame(const Options *o, Frame *f) {
  f->view_w = o->width;
  f->view_h = o->height;
  const int stride = 8 * o->width;
  f->rgba = g_malloc((size_t)stride * o->height);
  if (!o->left) {
    generate_view(f->rgba, stride, o->width, o->height, FALSE, o->disparities);
    generate_view(f->rgba + 4 * (size_t)o->width, stride, o->width, o->height, TRUE, o->disparities);
    snprintf(f->what, sizeof f->what, "synthetic");
    return NULL;
  }
  const char *how_l = "", *how_r = "";
  char *why = load_view(o->left, o->width, o->height, f->rgba, stride, &how_l);
  if (!why) why = load_view(o->right, o->width, o->height, f->rgba + 4 * (size_t)o->width, stride, &how_r);
  if (why) return why;
  char *base = g_path_get_basename(o->left);
  snprintf(f->what, sizeof f->what, "%s(%s)", base, how_l);
  for (char *c = f->what; *c; ++c)
    if (*c == ' ') *c = '-'; /* one token in the key=value line */
  g_free(base);
  return NULL;
}

static char *write_ppm(const Frame *f, const char *path) {
  FILE *out = fopen(path, "wb");
  if (!out) return g_strdup_printf("cannot write %s: %s", path, g_strerror(errno));
  const int w = 2 * f->view_w;
  fprintf(out, "P6\n%d %d\n255\n", w, f->view_h);
  guint8 *row = g_malloc((size_t)w * 3);
  gboolean ok = TRUE;
  for (int y = 0; y < f->view_h && ok; ++y) {
    const guint8 *in = f->rgba + (size_t)y * w * 4;
    for (int x = 0; x < w; ++x) memcpy(row + 3 * x, in + 4 * x, 3);
    ok = fwrite(row, 1, (size_t)w * 3, out) == (size_t)w * 3;
  }
  g_free(row);
  if (fclose(out) != 0) ok = FALSE;
  return ok ? NULL : g_strdup_printf("cannot write %s: %s", path, g_strerror(errno));
}

/* ------------------------------------------------------------ GPU memory */

/* The CUDA driver, loaded at run time so that the program builds and runs
 * without CUDA. The same libcuda the plugin uses. */
typedef struct {
  void *lib;
  int (*get_count)(int *);
  int (*get_device)(int *, int);
  int (*retain)(void **, int);
  int (*release)(int);
  int (*push)(void *);
  int (*pop)(void **);
  int (*mem_info)(size_t *, size_t *);
  int count;
  void *ctx[MAX_DEVICES];
  char why[160];
} Driver;

static gboolean driver_open(Driver *d) {
  memset(d, 0, sizeof *d);
  d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d->lib) {
    snprintf(d->why, sizeof d->why, "no libcuda.so.1");
    return FALSE;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(d->lib, "cuInit");
  d->get_count = (int (*)(int *))dlsym(d->lib, "cuDeviceGetCount");
  d->get_device = (int (*)(int *, int))dlsym(d->lib, "cuDeviceGet");
  d->retain = (int (*)(void **, int))dlsym(d->lib, "cuDevicePrimaryCtxRetain");
  d->release = (int (*)(int))dlsym(d->lib, "cuDevicePrimaryCtxRelease_v2");
  d->push = (int (*)(void *))dlsym(d->lib, "cuCtxPushCurrent_v2");
  d->pop = (int (*)(void **))dlsym(d->lib, "cuCtxPopCurrent_v2");
  d->mem_info = (int (*)(size_t *, size_t *))dlsym(d->lib, "cuMemGetInfo_v2");
  if (!init || !d->get_count || !d->get_device || !d->retain || !d->release || !d->push || !d->pop ||
      !d->mem_info) {
    snprintf(d->why, sizeof d->why, "libcuda.so.1 lacks a driver call");
    return FALSE;
  }
  int rc = init(0);
  if (rc != 0 || d->get_count(&d->count) != 0 || d->count < 1) {
    snprintf(d->why, sizeof d->why, "cuInit: error %d, or no device", rc);
    d->count = 0;
    return FALSE;
  }
  if (d->count > MAX_DEVICES) d->count = MAX_DEVICES;
  /* The primary context is made here, before the first measurement, so its
   * own memory is not counted as the streams'. */
  for (int i = 0; i < d->count; ++i) {
    int dev;
    if (d->get_device(&dev, i) != 0 || d->retain(&d->ctx[i], dev) != 0) d->ctx[i] = NULL;
  }
  return TRUE;
}

/* Device memory in use on device i, bytes; -1 when unknown. */
static int64_t driver_used(Driver *d, int i) {
  if (i < 0 || i >= d->count || !d->ctx[i]) return -1;
  size_t free_b = 0, total_b = 0;
  void *popped;
  if (d->push(d->ctx[i]) != 0) return -1;
  const int rc = d->mem_info(&free_b, &total_b);
  d->pop(&popped);
  return rc == 0 ? (int64_t)(total_b - free_b) : -1;
}

static void driver_close(Driver *d) {
  for (int i = 0; i < d->count; ++i) {
    int dev;
    if (d->ctx[i] && d->get_device(&dev, i) == 0) d->release(dev);
  }
  /* libcuda stays loaded: the plugin uses the same library. */
}

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

/* ---------------------------------------------------------------- options */

static int usage(void) {
  fprintf(stderr,
          "usage: " PROGRAM " [options]\n"
          "  --streams N              cudastereo elements in this process (default 1)\n"
          "  --source S               cuda | system | pool | videoconvert | h264 (default cuda)\n"
          "  --left FILE --right FILE the two views: PGM/PPM of the view size as they are, other\n"
          "                           images decoded and scaled by GStreamer (default: generated)\n"
          "  --size WxH               one view (default 1920x1080; with --sequence its files' size)\n"
          "  --sequence DIR           a moving scene instead of one picture (cuda or system source):\n"
          "                           cs-bench-engine --scene surveillance --write-pairs's frames, the\n"
          "                           warm-up once, then the moving frames forwards and backwards\n"
          "  --h264 FILE              mp4 with side-by-side H.264, for --source h264\n"
          "  --format F               --source videoconvert: the format made (default RGBA; GRAY8,\n"
          "                           I420, NV12: fewer bytes a pixel cross PCIe)\n"
          "  --convert C              --source videoconvert: once (default: before imagefreeze) | each\n"
          "                           (every frame, after imagefreeze, on one CPU thread a stream)\n"
          "  --decoder NAME           H.264 decoder (default nvh264dec; nvh264device<k>dec on GPU k > 0)\n"
          "  --backend B              cuda | cpu | auto (default cuda)\n"
          "  --disparities D          max-disparity (default 128)\n"
          "  --output O               raw (GRAY16_LE) | color (RGBA) | color-cuda (RGBA in CUDA memory)\n"
          "  --devices LIST           GPUs, e.g. 0,1: stream i on LIST[i %% n] (cuda-device-id)\n"
          "  --pipelines P            per-stream (default) | one (all streams in one pipeline)\n"
          "  --context C              shared (default: one CUDA context per GPU across pipelines,\n"
          "                           as an application would hand it) | own (each pipeline its own)\n"
          "  --live FPS               sources paced like cameras (imagefreeze is-live) at FPS\n"
          "  --frames-per-stream F    shared (default: every stream's source repeats one buffer) |\n"
          "                           own (each stream its own copy, for --source system/videoconvert)\n"
          "  --set NAME=VALUE         a cudastereo property for every element (repeatable)\n"
          "  --stage S                stereo (default) | identity: cudastereo replaced by identity,\n"
          "                           measured the same way (the source's own rate, e.g. a decoder's)\n"
          "  --warmup S               seconds after every stream's first output (default 1); with\n"
          "                           --sequence, and at least until its warm-up frames are out\n"
          "  --duration S             measured seconds (default 3)\n"
          "  --timeout S              the whole run, teardown included (default 60)\n"
          "  --label TEXT             copied into the result line\n"
          "  --make-h264 FILE         write the side-by-side frame as H.264 mp4 and stop\n"
          "       --frames N (default 600) --noise A (default 2, +-A per pixel and frame)\n"
          "       --bitrate BPS (default 20000000) --gop N (default 30)\n"
          "  --write-frame FILE       write the side-by-side frame as PPM and stop\n"
          "Exit codes: 0 measured, 1 failed, 2 bad options, 3 not available here, 4 timed out.\n");
  return 2;
}

static int pick(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; ++i)
    if (!strcmp(v, names[i])) return i;
  return -1;
}

static gboolean parse_double(const char *v, double *out) {
  char *end;
  *out = g_ascii_strtod(v, &end);
  return end != v && *end == '\0';
}

static gboolean parse_int(const char *v, int *out) {
  char *end;
  const long x = strtol(v, &end, 10);
  if (end == v || *end || x < -1000000000L || x > 1000000000L) return FALSE;
  *out = (int)x;
  return TRUE;
}

static gboolean parse(int argc, char **argv, Options *o) {
  *o = (Options){0};
  o->streams = 1;
  o->source = SOURCE_CUDA;
  o->width = 1920;
  o->height = 1080;
  o->decoder = "nvh264dec";
  o->backend = "cuda";
  o->disparities = 128;
  o->shared_context = TRUE;
  o->props = g_ptr_array_new();
  o->warmup_s = 1.0;
  o->duration_s = 3.0;
  o->timeout_s = 60.0;
  o->label = "-";
  o->format = "RGBA";
  o->frames = 600;
  o->noise = 2;
  o->gop = 30;
  o->bitrate = 20000000;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, PROGRAM ": %s: unknown option or missing value\n", a);
      return FALSE;
    }
    ++i;
    gboolean ok = TRUE;
    int x;
    if (!strcmp(a, "--streams")) {
      ok = parse_int(v, &o->streams) && o->streams >= 1 && o->streams <= 256;
    } else if (!strcmp(a, "--source")) {
      ok = (o->source = pick(v, source_names, N_SOURCES)) >= 0;
    } else if (!strcmp(a, "--convert")) {
      ok = !strcmp(v, "once") || !strcmp(v, "each");
      o->convert_each = !strcmp(v, "each");
    } else if (!strcmp(a, "--format")) {
      o->format = v;
      ok = gst_video_format_from_string(v) != GST_VIDEO_FORMAT_UNKNOWN;
    } else if (!strcmp(a, "--left")) {
      o->left = v;
    } else if (!strcmp(a, "--right")) {
      o->right = v;
    } else if (!strcmp(a, "--sequence")) {
      o->sequence = v;
    } else if (!strcmp(a, "--size")) {
      ok = sscanf(v, "%dx%d", &o->width, &o->height) == 2 && o->width >= 16 && o->height >= 16 &&
           o->width <= 8192 && o->height <= 8192;
    } else if (!strcmp(a, "--h264")) {
      o->h264 = v;
    } else if (!strcmp(a, "--decoder")) {
      o->decoder = v;
    } else if (!strcmp(a, "--backend")) {
      ok = !strcmp(v, "cuda") || !strcmp(v, "cpu") || !strcmp(v, "auto");
      o->backend = v;
    } else if (!strcmp(a, "--disparities")) {
      ok = parse_int(v, &o->disparities) && o->disparities >= 1;
    } else if (!strcmp(a, "--output")) {
      ok = (o->output = pick(v, output_names, N_OUTPUTS)) >= 0;
    } else if (!strcmp(a, "--devices")) {
      char **parts = g_strsplit(v, ",", -1);
      o->n_devices = 0;
      for (char **p = parts; *p && ok; ++p) {
        ok = o->n_devices < MAX_DEVICES && parse_int(*p, &x) && x >= 0 && x < MAX_DEVICES;
        if (ok) o->devices[o->n_devices++] = x;
      }
      ok = ok && o->n_devices > 0;
      g_strfreev(parts);
    } else if (!strcmp(a, "--pipelines")) {
      ok = !strcmp(v, "one") || !strcmp(v, "per-stream");
      o->one_pipeline = !strcmp(v, "one");
    } else if (!strcmp(a, "--context")) {
      ok = !strcmp(v, "shared") || !strcmp(v, "own");
      o->shared_context = !strcmp(v, "shared");
    } else if (!strcmp(a, "--frames-per-stream")) {
      ok = !strcmp(v, "shared") || !strcmp(v, "own");
      o->own_frames = !strcmp(v, "own");
    } else if (!strcmp(a, "--live")) {
      ok = parse_int(v, &o->live_fps) && o->live_fps >= 1 && o->live_fps <= 1000;
    } else if (!strcmp(a, "--stage")) {
      ok = !strcmp(v, "stereo") || !strcmp(v, "identity");
      o->identity = !strcmp(v, "identity");
    } else if (!strcmp(a, "--set")) {
      ok = strchr(v, '=') != NULL && v[0] != '=';
      g_ptr_array_add(o->props, (gpointer)v);
    } else if (!strcmp(a, "--warmup")) {
      ok = parse_double(v, &o->warmup_s) && o->warmup_s >= 0;
    } else if (!strcmp(a, "--duration")) {
      ok = parse_double(v, &o->duration_s) && o->duration_s > 0;
    } else if (!strcmp(a, "--timeout")) {
      ok = parse_double(v, &o->timeout_s) && o->timeout_s > 0;
      o->timeout_given = TRUE;
    } else if (!strcmp(a, "--label")) {
      o->label = v;
    } else if (!strcmp(a, "--make-h264")) {
      o->make_h264 = v;
    } else if (!strcmp(a, "--write-frame")) {
      o->write_frame = v;
    } else if (!strcmp(a, "--frames")) {
      ok = parse_int(v, &o->frames) && o->frames >= 1;
    } else if (!strcmp(a, "--noise")) {
      ok = parse_int(v, &o->noise) && o->noise >= 0 && o->noise <= 64;
    } else if (!strcmp(a, "--bitrate")) {
      ok = parse_int(v, &x) && x > 0;
      o->bitrate = (guint)x;
    } else if (!strcmp(a, "--gop")) {
      ok = parse_int(v, &o->gop) && o->gop >= 1;
    } else {
      fprintf(stderr, PROGRAM ": unknown option '%s'\n", a);
      return FALSE;
    }
    if (!ok) {
      fprintf(stderr, PROGRAM ": bad value '%s' for %s\n", v, a);
      return FALSE;
    }
  }
  if (!o->left != !o->right) {
    fprintf(stderr, PROGRAM ": --left and --right go together\n");
    return FALSE;
  }
  if (o->source == SOURCE_H264 && !o->h264 && !o->make_h264 && !o->write_frame) {
    fprintf(stderr, PROGRAM ": --source h264 needs --h264 FILE (made by --make-h264)\n");
    return FALSE;
  }
  if (o->identity && o->props->len) {
    fprintf(stderr, PROGRAM ": --set names cudastereo properties; --stage identity has no cudastereo\n");
    return FALSE;
  }
  if (o->live_fps && o->source == SOURCE_H264) {
    fprintf(stderr, PROGRAM ": --live paces imagefreeze; the h264 source reads a file as fast as it decodes\n");
    return FALSE;
  }
  if (o->sequence &&
      (o->left || (o->source != SOURCE_CUDA && o->source != SOURCE_SYSTEM) || o->live_fps || o->own_frames ||
       o->make_h264 || o->write_frame || (o->source == SOURCE_CUDA && !o->shared_context))) {
    fprintf(stderr, PROGRAM ": --sequence plays its files through --source cuda or system, as fast as the element "
                    "takes them (not with --left/--right, --live, --frames-per-stream own, --make-h264, "
                    "--write-frame, or --context own from CUDA memory: the frames are uploaded in the shared "
                    "context)\n");
    return FALSE;
  }
  if (o->width % 2) {
    fprintf(stderr, PROGRAM ": the view width must be even (side by side in 4:2:0 for H.264)\n");
    return FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------------ make H.264 */

/* Writes the frame as an H.264 mp4 of o->frames frames. Each frame carries
 * its own +-noise (the same on R, G and B, independent per view and per
 * frame, from 8 noise patterns cycled), as a camera's sensor noise would, so
 * P-frames are not empty. */
static int make_h264(const Options *o, const Frame *f) {
  const char *needed[] = {"appsrc", "videoconvert", "openh264enc", "h264parse", "mp4mux", "filesink"};
  for (size_t i = 0; i < G_N_ELEMENTS(needed); ++i) {
    GstElementFactory *fac = gst_element_factory_find(needed[i]);
    if (!fac) {
      fprintf(stderr, PROGRAM ": --make-h264 needs the element %s, not found\n", needed[i]);
      return 3;
    }
    gst_object_unref(fac);
  }
  const int w = 2 * f->view_w, h = f->view_h, fps = o->live_fps ? o->live_fps : 60;
  const size_t size = (size_t)w * h * 4;
  const int variants = o->frames < 8 ? o->frames : 8;
  guint8 **frame = g_new0(guint8 *, variants);
  for (int k = 0; k < variants; ++k) {
    frame[k] = g_malloc(size);
    for (int y = 0; y < h; ++y) {
      const guint8 *in = f->rgba + (size_t)y * w * 4;
      guint8 *out = frame[k] + (size_t)y * w * 4;
      for (int x = 0; x < w; ++x) {
        const int n = o->noise ? (int)(hash3(x, y, 101 + k) % (2 * o->noise + 1)) - o->noise : 0;
        for (int c = 0; c < 3; ++c) {
          const int v = in[4 * x + c] + n;
          out[4 * x + c] = (guint8)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        out[4 * x + 3] = 255;
      }
    }
  }
  GError *err = NULL;
  GstElement *p = gst_parse_launch(
      "appsrc name=src format=time block=true ! videoconvert n-threads=0 ! video/x-raw,format=I420 ! "
      "openh264enc name=enc ! "
      "h264parse ! mp4mux ! filesink name=file",
      &err);
  if (!p || err) {
    fprintf(stderr, PROGRAM ": --make-h264: %s\n", err ? err->message : "pipeline did not parse");
    g_clear_error(&err);
    return 1;
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(p), "src");
  GstElement *enc = gst_bin_get_by_name(GST_BIN(p), "enc");
  GstElement *file = gst_bin_get_by_name(GST_BIN(p), "file");
  GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGBA", "width", G_TYPE_INT, w, "height",
                                      G_TYPE_INT, h, "framerate", GST_TYPE_FRACTION, fps, 1, NULL);
  g_object_set(src, "caps", caps, "max-bytes", (guint64)(4 * size), NULL);
  gst_caps_unref(caps);
  g_object_set(file, "location", o->make_h264, NULL);
  /* Rate control on a camera-like bitrate; a key frame every gop frames;
   * slices for the encoder's threads. */
  g_object_set(enc, "bitrate", o->bitrate, "gop-size", (guint)o->gop, NULL);
  gst_util_set_object_arg(G_OBJECT(enc), "rate-control", "bitrate");
  gst_util_set_object_arg(G_OBJECT(enc), "slice-mode", "auto");
  gst_util_set_object_arg(G_OBJECT(enc), "complexity", "low");

  const gint64 t0 = g_get_monotonic_time();
  int rc = 0;
  if (gst_element_set_state(p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    char *e = pop_bus_error(p);
    fprintf(stderr, PROGRAM ": --make-h264: the pipeline did not start: %s\n", e ? e : "?");
    g_free(e);
    rc = 1;
  }
  for (int i = 0; i < o->frames && rc == 0; ++i) {
    GstBuffer *buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, frame[i % variants], size, 0, size,
                                                 NULL, NULL);
    GST_BUFFER_PTS(buf) = gst_util_uint64_scale(i, GST_SECOND, fps);
    GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(1, GST_SECOND, fps);
    if (gst_app_src_push_buffer(GST_APP_SRC(src), buf) != GST_FLOW_OK) {
      char *e = pop_bus_error(p);
      fprintf(stderr, PROGRAM ": --make-h264: frame %d refused: %s\n", i, e ? e : "flow error");
      g_free(e);
      rc = 1;
    }
  }
  if (rc == 0) {
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    GstBus *bus = gst_element_get_bus(p);
    /* The watchdog ends the process if this takes longer than --timeout. */
    GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!m) {
      rc = 1;
    } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error(m, &e, NULL);
      fprintf(stderr, PROGRAM ": --make-h264: %s: %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "?");
      g_clear_error(&e);
      rc = 1;
    }
    if (m) gst_message_unref(m);
    gst_object_unref(bus);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  if (rc == 0)
    printf("made %s: %d frames %dx%d at %d fps, H.264 (openh264enc %u bit/s, gop %d, noise +-%d), %.1f s\n",
           o->make_h264, o->frames, w, h, fps, o->bitrate, o->gop, o->noise,
           (g_get_monotonic_time() - t0) / 1e6);
  gst_object_unref(src);
  gst_object_unref(enc);
  gst_object_unref(file);
  gst_object_unref(p);
  for (int k = 0; k < variants; ++k) g_free(frame[k]);
  g_free(frame);
  return rc;
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
      char *e = pop_bus_error(pl);
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
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(), 0;
  if (!parse(argc, argv, &o)) return usage();
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
    why = make_frame(&o, &frame);
  }
  if (why) {
    fprintf(stderr, PROGRAM ": %s\n", why);
    print_result_start(&o, "-");
    printf(" error=\"%s\"\n", why);
    g_free(why);
    rc = 1;
  } else if (o.write_frame) {
    why = write_ppm(&frame, o.write_frame);
    if (why) fprintf(stderr, PROGRAM ": %s\n", why);
    else printf("wrote %s: %dx%d side by side (%s)\n", o.write_frame, 2 * frame.view_w, frame.view_h, frame.what);
    rc = why ? 1 : 0;
    g_free(why);
  } else if (o.make_h264) {
    watchdog_stage_set("encoding H.264");
    rc = make_h264(&o, &frame);
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
