// Makes one output frame: an output buffer (the negotiated pool or plain
// memory), the engine's disparity (or depth, colour, confidence) written
// into it, or an all-invalid placeholder, then its timestamps, flags and
// GstCudaStereoMeta, the stats and the frame message, and the push
// downstream. produce.cpp does it in three steps: acquire_output_buffer,
// fill_output (the engine's work) and finish_output.
#pragma once

#include "element_private.h"

namespace cs_gst {

// Makes one output frame: from the views when both are given, else an
// all-invalid placeholder. `pts` is in the output segment. *engine_took (when
// given) says whether the views reached the engine (which then owns upload
// slots among them, whatever the outcome).
GstFlowReturn produce(GstCudaStereo* self, const cs::FrameView* left, const cs::FrameView* right, GstClockTime pts,
                      GstClockTime duration, bool gap, bool* engine_took = nullptr);

}  // namespace cs_gst
