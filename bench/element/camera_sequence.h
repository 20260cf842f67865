/* cs-bench-cameras' moving scene (--sequence DIR): the frames a camera
 * sends, from files, played into each stream's appsrc by a thread of its own.
 *
 * DIR is what `cs-bench-engine --scene surveillance --write-pairs DIR`
 * writes for each configuration: left_NNN.ppm and right_NNN.ppm (8-bit
 * PPM or PGM views of one size) and sequence.txt, whose first lines say
 * "warmup W" and "moving M". A stream plays frames 0 .. W - 1 once (the
 * background model learns the empty scene), then the moving frames
 * W .. W + M - 1 forwards and backwards for as long as it runs, starting at
 * its own step of that play (stream k at step 5 k, as cs-bench-engine's
 * cameras do), so that the streams are different cameras.
 *
 * The frames are RGBA side by side. In system memory every stream shares
 * them; for CUDA memory they are uploaded once per GPU through cudaupload
 * (the CUDA context it makes is the one the elements get, through the
 * caller's bus handler), so that, as with imagefreeze, nothing crosses the
 * host while a stream runs. */
#pragma once

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

/* Reads a binary PGM (P5) or PPM (P6) with maxval 255. NULL on success, else
 * why (g_free it). *channels: 1 or 3; *data: g_free it. */
char *camera_read_pnm(const char *path, int *w, int *h, int *channels, guint8 **data);
/* camera_read_pnm's w x h pixels (channels 1 or 3) into RGBA rows of
 * dst_stride bytes: grey to R = G = B; alpha 255. */
void camera_pnm_to_rgba(const guint8 *pix, int w, int h, int channels, guint8 *dst, int dst_stride);

typedef struct {
  int view_w, view_h;
  int warmup, moving;
  GstCaps *caps;     /* RGBA, 2 view_w x view_h, 60/1 */
  GPtrArray *frames; /* GstBuffer in system memory, warmup + moving of them */
  char what[320];    /* for the result line */
} CameraSequence;

/* Reads DIR's sequence. NULL on success, else why (g_free it). */
char *camera_sequence_load(const char *dir, CameraSequence *seq);
void camera_sequence_clear(CameraSequence *seq);

/* The sequence in CUDA memory on `device`: a GPtrArray of GstBuffer (the
 * caller frees it with g_ptr_array_unref), or NULL and *why. The upload
 * pipeline's bus messages go to `handler` (called with handler_data), as the
 * streams' do, so that its CUDA context is the one they share. */
GPtrArray *camera_sequence_upload(const CameraSequence *seq, int device, GstBusSyncHandler handler,
                                  gpointer handler_data, char **why);

/* The frame (an index into frames) that a stream plays n-th. */
int camera_sequence_frame(const CameraSequence *seq, int stream, guint64 n);

/* One stream's player: a thread pushing frames (shallow copies of `frames`,
 * timestamps n / 60 s) into appsrc, blocking while its queue is full, until
 * appsrc refuses one (it flushes when its pipeline stops). */
typedef struct CameraPlayer CameraPlayer;
CameraPlayer *camera_player_start(const CameraSequence *seq, GPtrArray *frames, GstAppSrc *appsrc, int stream);
/* Joins the thread (call after the pipeline has left PLAYING) and frees the
 * player; returns the frames it pushed. */
guint64 camera_player_join(CameraPlayer *p);
