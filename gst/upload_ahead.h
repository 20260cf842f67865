// Upload ahead (CUDA engine, system-memory input): a buffer probe on each
// sink pad starts a frame's upload in the upstream thread as it arrives,
// before the aggregator queues it, so it overlaps the src thread's work on
// the previous frame. aggregate finds it here by buffer and pad (Taken).
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "engine.h"
#include "stereo.h"

namespace cs_gst {

class UploadsAhead {
 private:
  // A frame whose upload started when it arrived: its buffer (a reference,
  // keeping pinned source planes alive for the DMA), the pad it came on, its
  // planes as the probe mapped them and the engine's device copy of them.
  struct Upload {
    GstBuffer* buffer = nullptr;
    GstPad* pad = nullptr;  // not a reference: only compared
    uint64_t sequence = 0;
    cs::FrameView host;
    cs::FrameView device;
  };

 public:
  // start: from now on probes upload with `engine` (one that uploads ahead)
  // inside `cuda_context` (a GstCudaContext, or null). stop: probes stop
  // uploading; uploads never processed go back to the engine.
  void start(cs::Engine* engine, gpointer cuda_context);
  void stop();
  // Drops the uploads of `pad` (every pad: null).
  void drop(GstPad* pad);
  void add_probe(GstPad* pad);

  // The upload of one popped input buffer, if its probe started one: taken
  // out of the table; given back to the engine on destruction unless the
  // engine took it (a process() call with its device views).
  class Taken {
   public:
    Taken(UploadsAhead* uploads, GstPad* pad, GstBuffer* buf);
    ~Taken();
    Taken(const Taken&) = delete;
    Taken& operator=(const Taken&) = delete;

    // The device copy of `frame` (mapped on the host), when this upload is of
    // exactly those planes; else false (aggregate reads the host planes).
    bool device_copy_of(const GstVideoFrame& frame, cs::FrameView* whole) const;
    // The engine got the device views: it gives the slot back itself.
    void taken_by_engine() { taken_ = true; }

   private:
    UploadsAhead* uploads_;
    Upload upload_;
    bool have_ = false;
    bool taken_ = false;
  };

 private:
  static GstPadProbeReturn probe(GstPad* pad, GstPadProbeInfo* info, gpointer user_data);
  void release_locked(std::vector<Upload>& done);
  template <typename Pick>
  static void move_uploads(std::vector<Upload>& table, Pick leaving, std::vector<Upload>* out);

  // engine_lock is held shared while probes and drops use the engine,
  // exclusively by start/stop, which set and clear engine_ and context_.
  std::shared_mutex engine_lock_;
  cs::Engine* engine_ = nullptr;
  gpointer context_ = nullptr;
  std::mutex uploads_lock_;  // guards uploads_ and sequence_
  std::vector<Upload> uploads_;
  uint64_t sequence_ = 0;
};

}  // namespace cs_gst
