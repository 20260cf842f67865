// The matching kernels' launchers, one set a kernel file: the tile kernel of
// any radius (match_tile.cu), and the radius-2 kernels: the coarsest level's
// full-range search (match_stream.cu), the two-phase refinement
// (match_refine.cu) and the wide pixels and right-view keys (match_wide.cu).
// Each launches its kernel in the form a configuration names (match_plan.h
// chooses it), gives its forms' attributes to the plan's cost model, and
// raises their dynamic shared-memory limit (prepare_match). Host code.
#pragma once

#include <cuda_runtime.h>

#include "device_limits.h"
#include "match_args.h"
#include "matching.h"

namespace cs::cuda {

// The dynamic limit is the opt-in maximum less the kernel's static shared memory.
template <typename Kernel>
cudaError_t raise_one(Kernel kernel, int optin) {
  cudaFuncAttributes attr{};
  cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              optin - static_cast<int>(attr.sharedSizeBytes));
}

// A built kernel's registers, static shared memory and largest block into
// *out; false (and *out untouched, the error cleared) where the driver has
// no code for it on this device.
inline bool kernel_attributes(const void* kernel, cudaFuncAttributes* out) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *out = attr;
  return true;
}

// match_tile.cu: the tile kernel of any radius and window.
constexpr int kTileKernelThreads = 256;  // a block
// Its configuration for `count` views with the references in `left`: it
// must fit each.
cudaError_t choose_generic(const MatchViews* views, const bool* left, int count, const MatchParams& p,
                           const DeviceLimits& limits, MatchConfig* out);
cudaError_t enqueue_generic_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream);
cudaError_t raise_generic_limits(int optin);

namespace streaming {

// match_stream.cu: stream_match_kernel, the coarsest level's search (window
// `best`, cost slots for the sub-pixel step, tile height, register-capped form).
cudaError_t enqueue_full_range(const Args& a, int best, int rows, int views, bool slots, bool dense,
                               cudaStream_t stream);
bool full_range_attributes(int best, bool slots, int rows, bool dense, cudaFuncAttributes* out);
cudaError_t raise_full_range_limits(int optin);
// cudaSuccess when the build has code for this device (matching.h match_code_status).
cudaError_t full_range_code_status();

// match_refine.cu: phased::refine_kernel, the levels below the coarsest (and
// the coarsest one's rival forms: Args::full_range).
cudaError_t enqueue_refine(const Args& a, int best, int rows, int views, bool masks, bool rival, bool dense,
                           cudaStream_t stream);
bool refine_attributes(int best, bool masks, int rows, bool rival, bool dense, cudaFuncAttributes* out);
cudaError_t raise_refine_limits(int optin);

// match_wide.cu: wide_kernel over the level's list of wide pixels (`grid`
// blocks; none when 0), and the right map from match keys.
cudaError_t enqueue_wide(const Args& a, int best, bool rival, int grid, cudaStream_t stream);
bool wide_attributes(int best, bool rival, cudaFuncAttributes* out);
cudaError_t resolve_keys(const ImageView<uint32_t>& keys, const ImageView<int16_t>& disparity, cudaStream_t stream);

}  // namespace streaming
}  // namespace cs::cuda
