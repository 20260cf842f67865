#include "upload_slots.h"

#include "cuda_engine.h"

namespace cs::cuda {

static_assert(UploadSlots::kSlots == CudaEngine::kUploadSlots, "cuda_engine.h kUploadSlots");

int UploadSlots::slot_holding(const uint8_t* p) const {
  for (int k = 0; k < kSlots; ++k)
    if (slots_[k].holds(p)) return k;
  return -1;
}

bool UploadSlots::holds(const uint8_t* plane) const {
  std::lock_guard<std::mutex> guard(lock_);
  return slot_holding(plane) >= 0;
}

// Under lock_. A free slot, preferring one already of this shape (no
// reallocation); -1 when every slot is busy. Never waits.
int UploadSlots::take_free_slot(const FrameView& v) {
  int any = -1;
  for (int k = 0; k < kSlots; ++k) {
    UploadSlot& s = slots_[k];
    if (s.state == UploadSlot::State::Returned) {
      const cudaError_t q = cudaEventQuery(s.consumed);
      if (q == cudaErrorNotReady) {
        cudaGetLastError();  // not an error: the frame reading it is still running
        continue;
      }
      if (q != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      s.state = UploadSlot::State::Free;
    }
    if (s.state != UploadSlot::State::Free) continue;
    if (s.planes > 0 && s.format == v.format && s.width == v.width && s.height == v.height) return k;
    if (any < 0) any = k;
  }
  return any;
}

// Under lock_: device planes of `v`'s shape and `staged` bytes of pinned
// staging; the slot is free, so nothing on the GPU reads it.
std::string UploadSlots::shape_slot(UploadSlot& s, const FrameView& v, const PlaneShape& ps, size_t staged) {
  if (!s.uploaded) CS_CUDA_TRY(cudaEventCreateWithFlags(&s.uploaded, cudaEventDisableTiming));
  if (!s.consumed) CS_CUDA_TRY(cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming));
  if (s.planes == 0 || s.format != v.format || s.width != v.width || s.height != v.height) {
    s.planes = 0;
    for (int i = 0; i < 3; ++i) {
      if (i < ps.count)
        CS_CUDA_TRY(s.plane[i].allocate(static_cast<int>(ps.row_bytes[i]), ps.rows[i]));
      else
        s.plane[i].release();
    }
    s.format = v.format;
    s.width = v.width;
    s.height = v.height;
    s.planes = ps.count;
  }
  if (staged > s.staging_bytes) {
    if (s.staging) cudaFreeHost(s.staging);
    s.staging = nullptr;
    s.staging_bytes = 0;
    CS_CUDA_TRY(cudaMallocHost(&s.staging, staged));
    s.staging_bytes = staged;
  }
  return {};
}

std::string UploadSlots::upload(const FrameView& host_view, FrameView* device_view, RowCopier& copier) {
  const PlaneShape ps = plane_shape(host_view);
  // Pinned planes (a pool of ours upstream) go up by DMA from where they
  // lie; pageable ones through the slot's pinned staging, as the engine's
  // own inputs do (host_memory.h InputStaging).
  bool direct[3] = {};
  size_t staged = 0;
  for (int i = 0; i < ps.count; ++i) {
    direct[i] = is_pinned(host_view.plane[i]);
    if (!direct[i]) staged += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
  }
  UploadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (!stream_) CS_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const int k = take_free_slot(host_view);
    if (k < 0) return "all upload slots are in use";
    slot = &slots_[k];
    std::string e = shape_slot(*slot, host_view, ps, staged);
    if (!e.empty()) return e;  // still free; its shape is rebuilt on the next call
    slot->state = UploadSlot::State::Filling;
  }
  // The slot is this call's alone now: copy without holding the lock, so
  // process() on another thread never waits for a CPU copy.
  std::string e = [&]() -> std::string {
    uint8_t* at = slot->staging;
    for (int i = 0; i < ps.count; ++i) {
      const ImageView<uint8_t>& d = slot->plane[i].view();
      const uint8_t* from = host_view.plane[i];
      std::ptrdiff_t from_pitch = host_view.pitch[i];
      if (!direct[i]) {
        copier.copy(at, ps.row_bytes[i], host_view.plane[i], host_view.pitch[i], ps.row_bytes[i], ps.rows[i]);
        from = at;
        from_pitch = ps.row_bytes[i];
        at += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
      }
      CS_CUDA_TRY(cudaMemcpy2DAsync(d.data, d.pitch, from, from_pitch, ps.row_bytes[i], ps.rows[i],
                                    cudaMemcpyHostToDevice, stream_));
    }
    CS_CUDA_TRY(cudaEventRecord(slot->uploaded, stream_));
    return {};
  }();
  if (!e.empty()) cudaStreamSynchronize(stream_);  // copies queued before the failure end first
  std::lock_guard<std::mutex> guard(lock_);
  if (!e.empty()) {
    slot->state = UploadSlot::State::Free;
    return e;
  }
  *device_view = host_view;
  device_view->memory = Memory::Device;
  for (int i = 0; i < 3; ++i) {
    device_view->plane[i] = i < ps.count ? slot->plane[i].view().data : nullptr;
    device_view->pitch[i] = i < ps.count ? slot->plane[i].view().pitch : 0;
  }
  slot->state = UploadSlot::State::HandedOut;
  return {};
}

void UploadSlots::release(const FrameView& device_view, int device) {
  if (device_view.memory != Memory::Device) return;
  UploadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> guard(lock_);
    const int k = slot_holding(device_view.plane[0]);
    if (k < 0 || slots_[k].state != UploadSlot::State::HandedOut) return;
    slot = &slots_[k];
    slot->state = UploadSlot::State::Filling;  // ours until its DMA is over
  }
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur != device) cudaSetDevice(device);
  // The DMA may still read the caller's pinned planes or the staging.
  if (cudaEventSynchronize(slot->uploaded) != cudaSuccess) cudaGetLastError();
  std::lock_guard<std::mutex> guard(lock_);
  slot->state = UploadSlot::State::Free;
}

void UploadSlots::claim(const FrameView& left, const FrameView& right, std::vector<int>* claimed) {
  if (left.memory != Memory::Device && right.memory != Memory::Device) return;
  std::lock_guard<std::mutex> guard(lock_);
  for (const FrameView* v : {&left, &right}) {
    if (v->memory != Memory::Device) continue;
    const int k = slot_holding(v->plane[0]);
    if (k >= 0 && slots_[k].state == UploadSlot::State::HandedOut) {
      slots_[k].state = UploadSlot::State::InFrame;
      claimed->push_back(k);
    }
  }
}

std::string UploadSlots::wait_uploaded(const std::vector<int>& claimed, cudaStream_t stream) {
  for (int k : claimed) CS_CUDA_TRY(cudaStreamWaitEvent(stream, slots_[k].uploaded, 0));
  return {};
}

// The wait on `uploaded` covers calls that failed before converting.
void UploadSlots::give_back(std::vector<int>* claimed, cudaStream_t stream) {
  if (claimed->empty()) return;
  std::lock_guard<std::mutex> guard(lock_);
  for (int k : *claimed) {
    UploadSlot& s = slots_[k];
    if (cudaStreamWaitEvent(stream, s.uploaded, 0) == cudaSuccess &&
        cudaEventRecord(s.consumed, stream) == cudaSuccess) {
      s.state = UploadSlot::State::Returned;
    } else {
      cudaGetLastError();
      cudaEventSynchronize(s.uploaded);  // a failing stream: free it once its DMA is over
      s.state = UploadSlot::State::Free;
    }
  }
  claimed->clear();
}

size_t UploadSlots::device_bytes() const {
  std::lock_guard<std::mutex> guard(lock_);
  size_t n = 0;
  for (const UploadSlot& s : slots_)
    for (const auto& p : s.plane) n += p.bytes();
  return n;
}

void UploadSlots::close() {
  if (stream_) cudaStreamSynchronize(stream_);  // uploads still reading callers' memory
  for (UploadSlot& s : slots_) {
    if (s.uploaded) cudaEventDestroy(s.uploaded);
    if (s.consumed) cudaEventDestroy(s.consumed);
    if (s.staging) cudaFreeHost(s.staging);
    s = UploadSlot{};
  }
  if (stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

}  // namespace cs::cuda
