// cs-bench-engine's surveillance scene (issue 35): what the background model
// saves on real content, by the fraction of the frame that moves. A real
// colour pair is the static background; common/moving_objects.h's fraction
// spec puts objects on a constant fraction of every moving frame. The CUDA
// engine runs the warm-up and then batches of the moving frames with the
// background model on, and the same moving frames with it off.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moving_objects.h"
#include "stereo.h"

namespace cs::bench {

// Moving frames in the surveillance play; they are played forwards and
// backwards (0 .. 31, 30 .. 1, 0 ..) after the warm-up.
constexpr int kSurveillanceCycleFrames = 32;

// The moving frame (0 .. kSurveillanceCycleFrames - 1) of the play's step k.
int surveillance_played(int step);

struct SurveillanceConfig {
  int width = 0, height = 0, disparities = 0;
  int fraction_pct = 0;  // of the left view covered by objects on every moving frame
  // Cameras: with more than one, the same moving frames also run on that
  // many engines side by side, a host thread each (a surveillance server's
  // cameras on one GPU), model on and then off: frames a second in all.
  int cameras = 1;
};

struct SurveillanceTiming {
  double ms = 0, min_ms = 0, max_ms = 0;  // median (min..max) of the batches, a frame
  // Two frames in flight (CudaEngine::set_frames_in_flight(2)): the batches
  // timed on the host clock from the first enqueue to synchronize(), median
  // ms a frame; 0 when not measured.
  double inflight_ms = 0;
};

struct SurveillanceResult {
  SurveillanceConfig c;
  int levels = 0, objects = 0, object_disparity = 0;
  int warmup_frames = 0, cycle_frames = 0, frames_per_batch = 0;
  double true_fraction = 0;  // objects' share of the left view, mean over the cycle
  // FrameStats::foreground_fraction over one pass of the cycle, model on.
  double foreground_mean = 0, foreground_min = 0, foreground_max = 0;
  // FrameStats matched_pixels / matched_pixels_full over the same pass: the
  // matching work the model leaves, against a full frame's.
  double matched_mean = 0, matched_max = 0;
  // FrameStats background_tests / background_tests_full over the same pass:
  // the model's own tests (cells and the pixels they leave), against a test
  // of every pixel (what the pixels' pass costs follows it).
  double tests_mean = 0;
  SurveillanceTiming background, full;
  // With cameras > 1: frames a second over all the cameras, model on / off.
  double cameras_background_fps = 0, cameras_full_fps = 0;
  int camera_frames = 0;  // frames each camera ran in a round of that timing (median of 3 rounds)
  std::string graph;  // CudaEngine::frame_graph_state of the model's run
  // With stages: the model's frame stage by stage (profile_stages, median
  // of 11, stages repeated per level summed), ms.
  std::vector<std::pair<std::string, double>> stages;
  // With timeline: the model's frame as its graph runs it (profile_graph,
  // median of 11): when each stage ended, ms from the frame's start.
  std::vector<std::pair<std::string, double>> timeline;
  bool skips_empty = false;
  std::string error;
};

// The sequence a config plays, rendered over the background pair (packed
// RGBA at the config's size): warmup_frames still frames (the model learns
// the scene), then the cycle's moving frames; spec.warmup_frames and the
// frames' truth come with it. Empty string on success, else why.
struct SurveillanceSequence {
  MovingObjectsSpec spec;
  int object_disparity = 0;
  std::vector<MovingObjectsFrame> frames;  // spec.frames() of them
};
std::string render_surveillance(const SurveillanceConfig& c, const Image<uint32_t>& background_left,
                                const Image<uint32_t>& background_right, int warmup_frames,
                                SurveillanceSequence* out);

// Renders the sequence over the background pair (packed RGBA, already at
// the config's size), uploads it, and times it. `base` carries the matching
// parameters (its background flag and range are set here); batches last
// about batch_ms (10 to max_frames frames), as the other scenes' do. With
// profile, one moving frame with the model on and one with it off run
// again stage by stage (profile_stages: straight launches, no graph)
// between cudaProfilerStart and Stop, for `ncu --profile-from-start off`.
// With inflight, each run is timed again with two frames in flight
// (SurveillanceTiming::inflight_ms).
SurveillanceResult run_surveillance(const SurveillanceConfig& c, const Image<uint32_t>& background_left,
                                    const Image<uint32_t>& background_right, const Params& base, double batch_ms,
                                    int max_frames, bool stages = false, bool timeline = false,
                                    bool profile = false, bool inflight = false);

// One `result scene=surveillance ...` line of key=value pairs.
void print_surveillance_line(const SurveillanceResult& r, const std::string& label, const char* method);

}  // namespace cs::bench
