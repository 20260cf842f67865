// Frames in flight in the element (issue 16): an output frame whose engine
// work was submitted and not yet finished, with what the engine still reads
// (the input buffers and their mappings) and what the push will need. The
// element keeps them in submit order (GstCudaStereoPrivate::pending);
// produce.cpp makes, completes and drops them.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <chrono>

#include "settings.h"

namespace cs_gst {

// Input buffers (references) and their mappings, kept while the engine may
// read them.
struct InputHold {
  GstBuffer* buffer[2] = {nullptr, nullptr};
  GstVideoFrame frame[2];
  bool mapped[2] = {false, false};

  // Keeps a new reference to `buf` and, when given, its mapping, which then
  // belongs here (the caller does not unmap it).
  void keep(GstBuffer* buf, const GstVideoFrame* mapping) {
    for (int i = 0; i < 2; ++i) {
      if (buffer[i]) continue;
      buffer[i] = gst_buffer_ref(buf);
      if (mapping) {
        frame[i] = *mapping;
        mapped[i] = true;
      }
      return;
    }
  }
  void release() {
    for (int i = 0; i < 2; ++i) {
      if (mapped[i]) gst_video_frame_unmap(&frame[i]);
      mapped[i] = false;
      if (buffer[i]) gst_buffer_unref(buffer[i]);
      buffer[i] = nullptr;
    }
  }
};

struct PendingOutput {
  GstBuffer* outbuf = nullptr;
  GstVideoFrame out;  // outbuf mapped for the engine's writes
  bool out_mapped = false;
  InputHold inputs;
  bool engine = false;       // submitted: the engine's finish() gives its outcome
  bool placeholder = false;  // all-invalid, written already
  bool gap = false;
  bool discont = false;      // follows frames QoS skipped
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  GstClockTime duration = GST_CLOCK_TIME_NONE;
  std::chrono::steady_clock::time_point submitted;
  // What the frame was made with, for its meta and message (settings may
  // change while it is in flight; they apply from the next frame).
  Settings active;
  int levels = 0;
};

}  // namespace cs_gst
