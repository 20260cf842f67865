// The CUDA engine's state (cuda_engine.h), shared by the files that
// implement it: cuda_engine.cu (creation, parameters, buffers, statistics and
// the tools' profiles), engine_frame.cu (one frame: validation, inputs, the
// graph or the launches, outputs) and engine_calls.cu (the frame calls:
// process, enqueue, submit and finish). Upload slots (upload_slots.h), host
// staging (host_memory.h) and the frame's graph (frame_graph.h) are parts of
// their own.
//
// A frame is one graph launch: its first node is the input conversion,
// which also zeroes the frame's counters, then the fixed-address work
// (pyramid .. the last level's matching), and its last node the method's
// finish, which adds to the counters and writes the output (the Q4 map or
// its encoding) where the caller wants it. The conversion's input and the
// finish's output change from frame to frame: both kernels are described as
// data (kernel_call.h), and before each launch the two nodes get this
// frame's arguments (cudaGraphExecKernelNodeSetParams). Launched around the
// graph as three submissions, a frame timed alone on an idle GPU took 3 to
// 5 us longer than one after another (640x480 x 128 on an H100, about 0.088
// ms a frame; bench/RESULTS.md). A frame whose conversion or finish is
// another kernel or grid than the nodes' is captured again (enqueue_frame).
// The finish leaves the graph for a frame that must wait for an event first
// (an earlier copy out of its output buffer, or the other set's output when
// two sets of frames are in flight): its node is disabled and the finish
// launched after the graph. The graph has no memset or copy node (those two
// took 7 to 10 us of a 0.1 to 0.3 ms frame on an H100, an encoding pass of
// its own 3 to 7).
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "background.h"
#include "convert.h"
#include "cuda_engine.h"
#include "cuda_util.h"
#include "encode_output.h"
#include "finish.h"
#include "frame_graph.h"
#include "host_memory.h"
#include "kernel_call.h"
#include "method.h"
#include "rectify.h"
#include "row_copy.h"
#include "stages.h"
#include "upload_slots.h"

namespace cs::cuda {

constexpr int kMaxSide = 16384;  // the largest view width and height (check_frame)

// The stages every method shares, per level: intensities and the
// background model's masks and their occupancy (the method's own buffers
// are the method's: method.h).
struct EngineLevel {
  int width = 0, height = 0;
  Range range{0, 0};
  DeviceImage<uint8_t> gray[2];
  DeviceImage<uint8_t> mask[2];
  DeviceImage<uint8_t> occupancy[2];  // levels below kOccupancyLevels
  DeviceImage<uint32_t> colour[2];    // level 0, for a method that needs_colour()
};

// Where a frame's finish writes (run_frame): a caller's Q4 map (q4), or
// another encoding of it (encode), or neither: the engine's own Q4 map
// (disparity_q4); after wait_before (if set) has happened on the stream.
// With views (output-mode=rectified): the views themselves into
// encode.dst (run_views_frame), nothing matched.
struct FrameOutput {
  ImageView<uint16_t> q4;
  EncodeTarget encode;
  cudaEvent_t wait_before = nullptr;
  EncodeParams views;  // views.views != ViewsOutput::None: the views
};

// The cells of a view's background model (stages.h stage 3).
inline uint64_t background_cells(int width, int height) {
  return static_cast<uint64_t>((width + kBackgroundCell - 1) / kBackgroundCell) *
         ((height + kBackgroundCell - 1) / kBackgroundCell);
}

// A frame's statistics: the host-side part completed from its counters
// (method progressive matches a mostly foreground frame whole: stages.h
// matches_whole_frame).
inline FrameStats with_counters(FrameStats st, const FrameCounters& c, int width, int height, const Params& p) {
  const double n = static_cast<double>(width) * height;
  st.valid_fraction = c.valid_pixels / n;
  st.foreground_fraction = c.foreground_pixels / n;
  if (p.background) {
    const bool whole =
        p.method == Method::Progressive && matches_whole_frame(c.matched[0], c.right_foreground, width, height);
    st.matched_pixels = whole ? st.matched_pixels_full : 0;
    if (!whole)
      for (unsigned long long m : c.matched) st.matched_pixels += m;
    if (!st.warming_up) st.background_tests += c.pixel_tests[0] + c.pixel_tests[1];
  }
  return st;
}

struct CudaEngine::Impl {
  Params params;
  int device = 0;
  // What the kernel configurations are chosen for (matching.h): the
  // device's limits, or a smaller GPU's (emulate_device_limits).
  DeviceLimits limits;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev_caller = nullptr, ev_done = nullptr;
  // Two frames in flight (set_frames_in_flight): the second set of buffers,
  // and in each set the other one, whose output writes come first.
  std::unique_ptr<CudaEngine> twin;
  Impl* peer = nullptr;
  bool next_on_twin = false, last_on_twin = false;
  uint64_t frames_queued = 0;         // both sets' frames (frame_index while there is a twin)
  cudaEvent_t ev_output = nullptr;    // after this set's latest output writes
  bool output_recorded = false;
  // With the background model, both sets run one model: the twin's frames
  // use the first set's (model_home; null in the first set), and a frame's
  // model passes wait for those of the frame before it on the other set.
  // ev_model: after this set's latest frame's masks (the last of the model's
  // passes to read or write its state), recorded in the frame's graph.
  Impl* model_home = nullptr;
  cudaEvent_t ev_model = nullptr;
  Impl& model_state() { return model_home ? *model_home : *this; }
  const Impl& model_state() const { return model_home ? *model_home : *this; }
  // A frame through the model's passes (their mask pass counts it on the
  // device): the host's mirror of the count, saturating as the device's.
  void count_model_frame() {
    int& seen = model_state().frames_seen_host;
    if (seen < INT_MAX) ++seen;
  }
  // The graph's side branch (a method's, e.g. progressive's finer census):
  // its stream and the events that fork it from and join it to `stream`
  // during capture (a join a level: MethodFrame::join).
  cudaStream_t side_stream = nullptr;
  cudaEvent_t ev_fork = nullptr, ev_join[kMaxLevels] = {};
  // The work of the graph's SWITCH node, at the frame's priority
  // (graph_condition.h: with the background model, a frame without
  // foreground skips the matching).
  cudaStream_t body_stream = nullptr;

  // Configuration the buffers and graph were made for.
  int width = 0, height = 0, levels = 0;
  bool buffers_ready = false;
  FrameGraph graph;
  // The coarse-range factor the frame being enqueued uses (the method's
  // choice: MatchingMethod::begin_frame) and the one the levels' ranges,
  // and so the graph, were prepared with.
  int frame_factor = 1, body_factor = 1;

  std::vector<EngineLevel> lv;
  // The matching method (method.h): what runs between the background model
  // and the output, with its own buffers.
  std::unique_ptr<MatchingMethod> method;
  DeviceImage<uint16_t> disparity_q4;
  DeviceImage<uint8_t> confidence;      // the method's, where it has one (Params::confidence, output Confidence)
  DeviceImage<uint8_t> all_foreground;  // 255 everywhere: the mask without a background model
  DeviceImage<uint8_t> encoded;         // host outputs are encoded here first
  // Pinned outputs of frames in flight (submit): encoded on `stream` into one
  // of two buffers, in turn, and copied down on copy_stream while the next
  // frame's kernels run; a buffer is encoded into again once its last copy
  // is done (ring_copied).
  cudaStream_t copy_stream = nullptr;
  DeviceImage<uint8_t> encoded_ring[2];
  cudaEvent_t ring_copied[2] = {nullptr, nullptr};
  cudaEvent_t ev_encoded = nullptr;
  int ring_next = 0;
  // With two sets of frames in flight: after this set's latest copy down
  // (the other set's next copy waits for it: outputs in submit order).
  cudaEvent_t ev_copied = nullptr;
  bool copy_recorded = false;
  FrameCounters* counters = nullptr;        // device: the frame's conversion zeroes them
  FrameCounters* counters_host = nullptr;   // pinned: the last frame's, read_counts() copies them
  int* frames_seen = nullptr;               // device
  // The background model (stages.h stage 3), full size: each view's model,
  // the conversion's raw test and the mask pass's regions left empty.
  DeviceImage<BackgroundPixel> model[2];
  DeviceImage<uint32_t> raw_test[2];
  // Its cells (background.h ModelViews) and the frame's input as the
  // conversion recorded it for the pixels' pass (device).
  DeviceImage<BackgroundPixel> cell_model[2];
  DeviceImage<uint8_t> cell_fg[2], cell_settled[2];
  // The pixels' pass's blocks: their work and their raw words' foreground
  // (ModelViews).
  DeviceImage<uint8_t> model_work[2], raw_any[2];
  ModelInput* model_input = nullptr;
  // The input form of the frame being enqueued (input_call), which the
  // pixels' pass is made for, and the one the graph's body was captured with.
  PixelFormat frame_format = PixelFormat::GRAY8;
  bool frame_remap = false;
  PixelFormat body_format = PixelFormat::GRAY8;
  bool body_remap = false;
  DeviceImage<uint8_t> mask_dirty;
  uint8_t* luts = nullptr;                  // device, 3 x 768
  // Host views' way up (and host outputs' way down).
  InputStaging staging;
  // Stage 0 (Params::rectification): the maps on the device (those of
  // rect_source, the parameters' own); the conversion reads through them.
  DeviceImage<RemapPoint> rect_map[2];
  const RectificationMaps* rect_source = nullptr;

  // Upload ahead, and the slots the frame call in progress claimed (caller's thread).
  UploadSlots uploads;
  std::vector<int> frame_slots;
  bool last_from_upload = false;  // the last frame read upload slots (profile_stages refuses it)
  // Gathers pageable planes into pinned memory on a few threads (row_copy.h).
  RowCopier copier;

  // Host-side mirror of the model's age and of the frame statistics.
  int frames_seen_host = 0;
  uint64_t frame_index = 0;
  FrameStats pending;  // of the last queued frame, counts filled after it finishes

  // Frames in flight (submit/finish), oldest first. A frame run inside
  // submit() carries its outcome; a queued one its event, the pinned copy
  // of its counters and the host-side part of its statistics.
  struct Submitted {
    bool ran = false;
    Engine::FrameResult result;
    cudaEvent_t done = nullptr;
    FrameCounters* counters = nullptr;
    bool staged = false;  // its views went up through the staging area
    int width = 0, height = 0;  // its views' (its statistics' fractions)
  };
  std::deque<Submitted> submitted;
  std::vector<cudaEvent_t> spare_events;
  std::vector<FrameCounters*> spare_counters;
  bool have_frame = false;
  FrameView last_left{}, last_right{};

  // ---- buffers and state (cuda_engine.cu)
  std::string ensure_device();
  std::string restart_background();
  // Buffers for views of w x h: cheap when nothing changed.
  std::string configure(int w, int h);
  // The confidence map exists while the method gives one (method
  // progressive: while the parameters ask for it).
  std::string allocate_confidence();
  std::string allocate_colour();  // level 0's colour for a method that needs_colour()
  // Background buffers exist only while the model is on.
  std::string allocate_background();
  // Frees the background model's buffers (every view's model, cells, raw
  // test, blocks' flags and the mask pass's regions).
  void release_model();
  // The last frame's counts (complete after its finish) into counters_host,
  // once the stream's work is done.
  std::string read_counts();
  // Empty when the method gives the confidence map, else its refusal by name.
  std::string confidence_problem() const;
  ImageView<const uint8_t> foreground_view() const;

  // ---- one frame (engine_frame.cu)
  // The background model's part of the conversion.
  ModelViews model_views() const;
  // Intensity levels the conversion makes (the rest of the pyramid is the body's).
  int converted_levels() const { return levels < kMaxConvertLevels ? levels : kMaxConvertLevels; }
  // The frame's first kernel, whose input addresses change from frame to
  // frame: described (kernel_call.h) for the graph's first node or a launch.
  // The conversion: level 0 and the first pyramid levels (read through the
  // maps with rectification, Params::rectification: stage 0 fused), the
  // background model's test and update, and the frame's counters zeroed.
  std::string input_call(const FrameView& left, const FrameView& right, KernelCall* call);
  // The maps on the device, for the
  // parameters' maps (before the launches, never during a capture).
  std::string prepare_rectification();
  // Whether the last frame can be run again by the profilers: its inputs
  // must still be the caller's (upload slots are refilled).
  std::string profilable() const;
  // The frame's first kernel straight on the stream (profile_stages, profile_graph).
  std::string enqueue_input(const FrameView& left, const FrameView& right);
  // Everything from the pyramid to the Q4 map, at fixed addresses.
  std::string enqueue_body(cudaStream_t s, StageTimer* timer);
  // What the method reads and writes, at the engine's fixed addresses.
  MethodFrame method_frame() const;
  // The levels' ranges and the method's buffers for these sizes and
  // parameters: set before the launches, never allocated during a capture.
  std::string prepare_body();
  // Whether the frame writes an output of the caller's (else the finish
  // writes the engine's own Q4 map).
  static bool writes_output(const FrameOutput& out) { return out.q4.data || out.encode.dst; }
  // Whether the frame's finish must wait for an event first: out.wait_before
  // (the copy that last read its output buffer), or the other set's latest
  // output (before_output). A wait before the whole graph would hold up the
  // frame's matching too (with two sets in flight, until the other set's
  // frame had ended), so such a finish runs after the graph instead.
  bool finish_waits(const FrameOutput& out) const {
    return out.wait_before || (writes_output(out) && peer && peer->output_recorded);
  }
  // The frame's finish (the method's kernel, finish_call) for `out`.
  std::string finish_call(const FrameOutput& out, KernelCall* call);
  // The finish straight on the stream: after out.wait_before, and after the
  // other set's output when it writes one (finish_waits).
  std::string launch_finish(const KernelCall& finish, const FrameOutput& out);
  // The finish of profile_stages and profile_graph, into the engine's own Q4 map.
  std::string enqueue_finish(StageTimer* timer);
  // The frame's launches without a graph, in the graph's order.
  std::string run_frame_eagerly(const KernelCall& convert, const KernelCall& finish, const FrameOutput& out);
  // The frame's conversion, body and finish, through the graph or not.
  std::string enqueue_frame(const FrameView& left, const FrameView& right, const FrameOutput& out);
  std::string check_frame(const FrameView& left, const FrameView& right) const;
  // Validation, configuration, inputs and the frame's conversion, body and
  // finish (enqueue_frame): the Q4 map, the level-0 mask and out's encoding
  // are then in device memory, in stream order.
  std::string run_frame(const FrameView& left, const FrameView& right, cudaStream_t caller,
                        const FrameOutput& out = {});
  // A frame of out.views: the inputs, the views (rectified when the
  // engine rectifies) written into the output; no conversion, model or
  // matching.
  std::string run_views_frame(const FrameView& left, const FrameView& right, cudaStream_t caller,
                              const FrameOutput& out);
  // Output writes in enqueue order across the two sets of frames in flight:
  // before them, wait for the other set's latest; after them, mark ours.
  std::string before_output();
  std::string after_output();
  std::string finish_caller(cudaStream_t caller);
  // The finish's output into dst (FrameOutput): the Q4 map itself, or its
  // encoding; none for the confidence map, which encode_confidence copies
  // after the finish.
  FrameOutput output_to(const EncodeParams& encode, uint8_t* dst, std::ptrdiff_t pitch, int w, int h) const;
  // OutputFormat::Confidence, after the frame's finish: the map into dst.
  std::string encode_confidence(const EncodeParams& encode, uint8_t* dst, std::ptrdiff_t pitch);
  std::string ensure_copy_stream();

  // Claims a process()/enqueue() call's upload slots and gives them back on
  // every way out (nested calls find them claimed already).
  struct FrameSlots {
    Impl& m;
    FrameSlots(Impl& impl, const FrameView& left, const FrameView& right) : m(impl) {
      m.uploads.claim(left, right, &m.frame_slots);
    }
    ~FrameSlots() { m.uploads.give_back(&m.frame_slots, m.stream); }
    FrameSlots(const FrameSlots&) = delete;
    FrameSlots& operator=(const FrameSlots&) = delete;
  };
};

}  // namespace cs::cuda
