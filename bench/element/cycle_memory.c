/* cs-cycle-memory: host memory across start/stop cycles of one pipeline.
 *
 * Issue 16's reliability test found host memory growing across 1000
 * NULL -> PLAYING -> NULL cycles on the CUDA backend (and not on the CPU
 * backend). This program narrows such growth down: it cycles a pipeline of
 * your choosing and prints, every N/8 cycles, the resident set, glibc's heap
 * in use, its mmapped chunks and the number of mappings, so that one run per
 * variant (own or shared CUDA context, pipeline rebuilt or reused, frames
 * still flowing at NULL or run to EOS) shows which part grows.
 *
 *   cs-cycle-memory [--reuse] [--shared-cuda-context] [--frames K] CYCLES PIPELINE
 *
 *   --reuse                one pipeline for every cycle (else one per cycle)
 *   --shared-cuda-context  the application gives every pipeline one
 *                          GstCudaContext (device 0), as an app sharing its
 *                          context does (needs gstreamer-cuda at run time)
 *   --frames K             each cycle waits for K buffers at the sink named
 *                          "sink" and goes to NULL with frames still flowing;
 *                          without it, each cycle runs to EOS (give the source
 *                          num-buffers)
 *
 * Example (the reliability test's state cycles):
 *   cs-cycle-memory --reuse --shared-cuda-context --frames 3 400 \
 *     "videotestsrc pattern=ball ! video/x-raw,format=I420,width=192,height=64 ! \
 *      cudastereo backend=cuda max-disparity=24 input-layout=side-by-side ! fakesink name=sink"
 *
 * Exit status 0 after the last cycle, 1 on a pipeline error (printed). */
#include <dlfcn.h>
#include <gst/gst.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_memory(int cycle) {
  long rss_kib = 0;
  char line[512];
  FILE* f = fopen("/proc/self/status", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "VmRSS:", 6) == 0) rss_kib = atol(line + 6);
    fclose(f);
  }
  int maps = 0;
  f = fopen("/proc/self/maps", "r");
  if (f) {
    while (fgets(line, sizeof line, f)) maps++;
    fclose(f);
  }
  struct mallinfo2 mi = mallinfo2();
  printf("cycle %6d  resident %8.1f MiB  heap in use %8.1f MiB  mmapped %7.1f MiB  mappings %d\n", cycle,
         rss_kib / 1024.0, mi.uordblks / 1048576.0, mi.hblkhd / 1048576.0, maps);
  fflush(stdout);
}

/* The application's context, through gstreamer-cuda opened at run time (so
 * that the program builds and runs without it). NULL with a message when it
 * cannot be had. */
static GstContext* shared_cuda_context(void) {
  void* lib = dlopen("libgstcuda-1.0.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "cs-cycle-memory: --shared-cuda-context needs libgstcuda-1.0.so.0: %s\n", dlerror());
    return NULL;
  }
  gboolean (*load)(void) = (gboolean (*)(void))dlsym(lib, "gst_cuda_load_library");
  GstObject* (*ctx_new)(guint) = (GstObject * (*)(guint)) dlsym(lib, "gst_cuda_context_new");
  GstContext* (*wrap)(GstObject*) = (GstContext * (*)(GstObject*)) dlsym(lib, "gst_context_new_cuda_context");
  if (!load || !ctx_new || !wrap || !load()) {
    fprintf(stderr, "cs-cycle-memory: no CUDA driver or gstreamer-cuda symbols\n");
    return NULL;
  }
  GstObject* ctx = ctx_new(0);
  if (!ctx) {
    fprintf(stderr, "cs-cycle-memory: no CUDA context on device 0\n");
    return NULL;
  }
  GstContext* c = wrap(ctx);
  gst_object_unref(ctx);
  return c;
}

typedef struct {
  gint buffers;
} Counter;

static GstPadProbeReturn count_buffer(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
  (void)pad;
  (void)info;
  g_atomic_int_inc(&((Counter*)data)->buffers);
  return GST_PAD_PROBE_OK;
}

static GstElement* make_pipeline(const char* description, GstContext* ctx, Counter* counter) {
  GError* err = NULL;
  GstElement* p = gst_parse_launch(description, &err);
  if (!p) {
    fprintf(stderr, "cs-cycle-memory: %s\n", err ? err->message : "no pipeline");
    exit(1);
  }
  if (ctx) gst_element_set_context(p, ctx);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  if (sink) {
    GstPad* pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, counter, NULL);
    gst_object_unref(pad);
    gst_object_unref(sink);
  }
  return p;
}

/* One NULL -> PLAYING -> NULL cycle; 0, or 1 after printing an error. */
static int cycle(GstElement* p, Counter* counter, int frames) {
  GstBus* bus = gst_element_get_bus(p);
  const gint start = g_atomic_int_get(&counter->buffers);
  gst_element_set_state(p, GST_STATE_PLAYING);
  int status = 0;
  const gint64 deadline = g_get_monotonic_time() + 20 * G_TIME_SPAN_SECOND;
  for (;;) {
    GstMessage* m = gst_bus_timed_pop_filtered(bus, 5 * GST_MSECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
      GError* err = NULL;
      gchar* debug = NULL;
      gst_message_parse_error(m, &err, &debug);
      fprintf(stderr, "cs-cycle-memory: error: %s (%s)\n", err->message, debug ? debug : "");
      g_clear_error(&err);
      g_free(debug);
      status = 1;
    }
    const gboolean eos = m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS;
    if (m) gst_message_unref(m);
    if (status || eos) break;
    if (frames > 0 && g_atomic_int_get(&counter->buffers) - start >= frames) break;
    if (g_get_monotonic_time() > deadline) {
      fprintf(stderr, "cs-cycle-memory: no EOS or %d frames within 20 s\n", frames);
      status = 1;
      break;
    }
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(bus);
  return status;
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  gboolean reuse = FALSE, shared = FALSE;
  int frames = 0, i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; ++i) {
    if (strcmp(argv[i], "--reuse") == 0)
      reuse = TRUE;
    else if (strcmp(argv[i], "--shared-cuda-context") == 0)
      shared = TRUE;
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else {
      fprintf(stderr, "cs-cycle-memory: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (argc - i != 2 || atoi(argv[i]) <= 0) {
    fprintf(stderr, "usage: cs-cycle-memory [--reuse] [--shared-cuda-context] [--frames K] CYCLES PIPELINE\n");
    return 2;
  }
  const int cycles = atoi(argv[i]);
  const char* description = argv[i + 1];
  GstContext* ctx = shared ? shared_cuda_context() : NULL;
  if (shared && !ctx) return 1;
  Counter counter = {0};
  GstElement* kept = reuse ? make_pipeline(description, ctx, &counter) : NULL;
  const int every = cycles >= 8 ? cycles / 8 : 1;
  for (int c = 0; c <= cycles; ++c) {
    if (c % every == 0 || c == cycles) print_memory(c);
    if (c == cycles) break;
    GstElement* p = kept ? kept : make_pipeline(description, ctx, &counter);
    const int status = cycle(p, &counter, frames);
    if (!kept) gst_object_unref(p);
    if (status) return 1;
  }
  if (kept) gst_object_unref(kept);
  if (ctx) gst_context_unref(ctx);
  return 0;
}
