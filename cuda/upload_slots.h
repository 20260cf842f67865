// The engine's upload-ahead buffers (cuda_engine.h upload_ahead): each slot
// holds the device planes of one host picture, the pinned staging its
// pageable planes pass through and two events, and goes from free to
// filled, handed out, claimed by a frame and returned on the engine's
// stream. Thread-safe: a slot's state is changed under one lock, and its
// staging and `uploaded` event are touched without it only by the one
// thread that owns the slot (Filling, or InFrame by the frame's call).
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "frame_checks.h"
#include "row_copy.h"
#include "stereo.h"

namespace cs::cuda {

struct UploadSlot {
  enum class State {
    Free,       // reusable now
    Filling,    // owned by one upload()/release() call
    HandedOut,  // its device view is with a caller
    InFrame,    // claimed by the process()/enqueue() call in progress
    Returned,   // given back on the engine stream: free once `consumed` has happened
  };
  State state = State::Free;
  PixelFormat format = PixelFormat::GRAY8;
  int width = 0, height = 0;
  int planes = 0;
  DeviceImage<uint8_t> plane[3];
  uint8_t* staging = nullptr;  // pinned
  size_t staging_bytes = 0;
  cudaEvent_t uploaded = nullptr;  // on the upload stream, after the copies
  cudaEvent_t consumed = nullptr;  // on the engine stream, after the frame's conversion read it

  bool holds(const uint8_t* p) const {
    if (planes == 0 || !p) return false;
    const uint8_t* base = plane[0].view().data;
    return p >= base && p < base + plane[0].bytes();
  }
};

class UploadSlots {
 public:
  static constexpr int kSlots = 6;  // CudaEngine::kUploadSlots

  UploadSlots() = default;
  UploadSlots(const UploadSlots&) = delete;
  UploadSlots& operator=(const UploadSlots&) = delete;
  ~UploadSlots() { close(); }

  // upload_ahead(): host_view's planes into a free slot on the upload
  // stream (pageable ones through its pinned staging, by `copier`); the
  // slot's device view in *device_view. Never waits for the GPU.
  std::string upload(const FrameView& host_view, FrameView* device_view, RowCopier& copier);
  // release_upload(): a slot handed out and never processed is free again
  // once its upload is over (waited for with `device` current).
  void release(const FrameView& device_view, int device);
  // Whether a view lies in a slot.
  bool holds(const uint8_t* plane) const;
  // At the start of a frame's call: the slots its views lie in become the
  // call's (appended to *claimed; a packed frame's halves share one).
  void claim(const FrameView& left, const FrameView& right, std::vector<int>* claimed);
  // `stream` waits for the claimed slots' uploads.
  std::string wait_uploaded(const std::vector<int>& claimed, cudaStream_t stream);
  // Gives the claimed slots back in `stream`'s order: reusable once the
  // work queued so far (at least the conversion that read them) is done.
  void give_back(std::vector<int>* claimed, cudaStream_t stream);
  size_t device_bytes() const;
  // Waits for the uploads still reading callers' memory, then frees every
  // slot and the upload stream (the engine's destructor; idempotent).
  void close();

 private:
  int slot_holding(const uint8_t* p) const;
  int take_free_slot(const FrameView& v);
  std::string shape_slot(UploadSlot& s, const FrameView& v, const PlaneShape& ps, size_t staged);

  mutable std::mutex lock_;
  cudaStream_t stream_ = nullptr;
  UploadSlot slots_[kSlots];
};

}  // namespace cs::cuda
