#include "device_limits.h"

#include <algorithm>

#include <cuda_occupancy.h>

namespace cs::cuda {

cudaError_t query_device_limits(int device, DeviceLimits* out) {
  DeviceLimits l;
  struct Query {
    cudaDeviceAttr attr;
    int* value;
  };
  int optin = 0, per_sm = 0, per_block = 0, reserved = 0;
  const Query queries[] = {
      {cudaDevAttrComputeCapabilityMajor, &l.major},
      {cudaDevAttrComputeCapabilityMinor, &l.minor},
      {cudaDevAttrMultiProcessorCount, &l.sm_count},
      {cudaDevAttrMaxThreadsPerBlock, &l.max_threads_per_block},
      {cudaDevAttrMaxThreadsPerMultiProcessor, &l.max_threads_per_sm},
      {cudaDevAttrMaxRegistersPerBlock, &l.registers_per_block},
      {cudaDevAttrMaxRegistersPerMultiprocessor, &l.registers_per_sm},
      {cudaDevAttrMaxSharedMemoryPerBlock, &per_block},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, &per_sm},
      {cudaDevAttrReservedSharedMemoryPerBlock, &reserved},
  };
  for (const Query& q : queries) {
    const cudaError_t e = cudaDeviceGetAttribute(q.value, q.attr, device);
    if (e != cudaSuccess) return e;
  }
  l.shared_per_block = static_cast<size_t>(per_block);
  l.shared_per_block_optin = static_cast<size_t>(optin);
  l.shared_per_sm = static_cast<size_t>(per_sm);
  l.reserved_shared_per_block = static_cast<size_t>(reserved);
  *out = l;
  return cudaSuccess;
}

cudaError_t limits_or_current(const DeviceLimits* given, DeviceLimits* own, const DeviceLimits** out) {
  if (given) {
    *out = given;
    return cudaSuccess;
  }
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = query_device_limits(device, own);
  *out = own;
  return e;
}

bool architecture_limits(int cc, int sms, DeviceLimits* out) {
  DeviceLimits l;
  l.major = cc / 10;
  l.minor = cc % 10;
  l.sm_count = sms;
  constexpr size_t kKiB = 1024;
  switch (cc) {
    case 75:  // Turing (T4, RTX 20xx)
      l.max_threads_per_sm = 1024;
      l.shared_per_block_optin = 64 * kKiB;
      l.shared_per_sm = 64 * kKiB;
      l.reserved_shared_per_block = 0;
      break;
    case 80:  // A100
    case 87:  // Jetson Orin
      l.max_threads_per_sm = cc == 80 ? 2048 : 1536;
      l.shared_per_block_optin = 163 * kKiB;
      l.shared_per_sm = 164 * kKiB;
      l.reserved_shared_per_block = kKiB;
      break;
    case 86:  // RTX 30xx, A10, A40
    case 89:  // RTX 40xx, L4, L40
      l.max_threads_per_sm = 1536;
      l.shared_per_block_optin = 99 * kKiB;
      l.shared_per_sm = 100 * kKiB;
      l.reserved_shared_per_block = kKiB;
      break;
    case 90:  // H100, H200
      l.max_threads_per_sm = 2048;
      l.shared_per_block_optin = 227 * kKiB;
      l.shared_per_sm = 228 * kKiB;
      l.reserved_shared_per_block = kKiB;
      break;
    default:
      return false;
  }
  *out = l;
  return true;
}

int blocks_per_sm(const DeviceLimits& limits, const void* kernel, int threads, size_t dynamic_shared,
                  cudaFuncAttributes* attr_out, cudaError_t* error) {
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (error) *error = e;
  if (e != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (attr_out) *attr_out = attr;
  return blocks_per_sm(limits, attr, threads, dynamic_shared);
}

int blocks_per_sm(const DeviceLimits& limits, const cudaFuncAttributes& attr, int threads, size_t dynamic_shared) {
  if (threads > limits.max_threads_per_block || threads > attr.maxThreadsPerBlock) return 0;
  if (attr.sharedSizeBytes + dynamic_shared > limits.shared_per_block_optin) return 0;

  cudaOccDeviceProp prop{};
  prop.computeMajor = limits.major;
  prop.computeMinor = limits.minor;
  prop.maxThreadsPerBlock = limits.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = limits.max_threads_per_sm;
  prop.regsPerBlock = limits.registers_per_block;
  prop.regsPerMultiprocessor = limits.registers_per_sm;
  prop.warpSize = 32;
  prop.sharedMemPerBlock = limits.shared_per_block;
  prop.sharedMemPerMultiprocessor = limits.shared_per_sm;
  prop.numSms = limits.sm_count;
  prop.sharedMemPerBlockOptin = limits.shared_per_block_optin;
  prop.reservedSharedMemPerBlock = limits.reserved_shared_per_block;

  cudaOccFuncAttributes func{};
  func.maxThreadsPerBlock = attr.maxThreadsPerBlock;
  func.numRegs = attr.numRegs;
  func.sharedSizeBytes = attr.sharedSizeBytes;
  func.partitionedGCConfig = PARTITIONED_GC_OFF;
  // The engine raises every kernel's dynamic limit to the opt-in maximum
  // (prepare_match), so the opt-in bound applies.
  func.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  func.maxDynamicSharedSizeBytes = limits.shared_per_block_optin - attr.sharedSizeBytes;
  func.numBlockBarriers = 1;

  cudaOccDeviceState state{};
  cudaOccResult result{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &func, &state, threads, dynamic_shared) !=
      CUDA_OCC_SUCCESS)
    return 0;
  // The calculator sizes shared memory from the architecture's carve-out
  // steps, not from sharedMemPerMultiprocessor, so for limits that are not a
  // real chip's (a test's emulated small GPU) it can count more blocks than
  // the given per-SM shared memory holds. Real chips' answers are not lowered.
  int blocks = result.activeBlocksPerMultiprocessor;
  const size_t per_block = attr.sharedSizeBytes + dynamic_shared + limits.reserved_shared_per_block;
  if (per_block > 0) blocks = std::min<long long>(blocks, static_cast<long long>(limits.shared_per_sm / per_block));
  return blocks;
}

}  // namespace cs::cuda
