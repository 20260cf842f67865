#include "settings.h"

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

bool rectified_output(const Settings& s) { return s.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_RECTIFIED; }

cs::ViewsOutput views_output(const Settings& s, bool top_bottom_input) {
  if (!rectified_output(s)) return cs::ViewsOutput::None;
  return top_bottom_input ? cs::ViewsOutput::TopBottom : cs::ViewsOutput::SideBySide;
}

std::string rectified_settings_problem(const Settings& s) {
  if (!rectified_output(s) || !s.calibration.empty()) return "";
  return "output-mode=rectified shows the views after rectification, and no `calibration` is set to rectify with: "
         "set calibration to your stereo calibration file (OpenCV YAML/XML, two ROS camera_info files or a Kalibr "
         "camchain)";
}

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
