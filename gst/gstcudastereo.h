/* cudastereo: stereo video in, disparity (or depth) video out. */
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_STEREO (gst_cuda_stereo_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaStereo, gst_cuda_stereo, GST, CUDA_STEREO, GstAggregator)

GST_ELEMENT_REGISTER_DECLARE (cudastereo);

/* Property enums, registered GTypes with dash-named nicks. */
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
} GstCudaStereoOutputMode;

typedef enum {
  GST_CUDA_STEREO_METHOD_PROGRESSIVE = 0,
  GST_CUDA_STEREO_METHOD_BLOCK = 1,
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
