/* cs-bench-cameras' still picture: both views side by side in RGBA,
 * generated or read from files (--left/--right), and written out as PPM
 * (--write-frame) or as an H.264 mp4 (--make-h264). */
#pragma once

#include <gst/gst.h>

#include "camera_options.h"

typedef struct {
  int view_w, view_h;
  guint8 *rgba; /* both views side by side: 2 * view_w x view_h, stride 8 * view_w */
  char what[320];
} Frame;

/* The frame of o: generated (value noise, a disparity growing across the
 * row) without --left/--right, else the two files, each as it is when it is
 * a PGM/PPM of the view's size, otherwise decoded and scaled by GStreamer.
 * NULL on success, else why (g_free it). */
char *camera_make_frame(const Options *o, Frame *f);
/* The frame as a binary PPM. NULL on success, else why (g_free it). */
char *camera_write_ppm(const Frame *f, const char *path);
/* The frame as an H.264 mp4 of o->frames frames (--make-h264), each with
 * its own sensor-like noise. Returns the exit code: 0 written, 1 failed,
 * 3 an element missing. */
int camera_write_h264(const Options *o, const Frame *f);
/* First error on a pipeline's bus, as "element: message", or NULL (g_free
 * it). */
char *camera_pop_bus_error(GstElement *pipeline);
