// Host memory as the engine moves it: pinned allocations (cuda_engine.h
// alloc_pinned, is_pinned) and the frame's host views on their way to the
// GPU. Pinned planes go up by DMA straight from where they lie; pageable
// ones are gathered into one pinned staging area first (row_copy.h, on a
// few CPU threads), which also takes host outputs on the way down.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_util.h"
#include "row_copy.h"
#include "stereo.h"

namespace cs::cuda {

class InputStaging {
 public:
  InputStaging() = default;
  InputStaging(const InputStaging&) = delete;
  InputStaging& operator=(const InputStaging&) = delete;
  ~InputStaging();

  // Device views of a frame's views: as given (device memory), or copied up
  // on `stream` (the caller keeps the host views valid until the stream has
  // done the copies).
  std::string stage(const FrameView& left, const FrameView& right, FrameView* device_left, FrameView* device_right,
                    RowCopier& copier, cudaStream_t stream);
  // At least `bytes` of pinned staging at host(); a larger area is made once
  // `stream`'s work, which may still read the old one, is done.
  std::string ensure(size_t bytes, cudaStream_t stream);
  uint8_t* host() const { return staging_; }
  size_t device_bytes() const;

 private:
  DeviceImage<uint8_t> input_[2][3];  // device copies of host views
  uint8_t* staging_ = nullptr;        // pinned
  size_t staging_bytes_ = 0;
};

}  // namespace cs::cuda
