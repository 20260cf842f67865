// Stage 3 (stages.h) on the GPU: the cells' test and update run in the
// frame's conversion (convert.h, ModelViews), the pixels' in the pass right
// after it (enqueue_model_pixels); the mask is made from their raw test
// here: the speckle and pinhole filter, the closing and the opening at full
// size (stages.h clean_mask), the coarser levels pooled from it, and the
// occupancy the foreground tile lists are made from (foreground_tiles.h).
#pragma once

#include <cuda_runtime.h>

#include "frame_switch.h"
#include "remap_math.h"
#include "stages.h"

namespace cs::cuda {

// The frame's input as the conversion read it (its arguments change from
// frame to frame): the conversion writes it to device memory, where the
// pixels' pass, whose own arguments stay fixed inside the frame's graph,
// reads it.
struct ModelInput {
  FrameView in[2];
  ImageView<const RemapPoint> map[2];  // stage 0's maps, or none
  bool words = false;  // 4-byte pixels on 4-byte aligned rows
  bool quads = false;  // ... on 16-byte aligned rows
};

// The model of both views (stages.h stage 3). The conversion tests and
// updates each cell's model (stereo_math.h background_pixel on
// cell_colour) and writes the cells' results; the pixels' pass then labels,
// tests and updates each pixel and writes its raw result as bits, a 32-bit
// word for 32 pixels of a row: bit b of word j of row y is pixel (32 j + b,
// y), set for foreground; pixels outside the image are 0.
struct ModelViews {
  ImageView<BackgroundPixel> model[2];
  ImageView<uint32_t> raw[2];  // ceil(w / 32) x h
  // The cells (kBackgroundCell square), ceil(w / 4) x ceil(h / 4): their
  // model, this frame's test (1 foreground), and 1 where the cells labelled
  // the cell's pixels background on the frame before, after the warm-up
  // (their runs are 0: a pixel of such a cell needs no read off its turn);
  // settled must be 0 when the buffers are made.
  ImageView<BackgroundPixel> cells[2];
  ImageView<uint8_t> cell_fg[2];
  ImageView<uint8_t> settled[2];
  // Two bytes for each block of the pixels' pass (kModelBlockCells x
  // kModelBlockCellRows cells; model_blocks_x x model_blocks_y of them):
  //  - work: nonzero where the block has work on the next pass besides its
  //    turn. The conversion sets it where a cell within one cell of the
  //    block tests foreground, the pass where a cell of the block is not
  //    settled (its raw bits and runs to be cleared). A block with none, off
  //    its turn, after the warm-up, leaves after its first loads: its raw
  //    words are 0 and stay so;
  //  - raw_any: nonzero where the block's raw words hold a foreground bit
  //    (written by the pass; MaskViews::raw_any).
  // Any value will do when the buffers are made (the warm-up passes every
  // block).
  ImageView<uint8_t> work[2];
  ImageView<uint8_t> raw_any[2];
  ModelInput* input = nullptr;       // device: written by the conversion
  unsigned* pixel_tests = nullptr;   // device, [2]: += pixels given their own test after the warm-up; or null
  // Frames the model has seen before this one; read on the device so that a
  // captured graph replays correctly frame after frame (the mask pass adds one).
  int* frames_seen = nullptr;
  BackgroundParams params{};
};

// The pixels' pass's block: kModelBlockCells cells across, kModelBlockCellRows
// down (a thread a cell's row of pixels).
constexpr int kModelBlockCells = 32;
constexpr int kModelBlockCellRows = 2;
inline int model_blocks_x(int width) {
  return ((width + kBackgroundCell - 1) / kBackgroundCell + kModelBlockCells - 1) / kModelBlockCells;
}
inline int model_blocks_y(int height) {
  return ((height + kBackgroundCell - 1) / kBackgroundCell + kModelBlockCellRows - 1) / kModelBlockCellRows;
}

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
  // Optional (ModelViews::raw_any): a byte a block of the pixels' pass,
  // nonzero where its raw words may hold foreground. A region that is not
  // dirty, and where no block under it or its apron is marked, reads no raw
  // word. Empty: every region reads its raw words.
  ImageView<const uint8_t> raw_any[2];
  int* frames_seen = nullptr;            // += 1 (saturating), by one thread
  unsigned long long* matched = nullptr;  // [l] += left foreground pixels of level l
  unsigned long long* right_foreground = nullptr;  // += right foreground pixels of level 0
  // Optional: with choice.on (a captured graph's SWITCH), the launch's last
  // block sets the condition from *matched (level 0) and *right_foreground
  // (frame_switch.h frame_body), which then must be given.
  FrameSwitch choice;
};

// The pixels' pass of a frame whose conversion (convert.h) ran the cells'
// test with `model`: every pixel of both views labelled by its cells, tested
// where they disagree, updated, and its raw bit written. format and remap:
// the conversion's input format and whether it read through maps; views:
// 2, or 1 (the left view's alone, as enqueue_convert converts it).
cudaError_t enqueue_model_pixels(const ModelViews& model, int width, int height, PixelFormat format, bool remap,
                                 cudaStream_t stream, int views = 2);

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
