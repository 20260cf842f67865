// The matching method of the CUDA engine (Params::method): what happens
// between the stages every method shares (conversion, pyramid, background
// model, owned by the engine) and the output encoding. make_method() is the
// one place where the engine picks a method; a method owns its buffers and
// kernels, so a new one adds files (its CPU reference in common/, its
// kernels and a Method here), not branches through the engine.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "background.h"
#include "device_limits.h"
#include "finish.h"
#include "graph_condition.h"
#include "kernel_call.h"
#include "matcher_debug.h"
#include "stereo.h"

namespace cs::cuda {

// Records an event after each stage when profiling; a no-op otherwise.
// Two ways (bench/, tools):
//  - on (profile_stages): the frame's launches straight on its stream in
//    order, an event between stages; the method runs no branch, so each
//    stage's time is its own;
//  - in_graph (profile_graph): the frame as the graph runs it, branch
//    included; each mark is an event record node of the capture
//    (cudaEventRecordExternal) on the stream it names, so its time is when
//    the work before it on that stream was done. `level` and `side` say
//    where a mark is (-1: not a level's; side: the method's branch).
struct StageTimer {
  std::vector<cudaEvent_t> events;
  std::vector<std::string> names;
  std::vector<int> levels;
  std::vector<bool> sides;
  cudaStream_t stream = nullptr;
  bool on = false;
  bool in_graph = false;
  void mark(const char* name, int level = -1) { mark_on(stream, false, name, level); }
  void mark_side(cudaStream_t side, const char* name, int level = -1) {
    if (in_graph) mark_on(side, true, name, level);
  }
  void mark_on(cudaStream_t st, bool side, const char* name, int level) {
    if (!on && !in_graph) return;
    cudaEvent_t e = nullptr;
    if (in_graph) {
      // Made before the capture (no event is created inside one).
      if (events.size() >= pool.size() || cudaEventRecordWithFlags(pool[events.size()], st,
                                                                    cudaEventRecordExternal) != cudaSuccess)
        return;
      e = pool[events.size()];
    } else {
      if (cudaEventCreate(&e) != cudaSuccess) return;
      if (cudaEventRecord(e, st) != cudaSuccess) {
        cudaEventDestroy(e);
        return;
      }
    }
    events.push_back(e);
    names.push_back(name);
    levels.push_back(level);
    sides.push_back(side);
  }
  // in_graph: the events the marks take, in order.
  std::vector<cudaEvent_t> pool;
  void release() {
    if (!in_graph)
      for (cudaEvent_t e : events) cudaEventDestroy(e);
    for (cudaEvent_t e : pool) cudaEventDestroy(e);
    pool.clear();
    events.clear();
    names.clear();
    levels.clear();
    sides.clear();
  }
};

// One pyramid level as the engine holds it (fixed addresses for the graph).
struct MethodLevel {
  int width = 0, height = 0;
  Range range{0, 0};                   // level_range
  ImageView<const uint8_t> gray[2];    // left, right: matching intensity
  ImageView<const uint8_t> mask[2];    // the foreground masks (stages.h stage 3); data == nullptr without the model
  // Level 0 of a method that needs_colour(): the views' colour
  // (convert_to_rgb, stage 0's with a calibration); data == nullptr otherwise.
  ImageView<const uint32_t> colour[2];
};

// What a method reads and writes for one frame, and the engine's resources it may use.
struct MethodFrame {
  const Params* params = nullptr;
  const DeviceLimits* limits = nullptr;  // the GPU the configurations are chosen for
  std::vector<MethodLevel> levels;       // pipeline_levels of them, [0] = full size
  ImageView<uint8_t> confidence;         // out when has_confidence(): stages.h confidence_map
  FrameCounters* counters = nullptr;     // zeroed by the conversion; the finish adds valid and foreground pixels
  // With the model, the left level-0 mask's pixels as the mask kernel counts
  // them (the finish's mask_pixels); nullptr without.
  const unsigned long long* mask_pixels() const {
    return !levels.empty() && levels[0].mask[0].data ? &counters->matched[0] : nullptr;
  }
  // A branch the method may fork work onto inside the graph (lower priority),
  // with an event to fork it and one a level to join it (join[l]: after the
  // branch's work for level l, waited for just before that level's).
  cudaStream_t side_stream = nullptr;
  cudaEvent_t fork = nullptr;
  cudaEvent_t join[kMaxLevels] = {};
  // With the background model: the masks' occupancy (background.h), from
  // which a method lists its foreground tiles (foreground_tiles.h), and a
  // stream of the frame's priority for the work of a graph's SWITCH node
  // (graph_condition.h).
  ImageView<const uint8_t> occupancy[kOccupancyLevels][2];
  cudaStream_t body_stream = nullptr;
  bool graph_conditions = true;  // the SWITCH node may be captured (false: the runtime refused it)
  // In a captured graph, for a method that takes_frame_switch: the
  // condition the mask pass sets (frame_switch.h), made by the engine before
  // it; off elsewhere.
  GraphCondition frame_switch;
  // Outside a graph (or without its SWITCH): the full-size left and right
  // views' foreground pixels on the last frame the engine read back (the
  // most there are when none), for a method with configurations for a few
  // tiles, and for the choices a capture without a SWITCH bakes in.
  unsigned long long last_foreground_pixels = ~0ull;
  unsigned long long last_right_foreground = ~0ull;
};

class MatchingMethod {
 public:
  virtual ~MatchingMethod() = default;
  // What these parameters ask that this method's kernels do not do, in the
  // user's words (the refusal by name); empty when they can run.
  virtual std::string unsupported(const Params& params) const = 0;
  // Per-process, per-device set-up the parameters need (kernel attributes);
  // at create() and set_params().
  virtual std::string prepare(const Params& params) = 0;
  // Buffers for the frame's sizes and parameters, before the graph is
  // captured (never during capture): cheap when nothing changed.
  virtual std::string allocate(const MethodFrame& frame, cudaStream_t stream) = 0;
  // With the background model, in a captured graph: whether the method's
  // matching is the bodies of a SWITCH node whose condition the mask pass
  // sets (frame_switch.h), and then *few_below, the full-size left
  // foreground below which the frame takes kFewTiles. The engine then makes
  // the condition before the masks and gives it to enqueue().
  virtual bool takes_frame_switch(const MethodFrame&, unsigned long long* few_below) const {
    *few_below = 0;
    return false;
  }
  // The frame's matching from the levels' intensities (and masks) up to
  // its finish (in the frame's graph); marks its stages on `timer`.
  virtual std::string enqueue(const MethodFrame& frame, cudaStream_t stream, StageTimer* timer) = 0;
  // The frame's finish, after enqueue(): the Q4 map into disparity_q4 or,
  // with encode.dst set (disparity_q4.data == nullptr), its encoding there;
  // the confidence; the counters. One kernel, the frame's last (a pass of
  // its own for the encoding cost 3 to 7 us a frame on an H100), given as
  // a launch description (kernel_call.h) because its output changes from
  // frame to frame: the engine captures it as the last node of the frame's
  // graph and sets each frame's arguments there, or launches it itself.
  virtual std::string finish_call(const MethodFrame& frame, ImageView<uint16_t> disparity_q4,
                                  const EncodeTarget& encode, KernelCall* call) = 0;
  // The last frame's intermediates that Matcher::Debug holds of this method
  // (the engine fills gray, colour and masks). Synchronises `stream`.
  virtual std::string download_debug(const MethodFrame& frame, Matcher::Debug* out, cudaStream_t stream) = 0;
  // Before a frame's work (and before its buffers may change): the
  // coarse-range factor the frame's levels take (stages.h level_range). The
  // parameters' own (at least 1), unless the method chooses it (method
  // progressive's automatic coarse range, stages.h 6b).
  virtual std::string begin_frame(const Params& params, int width, int height, int levels, int* coarse_factor) {
    (void)width, (void)height, (void)levels;
    *coarse_factor = params.coarse_range_factor > 1 ? params.coarse_range_factor : 1;
    return {};
  }
  // After the frame's work is enqueued on `stream` (outside its graph), e.g.
  // the automatic coarse range's probe.
  virtual std::string end_frame(const MethodFrame& frame, cudaStream_t stream) {
    (void)frame, (void)stream;
    return {};
  }
  // Both sets of frames in flight (CudaEngine::set_frames_in_flight) are one
  // stream of frames: what this method keeps from frame to frame (the
  // automatic coarse range) becomes `other`'s too (a method of the same kind).
  virtual void share_frames_with(MatchingMethod& other) { (void)other; }
  // The levels whose pixels a full frame matches (FrameStats::
  // matched_pixels_full): the first `levels` of the pyramid.
  virtual int matched_levels(int levels) const { return levels; }
  virtual bool has_confidence() const = 0;
  // Whether the method matches the views' colour (MethodLevel::colour at
  // level 0, written by the frame's conversion).
  virtual bool needs_colour() const { return false; }
  virtual size_t device_bytes() const = 0;
};

std::unique_ptr<MatchingMethod> make_method(Method method);

// The methods (one file each).
std::unique_ptr<MatchingMethod> make_progressive_method();
std::unique_ptr<MatchingMethod> make_block_method();
std::unique_ptr<MatchingMethod> make_cross_method();
std::unique_ptr<MatchingMethod> make_elas_method();

}  // namespace cs::cuda
