// Caps: the formats the pads take and give; what the source pad offers for
// the negotiated views and output-mode, and how the choice among it with
// downstream is made (CUDA memory only for a neighbour that names it); the
// agreed caps taken as the output format; a sink pad's caps taken as its
// input; sink caps queries answered from the pad templates.
#pragma once

#include "config.h"
#include "element_private.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#define INPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, GRAY8, I420, NV12, YUY2, UYVY }"
#define OUTPUT_FORMATS "{ GRAY16_LE, GRAY8, RGBA, BGRA, RGBx, BGRx }"

// With GStreamer's CUDA library the pads also take and give CUDA device
// memory (listed first: preferred), so the element sits between nvh264dec or
// cudaupload and cudadownload without a copy through the host.
// GStreamer 1.22's CUDA allocator knows no GRAY formats (it aborts on
// them), so CUDA memory carries only these; raw GRAY16_LE disparity, GRAY8
// and depth leave in system memory.
#define CUDA_INPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, I420, NV12, YUY2, UYVY }"
#define CUDA_OUTPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx }"
#if HAVE_GST_CUDA
#define CUDA_MEMORY_CAPS(formats) GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, formats) "; "
#else
#define CUDA_MEMORY_CAPS(formats) ""
#endif
#define SINK_CAPS CUDA_MEMORY_CAPS(CUDA_INPUT_FORMATS) GST_VIDEO_CAPS_MAKE(INPUT_FORMATS)
#define SRC_CAPS CUDA_MEMORY_CAPS(CUDA_OUTPUT_FORMATS) GST_VIDEO_CAPS_MAKE(OUTPUT_FORMATS)

namespace cs_gst {

// GstAggregator's update_src_caps: our output caps for the views, in our
// order of preference, intersected with `downstream`. An error when none
// fits.
GstFlowReturn update_src_caps(GstCudaStereo* self, GstCaps* downstream, GstCaps** ret);

// GstAggregator's negotiated_src_caps: the output format and memory of the
// agreed caps; false for caps the output-mode cannot give.
bool negotiated_src_caps(GstCudaStereo* self, GstCaps* caps);

// A CAPS event on a sink pad: its video info becomes that pad's input. The
// packed input's geometry follows at once; two pads are compared when a
// pair is about to be matched. False (after posting an error) for caps
// that are not video or make the input unusable.
bool take_input_caps(GstCudaStereo* self, GstAggregatorPad* pad, GstCaps* caps);

// Inputs never take their caps from downstream: a CAPS or ACCEPT_CAPS query
// on a sink pad is answered from its template. False for any other query.
bool answer_input_caps_query(GstPad* pad, GstQuery* query);

}  // namespace cs_gst
