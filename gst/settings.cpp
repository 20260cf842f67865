#include "settings.h"

GType gst_cuda_stereo_backend_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_STEREO_BACKEND_AUTO, "CUDA when this build has it and a GPU answers, else the CPU", "auto"},
      {GST_CUDA_STEREO_BACKEND_CUDA, "CUDA only: fail to start without it", "cuda"},
      {GST_CUDA_STEREO_BACKEND_CPU, "CPU reference implementation", "cpu"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoBackend", values));
  return type;
}

GType gst_cuda_stereo_colormap_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {{GST_CUDA_STEREO_COLORMAP_TURBO, "Turbo (Google)", "turbo"},
                                      {GST_CUDA_STEREO_COLORMAP_JET, "Jet", "jet"},
                                      {GST_CUDA_STEREO_COLORMAP_GREY, "Grey ramp", "grey"},
                                      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoColormap", values));
  return type;
}

GType gst_cuda_stereo_input_layout_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_STEREO_INPUT_LAYOUT_AUTO, "From the caps' multiview-mode (packed sink only)", "auto"},
      {GST_CUDA_STEREO_INPUT_LAYOUT_SIDE_BY_SIDE, "Left view in the left half, right view in the right half",
       "side-by-side"},
      {GST_CUDA_STEREO_INPUT_LAYOUT_TOP_BOTTOM, "Left view in the top half, right view in the bottom half",
       "top-bottom"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoInputLayout", values));
  return type;
}

GType gst_cuda_stereo_output_mode_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_STEREO_OUTPUT_MODE_DISPARITY, "Disparity (GRAY16_LE d*16, GRAY8 or false colour)", "disparity"},
      {GST_CUDA_STEREO_OUTPUT_MODE_DEPTH, "Depth in millimetres, GRAY16_LE (needs baseline and focal-length)",
       "depth"},
      {GST_CUDA_STEREO_OUTPUT_MODE_CONFIDENCE,
       "Confidence of each pixel's disparity, GRAY8: 0 = invalid or another disparity fits as well, 255 = unique",
       "confidence"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoOutputMode", values));
  return type;
}

GType gst_cuda_stereo_window_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_STEREO_WINDOW_BOX, "Plain box: the centre sub-window only", "box"},
      {GST_CUDA_STEREO_WINDOW_BEST_1, "Centre plus the best 1 of 8 sub-windows", "best-1"},
      {GST_CUDA_STEREO_WINDOW_BEST_2, "Centre plus the best 2 of 8 sub-windows (Yang & Pollefeys)", "best-2"},
      {GST_CUDA_STEREO_WINDOW_BEST_4, "Centre plus the best 4 of 8 sub-windows", "best-4"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoWindow", values));
  return type;
}

GType gst_cuda_stereo_method_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_STEREO_METHOD_PROGRESSIVE,
       "Progressive multi-resolution adaptive windows (Zhao & Taubin 2011): census, coarse to fine", "progressive"},
      {GST_CUDA_STEREO_METHOD_BLOCK,
       "SSD block matching over the full range at full size (NVIDIA's CUDA stereo sample) with Tweddle's "
       "left-right check, uniqueness test and sub-pixel parabola",
       "block"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoMethod", values));
  return type;
}

namespace cs_gst {

cs::Colormap to_colormap(GstCudaStereoColormap c) {
  switch (c) {
    case GST_CUDA_STEREO_COLORMAP_JET: return cs::Colormap::Jet;
    case GST_CUDA_STEREO_COLORMAP_GREY: return cs::Colormap::Grey;
    default: return cs::Colormap::Turbo;
  }
}

cs::EncodeParams encode_params(const Settings& s, cs::OutputFormat format) {
  cs::EncodeParams e;
  e.format = format;
  e.colormap = to_colormap(s.colormap);
  e.max_disparity = s.params.max_disparity;
  e.baseline_mm = s.baseline_m * 1000.0;
  e.focal_px = s.focal_px;
  e.alpha_from_mask = s.alpha_mask;
  return e;
}

bool confidence_output(const Settings& s) { return s.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_CONFIDENCE; }

std::string depth_settings_problem(const Settings& s) {
  if (s.output_mode != GST_CUDA_STEREO_OUTPUT_MODE_DEPTH) return "";
  const bool baseline = s.baseline_m > 0.0, focal = s.focal_px > 0.0;
  const char* baseline_hint = "the distance between the two camera centres in metres";
  const char* focal_hint = "the focal length of the rectified views in pixels";
  if (!baseline && !focal)
    return std::string("output-mode=depth needs `baseline` and `focal-length`, which are not set: set baseline to ") +
           baseline_hint + " and focal-length to " + focal_hint + ", both from your stereo calibration";
  if (!baseline)
    return std::string("output-mode=depth needs `baseline`, which is not set: set it to ") + baseline_hint +
           " (from your stereo calibration)";
  if (!focal)
    return std::string("output-mode=depth needs `focal-length`, which is not set: set it to ") + focal_hint +
           " (from your stereo calibration)";
  return "";
}

}  // namespace cs_gst
