#include "property_enums.h"

#include <gst/gst.h>

#include "encode.h"
#include "engine_factory.h"
#include "stereo.h"

// Settings hold these values and the element casts them to the core's enums
// (set_property: cs::WindowVariant, cs::Method; open_engine and change_state:
// cs_gst::Backend), so each value has the number of the core value it stands
// for, and a renumbering on either side stops the build here instead of
// choosing another variant. The colour map, mapped by name (to_colormap),
// keeps cs::Colormap's numbers all the same, so that no cast can go wrong.
// Output mode and input layout stand for no one core enum (output mode and
// the caps together pick a cs::OutputFormat; input layout adds auto to
// geometry.h's Layout): they are mapped by name only.
namespace {

template <typename Core>
constexpr bool same(int gst, Core core) {
  return gst == static_cast<int>(core);
}

}  // namespace

static_assert(same(GST_CUDA_STEREO_BACKEND_AUTO, cs_gst::Backend::Auto) &&
                  same(GST_CUDA_STEREO_BACKEND_CUDA, cs_gst::Backend::Cuda) &&
                  same(GST_CUDA_STEREO_BACKEND_CPU, cs_gst::Backend::Cpu),
              "GstCudaStereoBackend must number its values as cs_gst::Backend does");
static_assert(same(GST_CUDA_STEREO_COLORMAP_TURBO, cs::Colormap::Turbo) &&
                  same(GST_CUDA_STEREO_COLORMAP_JET, cs::Colormap::Jet) &&
                  same(GST_CUDA_STEREO_COLORMAP_GREY, cs::Colormap::Grey),
              "GstCudaStereoColormap must number its values as cs::Colormap does");
static_assert(same(GST_CUDA_STEREO_WINDOW_BOX, cs::WindowVariant::Box) &&
                  same(GST_CUDA_STEREO_WINDOW_BEST_1, cs::WindowVariant::Best1) &&
                  same(GST_CUDA_STEREO_WINDOW_BEST_2, cs::WindowVariant::Best2) &&
                  same(GST_CUDA_STEREO_WINDOW_BEST_4, cs::WindowVariant::Best4),
              "GstCudaStereoWindow must number its values as cs::WindowVariant does");
static_assert(same(GST_CUDA_STEREO_METHOD_PROGRESSIVE, cs::Method::Progressive) &&
                  same(GST_CUDA_STEREO_METHOD_BLOCK, cs::Method::Block) &&
                  same(GST_CUDA_STEREO_METHOD_CROSS, cs::Method::Cross) &&
                  same(GST_CUDA_STEREO_METHOD_ELAS, cs::Method::Elas),
              "GstCudaStereoMethod must number its values as cs::Method does");

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
      {GST_CUDA_STEREO_OUTPUT_MODE_RECTIFIED,
       "The two views after rectification, left first, packed as the input packs them (two pads: side by side); "
       "RGBA, BGRA, RGBx or BGRx; needs calibration",
       "rectified"},
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
      {GST_CUDA_STEREO_METHOD_CROSS,
       "Cross-based aggregation with bitwise fast voting (Zhang et al. 2011): colour crosses, truncated absolute "
       "differences over both views' regions, left-right check, voting, 3x3 median; whole pixels",
       "cross"},
      {GST_CUDA_STEREO_METHOD_ELAS,
       "ELAS (Geiger et al. 2010): Sobel descriptors, robust support points, their Delaunay triangulation as a "
       "piecewise-planar prior, dense matching against it in both views, left-right check, speckle removal, gap "
       "filling; whole pixels",
       "elas"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstCudaStereoMethod", values));
  return type;
}

namespace cs_gst {

void mark_property_enums_as_plugin_api() {
  gst_type_mark_as_plugin_api(gst_cuda_stereo_backend_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_colormap_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_input_layout_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_output_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_window_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_method_get_type(), static_cast<GstPluginAPIFlags>(0));
}

}  // namespace cs_gst
