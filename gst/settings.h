// What the element's properties say (Settings) and what that means for the
// engine. The properties themselves are in properties.cpp, their registered
// enum types in property_enums.cpp.
#pragma once

#include <string>

#include "encode.h"
#include "property_enums.h"
#include "stereo.h"

namespace cs_gst {

// 0 = not set: depth output refuses to start until the user gives the
// calibration of their cameras, since no default could be right.
constexpr double kDefaultBaselineM = 0.0;
constexpr double kDefaultFocalPx = 0.0;

// What the properties say; written by setters, read by the streaming thread.
struct Settings {
  GstCudaStereoBackend backend = GST_CUDA_STEREO_BACKEND_AUTO;
  int cuda_device_id = -1;
  cs::Params params;
  GstCudaStereoColormap colormap = GST_CUDA_STEREO_COLORMAP_TURBO;
  bool alpha_mask = false;
  GstCudaStereoInputLayout input_layout = GST_CUDA_STEREO_INPUT_LAYOUT_AUTO;
  GstCudaStereoOutputMode output_mode = GST_CUDA_STEREO_OUTPUT_MODE_DISPARITY;
  double baseline_m = kDefaultBaselineM;
  double focal_px = kDefaultFocalPx;
  // A stereo calibration to rectify with (rectification.h): a file, or
  // files separated by commas (common/calibration.h); empty: the views come
  // rectified. rectify_alpha: the crop (common/rectify.h).
  std::string calibration;
  double rectify_alpha = 0.0;
  bool post_messages = false;
  bool qos = true;  // skip frames that would be late (GstBaseTransform's `qos`, on as in GstVideoFilter)
  // Frames the element may hold submitted and not pushed (pending.h): with
  // an engine that overlaps frames, one is matched while the previous is
  // pushed and the next taken in. Chosen with the engine, in start.
  int frames_in_flight = 2;
};

cs::Colormap to_colormap(GstCudaStereoColormap c);

// The engine's output encoding for the settings (colormap, disparity range,
// depth calibration) and the negotiated output format.
cs::EncodeParams encode_params(const Settings& s, cs::OutputFormat format);

// output-mode=confidence: GRAY8 frames of the confidence map (stages.h),
// the engine told through Params::confidence.
bool confidence_output(const Settings& s);

// output-mode=rectified: the two rectified views, nothing matched.
bool rectified_output(const Settings& s);

// output-mode=rectified: how the output frame holds the two views (as the
// input packs them; two pads: side by side); ViewsOutput::None otherwise.
cs::ViewsOutput views_output(const Settings& s, bool top_bottom_input);

// What output-mode=rectified lacks (a calibration to rectify with); empty
// when it can run.
std::string rectified_settings_problem(const Settings& s);

// What output-mode=depth lacks, in the user's words; empty when it can run.
// Depth from an uncalibrated guess would look plausible and be wrong.
std::string depth_settings_problem(const Settings& s);

}  // namespace cs_gst
