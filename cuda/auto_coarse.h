// The automatic coarse range (Params::coarse_range_factor 0, stages.h 6b) of
// the progressive method on the GPU: the factor each frame takes, and the
// probe after the frame's work that chooses the next ones. The probe's
// histogram comes back to the host while the next frame is being prepared;
// that frame reads it (begin_frame), so no frame waits for its own probe.
// Both sets of frames in flight (CudaEngine::set_frames_in_flight) share
// one, so that the frames count and choose as one stream, as the CPU
// reference's Matcher does.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

#include "stages.h"

namespace cs::cuda {

class AutoCoarseRange {
 public:
  AutoCoarseRange() = default;
  AutoCoarseRange(const AutoCoarseRange&) = delete;
  AutoCoarseRange& operator=(const AutoCoarseRange&) = delete;
  ~AutoCoarseRange();

  // Before anything the probe reads may change: the counts of a probe on
  // its way (the previous frame's), waited for and read; then the frame's
  // factor: the last probe's (1 again after a change of size, levels or
  // range), or the parameters' own (at least 1) without the automatic range.
  std::string begin_frame(const Params& params, int width, int height, int levels, int* factor);

  // After the frame's work, on the first frame of a configuration and every
  // kCoarseProbeInterval frames: the probe of the coarsest level (its width
  // coarsest_width), straight on `stream` (never in a graph). `probe`
  // enqueues the method's probe over a range, its histogram into
  // counts[0, bins).
  using Probe = std::function<std::string(Range range, unsigned* counts, int bins)>;
  std::string end_frame(const Params& params, int width, int height, int levels, int coarsest_width,
                        const Probe& probe, cudaStream_t stream);

 private:
  static bool automatic(const Params& p, int levels) {
    return p.coarse_range_factor == kAutoCoarseRangeFactor && levels > 1;
  }
  std::string ensure(int bins);
  void release_buffers();

  CoarseProbeSchedule schedule_;
  // A probe in flight: its histogram arrives in counts_host_ when done_ has
  // happened; level, bins and max (its max_disparity) say how to read it.
  bool waiting_ = false;
  int level_ = 0, bins_ = 0, max_ = 0;
  int device_ = 0;
  cudaEvent_t done_ = nullptr;
  unsigned* counts_device_ = nullptr;
  unsigned* counts_host_ = nullptr;  // pinned
  int capacity_ = 0;                 // bins both buffers hold
};

}  // namespace cs::cuda
