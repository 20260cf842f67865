#include "host_memory.h"

#include <mutex>
#include <shared_mutex>

#include "cuda_engine.h"
#include "frame_checks.h"
#include "host_register.h"

namespace cs::cuda {

void* alloc_pinned(size_t bytes, std::string* error) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky: later calls must not see it
    if (error) *error = cuda_error_text(e, "cudaHostAlloc", __FILE__, __LINE__);
    return nullptr;
  }
  return p;
}

void free_pinned(void* ptr) {
  if (ptr) cudaFreeHost(ptr);
}

bool is_pinned(const void* ptr) {
  if (!ptr) return false;
  std::shared_lock<std::shared_mutex> guard(host_registration_lock());
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    cudaGetLastError();  // pageable memory on older runtimes answers with an error
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

InputStaging::~InputStaging() {
  if (staging_) cudaFreeHost(staging_);
}

std::string InputStaging::ensure(size_t bytes, cudaStream_t stream) {
  if (bytes <= staging_bytes_) return {};
  // The previous frame may still read the old staging area.
  CS_CUDA_TRY(cudaStreamSynchronize(stream));
  if (staging_) cudaFreeHost(staging_);
  staging_ = nullptr;
  staging_bytes_ = 0;
  CS_CUDA_TRY(cudaMallocHost(&staging_, bytes));
  staging_bytes_ = bytes;
  return {};
}

std::string InputStaging::stage(const FrameView& left, const FrameView& right, FrameView* device_left,
                                FrameView* device_right, RowCopier& copier, cudaStream_t stream) {
  const FrameView* in[2] = {&left, &right};
  FrameView* out[2] = {device_left, device_right};
  if (left.memory == Memory::Device) {
    *device_left = left;
    *device_right = right;
    return {};
  }
  const PlaneShape ps = plane_shape(left);
  // Either way the bytes are the same, and the caller keeps the views valid
  // until the stream has copied them.
  bool direct[2][3] = {};
  size_t total = 0;
  for (int v = 0; v < 2; ++v)
    for (int i = 0; i < ps.count; ++i) {
      direct[v][i] = is_pinned(in[v]->plane[i]);
      if (!direct[v][i]) total += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
    }
  if (total > 0) {
    std::string e = ensure(total, stream);
    if (!e.empty()) return e;
  }
  uint8_t* at = staging_;
  for (int v = 0; v < 2; ++v) {
    *out[v] = *in[v];
    out[v]->memory = Memory::Device;
    for (int i = 0; i < ps.count; ++i) {
      DeviceImage<uint8_t>& d = input_[v][i];
      if (d.view().width != ps.row_bytes[i] || d.view().height != ps.rows[i])
        CS_CUDA_TRY(d.allocate(static_cast<int>(ps.row_bytes[i]), ps.rows[i]));
      if (direct[v][i]) {
        CS_CUDA_TRY(cudaMemcpy2DAsync(d.view().data, d.view().pitch, in[v]->plane[i], in[v]->pitch[i],
                                      ps.row_bytes[i], ps.rows[i], cudaMemcpyHostToDevice, stream));
      } else {
        copier.copy(at, ps.row_bytes[i], in[v]->plane[i], in[v]->pitch[i], ps.row_bytes[i], ps.rows[i]);
        CS_CUDA_TRY(cudaMemcpy2DAsync(d.view().data, d.view().pitch, at, ps.row_bytes[i], ps.row_bytes[i],
                                      ps.rows[i], cudaMemcpyHostToDevice, stream));
        at += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
      }
      out[v]->plane[i] = d.view().data;
      out[v]->pitch[i] = d.view().pitch;
    }
  }
  return {};
}

size_t InputStaging::device_bytes() const {
  size_t n = 0;
  for (auto& v : input_)
    for (auto& p : v) n += p.bytes();
  return n;
}

}  // namespace cs::cuda
