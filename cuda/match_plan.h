// The radius-2 kernels' launch plan for one level: the arguments that
// follow from the views (plan), and the configuration (kernel form, tile
// height, warps a pair, the wide kernel's grid) whose grid costs the least
// on a GPU (choose: the cost model). Host code only; the kernels' registers
// and shared memory come in through KernelAttributes, so that tests choose
// for any GPU and any build without one (tests/cuda/test_match_plan.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include "device_limits.h"
#include "match_args.h"
#include "matching.h"

namespace cs::cuda::streaming {

// The attributes (registers, static shared memory, largest block) of each
// form of the three radius-2 kernels; false where the form does not exist
// or has no code for the GPU. The engine's are the built kernels'
// (match_kernels.h).
struct KernelAttributes {
  bool (*full_range)(int best, bool slots, int rows, bool dense, cudaFuncAttributes* out);
  bool (*refine)(int best, bool masks, int rows, bool rival, bool dense, cudaFuncAttributes* out);
  bool (*wide)(int best, bool rival, cudaFuncAttributes* out);
};

// A launch of `count` views (1 or 2) of one level: the kernels' arguments
// and the choices that follow from the views.
struct Plan {
  Args a{};
  bool full_range = false;
  bool slots = false;         // full range: cost slots for the sub-pixel step
  bool shared_costs = false;  // full range: the left view's tiles serve the right view too
  bool masks = false;         // refinement: the other view has a foreground mask
  bool wide_list = false;     // refinement: a list of wide pixels for wide_kernel
  // The rival forms (MatchConfig::rival): at the coarsest level too the
  // refine kernel runs (Args::full_range), each view its own tiles.
  bool rival = false;
  bool refine_kernel = false;  // phased::refine_kernel (else stream_match_kernel)
  int grid_views = 1;
  // The launch runs over the background model's foreground tiles (Args::
  // tiles): a few tiles of the grid, so the level's time is its slowest
  // tile's, whatever the grid's waves; the configuration is chosen for
  // short tiles rather than for the whole grid's cost (and the coarsest
  // level's search in the plain form, whose warps do not spill).
  bool sparse = false;
};

Plan plan(const MatchViews* views, const bool* left, int count, const MatchParams& p);

// The streaming configuration of *plan on `limits`' GPU (the full range's
// warps a pair set in it: spread_rows); false when no tile height fits it
// (the caller takes the generic kernel).
bool choose(Plan* plan, const MatchParams& p, const DeviceLimits& limits, const KernelAttributes& kernels,
            MatchConfig* out);

}  // namespace cs::cuda::streaming
