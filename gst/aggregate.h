// What each aggregate call does: for packed input, one frame from `sink`
// split into its views; for two pads, the pairing decision (pairing.h) on
// the head frames of sink_left and sink_right, then a disparity frame, a
// placeholder, a gap or a dropped late frame. Frames QoS says would be late
// are skipped (live.h); everything else goes through produce (produce.h).
// Also when, in a live pipeline, the next aggregate call is due.
#pragma once

#include "element_private.h"

namespace cs_gst {

// GstAggregator's aggregate: takes settings changed since the last call into
// the engine, then turns the queued input into at most one output frame.
GstFlowReturn aggregate(GstCudaStereo* self, gboolean timeout);

// GstAggregator's get_next_time. Live mode: wait for the earliest queued
// frame's running time (plus the latency, added by the base class); with
// nothing queued, wait for data.
GstClockTime next_time(GstCudaStereo* self);

}  // namespace cs_gst
