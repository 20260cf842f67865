/* Embedding cudastereo in an application.
 *
 * A surveillance-style program: it feeds generated side-by-side frames
 * (a textured wall with an object moving across it) through
 *   appsrc ! cudastereo background=true ! appsink
 * and, per output frame, reads the raw 16-bit disparity and the
 * GstCudaStereoMeta that says how to interpret it, then prints the
 * foreground fraction and the median disparity of the moving object.
 *
 *   cs-embed [frames]          (GST_PLUGIN_PATH_1_0 must find the plugin)
 *
 * Exit status 0 when every pushed frame came back with its timestamp and the
 * object's median disparity equals the one rendered, so it doubles as a test.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gstcudastereometa.h"

enum { WIDTH = 320, HEIGHT = 240, WALL_DISPARITY = 8, OBJECT_DISPARITY = 24 };

/* Deterministic texture: a hash of the surface coordinate, smoothed by
 * taking it on a 2x2 grid so census codes are stable. */
static guint8
texture (guint seed, int u, int v)
{
  guint h = seed * 0x9E3779B9u ^ (guint) (u >> 1) * 0x85EBCA6Bu ^ (guint) (v >> 1) * 0xC2B2AE35u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return (guint8) (30 + h % 196);
}

/* One side-by-side RGBA frame: left view then right view in each row.
 * The object (a 64x64 square) moves 4 px per frame. */
static GstBuffer *
make_frame (int index, int *object_x)
{
  const int stride = 2 * WIDTH * 4;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) stride * HEIGHT, NULL);
  GstMapInfo map;
  int ox = 40 + (index * 4) % (WIDTH - 140), oy = 80;

  *object_x = ox;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (int y = 0; y < HEIGHT; y++) {
    for (int view = 0; view < 2; view++) {
      guint8 *row = map.data + (gsize) y * stride + view * WIDTH * 4;
      for (int x = 0; x < WIDTH; x++) {
        /* The right view sees surface point u at x = u - d. */
        int in_object, u, val;
        int shift = view ? OBJECT_DISPARITY : 0;
        u = x + shift;
        in_object = u >= ox && u < ox + 64 && y >= oy && y < oy + 64;
        if (in_object) {
          val = texture (7, u - ox, y);
        } else {
          u = x + (view ? WALL_DISPARITY : 0);
          val = texture (3, u, y);
        }
        row[4 * x + 0] = row[4 * x + 1] = row[4 * x + 2] = (guint8) val;
        row[4 * x + 3] = 255;
      }
    }
  }
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale (index, GST_SECOND, 30);
  GST_BUFFER_DURATION (buf) = gst_util_uint64_scale (1, GST_SECOND, 30);
  return buf;
}

static int
compare_u16 (const void *a, const void *b)
{
  return (int) *(const guint16 *) a - (int) *(const guint16 *) b;
}

int
main (int argc, char **argv)
{
  int frames = argc > 1 ? atoi (argv[1]) : 60;
  int failures = 0;
  GError *err = NULL;
  GstElement *pipe, *src, *sink;

  gst_init (&argc, &argv);
  pipe = gst_parse_launch ("appsrc name=src format=time ! "
      "cudastereo name=stereo background=true warmup-frames=10 max-disparity=32 "
      "input-layout=side-by-side ! video/x-raw,format=GRAY16_LE ! "
      "appsink name=sink sync=false", &err);
  if (!pipe) {
    fprintf (stderr, "cs-embed: %s (is GST_PLUGIN_PATH_1_0 set to the plugin's folder?)\n", err->message);
    g_clear_error (&err);
    return 2;
  }
  src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  {
    GstCaps *caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "RGBA",
        "width", G_TYPE_INT, 2 * WIDTH, "height", G_TYPE_INT, HEIGHT,
        "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
    gst_app_src_set_caps (GST_APP_SRC (src), caps);
    gst_caps_unref (caps);
  }
  gst_element_set_state (pipe, GST_STATE_PLAYING);

  for (int i = 0; i < frames; i++) {
    int object_x;
    GstBuffer *in = make_frame (i, &object_x);
    GstClockTime pts = GST_BUFFER_PTS (in);
    GstSample *sample;
    GstBuffer *out;
    GstCudaStereoMeta *meta;
    GstVideoInfo info;
    GstVideoFrame vf;

    if (gst_app_src_push_buffer (GST_APP_SRC (src), in) != GST_FLOW_OK) {
      fprintf (stderr, "cs-embed: push of frame %d refused\n", i);
      failures++;
      break;
    }
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 10 * GST_SECOND);
    if (!sample) {
      fprintf (stderr, "cs-embed: no output for frame %d\n", i);
      failures++;
      break;
    }
    out = gst_sample_get_buffer (sample);
    meta = gst_buffer_get_cuda_stereo_meta (out);
    if (GST_BUFFER_PTS (out) != pts || !meta) {
      fprintf (stderr, "cs-embed: frame %d: timestamp or meta missing\n", i);
      failures++;
    }
    gst_video_info_from_caps (&info, gst_sample_get_caps (sample));
    if (meta && !meta->placeholder && gst_video_frame_map (&vf, &info, out, GST_MAP_READ)) {
      /* Median disparity over the object's interior, in the meta's units. */
      guint16 values[48 * 48];
      int n = 0;
      for (int y = 88; y < 136; y++) {
        const guint16 *row = (const guint16 *) ((const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 0) +
            y * GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 0));
        for (int x = object_x + 8; x < object_x + 56; x++)
          values[n++] = row[x];
      }
      qsort (values, n, sizeof values[0], compare_u16);
      gst_video_frame_unmap (&vf);
      {
        double median = (double) values[n / 2] / meta->scale;
        printf ("frame %3d  pts %" GST_TIME_FORMAT "  foreground %5.1f%%  object disparity %.2f px\n",
            i, GST_TIME_ARGS (pts), 100.0 * meta->foreground_fraction, median);
        /* The object sat in the scene during warm-up, so the model holds
         * part of it as background until it has moved off its warm-up
         * footprint (10 frames x 4 px + its 64 px width, at 4 px a frame). */
        if (i >= 30 && (median < OBJECT_DISPARITY - 0.5 || median > OBJECT_DISPARITY + 0.5)) {
          fprintf (stderr, "cs-embed: frame %d: object disparity %.2f, expected %d\n", i, median,
              OBJECT_DISPARITY);
          failures++;
        }
      }
    }
    gst_sample_unref (sample);
  }

  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  printf ("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
