// The work of a frame with the background model (stages.h stage 3): which
// tiles of each of a method's grids hold foreground, as lists made on the
// GPU from the masks' occupancy (background.h), so that the method's kernels
// run over those tiles alone. Blocks of a launch beyond its list's length
// return at once; the list kernel also sets the condition of a captured
// graph's SWITCH node (graph_condition.h): no census tile at any level skips
// the method's work altogether, a small foreground takes the configurations
// for a few tiles, both views' masks mostly foreground (stages.h
// matches_whole_frame) the whole grid without masks or lists.
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
  // Whether the plan's condition counts this grid's tiles (TilePlan).
  bool decides = false;
  // The SWITCH body that reads this list (kFewTiles or kManyTiles), or -1:
  // every body. Where the plan sets the condition, a list of one body is
  // made only on frames that take that body (the foreground's size, known
  // before the launch, chooses), and stays empty on the others.
  int body = -1;
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
  unsigned* done = nullptr;  // the launch's blocks done; zero before the launch
  // Set by the launch's last block, when set_condition (a handle of the
  // graph being captured): kNoTiles where the grids that decide listed no
  // tile, else kAllForeground where *foreground and *right_foreground (the
  // full-size left and right masks' foreground pixels) are both whole_from
  // or more, else kFewTiles where *foreground is below few_below, else
  // kManyTiles. A frame that takes kAllForeground lists no tile of any
  // grid (that body reads no list).
  cudaGraphConditionalHandle condition = 0;
  bool set_condition = false;
  const unsigned long long* foreground = nullptr;
  const unsigned long long* right_foreground = nullptr;
  unsigned long long few_below = 0;
  unsigned long long whole_from = ~0ull;
};

// Adds a grid to the plan; false when it is full.
bool add_tile_grid(TilePlan* plan, const TileGrid& grid);

// The values the plan's condition takes (a SWITCH of three bodies).
constexpr unsigned kFewTiles = 0;       // a small foreground: the body for few tiles
constexpr unsigned kManyTiles = 1;      // the body for the whole grid
constexpr unsigned kAllForeground = 2;  // mostly foreground: the body without the masks
constexpr unsigned kNoTiles = 3;        // no foreground: no body

// Every grid's list in one launch.
cudaError_t enqueue_foreground_tiles(const TilePlan& plan, cudaStream_t stream);

}  // namespace cs::cuda
