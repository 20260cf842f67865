// Stages 6 and 7 (stages.h match_full_range, refine_level): winner-takes-all
// over each reference pixel's candidate disparities with the adaptive window.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "device_limits.h"
#include "foreground_tiles.h"
#include "tile_order.h"
#include "stages.h"

namespace cs::cuda {

// Optional scratch that lets the full-range search (coarsest level) split
// each tile's disparities over several blocks, which then meet in per-pixel
// keys (cost << 16 | d: the smallest key is the smallest cost, ties to the
// smaller d). best_keys must hold 0xFFFFFFFF everywhere and tiles_done zero
// before the first launch; every launch leaves them so again.
//
// Refinement: pixels whose candidate interval is wide (holes beside
// outliers) are matched one by one, by a second kernel over the whole GPU,
// from a list (wide_pixels: wide_capacity words, two an entry; pixels beyond
// it are matched by their tile's block). wide_counters: two, zero before the
// first launch; every launch leaves them so again.
// Without a list each tile's block matches its own.
//
// At the coarsest level, without offer_right (the coarse probe),
// enqueue_match_pair evaluates each window once for both views (stages.h:
// one cost volume) when both have best_keys: the left
// view's tiles offer every window to the key of the right pixel it matches
// (same reset rule), and a last launch writes the right map from them
// (unless the caller reads the keys itself: right_keys_kept below).
//
// Refinement, optional: the order in which the grid's blocks take the
// level's tiles (TileSchedule, tile_order.h). Each block records how long its
// tile took; enqueue_tile_order turns those times into the next launch's
// order, longest first, so that the slowest tiles start in the first wave
// and short ones fill the end. The order changes only which block matches
// which tile, never a result.
struct MatchScratch {
  ImageView<uint32_t> best_keys;   // the level's size
  unsigned* tiles_done = nullptr;  // match_tile_count(width, height) counters
  uint32_t* wide_pixels = nullptr;
  unsigned wide_capacity = 0;
  unsigned* wide_counters = nullptr;
  TileSchedule schedule;
  // Optional, the background model's (foreground_tiles.h): the tiles of the
  // launch's grid that hold foreground (MatchConfig's tile_width x tile_rows
  // tiles of the reference view), for launches of one view (enqueue_match,
  // or enqueue_match_pair offering the right map); its other tiles are left
  // unwritten. Takes the schedule's place.
  TileList tiles;
};

struct MatchViews {
  ImageView<const uint32_t> census_ref, census_other;
  ImageView<const uint8_t> mask_ref, mask_other;  // data == nullptr: all foreground
  // The checked map of the next coarser level; data == nullptr: coarsest
  // level, every pixel searches the whole range.
  ImageView<const int16_t> coarser;
  // Optional: the coarser level's mask of this view (the background model);
  // where it is background the coarser map reads as -1, whatever it holds.
  ImageView<const uint8_t> coarser_mask;
  ImageView<int16_t> disparity;  // out: -1 = invalid
  // Optional (left reference at level 0 only): the sub-pixel offset in 1/16
  // pixel of finish_disparity, computed here from the costs already at hand.
  ImageView<int8_t> subpixel_offset;
  // Optional, both or neither: the sweep's SweepCosts (stages.h: the
  // winner's cost and the rival's, kNoCost where none), before uniqueness;
  // what the confidence of level 0's left view reads.
  ImageView<int32_t> best_cost, rival_cost;
  // Optional (left reference, any level): the other view's offered map
  // (stages.h match_full_range and refine_level, offered) as match keys
  // (enqueue_match_pair sets it with offer_right): each pixel's winner
  // (before uniqueness) takes the key of the other view's pixel it matches
  // down to cost << 16 | d (atomic minimum). All ones before the launch;
  // key_disparity reads the map from them.
  ImageView<uint32_t> offered_keys;
  MatchScratch scratch;  // optional (full range only)
};

struct MatchParams {
  Reference reference = Reference::Left;
  Range range{0, 0};
  int radius = 2;
  int best = 2;  // 0, 1, 2 or 4 (WindowVariant)
  int hole_radius = 2;
  int hole_span = kDefaultHoleSpan;  // Params::hole_span
  // B3 on the sweep's winners (stages.h, stages 6 and 7: passes_uniqueness
  // against the rival over the pixel's own candidates); 0 = off.
  int uniqueness_ratio = 0;
  // Tile height of the radius-2 kernels: 0 chooses per grid and device (the
  // usual); else 24 (not with the sub-pixel cost slots), 32, 40 or 48 at
  // the coarsest level, 32, 28, 24, 16 or 8 below it (28 or 24 for the rival
  // forms; 8 in the plain form only, chosen only where 16-row tiles would
  // make less than one wave). Tests force each; one that does
  // not exist or does not fit the device is refused.
  int tile_rows = 0;
  // The streaming kernels' register forms (the full-range kernel without
  // cost slots, and the plain refine kernel): chosen per grid and device
  // (kChosenForm, the usual), or forced (tests): kPlainForm, or kDenseForm,
  // capped for one more block an SM (refused where it does not exist, as the
  // rival forms and the slots have none, or does not fit).
  enum KernelForm { kChosenForm = 0, kPlainForm = 1, kDenseForm = 2 };
  int kernel_form = kChosenForm;
  // The full-range streaming kernel's warps a pair (tests): 0 chooses (two,
  // four where the grid would fill at most half the GPU's block slots:
  // match_plan.cpp spread_rows), 1, 2 or 4 forced. Not with the sub-pixel's
  // cost slots, nor the rival forms.
  int segments = 0;
  // enqueue_match_pair (where the right view has best_keys): the right map is
  // the one the left view's winners offer (stages.h stages 6 and 7,
  // offered; the pipeline's rule), and only the left view is matched;
  // else each view its own search (the coarse probe, stage 6b).
  bool offer_right = false;
  // The tile kernel of any radius and window even where a radius-2 kernel
  // applies (tests; the engine takes it where no radius-2 tile fits).
  bool generic_kernel = false;
  // The GPU the configuration is chosen for: null, the current device's
  // limits; a smaller GPU's (tests) give the configuration it would run.
  const DeviceLimits* limits = nullptr;
  // With MatchScratch::tiles: the tiles are few (a small foreground), so
  // the level takes its slowest tile's time whatever the grid's waves; the
  // configuration is chosen for short tiles rather than for the whole
  // grid's cost (the shortest tile heights, the coarsest search spread).
  bool sparse_tiles = false;
};

// The configuration enqueue_match(_pair) runs for a level.
//
// With a uniqueness ratio or cost outputs the kernels also track each
// pixel's rival (rival = true): forms of the kernels of their own, so that
// the plain ones stay as they are. The rival depends on the final winner
// and the streaming full-range kernel meets a pixel's disparities in no
// order, so the coarsest level then runs the refine kernel over the full
// range (kernel Refine), which meets them in ascending order.
struct MatchConfig {
  enum Kernel { Generic, FullRange, Refine } kernel = Generic;
  bool rival = false;
  int tile_rows = 0;              // FullRange and Refine
  int tile_width = 0;             // FullRange and Refine: a tile's columns (MatchScratch::tiles)
  int segments = 0;               // FullRange (streaming, no rival): warps a pair (MatchParams::segments)
  bool dense = false;             // FullRange and Refine: the register-capped form (MatchParams::kDenseForm)
  int threads = 0;                // a block
  size_t static_shared = 0;       // bytes a block
  size_t dynamic_shared = 0;
  int registers = 0;              // a thread
  int blocks_per_sm = 0;          // on the limits' GPU
  // Refine: the tiles are taken longest first (MatchScratch::schedule), and
  // the tile height is chosen for it (fuller grids over one wave).
  bool scheduled = false;
  // Refine with a wide-pixel list: the wide kernel's blocks. 0 also where no
  // pixel can be wide: a hole's candidates are at most hole_span, a parent's
  // 5, and a pixel is wide only when they and its sub-pixel neighbours span
  // more than 24 disparities, so with hole_span from 1 to kMaxNarrowHoleSpan
  // (the default is 16) the level launches no wide kernel.
  int wide_grid = 0;
  size_t wide_shared = 0;         // and their static plus dynamic shared bytes
  int wide_blocks_per_sm = 0;
};

// The largest bounded hole span (MatchParams::hole_span) with which no pixel
// of a refined level can be wide (MatchConfig::wide_grid).
constexpr int kMaxNarrowHoleSpan = 22;

// The configuration for `count` views (1, or 2 for enqueue_match_pair) of
// one level; cudaErrorInvalidConfiguration when none fits the GPU (a radius
// whose tile kernel needs more shared memory than it has, or a forced tile
// height that does not fit). Only the views' sizes and which of their
// optional parts are present matter.
cudaError_t choose_match_config(const MatchViews* views, int count, const MatchParams& params, MatchConfig* out);

// Shared memory one block needs for this radius (for the caller's checks).
size_t match_shared_bytes(int radius);

cudaError_t enqueue_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream);

// A match key (best cost << 16 | d; all ones for none, as best_keys hold
// them) as the disparity it stands for, -1 for none.
__host__ __device__ inline int key_disparity(uint32_t key) {
  return key == 0xFFFFFFFFu ? -1 : static_cast<int>(key & 0xFFFFu);
}

// Both views of one level in one launch where the kernel allows it (left
// reference for `left`, right for `right`; params.reference is ignored).
// With params.offer_right and the right view's best_keys (the level's size)
// the right map is the left view's offered map (stages.h match_full_range
// and refine_level, offered; the pipeline's rule): only the left view is
// matched, its winners offered to those keys (MatchViews::offered_keys).
// right_keys_kept (optional): where the launch shares the cost volume
// (both views' best_keys at the coarsest level without offer_right) or the
// right map is offered, it sets *right_keys_kept and leaves the right
// view's map as its keys in right.scratch.best_keys, for the caller to read (cross_check.h
// enqueue_check_and_support_keys, finish.h) and to set to all ones before
// the next launch (census.h, clear); else false, and right.disparity holds
// the map (and the keys are all ones again).
cudaError_t enqueue_match_pair(const MatchViews& left, const MatchViews& right, const MatchParams& params,
                               cudaStream_t stream, bool* right_keys_kept = nullptr);

// The map that match keys stand for (key_disparity), and the keys all ones
// again (what enqueue_match_pair does where the caller keeps no keys).
cudaError_t enqueue_resolve_keys(ImageView<uint32_t> keys, ImageView<int16_t> disparity, cudaStream_t stream);

// The launch configurations of the matching kernels, for the build-time
// resource check (tests/cuda/kernel_resources.py, which reads registers and
// static shared memory from the built code): the kernel as the compiler
// names it, threads a block, dynamic shared bytes at `range_width`
// disparities, the blocks an SM its launch bounds ask for, and whether the
// engine relies on it fitting every target GPU (else it takes another tile
// height, or the generic kernel, where it does not fit).
struct KernelLaunch {
  std::string kernel;
  int threads = 0;
  size_t dynamic_shared = 0;
  int min_blocks_per_sm = 0;
  bool required = false;
  std::string what;
};
std::vector<KernelLaunch> match_kernel_launches(int range_width);

// Counters MatchScratch::tiles_done needs for a level of this size.
int match_tile_count(int width, int height);

// The most tiles a refinement grid of both views of a level of this size
// has (MatchScratch::schedule's capacity).
unsigned refine_tile_capacity(int width, int height);

// cudaSuccess when the build carries code this device runs (SASS for it,
// or PTX the driver compiles); else the driver's reason
// (cudaErrorNoKernelImageForDevice, cudaErrorJitCompilationDisabled, ...).
cudaError_t match_code_status();

// Raises the kernels' dynamic shared-memory limit to what `radius` needs;
// call once per engine set-up (idempotent; never lowers the limit).
cudaError_t prepare_match(int radius);

}  // namespace cs::cuda
