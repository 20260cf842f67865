// Stage 8 (stages.h cross_check): left-right consistency of one level.
#pragma once

#include <cuda_runtime.h>

#include "foreground_tiles.h"
#include "stereo.h"

namespace cs::cuda {

// Reads both input maps, writes both checked maps (out-of-place, which is
// the specification's "against the other's input values").
cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream);

// The map a level above 0 hands to the next finer one: the cross-check
// (when lr_check) followed by stage 8b's support_filter (min_support > 0),
// in one pass: each pixel checks itself and its 8 neighbours from the input
// maps, so no checked map is read back.
cudaError_t enqueue_check_and_support(ImageView<const int16_t> left, ImageView<const int16_t> right, bool lr_check,
                                      int tolerance, int min_support, ImageView<int16_t> left_out,
                                      ImageView<int16_t> right_out, cudaStream_t stream);

// The same where the right map is still the right view's match keys
// (matching.h enqueue_match_pair, right_keys_kept: cost << 16 | d, all ones
// for none), which it reads as the map they stand for and writes to
// right_raw; the keys are left as they are. With the background model:
// each view's map reads as -1 where its mask (optional) is background,
// whatever it holds there, and tiles (optional: foreground_tiles.h) lists
// the tiles of kCheckTileW x kCheckTileH pixels checked; the others are
// left unwritten.
constexpr int kCheckTileW = 64;
constexpr int kCheckTileH = 4;
cudaError_t enqueue_check_and_support_keys(ImageView<const int16_t> left, ImageView<const uint32_t> right_keys,
                                           bool lr_check, int tolerance, int min_support,
                                           ImageView<int16_t> right_raw, ImageView<int16_t> left_out,
                                           ImageView<int16_t> right_out, cudaStream_t stream,
                                           ImageView<const uint8_t> mask_left = {},
                                           ImageView<const uint8_t> mask_right = {}, TileList tiles = {});

}  // namespace cs::cuda
