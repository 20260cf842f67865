/* cs-bench-cameras' moving scene (camera_sequence.h). */
#include "camera_sequence.h"

#include <errno.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <stdio.h>
#include <string.h>

#define FPS 60

char *camera_read_pnm(const char *path, int *w, int *h, int *channels, guint8 **data) {
  FILE *f = fopen(path, "rb");
  if (!f) return g_strdup_printf("cannot open %s: %s", path, g_strerror(errno));
  char magic[3] = {0};
  int values[3], n = 0;
  if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' || (magic[1] != '5' && magic[1] != '6')) {
    fclose(f);
    return g_strdup_printf("%s is not a binary PGM/PPM", path);
  }
  while (n < 3) {
    int ch = fgetc(f);
    if (ch == '#') {
      while (ch != '\n' && ch != EOF) ch = fgetc(f);
    } else if (ch >= '0' && ch <= '9') {
      int v = 0;
      while (ch >= '0' && ch <= '9' && v < 1000000) {
        v = v * 10 + (ch - '0');
        ch = fgetc(f);
      }
      values[n++] = v;
    } else if (ch == EOF) {
      break;
    }
  }
  if (n < 3 || values[2] != 255 || values[0] < 1 || values[1] < 1 || values[0] > 65536 || values[1] > 65536) {
    fclose(f);
    return g_strdup_printf("%s: header not understood (only 8-bit P5/P6 are read)", path);
  }
  *w = values[0];
  *h = values[1];
  *channels = magic[1] == '5' ? 1 : 3;
  const size_t size = (size_t)*w * *h * *channels;
  *data = g_malloc(size);
  const size_t got = fread(*data, 1, size, f);
  fclose(f);
  if (got != size) {
    g_free(*data);
    *data = NULL;
    return g_strdup_printf("%s: %zu of %zu pixel bytes", path, got, size);
  }
  return NULL;
}

void camera_pnm_to_rgba(const guint8 *pix, int w, int h, int channels, guint8 *dst, int dst_stride) {
  for (int y = 0; y < h; ++y) {
    guint8 *row = dst + (size_t)y * dst_stride;
    const guint8 *in = pix + (size_t)y * w * channels;
    for (int x = 0; x < w; ++x) {
      row[4 * x + 0] = in[channels * x];
      row[4 * x + 1] = in[channels * x + (channels == 3 ? 1 : 0)];
      row[4 * x + 2] = in[channels * x + (channels == 3 ? 2 : 0)];
      row[4 * x + 3] = 255;
    }
  }
}

/* One view file into its half of a side-by-side RGBA frame; the views of a
 * sequence must all have the size of its first. */
static char *read_view(const char *path, CameraSequence *seq, guint8 *dst, int dst_stride) {
  int w = 0, h = 0, channels = 1;
  guint8 *pix = NULL;
  char *why = camera_read_pnm(path, &w, &h, &channels, &pix);
  if (why) return why;
  if (!seq->view_w) {
    seq->view_w = w;
    seq->view_h = h;
  }
  if (w != seq->view_w || h != seq->view_h) {
    g_free(pix);
    return g_strdup_printf("%s is %dx%d, the sequence's first view %dx%d", path, w, h, seq->view_w, seq->view_h);
  }
  if (!dst) { /* the size only */
    g_free(pix);
    return NULL;
  }
  camera_pnm_to_rgba(pix, w, h, channels, dst, dst_stride);
  g_free(pix);
  return NULL;
}

static char *read_counts(const char *dir, CameraSequence *seq) {
  char *path = g_build_filename(dir, "sequence.txt", NULL);
  char *text = NULL;
  GError *err = NULL;
  char *why = NULL;
  if (!g_file_get_contents(path, &text, NULL, &err)) {
    why = g_strdup_printf("--sequence: %s", err->message);
    g_clear_error(&err);
  } else if (sscanf(text, "warmup %d\nmoving %d", &seq->warmup, &seq->moving) != 2 || seq->warmup < 0 ||
             seq->moving < 2 || seq->warmup + seq->moving > 10000) {
    why = g_strdup_printf("%s does not begin with \"warmup W\" and \"moving M\" lines (M at least 2)", path);
  }
  g_free(text);
  g_free(path);
  return why;
}

char *camera_sequence_load(const char *dir, CameraSequence *seq) {
  memset(seq, 0, sizeof *seq);
  seq->frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  char *why = read_counts(dir, seq);
  const int n = seq->warmup + seq->moving;
  GstVideoInfo info;
  for (int i = 0; i < n && !why; ++i) {
    char name[32];
    snprintf(name, sizeof name, "left_%03d.ppm", i);
    char *left = g_build_filename(dir, name, NULL);
    snprintf(name, sizeof name, "right_%03d.ppm", i);
    char *right = g_build_filename(dir, name, NULL);
    if (i == 0) why = read_view(left, seq, NULL, 0);
    if (!why && i == 0) {
      gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGBA, 2 * seq->view_w, seq->view_h);
      GST_VIDEO_INFO_FPS_N(&info) = FPS;
      GST_VIDEO_INFO_FPS_D(&info) = 1;
      seq->caps = gst_video_info_to_caps(&info);
    }
    if (!why) {
      const int stride = GST_VIDEO_INFO_PLANE_STRIDE(&info, 0);
      guint8 *pixels = g_malloc(GST_VIDEO_INFO_SIZE(&info));
      why = read_view(left, seq, pixels, stride);
      if (!why) why = read_view(right, seq, pixels + 4 * (size_t)seq->view_w, stride);
      if (why)
        g_free(pixels);
      else
        g_ptr_array_add(seq->frames, gst_buffer_new_wrapped(pixels, GST_VIDEO_INFO_SIZE(&info)));
    }
    g_free(left);
    g_free(right);
  }
  char *base = g_path_get_basename(dir);
  snprintf(seq->what, sizeof seq->what, "%s(%d+%d)", base, seq->warmup, seq->moving);
  for (char *c = seq->what; *c; ++c)
    if (*c == ' ') *c = '-'; /* one token in the key=value line */
  g_free(base);
  return why;
}

void camera_sequence_clear(CameraSequence *seq) {
  if (seq->frames) g_ptr_array_unref(seq->frames);
  if (seq->caps) gst_caps_unref(seq->caps);
  memset(seq, 0, sizeof *seq);
}

GPtrArray *camera_sequence_upload(const CameraSequence *seq, int device, GstBusSyncHandler handler,
                                  gpointer handler_data, char **why) {
  char dev[40] = "";
  if (device >= 0) snprintf(dev, sizeof dev, " cuda-device-id=%d", device);
  char *desc = g_strdup_printf(
      "appsrc name=in format=time ! cudaupload%s ! video/x-raw(memory:CUDAMemory) ! appsink name=out sync=false", dev);
  GError *err = NULL;
  GstElement *p = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!p || err) {
    *why = g_strdup_printf("the upload pipeline: %s", err ? err->message : "did not parse");
    g_clear_error(&err);
    if (p) gst_object_unref(p);
    return NULL;
  }
  GstBus *bus = gst_element_get_bus(p);
  gst_bus_set_sync_handler(bus, handler, handler_data, NULL);
  gst_object_unref(bus);
  GstElement *in = gst_bin_get_by_name(GST_BIN(p), "in");
  GstElement *out = gst_bin_get_by_name(GST_BIN(p), "out");
  g_object_set(in, "caps", seq->caps, NULL);
  GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  *why = NULL;
  /* Its elements' errors also reach the handler, which names them. */
  if (gst_element_set_state(p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    *why = g_strdup("the upload pipeline (appsrc ! cudaupload ! appsink) did not start");
  for (guint i = 0; i < seq->frames->len && !*why; ++i) {
    GstBuffer *buf = gst_buffer_copy(g_ptr_array_index(seq->frames, i));
    GST_BUFFER_PTS(buf) = gst_util_uint64_scale(i, GST_SECOND, FPS);
    GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(1, GST_SECOND, FPS);
    if (gst_app_src_push_buffer(GST_APP_SRC(in), buf) != GST_FLOW_OK) {
      *why = g_strdup_printf("the upload pipeline refused frame %u", i);
      break;
    }
    GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 20 * GST_SECOND);
    GstBuffer *up = s ? gst_sample_get_buffer(s) : NULL;
    if (!up)
      *why = g_strdup_printf("frame %u did not come out of cudaupload within 20 s", i);
    else
      g_ptr_array_add(frames, gst_buffer_ref(up));
    if (s) gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(in);
  gst_object_unref(out);
  gst_object_unref(p);
  if (*why) {
    g_ptr_array_unref(frames);
    return NULL;
  }
  return frames;
}

int camera_sequence_frame(const CameraSequence *seq, int stream, guint64 n) {
  if (n < (guint64)seq->warmup) return (int)n;
  const guint64 period = 2 * (guint64)(seq->moving - 1);
  const guint64 m = (n - seq->warmup + 5 * (guint64)stream) % period;
  return seq->warmup + (int)(m < (guint64)seq->moving ? m : period - m);
}

struct CameraPlayer {
  const CameraSequence *seq;
  GPtrArray *frames;
  GstAppSrc *appsrc;
  int stream;
  guint64 pushed;
  GThread *thread;
};

static gpointer play(gpointer data) {
  CameraPlayer *p = data;
  const GstClockTime duration = gst_util_uint64_scale(1, GST_SECOND, FPS);
  for (guint64 n = 0;; ++n) {
    GstBuffer *buf = gst_buffer_copy(g_ptr_array_index(p->frames, camera_sequence_frame(p->seq, p->stream, n)));
    GST_BUFFER_PTS(buf) = n * duration;
    GST_BUFFER_DURATION(buf) = duration;
    if (gst_app_src_push_buffer(p->appsrc, buf) != GST_FLOW_OK) break;
    p->pushed = n + 1;
  }
  return NULL;
}

CameraPlayer *camera_player_start(const CameraSequence *seq, GPtrArray *frames, GstAppSrc *appsrc, int stream) {
  CameraPlayer *p = g_new0(CameraPlayer, 1);
  p->seq = seq;
  p->frames = g_ptr_array_ref(frames);
  p->appsrc = GST_APP_SRC(gst_object_ref(appsrc));
  p->stream = stream;
  /* A few frames queued; the thread waits while the element is busy. */
  g_object_set(appsrc, "block", TRUE, "max-buffers", (guint64)3, "max-bytes", (guint64)0, NULL);
  char name[32];
  snprintf(name, sizeof name, "play%d", stream);
  p->thread = g_thread_new(name, play, p);
  return p;
}

guint64 camera_player_join(CameraPlayer *p) {
  g_thread_join(p->thread);
  const guint64 pushed = p->pushed;
  gst_object_unref(p->appsrc);
  g_ptr_array_unref(p->frames);
  g_free(p);
  return pushed;
}
