// A backend-neutral engine: the element drives whichever backend it has
// through this interface (CPU reference here, CUDA in cuda/).
#pragma once

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
};

std::unique_ptr<Engine> make_cpu_engine(const Params& params);

}  // namespace cs
