// The element's live behaviour on live_timing.h's rules: the latency it
// reports as its measured processing time grows, and QoS: observing the
// sink's QoS events and skipping (with a QoS message) frames that would
// reach the sink late.
#pragma once

#include "element_private.h"

namespace cs_gst {

// After a matched frame: its processing time joins the recent ones. When
// their robust maximum outgrows the latency reported so far, the element
// reports more: gst_aggregator_set_latency posts a LATENCY message, upon
// which the application (gst-launch, playbin) has the pipeline query the
// latency again and its sinks wait that much longer.
void note_processing_time(GstCudaStereo* self, guint64 processing_ns);

// QoS (qos=true), as GstBaseTransform does it: a frame that would reach the
// sink late even if matched at once is not matched (nor a late placeholder
// made). It is counted (stats qos-skipped), announced with a QoS message,
// and the next output is marked DISCONT. `running_time`, `pts` and
// `duration` are the frame's (pts in the output segment). True: skip it.
bool skip_late_frame(GstCudaStereo* self, GstClockTime running_time, GstClockTime pts, GstClockTime duration);

// Keeps a QoS event's observation (proportion, jitter, timestamp) for
// skip_late_frame.
void observe_qos(GstCudaStereo* self, GstEvent* event);

}  // namespace cs_gst
