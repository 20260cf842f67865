// Stage 3 (stages.h) on the GPU: the background model's test and update run
// in the frame's conversion (convert.h, ModelViews); the mask is made from
// its raw test here: the speckle and pinhole filter, the closing and the
// opening at full size (stages.h clean_mask), the coarser levels pooled from it, and the occupancy the foreground tile
// lists are made from (foreground_tiles.h).
#pragma once

#include <cuda_runtime.h>

#include "stages.h"

namespace cs::cuda {

// What the conversion does for the model, per view (blockIdx.z): test and
// update each pixel's model (stereo_math.h background_pixel) and write its
// raw result as bits, a 32-bit word for 32 pixels of a row: bit b of word
// j of row y is pixel (32 j + b, y), set for foreground; pixels outside the
// image are 0.
struct ModelViews {
  ImageView<BackgroundPixel> model[2];
  ImageView<uint32_t> raw[2];  // ceil(w / 32) x h
  // Frames the model has seen before this one; read on the device so that a
  // captured graph replays correctly frame after frame (the mask pass adds one).
  int* frames_seen = nullptr;
  BackgroundParams params{};
};

// The occupancy of a level: one byte a cell of kOccupancyCell x
// kOccupancyCell pixels of the level, nonzero where a pixel of the cell is
// foreground (in the view's mask). Levels up to kOccupancyLevels - 1 have
// their own; coarser levels read level kOccupancyLevels - 1's (a cell of
// it is a whole number of theirs).
constexpr int kOccupancyCell = 8;
constexpr int kOccupancyLevels = 5;
// The full-size pixels the mask pass takes a block: a region of them makes
// whole pixels of every level up to kMaxLevels - 1 and whole cells of every
// occupancy level.
constexpr int kMaskRegion = 128;
static_assert(kMaskRegion >> (kMaxLevels - 1) >= 1, "a region makes a pixel of the coarsest level");
static_assert((kMaskRegion >> (kOccupancyLevels - 1)) % kOccupancyCell == 0, "whole cells");

struct MaskViews {
  ImageView<const uint32_t> raw[2];
  int levels = 1;
  ImageView<uint8_t> mask[kMaxLevels][2];       // out: 255 foreground, 0 background
  ImageView<uint8_t> occupancy[kOccupancyLevels][2];  // out, levels below min(levels, kOccupancyLevels)
  // One byte a region and view, kept from frame to frame: 1 while its
  // outputs hold anything but background (or are unknown: set to 1 with the
  // buffers), so that a region that stays empty writes nothing.
  uint8_t* dirty = nullptr;
  int regions_x = 0;
  int* frames_seen = nullptr;            // += 1 (saturating), by one thread
  unsigned long long* matched = nullptr;  // [l] += left foreground pixels of level l
  unsigned long long* right_foreground = nullptr;  // += right foreground pixels of level 0
};

// dirty (regions_x x regions_y x 2 bytes) must be 1 before the first pass
// after the buffers were made; mask_regions gives their count.
int mask_regions_x(int width);
int mask_regions_y(int height);

// Whether the mask pass takes `radius` (its apron fits the region's words:
// cudaErrorInvalidValue if not); once per configuration.
cudaError_t prepare_masks(int radius);

// The masks of one frame from its raw test (stages.h clean_mask, pool_mask),
// both views in one launch.
cudaError_t enqueue_masks(const MaskViews& views, int width, int height, int radius, cudaStream_t stream);

}  // namespace cs::cuda
