// The work of a frame with the background model (stages.h stage 3): which
// tiles of each of a method's grids hold foreground, as lists made on the
// GPU from the masks' occupancy (background.h), so that the method's kernels
// run over those tiles alone. Blocks of a launch beyond its list's length
// return at once. In a captured graph the lists are made inside the SWITCH
// bodies that read them (frame_switch.h: the mask pass chooses the body).
#pragma once

#include <cuda_runtime.h>

#include "background.h"

namespace cs::cuda {

// A list of tiles of one grid: indices y * tiles_x + x, *count of them.
// All null: every tile of the grid (no list).
struct TileList {
  const unsigned* list = nullptr;
  const unsigned* count = nullptr;
  __host__ __device__ bool on() const { return list != nullptr; }
};

// One grid of a level to list: tiles of tile_w x tile_h pixels of the level
// from (0, 0), tiles_x x tiles_y of them; a tile is listed where a pixel of
// the tile or of its apron (pixels around it, clamped to the level) is
// foreground in the left view's mask, or in either view's with either_view.
// The test reads the occupancy (background.h), so a listed tile may hold no
// foreground (a cell of kOccupancyCell pixels is listed whole); a tile
// that holds some is always listed.
struct TileGrid {
  int level = 0;
  int tile_w = 0, tile_h = 0;
  int tiles_x = 0, tiles_y = 0;
  int apron = 0;
  bool either_view = false;
  unsigned* list = nullptr;   // tiles_x * tiles_y entries
  unsigned* count = nullptr;  // zero before the launch
  TileList view() const { return {list, count}; }
};

// The grid of tile_w x tile_h tiles over a level of lw x lh pixels, listed
// into list (its counter count).
inline TileGrid tile_grid(int level, int lw, int lh, int tile_w, int tile_h, unsigned* list,
                          unsigned* count) {
  TileGrid g;
  g.level = level;
  g.tile_w = tile_w;
  g.tile_h = tile_h;
  g.tiles_x = (lw + tile_w - 1) / tile_w;
  g.tiles_y = (lh + tile_h - 1) / tile_h;
  g.list = list;
  g.count = count;
  return g;
}

constexpr int kMaxTileGrids = 3 * kMaxLevels;

struct TilePlan {
  int width = 0, height = 0;  // level 0
  int levels = 1;
  ImageView<const uint8_t> occupancy[kOccupancyLevels][2];
  TileGrid grids[kMaxTileGrids];
  int grid_count = 0;
  // Optional: the full-size left and right masks' foreground pixels; where
  // both are 0 (a still scene) every block leaves at once.
  const unsigned long long* foreground = nullptr;
  const unsigned long long* right_foreground = nullptr;
};

// Adds a grid to the plan; false when it is full.
bool add_tile_grid(TilePlan* plan, const TileGrid& grid);

// Every grid's list in one launch.
cudaError_t enqueue_foreground_tiles(const TilePlan& plan, cudaStream_t stream);

}  // namespace cs::cuda
