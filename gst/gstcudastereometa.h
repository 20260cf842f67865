/* GstCudaStereoMeta: what a program needs to read a cudastereo output buffer.
 *
 * Public header: an application may include it without linking against the
 * plugin; gst_buffer_get_cuda_stereo_meta() finds the API type by name once
 * the plugin is loaded.
 *
 * Every output buffer also carries the same values as a GstCustomMeta named
 * "GstCudaStereoCustomMeta" (GST_CUDA_STEREO_CUSTOM_META_NAME), readable
 * where C structs are not, e.g. from Python through GObject introspection:
 *
 *   meta = buffer.get_custom_meta("GstCudaStereoCustomMeta")
 *   fields = meta.get_structure()       # a Gst.Structure of that name
 *   scale = fields.get_value("scale")
 *
 * Its fields, named and typed as below (GstCudaStereoMeta's, dash-named):
 *   scale                guint     disparity value per pixel of disparity (16)
 *   invalid-value        guint     the value of pixels without a result (0)
 *   min-disparity        gint      the configured search range, pixels
 *   max-disparity        gint      its exclusive upper bound, pixels
 *   foreground-fraction  gdouble   as GstCudaStereoMeta.foreground_fraction
 *   levels               gint      pyramid levels used
 *   backend              gchararray "cpu" or "cuda"
 *   depth                gboolean  TRUE: values are millimetres
 *   confidence           gboolean  TRUE: values are confidences, 0 .. 255
 *   placeholder          gboolean  TRUE: an all-invalid stand-in frame
 *   frame-index          guint64   frames processed since start/model reset
 *   matched-fraction     gdouble   as GstCudaStereoMeta.matched_fraction
 *   rectified-views      gboolean  as GstCudaStereoMeta.rectified_views
 * and, only when depth is TRUE, what the millimetres were computed from:
 *   baseline             gdouble   metres (the element's `baseline`)
 *   focal-length         gdouble   pixels (the element's `focal-length`)
 * and, only when the element rectifies (its `calibration`):
 *   rectification-q      GstValueArray of 16 gdouble: OpenCV's Q, row-major,
 *                        taking (x, y, disparity in pixels, 1) of the left
 *                        rectified view to the homogeneous 3-D point in its
 *                        camera's frame (metres): divide the output's values
 *                        by `scale` first
 *
 * Both metas describe the frame as cudastereo made it. Buffer copies keep
 * them; a transform that says it changes the frame drops them. Elements that
 * pass untagged metas on as copies (videoconvert and videoscale do) keep them
 * too, though converted or scaled values no longer match them: read them on
 * the element's own output, as examples/embed.c and depth_at_centre.py do.
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
  gboolean confidence;  /* TRUE when output-mode=confidence: GRAY8 values are
                         * confidences, 0 = invalid or no margin .. 255 = unique
                         * (scale does not apply; the range is the disparities') */
  gdouble matched_fraction; /* the frame's matching work against a full
                             * frame's (left pixels given candidates, over the
                             * levels matched): what the background model
                             * left to match; 1.0 without it and where
                             * method progressive matches a frame whose
                             * views are both at least 13/16 foreground
                             * whole, 0 for a placeholder */
  gboolean rectified_views; /* TRUE when output-mode=rectified: the frame
                             * holds the two rectified views in colour, left
                             * first (scale and the disparity fields do not
                             * apply; nothing was matched) */
} GstCudaStereoMeta;

GType gst_cuda_stereo_meta_api_get_type (void);
const GstMetaInfo *gst_cuda_stereo_meta_get_info (void);
GstCudaStereoMeta *gst_buffer_add_cuda_stereo_meta (GstBuffer * buffer);

#define GST_CUDA_STEREO_CUSTOM_META_NAME "GstCudaStereoCustomMeta"

const GstMetaInfo *gst_cuda_stereo_custom_meta_get_info (void);
/* Adds the GstCustomMeta with @meta's values; @baseline_m and @focal_px are
 * recorded only when @meta->depth is TRUE. */
GstCustomMeta *gst_buffer_add_cuda_stereo_custom_meta (GstBuffer * buffer,
    const GstCudaStereoMeta * meta, gdouble baseline_m, gdouble focal_px);

/* Returns the meta of @buffer, or NULL (also when the plugin is not loaded). */
static inline GstCudaStereoMeta *
gst_buffer_get_cuda_stereo_meta (GstBuffer * buffer)
{
  GType api = g_type_from_name (GST_CUDA_STEREO_META_API_NAME);
  return api ? (GstCudaStereoMeta *) gst_buffer_get_meta (buffer, api) : NULL;
}

G_END_DECLS
