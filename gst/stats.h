// What the element counts (the `stats` property) and says per frame
// (post-messages), as GstStructures whose field names and types are the
// element's interface.
#pragma once

#include <gst/gst.h>

#include <cstdint>
#include <string>

#include "engine.h"

namespace cs_gst {

struct Stats {
  uint64_t frames = 0;           // output frames
  uint64_t unpaired_frames = 0;  // placeholders for unpaired / missing / unreadable input
  uint64_t dropped_frames = 0;   // late partners dropped
  uint64_t uploaded_ahead = 0;   // frames read from copies uploaded as they arrived
  uint64_t qos_skipped = 0;      // frames skipped before matching: they would have reached the sink late (qos)
  uint64_t overlapped = 0;       // frames submitted while an earlier one was still in flight (frames-in-flight)
  // CUDA engine, host input (host_pin.h): frames whose planes went to the GPU
  // by DMA from pinned memory other than the element's pool (pinned in place),
  // and frames gathered through the engine's staging area.
  uint64_t pinned_in_place = 0;
  uint64_t gathered = 0;
  // Pin in place since the element was made (HostPins::Counts, filled when
  // read): bytes registered now, registrations and unregistrations so far.
  uint64_t pinned_bytes = 0;
  uint64_t pin_registrations = 0;
  uint64_t pin_unregistrations = 0;
  uint64_t processing_time = 0;  // ns, recent robust maximum of the time to match one frame
  uint64_t latency = 0;          // ns, what the element adds to the latency query
  double fps = 0.0;
  cs::FrameStats engine;
  std::string backend;
};

// The `stats` property's "cudastereo-stats" structure.
GstStructure* stats_structure(const Stats& s);

// The "cudastereo" element message of one output frame. `fs`: the engine's
// numbers for this frame, null for a placeholder (nothing matched: no
// foreground, nothing valid).
GstStructure* frame_message_structure(GstClockTime pts, GstClockTime running_time, GstClockTime stream_time,
                                      GstClockTime duration, const cs::FrameStats* fs, guint64 processing_ns,
                                      guint64 frame_index);

}  // namespace cs_gst
