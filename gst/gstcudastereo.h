/* cudastereo: stereo video in, disparity (or depth) video out. The element
 * type only: its property enums are in property_enums.h. */
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_STEREO (gst_cuda_stereo_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaStereo, gst_cuda_stereo, GST, CUDA_STEREO, GstAggregator)

GST_ELEMENT_REGISTER_DECLARE (cudastereo);

G_END_DECLS
