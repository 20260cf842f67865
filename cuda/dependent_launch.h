// Programmatic dependent launch (compute capability 9.0 and newer): a
// kernel launched with launch_dependent() may start while the kernel before
// it on the stream (or its node in a captured graph) is still finishing, so
// that the launch's own latency and the earlier kernel's last partial wave
// overlap. Such a kernel calls wait_for_prior_grid() in every block before
// it reads or writes anything another kernel touches: that waits until the
// earlier kernel has finished and its writes are visible (and, the earlier
// kernel having done the same, until every kernel before it has). A kernel
// that calls let_dependents_start() lets the next one be scheduled once all
// its blocks have called it or exited; without the call, once they have all
// exited. On older GPUs the launch is an ordinary one and both calls are
// nothing.
#pragma once

#include <cuda_runtime.h>

#include <atomic>

namespace cs::cuda {

#if defined(__CUDACC__)
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void let_dependents_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
#endif

// Whether the current device launches dependents early (compute capability
// 9.0 and newer), asked once a device.
inline bool device_launches_dependents() {
  constexpr int kDevices = 64;
  static std::atomic<signed char> known[kDevices];  // 0 not asked, 1 no, 2 yes
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kDevices) {
    (void)cudaGetLastError();
    return false;
  }
  signed char k = known[device].load(std::memory_order_relaxed);
  if (k == 0) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    k = major >= 9 ? 2 : 1;
    known[device].store(k, std::memory_order_relaxed);
  }
  return k == 2;
}

#if defined(__CUDACC__)
// kernel<<<grid, block, shared, stream>>>(args...), allowed to start early
// (see above) where the device can; the kernel must call
// wait_for_prior_grid() first. Returns the launch's error.
template <typename... P, typename... A>
cudaError_t launch_dependent(void (*kernel)(P...), dim3 grid, dim3 block, unsigned shared, cudaStream_t stream,
                             A&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = device_launches_dependents() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<A&&>(args)...);
}
#endif

}  // namespace cs::cuda
