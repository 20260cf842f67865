// The state of one cudastereo element, shared by the units it is made of
// (gstcudastereo.cpp wires them into GstAggregator): created in _init,
// deleted in finalize. The comments on the fields say which thread owns
// what and which lock guards it.
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/video/video.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "config.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#endif
#include "encode.h"
#include "engine.h"
#include "geometry.h"
#include "gstcudastereo.h"
#include "host_pin.h"
#include "live_timing.h"
#include "pending.h"
#include "rectification.h"
#include "settings.h"
#include "stats.h"
#include "stereo.h"
#include "upload_ahead.h"

// The element's debug category, defined in gstcudastereo.cpp: every unit logs in it.
GST_DEBUG_CATEGORY_EXTERN(gst_cuda_stereo_debug);
#define GST_CAT_DEFAULT gst_cuda_stereo_debug

struct GstCudaStereoPrivate {
  std::mutex lock;  // guards settings, the dirty flags and stats
  cs_gst::Settings settings;
  bool params_dirty = true;       // engine needs set_params
  bool geometry_dirty = true;     // input-layout changed
  bool reset_requested = false;   // reset-background emitted
  cs_gst::Stats stats;

  // Streaming thread only (and start/stop).
  std::unique_ptr<cs::Engine> engine;
  const char* backend_name = "";
  cs_gst::Settings active;         // the settings the engine runs with
  cs_gst::Rectification rectification;  // the maps of active.calibration (rectification.h)
  cs_gst::PadInput packed_in, left_in, right_in;
  cs_gst::Geometry geometry;
  bool params_checked = false;     // active params validated for the geometry
  bool two_pad_caps_dirty = false; // sink_left/sink_right caps changed since last compared
  GstVideoInfo out_info;
  bool out_configured = false;
  cs::OutputFormat out_format = cs::OutputFormat::DisparityQ4;
  cs::Image<uint16_t> invalid_q4;  // all-invalid disparity, for placeholders
  GstClockTime last_output_rt = GST_CLOCK_TIME_NONE;
  bool warned_unpaired = false;
  bool warned_late = false;
  bool warned_short = false;
  bool notice_posted = false;
  std::chrono::steady_clock::time_point fps_window_start;
  uint64_t fps_window_frames = 0;

  // Frames in flight (pending.h), oldest first: submitted to the engine (or
  // placeholders written) and not pushed yet. At most `in_flight_limit`
  // (frames-in-flight with an engine that overlaps frames, else 1) stay
  // after an aggregate call, and none while no input waits.
  std::deque<cs_gst::PendingOutput> pending;
  size_t in_flight_limit = 1;

  // Live behaviour (live_timing.h). Streaming thread: the processing times,
  // the latency reported from them, and whether the next output follows a
  // skipped frame. `qos` is written by QoS events from downstream, under lock.
  cs_gst::ProcessingTimes processing_times;
  GstClockTime reported_latency = 0;
  bool discont_pending = false;
  cs_gst::QosState qos;

  // CUDA (GStreamer's CUDA library). cuda_ctx is the context shared with
  // neighbouring CUDA elements: set at NULL to READY and at start
  // (acquire_cuda_context) or by set_context, read by context queries from
  // any thread, hence its own lock (recursive: set_context may come from
  // inside a query's handling).
  std::recursive_mutex ctx_lock;
#if HAVE_GST_CUDA
  GstCudaContext* cuda_ctx = nullptr;
  // Streaming thread (set in start, cleared in stop): the context the CUDA
  // engine runs in, null with the CPU engine.
  GstCudaContext* engine_ctx = nullptr;
#endif
  bool out_cuda_memory = false;  // negotiated output caps carry memory:CUDAMemory
  // With the CUDA engine: page-locked host memory, which the engine moves to
  // and from the GPU by DMA without a CPU copy. Offered upstream in a pool
  // for system-memory input and used for system-memory output. Set in start,
  // cleared in stop; read by allocation queries, hence under ctx_lock.
  GstAllocator* pinned_allocator = nullptr;
  bool out_pinned_pool = false;  // streaming thread: the output pool is our pinned one

  // Upload ahead (CUDA engine, system-memory input): a buffer probe on each
  // sink pad starts a frame's upload in the upstream thread as it arrives,
  // before the aggregator queues it, so it overlaps the src thread's work on
  // the previous frame (upload_ahead.h).
  cs_gst::UploadsAhead uploads_ahead;
  // Pin in place (CUDA engine, system-memory input): a buffer probe on each
  // sink pad, before the upload-ahead one, page-locks plain system memory
  // the element sees a second time where it lies (host_pin.h).
  cs_gst::HostPins host_pins;

  // Pads; changed under the object lock by request/release.
  GstAggregatorPad* sink_pad = nullptr;  // packed, not owned (the element owns it)
  GstAggregatorPad* left_pad = nullptr;
  GstAggregatorPad* right_pad = nullptr;
};

struct _GstCudaStereo {
  GstAggregator parent;
  GstCudaStereoPrivate* priv;
};

#define PRIV(self) ((self)->priv)

// The GstCudaContext the engine runs in, for CudaContextScope: the context
// the neighbouring CUDA elements share (the engine adopts the current
// context); null with the CPU engine.
inline gpointer engine_context(const GstCudaStereoPrivate* priv) {
#if HAVE_GST_CUDA
  return priv->engine_ctx;
#else
  (void)priv;
  return nullptr;
#endif
}
