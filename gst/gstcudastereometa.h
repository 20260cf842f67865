/* GstCudaStereoMeta: what a program needs to read a cudastereo output buffer.
 *
 * Public header: an application may include it without linking against the
 * plugin; gst_buffer_get_cuda_stereo_meta() finds the API type by name once
 * the plugin is loaded.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDA_STEREO_META_API_NAME "GstCudaStereoMetaAPI"

typedef struct {
  GstMeta meta;

  /* Raw disparity output (GRAY16_LE, output-mode=disparity): value = disparity
   * in pixels * scale. Depth output: millimetres. */
  guint scale;          /* 16 (4 fractional bits) */
  guint invalid_value;  /* 0: no disparity (occluded, unmatched, background) */
  gint min_disparity;   /* the configured search range, pixels */
  gint max_disparity;   /* exclusive upper bound, pixels */
  gdouble foreground_fraction; /* of the left view; 1.0 without background model */
  gint levels;          /* pyramid levels used */
  const gchar *backend; /* "cpu" or "cuda" (interned string) */
  gboolean depth;       /* TRUE when output-mode=depth (values are millimetres) */
  gboolean placeholder; /* TRUE: all-invalid frame standing in for an unpaired,
                         * missing (GAP) or unreadable input */
  guint64 frame_index;  /* frames the engine processed since start/model reset */
} GstCudaStereoMeta;

GType gst_cuda_stereo_meta_api_get_type (void);
const GstMetaInfo *gst_cuda_stereo_meta_get_info (void);
GstCudaStereoMeta *gst_buffer_add_cuda_stereo_meta (GstBuffer * buffer);

/* Returns the meta of @buffer, or NULL (also when the plugin is not loaded). */
static inline GstCudaStereoMeta *
gst_buffer_get_cuda_stereo_meta (GstBuffer * buffer)
{
  GType api = g_type_from_name (GST_CUDA_STEREO_META_API_NAME);
  return api ? (GstCudaStereoMeta *) gst_buffer_get_meta (buffer, api) : NULL;
}

G_END_DECLS
