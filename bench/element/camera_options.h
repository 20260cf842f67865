/* cs-bench-cameras' command line: what a run is (Options) and how the
 * arguments make it. The usage text lists every option. */
#pragma once

#include <glib.h>

#define PROGRAM "cs-bench-cameras"
/* GPUs a run may name (--devices) or read memory from. */
#define MAX_DEVICES 16

enum { SOURCE_CUDA, SOURCE_SYSTEM, SOURCE_POOL, SOURCE_VIDEOCONVERT, SOURCE_H264, N_SOURCES };
extern const char *const source_names[N_SOURCES];
enum { OUTPUT_RAW, OUTPUT_COLOR, OUTPUT_COLOR_CUDA, N_OUTPUTS };
extern const char *const output_names[N_OUTPUTS];

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

/* Prints the usage on stderr; returns 2, the exit code for bad options. */
int camera_usage(void);
/* Fills *o from the arguments, over the defaults. FALSE, with a line on
 * stderr that names the option, when one is unknown, lacks its value, has a
 * bad value or does not go with another. */
gboolean camera_parse_options(int argc, char **argv, Options *o);
