/* cs-bench-cameras' still picture (camera_frame.h). */
#include "camera_frame.h"

#include <errno.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "camera_sequence.h"

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
char *camera_pop_bus_error(GstElement *pipeline) {
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
    char *e = camera_pop_bus_error(p);
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

char *camera_make_frame(const Options *o, Frame *f) {
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

char *camera_write_ppm(const Frame *f, const char *path) {
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

/* Writes the frame as an H.264 mp4 of o->frames frames. Each frame carries
 * its own +-noise (the same on R, G and B, independent per view and per
 * frame, from 8 noise patterns cycled), as a camera's sensor noise would, so
 * P-frames are not empty. */
int camera_write_h264(const Options *o, const Frame *f) {
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
    char *e = camera_pop_bus_error(p);
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
      char *e = camera_pop_bus_error(p);
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
