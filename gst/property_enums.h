/* The registered GObject enum types of the element's enum properties
 * (backend, colormap, input-layout, output-mode, window, method): the values
 * Settings holds and their GTypes, whose dash-named nicks are what
 * gst-inspect-1.0 shows and gst-launch-1.0 takes. Applications set these
 * properties by nick or through the GType, so no installed header carries
 * them. property_enums.cpp ties each one that stands for a core enum to it. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
  GST_CUDA_STEREO_BACKEND_AUTO = 0,
  GST_CUDA_STEREO_BACKEND_CUDA = 1,
  GST_CUDA_STEREO_BACKEND_CPU = 2,
} GstCudaStereoBackend;

typedef enum {
  GST_CUDA_STEREO_COLORMAP_TURBO = 0,
  GST_CUDA_STEREO_COLORMAP_JET = 1,
  GST_CUDA_STEREO_COLORMAP_GREY = 2,
} GstCudaStereoColormap;

typedef enum {
  GST_CUDA_STEREO_INPUT_LAYOUT_AUTO = 0,
  GST_CUDA_STEREO_INPUT_LAYOUT_SIDE_BY_SIDE = 1,
  GST_CUDA_STEREO_INPUT_LAYOUT_TOP_BOTTOM = 2,
} GstCudaStereoInputLayout;

typedef enum {
  GST_CUDA_STEREO_OUTPUT_MODE_DISPARITY = 0,
  GST_CUDA_STEREO_OUTPUT_MODE_DEPTH = 1,
  GST_CUDA_STEREO_OUTPUT_MODE_CONFIDENCE = 2,
  GST_CUDA_STEREO_OUTPUT_MODE_RECTIFIED = 3,
} GstCudaStereoOutputMode;

typedef enum {
  GST_CUDA_STEREO_METHOD_PROGRESSIVE = 0,
  GST_CUDA_STEREO_METHOD_BLOCK = 1,
  GST_CUDA_STEREO_METHOD_CROSS = 2,
  GST_CUDA_STEREO_METHOD_ELAS = 3,
} GstCudaStereoMethod;

typedef enum {
  GST_CUDA_STEREO_WINDOW_BOX = 0,
  GST_CUDA_STEREO_WINDOW_BEST_1 = 1,
  GST_CUDA_STEREO_WINDOW_BEST_2 = 2,
  GST_CUDA_STEREO_WINDOW_BEST_4 = 4,
} GstCudaStereoWindow;

GType gst_cuda_stereo_backend_get_type (void);
GType gst_cuda_stereo_colormap_get_type (void);
GType gst_cuda_stereo_input_layout_get_type (void);
GType gst_cuda_stereo_output_mode_get_type (void);
GType gst_cuda_stereo_window_get_type (void);
GType gst_cuda_stereo_method_get_type (void);

G_END_DECLS

namespace cs_gst {

// Marks every type above as plugin API, so that the plugin's documentation
// describes them with the properties that use them.
void mark_property_enums_as_plugin_api();

}  // namespace cs_gst
