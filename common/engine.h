// A backend-neutral engine: the element drives whichever backend it has
// through this interface (CPU reference here, CUDA in cuda/).
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "encode.h"
#include "stereo.h"

namespace cs {

// Destination of one encoded output frame.
struct OutputFrame {
  uint8_t* data = nullptr;
  std::ptrdiff_t pitch = 0;
  int width = 0;
  int height = 0;
  Memory memory = Memory::Host;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* backend_name() const = 0;  // "cpu" or "cuda"
  // Validates and takes new parameters (applied from the next frame).
  virtual std::string set_params(const Params& params) = 0;
  // One pair in, one encoded frame out; empty string on success.
  virtual std::string process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                              const OutputFrame& out) = 0;
  virtual void reset_background() = 0;
  virtual FrameStats stats() const = 0;

  // ---- frames in flight
  // submit() starts one frame and may return before it is done; finish()
  // waits for the oldest frame submitted and not yet finished and gives its
  // outcome. Frames finish in submit order, one finish() per submit() that
  // returned success (a submit() that fails queues nothing). The views and
  // the output must stay valid, unchanged and mapped until their frame
  // finished. set_params() and reset_background() apply from the next frame
  // submitted (they wait for frames in flight where they must). This default
  // runs the frame inside submit() (process()) and keeps its outcome for
  // finish(); an engine that overlaps frames overrides all three.
  struct FrameResult {
    std::string error;  // empty: the output holds the frame
    FrameStats stats;
  };
  virtual std::string submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                             const OutputFrame& out);
  virtual FrameResult finish();
  // Frames submitted and not finished.
  virtual size_t in_flight() const { return done_.size(); }
  // True when submit() returns before its frame is done (frames overlap);
  // false when it runs the frame (this default): holding frames back then
  // gains nothing.
  virtual bool overlaps_frames() const { return false; }

 private:
  std::deque<FrameResult> done_;  // the default submit()'s outcomes, oldest first
};

// The CPU reference behind the Engine interface. With `overlap`, submit()
// hands the frame to a worker thread of the engine's own and returns at once,
// so that the caller's work (mapping, pushing, the next frame's source)
// overlaps the matching; frames still run one at a time, in order.
std::unique_ptr<Engine> make_cpu_engine(const Params& params, bool overlap = false);

}  // namespace cs
