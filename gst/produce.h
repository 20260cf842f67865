// Makes output frames: an output buffer (the negotiated pool or plain
// memory), the engine's disparity (or depth, colour, confidence) written
// into it, or an all-invalid placeholder, then its timestamps, flags and
// GstCudaStereoMeta, the stats and the frame message, and the push
// downstream. With frames in flight (pending.h) the engine's work is
// submitted by produce() and the rest follows in complete_outputs(), in
// submit order.
#pragma once

#include "element_private.h"
#include "pending.h"

namespace cs_gst {

// Starts one output frame: from the views when both are given, else an
// all-invalid placeholder (written at once). `pts` is in the output segment.
// `inputs` (may be null) holds what the views lie in: it is kept until the
// engine finished with them, then released (also on failure).
// *engine_took (when given) says whether the views reached the engine
// (which then owns upload slots among them, whatever the outcome). Nothing
// is pushed here: complete_outputs() does that.
GstFlowReturn produce(GstCudaStereo* self, const cs::FrameView* left, const cs::FrameView* right, GstClockTime pts,
                      GstClockTime duration, bool gap, InputHold* inputs = nullptr, bool* engine_took = nullptr);

// Finishes and pushes the oldest frames in flight until at most `keep`
// remain. After an error or a flow other than OK (returned), the frames
// behind it are finished and dropped, not pushed.
GstFlowReturn complete_outputs(GstCudaStereo* self, size_t keep);

// Finishes every frame in flight and drops it (flush, stop).
void drop_outputs(GstCudaStereoPrivate* priv);

}  // namespace cs_gst
