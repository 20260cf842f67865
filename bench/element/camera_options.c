/* cs-bench-cameras' command line (camera_options.h). */
#include "camera_options.h"

#include <gst/video/video.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const source_names[N_SOURCES] = {"cuda", "system", "pool", "videoconvert", "h264"};
const char *const output_names[N_OUTPUTS] = {"raw", "color", "color-cuda"};

int camera_usage(void) {
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

gboolean camera_parse_options(int argc, char **argv, Options *o) {
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
