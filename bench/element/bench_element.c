/* cs-bench-element: end-to-end throughput and latency of a stereo element in
 * a real pipeline, fed from memory by appsrc and drained by appsink
 * (sync=false), so that nothing but the element and its neighbours sets
 * the pace.
 *
 *   appsrc (side-by-side)          ! [cudaupload !] cudastereo ! caps ! appsink
 *   appsrc (left), appsrc (right)  ! [cudaupload !] cudastereo.sink_left/right ...
 *   appsrc (left), appsrc (right)  ! disparity (OpenCV) ! appsink
 *
 * Two measurements on the same pipeline:
 *  - latency: one frame in flight at a time; time from handing the frame
 *    (both views) to appsrc until its output buffer reaches appsink. This
 *    is what a live source sees per frame. Median and 95th percentile.
 *  - throughput: N frames pushed as fast as appsrc accepts them (a few
 *    frames queued), frames per second between the first and last output
 *    after the latency pass has warmed everything up.
 * Frames are K pre-made textured pairs (a slanted plane, disparities
 * spread over the search range), cycled; memory is wrapped, not copied,
 * except for OpenCV's element, which writes into its right input and so
 * needs a fresh writable buffer each time (one memcpy per view).
 *
 * Prints one markdown table row (--header prints the header first). An
 * element or feature that is not available gives a row saying why, and
 * exit code 3, never a number.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *element;   /* cudastereo | disparity */
  const char *backend;   /* cudastereo: auto | cuda | cpu */
  const char *method;    /* disparity: sgbm | sbm */
  int width, height;     /* one view */
  int disparities;
  gboolean two_pads;     /* else one side-by-side frame */
  gboolean color;        /* RGBA false colour, else GRAY16_LE raw */
  gboolean cuda_memory;  /* cudaupload before the element */
  gboolean pool_memory;  /* system memory from the pool the element proposes (pinned with CUDA) */
  int frames, latency_frames, warmup, distinct;
  double timeout_s;
  gboolean header, header_only;
} Options;

typedef struct {
  GstElement *pipeline;
  GstAppSrc *src[2]; /* [0] packed or left, [1] right */
  GstAppSink *sink;
  GstBuffer **views[2]; /* distinct pre-made buffers per appsrc */
  int n_src;
  gboolean copy_inputs;
  guint64 next_pts;
  guint64 duration;
} Bench;

/* A smooth-ish deterministic texture, so census and block costs see real
 * structure: value noise on a 4-pixel lattice plus a little fine noise. */
static uint32_t hash2(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = x * 374761393u + y * 668265263u + seed * 2246822519u;
  h = (h ^ (h >> 13)) * 1274126177u;
  return h ^ (h >> 16);
}

static int texture(int u, int v, uint32_t seed) {
  const int gx = u >> 2, gy = v >> 2, fx = u & 3, fy = v & 3;
  const int a = hash2(gx, gy, seed) & 255, b = hash2(gx + 1, gy, seed) & 255;
  const int c = hash2(gx, gy + 1, seed) & 255, d = hash2(gx + 1, gy + 1, seed) & 255;
  const int top = a * (4 - fx) + b * fx, bottom = c * (4 - fx) + d * fx;
  const int smooth = (top * (4 - fy) + bottom * fy) / 16;
  const int fine = (int)(hash2(u, v, seed ^ 0x9e37u) & 31) - 16;
  const int value = 20 + smooth * 200 / 255 + fine / 2;
  return value < 0 ? 0 : (value > 255 ? 255 : value);
}

/* Writes view `which` (0 left, 1 right) of pair k into dst with `bpp`
 * bytes per pixel (3 RGB, 4 RGBA). The right view samples the texture at
 * x + d(x): a plane slanted from 10 % to 90 % of the search range. */
static void render_view(uint8_t *dst, int stride, int w, int h, int bpp, int which, int k, int disparities) {
  for (int y = 0; y < h; ++y) {
    uint8_t *row = dst + (size_t)y * stride;
    for (int x = 0; x < w; ++x) {
      const int d = which ? (disparities / 10 + (int)((int64_t)x * (disparities * 8 / 10) / w)) : 0;
      const int u = x + d, v = y + 7 * k;
      uint8_t *p = row + (size_t)x * bpp;
      p[0] = (uint8_t)texture(u, v, 1);
      p[1] = (uint8_t)texture(u, v, 2);
      p[2] = (uint8_t)texture(u, v, 3);
      if (bpp == 4) p[3] = 255;
    }
  }
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [options]\n"
          "  --element cudastereo|disparity   element under test (default cudastereo;\n"
          "                                   disparity = OpenCV's, gstreamer1.0-opencv)\n"
          "  --backend auto|cuda|cpu          cudastereo backend (default auto)\n"
          "  --method sgbm|sbm                OpenCV method (default sgbm)\n"
          "  --size WxH                       one view (default 640x480)\n"
          "  --disparities D                  max-disparity (default 128; OpenCV's is fixed)\n"
          "  --input sbs|pads                 one side-by-side frame or two pads (default sbs)\n"
          "  --output raw|color               GRAY16_LE or RGBA false colour (default raw)\n"
          "  --memory system|pool|cuda        pool: frames in buffers of the pool the element\n"
          "                                   proposes upstream (pinned with CUDA); cuda:\n"
          "                                   cudaupload before the element\n"
          "  --frames N                       throughput frames (default 100)\n"
          "  --latency-frames N               paced frames (default 30)\n"
          "  --warmup N                       paced frames not counted (default 5)\n"
          "  --distinct K                     pre-made pairs cycled (default 4)\n"
          "  --timeout S                      seconds to wait for one output (default 60)\n"
          "  --header                         print the markdown header first\n"
          "  --header-only                    print the markdown header and stop\n"
          "Exit codes: 0 measured, 1 failed, 2 bad options, 3 not available here.\n",
          argv0);
  return 2;
}

static gboolean parse(int argc, char **argv, Options *o) {
  *o = (Options){"cudastereo", "auto", "sgbm", 640, 480, 128, FALSE, FALSE, FALSE, FALSE, 100, 30, 5, 4, 60.0, FALSE, FALSE};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES_VALUE() \
  do {                \
    if (!v) {         \
      fprintf(stderr, "cs-bench-element: %s needs a value\n", a); \
      return FALSE;   \
    }                 \
    ++i;              \
  } while (0)
    if (!strcmp(a, "--header")) {
      o->header = TRUE;
    } else if (!strcmp(a, "--header-only")) {
      o->header = o->header_only = TRUE;
    } else if (!strcmp(a, "--element")) {
      TAKES_VALUE();
      o->element = v;
    } else if (!strcmp(a, "--backend")) {
      TAKES_VALUE();
      o->backend = v;
    } else if (!strcmp(a, "--method")) {
      TAKES_VALUE();
      o->method = v;
    } else if (!strcmp(a, "--size")) {
      TAKES_VALUE();
      if (sscanf(v, "%dx%d", &o->width, &o->height) != 2) {
        fprintf(stderr, "cs-bench-element: --size wants WxH, got '%s'\n", v);
        return FALSE;
      }
    } else if (!strcmp(a, "--disparities")) {
      TAKES_VALUE();
      o->disparities = atoi(v);
    } else if (!strcmp(a, "--input")) {
      TAKES_VALUE();
      if (strcmp(v, "sbs") && strcmp(v, "pads")) {
        fprintf(stderr, "cs-bench-element: --input is sbs or pads, got '%s'\n", v);
        return FALSE;
      }
      o->two_pads = !strcmp(v, "pads");
    } else if (!strcmp(a, "--output")) {
      TAKES_VALUE();
      if (strcmp(v, "raw") && strcmp(v, "color")) {
        fprintf(stderr, "cs-bench-element: --output is raw or color, got '%s'\n", v);
        return FALSE;
      }
      o->color = !strcmp(v, "color");
    } else if (!strcmp(a, "--memory")) {
      TAKES_VALUE();
      if (strcmp(v, "system") && strcmp(v, "pool") && strcmp(v, "cuda")) {
        fprintf(stderr, "cs-bench-element: --memory is system, pool or cuda, got '%s'\n", v);
        return FALSE;
      }
      o->cuda_memory = !strcmp(v, "cuda");
      o->pool_memory = !strcmp(v, "pool");
    } else if (!strcmp(a, "--frames")) {
      TAKES_VALUE();
      o->frames = atoi(v);
    } else if (!strcmp(a, "--latency-frames")) {
      TAKES_VALUE();
      o->latency_frames = atoi(v);
    } else if (!strcmp(a, "--warmup")) {
      TAKES_VALUE();
      o->warmup = atoi(v);
    } else if (!strcmp(a, "--distinct")) {
      TAKES_VALUE();
      o->distinct = atoi(v);
    } else if (!strcmp(a, "--timeout")) {
      TAKES_VALUE();
      o->timeout_s = atof(v);
    } else {
      fprintf(stderr, "cs-bench-element: unknown option '%s'\n", a);
      return FALSE;
    }
#undef TAKES_VALUE
  }
  if (o->width < 16 || o->height < 16 || o->width > 16384 || o->height > 16384) {
    fprintf(stderr, "cs-bench-element: size %dx%d out of range (16..16384)\n", o->width, o->height);
    return FALSE;
  }
  if (o->disparities < 1 || o->frames < 2 || o->latency_frames < 1 || o->warmup < 0 || o->distinct < 1 ||
      o->timeout_s <= 0) {
    fprintf(stderr, "cs-bench-element: --disparities, --frames (>= 2), --latency-frames, --distinct and --timeout "
                    "must be positive\n");
    return FALSE;
  }
  if (strcmp(o->element, "cudastereo") && strcmp(o->element, "disparity")) {
    fprintf(stderr, "cs-bench-element: --element is cudastereo or disparity, got '%s'\n", o->element);
    return FALSE;
  }
  if (!strcmp(o->element, "disparity")) o->two_pads = TRUE; /* its only input mode */
  return TRUE;
}

static void print_header(void) {
  printf("| element | backend | view size | D | input | output | memory | fps | latency median ms | latency p95 ms "
         "| frames | note |\n");
  printf("| --- | --- | --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
}

/* First columns of this configuration's row. */
static void print_row_start(const Options *o, const char *backend_used) {
  const gboolean cv = !strcmp(o->element, "disparity");
  char d[32];
  /* OpenCV's element fixes its range: SGBM 1..64, block matching 0..31. */
  if (cv) snprintf(d, sizeof d, "%s", strcmp(o->method, "sbm") ? "64 (fixed)" : "32 (fixed)");
  else snprintf(d, sizeof d, "%d", o->disparities);
  printf("| %s | %s | %dx%d | %s | %s | %s | %s |", cv ? "opencv disparity" : "cudastereo",
         cv ? o->method : backend_used, o->width, o->height, d, o->two_pads ? "pads" : "sbs",
         cv ? "RGB grey, min-max scaled" : (o->color ? "RGBA colour" : "GRAY16 raw"),
         o->cuda_memory ? "CUDA" : (o->pool_memory ? "system, proposed pool" : "system"));
}

/* Prints a row that carries no numbers, only why. */
static int report_unavailable(const Options *o, const char *why) {
  print_row_start(o, o->backend);
  printf(" n/a | n/a | n/a | 0 | not measured: %s |\n", why);
  return 3;
}

/* Takes the first error or warning on the bus, if any. */
static char *bus_error(GstElement *pipeline) {
  GstBus *bus = gst_element_get_bus(pipeline);
  char *text = NULL;
  GstMessage *m;
  while (!text && (m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR))) {
    GError *e = NULL;
    char *dbg = NULL;
    gst_message_parse_error(m, &e, &dbg);
    text = g_strdup_printf("%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "error");
    g_clear_error(&e);
    g_free(dbg);
    gst_message_unref(m);
  }
  gst_object_unref(bus);
  return text;
}

/* Moves the pre-made frames of appsrc s into buffers of the pool the element
 * proposes upstream, as an upstream element honouring allocation queries
 * would write them (with the CUDA engine: pinned memory). NULL or a reason. */
static const char *use_proposed_pool(Bench *b, int s, int distinct) {
  GstPad *pad = gst_element_get_static_pad(GST_ELEMENT(b->src[s]), "src");
  GstCaps *caps = NULL;
  g_object_get(b->src[s], "caps", &caps, NULL);
  GstQuery *q = caps ? gst_query_new_allocation(caps, TRUE) : NULL;
  GstBufferPool *pool = NULL;
  if (q && gst_pad_peer_query(pad, q) && gst_query_get_n_allocation_pools(q) > 0)
    gst_query_parse_nth_allocation_pool(q, 0, &pool, NULL, NULL, NULL);
  if (q) gst_query_unref(q);
  if (caps) gst_caps_unref(caps);
  gst_object_unref(pad);
  if (!pool) return "the element proposed no pool";
  if (!gst_buffer_pool_set_active(pool, TRUE)) {
    gst_object_unref(pool);
    return "the proposed pool could not be activated";
  }
  const char *why = NULL;
  for (int k = 0; k < distinct && !why; ++k) {
    GstBuffer *buf = NULL;
    GstBuffer *proto = b->views[s][k];
    if (gst_buffer_pool_acquire_buffer(pool, &buf, NULL) != GST_FLOW_OK) {
      why = "no buffer from the proposed pool";
    } else if (gst_buffer_get_size(buf) != gst_buffer_get_size(proto)) {
      why = "the proposed pool's buffers have another layout (row padding)";
      gst_buffer_unref(buf);
    } else {
      GstMapInfo m;
      if (!gst_buffer_map(proto, &m, GST_MAP_READ)) {
        why = "a frame could not be mapped for reading";
        gst_buffer_unref(buf);
        continue;
      }
      gst_buffer_fill(buf, 0, m.data, m.size);
      gst_buffer_unmap(proto, &m);
      gst_buffer_unref(proto);
      b->views[s][k] = buf; /* its memory is shared into each pushed buffer */
    }
  }
  gst_object_unref(pool);
  return why;
}

/* Hands pair k to the appsrc(s) with the next timestamp. */
static gboolean push_pair(Bench *b, int k) {
  for (int s = 0; s < b->n_src; ++s) {
    GstBuffer *proto = b->views[s][k];
    GstBuffer *buf;
    if (b->copy_inputs) {
      buf = gst_buffer_copy_deep(proto);
    } else {
      buf = gst_buffer_new();
      gst_buffer_append_memory(buf, gst_buffer_get_all_memory(proto));
    }
    GST_BUFFER_PTS(buf) = b->next_pts;
    GST_BUFFER_DURATION(buf) = b->duration;
    if (gst_app_src_push_buffer(b->src[s], buf) != GST_FLOW_OK) return FALSE;
  }
  b->next_pts += b->duration;
  return TRUE;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  Bench *b;
  int frames, distinct;
  gboolean ok;
} Pusher;

static gpointer push_all(gpointer data) {
  Pusher *p = data;
  p->ok = TRUE;
  for (int i = 0; i < p->frames && p->ok; ++i) p->ok = push_pair(p->b, i % p->distinct);
  return NULL;
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  Options o;
  if (!parse(argc, argv, &o)) return usage(argv[0]);
  if (o.header) print_header();
  if (o.header_only) return 0;
  const gboolean cv = !strcmp(o.element, "disparity");
  char why[512];

  if (!gst_element_factory_find(o.element)) {
    snprintf(why, sizeof why, "element '%s' not found (%s)", o.element,
             cv ? "install gstreamer1.0-opencv" : "set GST_PLUGIN_PATH to the build's gst/ folder");
    return report_unavailable(&o, why);
  }
  if (o.cuda_memory && !gst_element_factory_find("cudaupload")) {
    return report_unavailable(&o, "cudaupload not registered (no nvcodec plugin or no CUDA device)");
  }

  /* Pipeline description. OpenCV's element takes RGB on two pads. */
  const int bpp = cv ? 3 : 4;
  const char *fmt = cv ? "RGB" : "RGBA";
  const int packed_w = o.two_pads ? o.width : 2 * o.width;
  char src_caps[512];
  snprintf(src_caps, sizeof src_caps, "video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", fmt, packed_w,
           o.height);
  {
    /* Complete the caps the way gst_video_info_to_caps() does: OpenCV's
     * element compares the second pad's caps with that rebuilt form of the
     * first pad's and refuses anything not exactly equal. */
    GstCaps *c = gst_caps_from_string(src_caps);
    GstVideoInfo vi;
    if (c && gst_video_info_from_caps(&vi, c)) {
      GstCaps *full = gst_video_info_to_caps(&vi);
      char *str = gst_caps_to_string(full);
      g_strlcpy(src_caps, str, sizeof src_caps);
      g_free(str);
      gst_caps_unref(full);
    }
    if (c) gst_caps_unref(c);
  }
  const char *upload = o.cuda_memory ? "cudaupload ! video/x-raw(memory:CUDAMemory) ! " : "";
  const char *appsrc_props = "format=time is-live=false block=true emit-signals=false";
  char element_desc[256], out_caps[128];
  if (cv) {
    snprintf(element_desc, sizeof element_desc, "disparity name=e method=%s", o.method);
    snprintf(out_caps, sizeof out_caps, "video/x-raw,format=RGB");
  } else {
    snprintf(element_desc, sizeof element_desc, "cudastereo name=e backend=%s max-disparity=%d%s", o.backend,
             o.disparities, o.two_pads ? "" : " input-layout=side-by-side");
    snprintf(out_caps, sizeof out_caps, "video/x-raw,format=%s", o.color ? "RGBA" : "GRAY16_LE");
  }
  char *desc;
  if (o.two_pads) {
    desc = g_strdup_printf(
        "%s ! %s ! appsink name=out sync=false max-buffers=0 "
        "appsrc name=left %s caps=\"%s\" ! %se.%s "
        "appsrc name=right %s caps=\"%s\" ! %se.%s",
        element_desc, out_caps, appsrc_props, src_caps, upload, "sink_left", appsrc_props, src_caps, upload,
        "sink_right");
  } else {
    desc = g_strdup_printf("appsrc name=left %s caps=\"%s\" ! %s%s ! %s ! appsink name=out sync=false", appsrc_props,
                           src_caps, upload, element_desc, out_caps);
  }
  GError *perr = NULL;
  GstElement *pipeline = gst_parse_launch(desc, &perr);
  if (!pipeline || perr) {
    /* The description goes to stderr; the row keeps the reason short. */
    fprintf(stderr, "cs-bench-element: pipeline: %s\n", desc);
    snprintf(why, sizeof why, "%s%s",
             o.cuda_memory ? "the element does not take video/x-raw(memory:CUDAMemory) from cudaupload: " : "pipeline: ",
             perr ? perr->message : "did not parse");
    g_clear_error(&perr);
    if (pipeline) gst_object_unref(pipeline);
    g_free(desc);
    return report_unavailable(&o, why);
  }
  g_free(desc);

  Bench b = {0};
  b.pipeline = pipeline;
  b.n_src = o.two_pads ? 2 : 1;
  b.copy_inputs = cv;
  b.duration = GST_SECOND / 30;
  b.src[0] = GST_APP_SRC(gst_bin_get_by_name(GST_BIN(pipeline), "left"));
  if (o.two_pads) b.src[1] = GST_APP_SRC(gst_bin_get_by_name(GST_BIN(pipeline), "right"));
  b.sink = GST_APP_SINK(gst_bin_get_by_name(GST_BIN(pipeline), "out"));
  /* A few frames may queue in appsrc: enough to keep the element busy,
   * few enough that latency under load stays bounded. */
  const guint64 frame_bytes = (guint64)packed_w * o.height * bpp;
  for (int s = 0; s < b.n_src; ++s) g_object_set(b.src[s], "max-bytes", 3 * frame_bytes, NULL);

  /* Pre-made pairs. */
  for (int s = 0; s < b.n_src; ++s) b.views[s] = g_new0(GstBuffer *, o.distinct);
  for (int k = 0; k < o.distinct; ++k) {
    if (o.two_pads) {
      for (int s = 0; s < 2; ++s) {
        const size_t size = (size_t)o.width * o.height * bpp;
        uint8_t *data = g_malloc(size);
        render_view(data, o.width * bpp, o.width, o.height, bpp, s, k, o.disparities);
        b.views[s][k] = gst_buffer_new_wrapped(data, size);
      }
    } else {
      const size_t stride = (size_t)packed_w * bpp, size = stride * o.height;
      uint8_t *data = g_malloc(size);
      render_view(data, (int)stride, o.width, o.height, bpp, 0, k, o.disparities);
      render_view(data + (size_t)o.width * bpp, (int)stride, o.width, o.height, bpp, 1, k, o.disparities);
      b.views[0][k] = gst_buffer_new_wrapped(data, size);
    }
  }

  int rc = 1;
  const GstClockTime timeout = (GstClockTime)(o.timeout_s * GST_SECOND);
  double *lat = g_new0(double, o.latency_frames);
  double *arrival = g_new0(double, o.frames);
  char backend_used[64];
  g_strlcpy(backend_used, cv ? o.method : o.backend, sizeof backend_used);

  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    char *e = bus_error(pipeline);
    snprintf(why, sizeof why, "pipeline did not start: %s", e ? e : "state change failed");
    g_free(e);
    rc = report_unavailable(&o, why);
    goto done;
  }

  if (o.pool_memory) {
    for (int s = 0; s < b.n_src; ++s) {
      const char *no_pool = use_proposed_pool(&b, s, o.distinct);
      if (no_pool) {
        rc = report_unavailable(&o, no_pool);
        goto done;
      }
    }
  }

  /* Latency pass: one frame in flight. */
  for (int i = 0; i < o.warmup + o.latency_frames; ++i) {
    const gint64 t0 = g_get_monotonic_time();
    if (!push_pair(&b, i % o.distinct)) {
      char *e = bus_error(pipeline);
      snprintf(why, sizeof why, "push refused: %s", e ? e : "flow error");
      g_free(e);
      rc = report_unavailable(&o, why);
      goto done;
    }
    GstSample *s = gst_app_sink_try_pull_sample(b.sink, timeout);
    if (!s) {
      char *e = bus_error(pipeline);
      snprintf(why, sizeof why, "no output within %.0f s: %s", o.timeout_s, e ? e : "no error posted");
      g_free(e);
      rc = report_unavailable(&o, why);
      goto done;
    }
    const gint64 t1 = g_get_monotonic_time();
    if (i == 0) {
      /* The negotiated input tells whether CUDA memory really reached the
       * element (and not a copy back to system memory). */
      GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline), "e");
      GstPad *pad = gst_element_get_static_pad(e, o.two_pads ? "sink_left" : "sink");
      if (!cv && pad) {
        GstCaps *caps = gst_pad_get_current_caps(pad);
        const gboolean on_cuda =
            caps && gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory");
        if (o.cuda_memory && !on_cuda) {
          if (caps) gst_caps_unref(caps);
          gst_object_unref(pad);
          gst_object_unref(e);
          gst_sample_unref(s);
          rc = report_unavailable(&o, "element negotiated system memory, not CUDA memory");
          goto done;
        }
        if (caps) gst_caps_unref(caps);
      }
      if (pad) gst_object_unref(pad);
      if (!cv && g_object_class_find_property(G_OBJECT_GET_CLASS(e), "stats")) {
        /* Which backend `auto` chose, as the element reports it. */
        GstStructure *st = NULL;
        g_object_get(e, "stats", &st, NULL);
        const char *name = st ? gst_structure_get_string(st, "backend") : NULL;
        if (name && *name) g_strlcpy(backend_used, name, sizeof backend_used);
        if (st) gst_structure_free(st);
      }
      gst_object_unref(e);
    }
    gst_sample_unref(s);
    if (i >= o.warmup) lat[i - o.warmup] = (t1 - t0) / 1000.0;
  }

  /* Throughput pass: frames pushed from a second thread as fast as appsrc
   * takes them; outputs timed here. */
  {
    Pusher p = {&b, o.frames, o.distinct, TRUE};
    GThread *th = g_thread_new("push", push_all, &p);
    int got = 0;
    for (; got < o.frames; ++got) {
      GstSample *s = gst_app_sink_try_pull_sample(b.sink, timeout);
      if (!s) break;
      arrival[got] = g_get_monotonic_time() / 1000.0;
      gst_sample_unref(s);
    }
    if (got < o.frames) {
      /* Unblock the pusher before joining it. */
      gst_element_set_state(pipeline, GST_STATE_NULL);
    }
    g_thread_join(th);
    if (got < o.frames) {
      char *e = bus_error(pipeline);
      snprintf(why, sizeof why, "throughput pass stopped after %d of %d frames: %s", got, o.frames,
               e ? e : "timeout");
      g_free(e);
      rc = report_unavailable(&o, why);
      goto done;
    }
  }
  {
    /* The first output of the flood still reflects the idle pipeline;
     * count the intervals after it. */
    const double span_ms = arrival[o.frames - 1] - arrival[0];
    const double fps = span_ms > 0 ? (o.frames - 1) * 1000.0 / span_ms : 0;
    qsort(lat, o.latency_frames, sizeof(double), cmp_double);
    const double med = lat[o.latency_frames / 2];
    int i95 = (int)(0.95 * (o.latency_frames - 1) + 0.5);
    const double p95 = lat[i95];
    print_row_start(&o, backend_used);
    printf(" %.1f | %.2f | %.2f | %d | %s |\n", fps, med, p95, o.frames,
           cv ? "copies each input (the element writes into it)" : "");
    rc = 0;
  }

done:
  gst_element_set_state(pipeline, GST_STATE_NULL);
  for (int s = 0; s < b.n_src; ++s) {
    for (int k = 0; k < o.distinct; ++k)
      if (b.views[s][k]) gst_buffer_unref(b.views[s][k]);
    g_free(b.views[s]);
    gst_object_unref(b.src[s]);
  }
  gst_object_unref(b.sink);
  gst_object_unref(pipeline);
  g_free(lat);
  g_free(arrival);
  fflush(stdout);
  return rc;
}
