// Method block (stages.h B1 .. B4) on the GPU, bit-identical to the CPU
// reference (common/block_matching.cpp): SSD block matching over the full
// range at full size, both views' winners in one sweep, then uniqueness, the
// left-right check, the sub-pixel parabola and the confidence in one pass.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "block_tile.h"
#include "device_limits.h"
#include "encode_output.h"
#include "finish.h"
#include "matching.h"
#include "stages.h"

namespace cs::cuda {

BlockCostViews as_const(const BlockWinnerViews& w);

// What enqueue_block_match needs besides its inputs and outputs.
//  - right_keys (the views' size): the right view's winners meet here as
//    64-bit keys (cost << 12 | d: the least key is the least cost, ties to
//    the smaller d). ~0 everywhere before the first launch; every launch
//    leaves them so again.
//  - sweep_state: block_sweep_state_bytes() bytes, where the left view's
//    sweeps wait between slabs of disparities (none when the range fits one
//    slab: then it may be null).
struct BlockScratch {
  ImageView<unsigned long long> right_keys;
  void* sweep_state = nullptr;
  size_t sweep_state_bytes = 0;
};

struct BlockMatchViews {
  ImageView<const uint8_t> gray_left, gray_right;  // stage 1's intensities, full size
  ImageView<const uint8_t> mask_left, mask_right;  // both or neither (data == nullptr: all foreground)
  BlockWinnerViews left;                           // out: B2 for the left view
  ImageView<int16_t> right;                        // out: the right view's winners (-1: none)
  BlockScratch scratch;
};

struct BlockParams {
  Range range{0, 0};  // level 0's (level_range)
  int block_size = 9;
  // 0 chooses per image and device (the usual); tests force each: tile
  // width 64 or 128 columns, 8, 16, 32 or 64 rows a block.
  int tile_width = 0;
  int tile_rows = 0;
  // The GPU the configuration is chosen for (null: the current device).
  const DeviceLimits* limits = nullptr;
};

// The configuration enqueue_block_match runs.
struct BlockConfig {
  int tile_width = 0, tile_rows = 0;
  int threads = 0;     // a block
  int grid = 0;        // blocks
  int registers = 0;   // a thread
  size_t static_shared = 0;
  int blocks_per_sm = 0;  // on the limits' GPU
};

// cudaErrorInvalidConfiguration when a forced configuration does not fit.
cudaError_t choose_block_config(int width, int height, const BlockParams& params, BlockConfig* out);

// Bytes of BlockScratch::sweep_state for views of width x height over
// `range` (0 when the range fits one slab).
size_t block_sweep_state_bytes(int width, int height, Range range);

// B1 and B2 for both views (stages.h block_match).
cudaError_t enqueue_block_match(const BlockMatchViews& views, const BlockParams& params, cudaStream_t stream);

// B3, stage 8, B4 and the confidence of the left map in one pass, per pixel:
// d = the winner; -1 unless passes_uniqueness(best, rival, ratio); the
// map so far into `unique` (optional); -1 unless lr_consistent with `right`
// (when given); the final map into `final_map` (optional); then the Q4
// disparity (finish_block_disparity), the confidence (confidence_map) and
// the frame's counts (FrameCounters: valid pixels, foreground of `mask`),
// each optional.
// (block_tile.h block_finish_pixel, BlockFinishMaps and BlockFinishParams.)
// With encode.dst set, each pixel's Q4 value is also encoded there
// (encode_pixel); disparity_q4 may then have data == nullptr.
struct BlockFinishViews : BlockFinishMaps {
  FrameCounters* counters = nullptr;
  EncodeTarget encode;
};
cudaError_t enqueue_block_finish(const BlockFinishViews& views, const BlockFinishParams& params,
                                 cudaStream_t stream);
// Its launch as a description (kernel_call.h), for the engine's frame graph
// (finish.h finish_call says why).
cudaError_t block_finish_call(const BlockFinishViews& views, const BlockFinishParams& params, KernelCall* call);

// The launch configurations of method block's kernels, for the build-time
// resource check (as match_kernel_launches): every tile width must fit every
// target, whatever the block size (the shared memory is sized for 31 x 31).
std::vector<KernelLaunch> block_kernel_launches();

}  // namespace cs::cuda
