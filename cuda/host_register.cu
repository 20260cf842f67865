#include "host_register.h"

#include <cuda_runtime_api.h>

#include "cuda_engine.h"
#include "cuda_util.h"

namespace cs::cuda {

HostRegistration register_host(void* ptr, size_t bytes, std::string* error) {
  if (!ptr || bytes == 0) {
    if (error) *error = "nothing to page-lock";
    return HostRegistration::Failed;
  }
  cudaError_t e;
  {
    std::unique_lock<std::shared_mutex> guard(host_registration_lock());
    e = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
  }
  if (e == cudaSuccess) return HostRegistration::Registered;
  cudaGetLastError();  // not sticky: later calls on this thread must not see it
  if (e == cudaErrorHostMemoryAlreadyRegistered) {
    // Someone registered this memory before us (another element reading the
    // same buffers through a tee, the application). The driver refuses
    // overlapping ranges too, so the memory counts as pinned only when both
    // ends of the range lie in pinned memory; then the DMA may read it as it
    // is, and its registration is not ours to undo.
    const char* first = static_cast<const char*>(ptr);
    if (is_pinned(first) && is_pinned(first + bytes - 1)) return HostRegistration::AlreadyPinned;
    if (error) *error = "the range overlaps memory page-locked by someone else (cudaErrorHostMemoryAlreadyRegistered)";
    return HostRegistration::Failed;
  }
  if (error) *error = cuda_error_text(e, "cudaHostRegister", __FILE__, __LINE__);
  return HostRegistration::Failed;
}

std::shared_mutex& host_registration_lock() {
  static std::shared_mutex lock;
  return lock;
}

bool unregister_host(void* ptr, std::string* error) {
  cudaError_t e;
  {
    std::unique_lock<std::shared_mutex> guard(host_registration_lock());
    e = cudaHostUnregister(ptr);
  }
  if (e == cudaSuccess) return true;
  cudaGetLastError();
  if (error) *error = cuda_error_text(e, "cudaHostUnregister", __FILE__, __LINE__);
  return false;
}

}  // namespace cs::cuda
