#include "stats.h"

namespace cs_gst {

GstStructure* stats_structure(const Stats& s) {
  return gst_structure_new("cudastereo-stats", "backend", G_TYPE_STRING, s.backend.c_str(), "frames", G_TYPE_UINT64,
                           s.frames, "fps", G_TYPE_DOUBLE, s.fps, "foreground-fraction", G_TYPE_DOUBLE,
                           s.engine.foreground_fraction, "matched-fraction", G_TYPE_DOUBLE, s.engine.matched_fraction(),
                           "valid-fraction", G_TYPE_DOUBLE, s.engine.valid_fraction, "levels", G_TYPE_INT,
                           s.engine.levels, "model-frames", G_TYPE_UINT64, s.engine.frame_index, "warming-up",
                           G_TYPE_BOOLEAN, s.engine.warming_up, "unpaired-frames", G_TYPE_UINT64, s.unpaired_frames,
                           "dropped-frames", G_TYPE_UINT64, s.dropped_frames, "uploaded-ahead", G_TYPE_UINT64,
                           s.uploaded_ahead, "qos-skipped", G_TYPE_UINT64, s.qos_skipped, "overlapped-frames", G_TYPE_UINT64, s.overlapped, "processing-time",
                           G_TYPE_UINT64, s.processing_time, "latency", G_TYPE_UINT64, s.latency,
                           "coarse-range-factor", G_TYPE_INT, s.engine.coarse_range_factor,
                           "pinned-in-place-frames", G_TYPE_UINT64, s.pinned_in_place, "gathered-frames", G_TYPE_UINT64,
                           s.gathered, "pinned-in-place-bytes", G_TYPE_UINT64, s.pinned_bytes, "pin-registrations",
                           G_TYPE_UINT64, s.pin_registrations, "pin-unregistrations", G_TYPE_UINT64,
                           s.pin_unregistrations, nullptr);
}

GstStructure* frame_message_structure(GstClockTime pts, GstClockTime running_time, GstClockTime stream_time,
                                      GstClockTime duration, const cs::FrameStats* fs, guint64 processing_ns,
                                      guint64 frame_index) {
  return gst_structure_new(
      "cudastereo", "timestamp", G_TYPE_UINT64, pts, "running-time", G_TYPE_UINT64, running_time, "stream-time",
      G_TYPE_UINT64, stream_time, "duration", G_TYPE_UINT64, duration, "foreground-fraction", G_TYPE_DOUBLE,
      fs ? fs->foreground_fraction : 0.0, "valid-fraction", G_TYPE_DOUBLE, fs ? fs->valid_fraction : 0.0,
      "matched-fraction", G_TYPE_DOUBLE, fs ? fs->matched_fraction() : 0.0,
      "processing-time", G_TYPE_UINT64, processing_ns, "frame-index", G_TYPE_UINT64, frame_index, "placeholder",
      G_TYPE_BOOLEAN, fs == nullptr, "warming-up", G_TYPE_BOOLEAN, fs ? fs->warming_up : FALSE, nullptr);
}

}  // namespace cs_gst
