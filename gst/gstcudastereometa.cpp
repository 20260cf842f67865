#include "gstcudastereometa.h"

GType gst_cuda_stereo_meta_api_get_type(void) {
  static GType type = 0;
  static const gchar* tags[] = {nullptr};
  if (g_once_init_enter(&type)) {
    GType t = gst_meta_api_type_register(GST_CUDA_STEREO_META_API_NAME, tags);
    g_once_init_leave(&type, t);
  }
  return type;
}

static gboolean cuda_stereo_meta_init(GstMeta* meta, gpointer, GstBuffer*) {
  auto* m = reinterpret_cast<GstCudaStereoMeta*>(meta);
  m->scale = 16;
  m->invalid_value = 0;
  m->min_disparity = 0;
  m->max_disparity = 0;
  m->foreground_fraction = 1.0;
  m->levels = 0;
  m->backend = g_intern_static_string("");
  m->depth = FALSE;
  m->placeholder = FALSE;
  m->frame_index = 0;
  m->confidence = FALSE;
  m->matched_fraction = 1.0;
  m->rectified_views = FALSE;
  return TRUE;
}

static gboolean cuda_stereo_meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type, gpointer) {
  // Only plain copies keep the meta: a scaled or cropped buffer no longer
  // has the disparities the meta describes.
  if (!GST_META_TRANSFORM_IS_COPY(type)) return FALSE;
  auto* src = reinterpret_cast<GstCudaStereoMeta*>(meta);
  GstCudaStereoMeta* dst = gst_buffer_add_cuda_stereo_meta(dest);
  if (!dst) return FALSE;
  const GstMeta saved = dst->meta;
  *dst = *src;
  dst->meta = saved;
  return TRUE;
}

const GstMetaInfo* gst_cuda_stereo_meta_get_info(void) {
  static const GstMetaInfo* info = nullptr;
  if (g_once_init_enter(&info)) {
    const GstMetaInfo* i = gst_meta_register(gst_cuda_stereo_meta_api_get_type(), "GstCudaStereoMeta",
                                             sizeof(GstCudaStereoMeta), cuda_stereo_meta_init, nullptr,
                                             cuda_stereo_meta_transform);
    g_once_init_leave(&info, i);
  }
  return info;
}

GstCudaStereoMeta* gst_buffer_add_cuda_stereo_meta(GstBuffer* buffer) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
  return reinterpret_cast<GstCudaStereoMeta*>(gst_buffer_add_meta(buffer, gst_cuda_stereo_meta_get_info(), nullptr));
}

const GstMetaInfo* gst_cuda_stereo_custom_meta_get_info(void) {
  static const GstMetaInfo* info = nullptr;
  if (g_once_init_enter(&info)) {
    static const gchar* tags[] = {nullptr};
    // No transform function: GStreamer's default for custom metas copies the
    // structure on plain copies and drops it otherwise, the C meta's rule.
    const GstMetaInfo* i = gst_meta_register_custom(GST_CUDA_STEREO_CUSTOM_META_NAME, tags, nullptr, nullptr, nullptr);
    g_once_init_leave(&info, i);
  }
  return info;
}

GstCustomMeta* gst_buffer_add_cuda_stereo_custom_meta(GstBuffer* buffer, const GstCudaStereoMeta* meta,
                                                      gdouble baseline_m, gdouble focal_px) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
  g_return_val_if_fail(meta != nullptr, nullptr);
  auto* custom = reinterpret_cast<GstCustomMeta*>(
      gst_buffer_add_meta(buffer, gst_cuda_stereo_custom_meta_get_info(), nullptr));
  if (!custom) return nullptr;
  GstStructure* s = gst_custom_meta_get_structure(custom);
  gst_structure_set(s, "scale", G_TYPE_UINT, meta->scale, "invalid-value", G_TYPE_UINT, meta->invalid_value,
                    "min-disparity", G_TYPE_INT, meta->min_disparity, "max-disparity", G_TYPE_INT,
                    meta->max_disparity, "foreground-fraction", G_TYPE_DOUBLE, meta->foreground_fraction, "levels",
                    G_TYPE_INT, meta->levels, "backend", G_TYPE_STRING, meta->backend, "depth", G_TYPE_BOOLEAN,
                    meta->depth, "placeholder", G_TYPE_BOOLEAN, meta->placeholder, "frame-index", G_TYPE_UINT64,
                    static_cast<guint64>(meta->frame_index), "confidence", G_TYPE_BOOLEAN, meta->confidence,
                    "matched-fraction", G_TYPE_DOUBLE, meta->matched_fraction, "rectified-views", G_TYPE_BOOLEAN,
                    meta->rectified_views, nullptr);
  // Outside depth mode the element's baseline and focal length may be mere
  // defaults, and nothing in the buffer was computed from them.
  if (meta->depth)
    gst_structure_set(s, "baseline", G_TYPE_DOUBLE, baseline_m, "focal-length", G_TYPE_DOUBLE, focal_px, nullptr);
  return custom;
}
