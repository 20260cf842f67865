// The properties of a GPU that decide which kernel configurations fit it,
// queried once per engine, and the occupancy arithmetic over them. Tests
// pass a smaller GPU's limits (architecture_limits) to see, on the GPU at
// hand, the configurations that one would run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cs::cuda {

struct DeviceLimits {
  int major = 0, minor = 0;  // compute capability
  int sm_count = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int registers_per_block = 65536;
  int registers_per_sm = 65536;
  size_t shared_per_block = 48 * 1024;      // without the opt-in
  size_t shared_per_block_optin = 0;        // the most one block may have (cudaFuncSetAttribute)
  size_t shared_per_sm = 0;
  size_t reserved_shared_per_block = 0;     // the driver's share of every block (1 KB from sm_80)
};

// The limits of `device` as the driver reports them.
cudaError_t query_device_limits(int device, DeviceLimits* out);

// The limits a configuration is chosen for: `given` when not null (a test's
// smaller GPU, the engine's cached query), else the current device's,
// queried into *own. *out points at one of them.
cudaError_t limits_or_current(const DeviceLimits* given, DeviceLimits* own, const DeviceLimits** out);

// The limits of a GPU of compute capability cc (75, 80, 86, 87, 89 or 90:
// CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability", and the shared-memory carve-outs of cuda_occupancy.h) with
// `sms` SMs; false for another cc.
bool architecture_limits(int cc, int sms, DeviceLimits* out);

// Blocks of `kernel` (its registers and static shared memory from
// cudaFuncGetAttributes, into *attr when given) one SM of `limits` holds
// at `threads` a block with `dynamic_shared` bytes: NVIDIA's occupancy
// calculator (cuda_occupancy.h) over these limits, so that it answers for
// GPUs other than the one present. 0: the configuration does not fit (or
// the query failed: *error, when given).
int blocks_per_sm(const DeviceLimits& limits, const void* kernel, int threads, size_t dynamic_shared,
                  cudaFuncAttributes* attr = nullptr, cudaError_t* error = nullptr);
// The same for a kernel given by its attributes (numRegs, sharedSizeBytes,
// maxThreadsPerBlock): arithmetic only, no CUDA call.
int blocks_per_sm(const DeviceLimits& limits, const cudaFuncAttributes& attr, int threads, size_t dynamic_shared);

}  // namespace cs::cuda
