#include "caps.h"

#include <mutex>

#include "configure.h"
#include "cuda_memory.h"
#include "encode.h"

namespace cs_gst {

// The formats an output mode gives, in the user's words (for messages).
static const char* output_formats_text(GstCudaStereoOutputMode mode) {
  switch (mode) {
    case GST_CUDA_STEREO_OUTPUT_MODE_DEPTH: return "GRAY16_LE (output-mode=depth gives depth in GRAY16_LE only)";
    case GST_CUDA_STEREO_OUTPUT_MODE_CONFIDENCE: return "GRAY8 (output-mode=confidence gives GRAY8 only)";
    case GST_CUDA_STEREO_OUTPUT_MODE_RECTIFIED:
      return "RGBA, BGRA, RGBx or BGRx (output-mode=rectified gives the views in these only)";
    default: return "GRAY16_LE, GRAY8, RGBA, BGRA, RGBx or BGRx";
  }
}

// What the source pad can give for the negotiated views and output-mode, in
// our order of preference.
static GstCaps* output_caps(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  bool depth, confidence;
  cs::ViewsOutput views;
  const Geometry& g = priv->geometry;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    depth = priv->settings.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
    confidence = confidence_output(priv->settings);
    views = views_output(priv->settings, g.top_bottom());
  }
  int width, height;
  cs::output_frame_size(views, g.view_width, g.view_height, &width, &height);
  GstCaps* caps;
  if (views != cs::ViewsOutput::None) {
    caps = gst_caps_from_string("video/x-raw, format=(string)" CUDA_OUTPUT_FORMATS);
  } else if (depth) {
    caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "GRAY16_LE", nullptr);
  } else if (confidence) {
    caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "GRAY8", nullptr);
  } else {
    caps = gst_caps_from_string("video/x-raw, format=(string)" OUTPUT_FORMATS);
  }
  gst_caps_set_simple(caps, "width", G_TYPE_INT, width, "height", G_TYPE_INT, height, "pixel-aspect-ratio",
                      GST_TYPE_FRACTION, g.par_n, g.par_d, "framerate", GST_TYPE_FRACTION, g.fps_n, g.fps_d, nullptr);
#if HAVE_GST_CUDA
  if (priv->engine_ctx && !depth && !confidence) {
    // The CUDA engine can write device memory: offer it first, in the
    // formats GStreamer's CUDA allocator can hold.
    GstCaps* device = gst_caps_from_string(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY,
                                                                             CUDA_OUTPUT_FORMATS));
    gst_caps_set_simple(device, "width", G_TYPE_INT, width, "height", G_TYPE_INT, height,
                        "pixel-aspect-ratio", GST_TYPE_FRACTION, g.par_n, g.par_d, "framerate", GST_TYPE_FRACTION,
                        g.fps_n, g.fps_d, nullptr);
    gst_caps_append(device, caps);
    caps = device;
  }
#endif
  return caps;
}

GstFlowReturn update_src_caps(GstCudaStereo* self, GstCaps* downstream, GstCaps** ret) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!priv->geometry.valid) return GST_AGGREGATOR_FLOW_NEED_DATA;
  GstCaps* ours = output_caps(self);
  // `downstream` is filtered by our template, so ask the peer again: only a
  // neighbour that names CUDA memory itself (cudadownload, an encoder) gets
  // it. Elements taking anything (fakesink, filesink, videoconvert's ANY
  // features) read on the host, where CUDA memory would only add a download.
#if HAVE_GST_CUDA
  GstCaps* peer = gst_pad_peer_query_caps(GST_AGGREGATOR_SRC_PAD(self), nullptr);
  const bool peer_wants_cuda = caps_have_cuda_memory(peer);
  if (peer) gst_caps_unref(peer);
#else
  const bool peer_wants_cuda = false;
#endif
  if (!peer_wants_cuda) {
    GstCaps* system = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(ours); ++i) {
      GstCapsFeatures* f = gst_caps_get_features(ours, i);
      if (!f || gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
        gst_caps_append_structure(system, gst_structure_copy(gst_caps_get_structure(ours, i)));
    }
    gst_caps_unref(ours);
    ours = system;
  }
  // Our order first: CUDA memory when both sides can, and raw disparity
  // unless downstream refuses it.
  *ret = gst_caps_intersect_full(ours, downstream, GST_CAPS_INTERSECT_FIRST);
  if (gst_caps_is_empty(*ret)) {
    GstCudaStereoOutputMode mode;
    {
      std::lock_guard<std::mutex> guard(priv->lock);
      mode = priv->settings.output_mode;
    }
    gchar* ours_str = gst_caps_to_string(ours);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("Downstream accepts none of the output formats: cudastereo gives %s; put videoconvert "
                       "after it or ask for one of these",
                       output_formats_text(mode)),
                      ("cudastereo can give %s", ours_str));
    g_free(ours_str);
    gst_caps_unref(ours);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  gst_caps_unref(ours);
  return GST_FLOW_OK;
}

bool negotiated_src_caps(GstCudaStereo* self, GstCaps* caps) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps)) return false;
  bool depth, confidence, views;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    depth = priv->settings.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
    confidence = confidence_output(priv->settings);
    views = rectified_output(priv->settings);
  }
  switch (GST_VIDEO_INFO_FORMAT(&info)) {
    case GST_VIDEO_FORMAT_GRAY16_LE:
      priv->out_format = depth ? cs::OutputFormat::DepthMm : cs::OutputFormat::DisparityQ4;
      break;
    case GST_VIDEO_FORMAT_GRAY8:
      priv->out_format = confidence ? cs::OutputFormat::Confidence : cs::OutputFormat::Gray8;
      break;
    case GST_VIDEO_FORMAT_RGBA: priv->out_format = cs::OutputFormat::RGBA; break;
    case GST_VIDEO_FORMAT_BGRA: priv->out_format = cs::OutputFormat::BGRA; break;
    case GST_VIDEO_FORMAT_RGBx: priv->out_format = cs::OutputFormat::RGBx; break;
    case GST_VIDEO_FORMAT_BGRx: priv->out_format = cs::OutputFormat::BGRx; break;
    default: return false;
  }
  if (depth && priv->out_format != cs::OutputFormat::DepthMm) return false;
  if (confidence && priv->out_format != cs::OutputFormat::Confidence) return false;
  if (views && cs::output_bytes_per_pixel(priv->out_format) != 4) return false;
  priv->out_info = info;
  priv->out_configured = true;
#if HAVE_GST_CUDA
  priv->out_cuda_memory = caps_have_cuda_memory(caps);
#endif
  GST_DEBUG_OBJECT(self, "output %" GST_PTR_FORMAT " (%s)", caps, cs::output_format_name(priv->out_format));
  return true;
}

bool take_input_caps(GstCudaStereo* self, GstAggregatorPad* pad, GstCaps* caps) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps)) {
    gchar* s = gst_caps_to_string(caps);
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unsupported caps on %s: %s", GST_PAD_NAME(pad), s), (nullptr));
    g_free(s);
    return false;
  }
  PadInput* in = (pad == priv->left_pad) ? &priv->left_in : (pad == priv->right_pad) ? &priv->right_in
                                                                                    : &priv->packed_in;
  in->info = info;
  in->configured = true;
  GST_DEBUG_OBJECT(pad, "input caps %" GST_PTR_FORMAT, caps);
  if (in != &priv->packed_in) {
    // The two views may change caps one after the other: compare them
    // only when a pair is about to be matched.
    priv->two_pad_caps_dirty = true;
    return true;
  }
  return update_geometry(self);
}

bool answer_input_caps_query(GstPad* pad, GstQuery* query) {
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      GstCaps* filter;
      gst_query_parse_caps(query, &filter);
      GstCaps* templ = gst_pad_get_pad_template_caps(pad);
      GstCaps* result = filter ? gst_caps_intersect_full(filter, templ, GST_CAPS_INTERSECT_FIRST) : gst_caps_ref(templ);
      gst_query_set_caps_result(query, result);
      gst_caps_unref(result);
      gst_caps_unref(templ);
      return true;
    }
    case GST_QUERY_ACCEPT_CAPS: {
      GstCaps* caps;
      gst_query_parse_accept_caps(query, &caps);
      GstCaps* templ = gst_pad_get_pad_template_caps(pad);
      gst_query_set_accept_caps_result(query, gst_caps_is_subset(caps, templ));
      gst_caps_unref(templ);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cs_gst
