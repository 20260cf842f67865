#include "foreground_tiles.h"

#include "cuda_util.h"

namespace cs::cuda {
namespace {

constexpr int kThreads = 256;

struct Launch {
  TilePlan plan;
  unsigned first[kMaxTileGrids + 1];  // grid g's tiles are threads [first[g], first[g + 1])
};

// Whether tile (x, y) of grid g counts (TileGrid): a warp reads the
// occupancy cells under the tile and its apron, a lane a cell at a time.
// Every lane of the warp calls it and gets the answer.
__device__ bool tile_holds_foreground(const TilePlan& p, const TileGrid& g, int x, int y) {
  const int l = g.level;
  const int lw = p.width >> l, lh = p.height >> l;
  const int x0 = max(x * g.tile_w - g.apron, 0), x1 = min((x + 1) * g.tile_w + g.apron, lw);
  const int y0 = max(y * g.tile_h - g.apron, 0), y1 = min((y + 1) * g.tile_h + g.apron, lh);
  if (x0 >= x1 || y0 >= y1) return false;
  // The occupancy level read, and its cell's side in pixels of level l.
  const int k = min(l, kOccupancyLevels - 1);
  const int cell = (kOccupancyCell << k) >> l;
  const ImageView<const uint8_t>& left = p.occupancy[k][0];
  const ImageView<const uint8_t>& right = p.occupancy[k][1];
  const int cx0 = x0 / cell, cy0 = y0 / cell;
  const int nx = (x1 - 1) / cell - cx0 + 1, n = nx * ((y1 - 1) / cell - cy0 + 1);
  bool any = false;
  for (int i = static_cast<int>(threadIdx.x & 31); i < n && !any; i += 32) {
    const int cy = cy0 + i / nx, cx = cx0 + i % nx;
    any = drow(left, cy)[cx] || (g.either_view && drow(right, cy)[cx]);
  }
  return __any_sync(0xFFFFFFFFu, any);
}

// A warp a tile of the plan's grids, one after the other. The block's
// listed tiles take their places in a grid's list with one atomic a grid
// (its warps' tiles are consecutive, so of one grid or two): an atomic a
// tile on one counter took 16 us at 1080p with the whole frame foreground.
constexpr int kWarps = kThreads / 32;
__global__ void __launch_bounds__(kThreads) tiles_kernel(const __grid_constant__ Launch launch) {
  const TilePlan& p = launch.plan;
  // No foreground in either view (a still scene): no tile at any level
  // holds any, so every block leaves at once.
  if (p.foreground && p.right_foreground && *p.foreground == 0 && *p.right_foreground == 0) return;
  const unsigned t = (blockIdx.x * kThreads + threadIdx.x) / 32;  // the warp's tile
  const int warp = threadIdx.x / 32;
  __shared__ int s_grid[kWarps];       // the warp's grid, -1 where it lists nothing
  __shared__ unsigned s_slot[kWarps];  // its place in that grid's list
  const bool in_grid = t < launch.first[p.grid_count];
  int g = 0;
  unsigned i = 0;
  bool listed = false;
  if (in_grid) {
    while (g + 1 < p.grid_count && t >= launch.first[g + 1]) ++g;
    const TileGrid& grid = p.grids[g];
    i = t - launch.first[g];
    listed = tile_holds_foreground(p, grid, static_cast<int>(i % grid.tiles_x), static_cast<int>(i / grid.tiles_x));
  }
  if ((threadIdx.x & 31) == 0) s_grid[warp] = listed ? g : -1;
  __syncthreads();
  if (warp == 0) {
    // Lane w < kWarps speaks for warp w: one atomic where the listed warps
    // share a grid (nearly always), else one a warp.
    const int lane = threadIdx.x & 31;
    const int gw = lane < kWarps ? s_grid[lane] : -1;
    const unsigned hit = __ballot_sync(0xFFFFFFFFu, gw >= 0);
    if (hit) {
      const int g0 = __shfl_sync(0xFFFFFFFFu, gw, __ffs(hit) - 1);
      if (__all_sync(0xFFFFFFFFu, gw < 0 || gw == g0)) {
        unsigned base = 0;
        if (lane == 0) base = atomicAdd(p.grids[g0].count, static_cast<unsigned>(__popc(hit)));
        base = __shfl_sync(0xFFFFFFFFu, base, 0);
        if (gw >= 0) s_slot[lane] = base + __popc(hit & ((1u << lane) - 1u));
      } else if (gw >= 0) {
        s_slot[lane] = atomicAdd(p.grids[gw].count, 1u);
      }
    }
  }
  __syncthreads();
  if (listed && (threadIdx.x & 31) == 0) p.grids[g].list[s_slot[warp]] = i;
}

}  // namespace

bool add_tile_grid(TilePlan* plan, const TileGrid& grid) {
  if (plan->grid_count >= kMaxTileGrids) return false;
  plan->grids[plan->grid_count++] = grid;
  return true;
}

cudaError_t enqueue_foreground_tiles(const TilePlan& plan, cudaStream_t stream) {
  if (plan.grid_count < 1 || plan.levels < 1 || plan.levels > kMaxLevels) return cudaErrorInvalidValue;
  Launch launch;
  launch.plan = plan;
  unsigned total = 0;
  for (int g = 0; g < plan.grid_count; ++g) {
    const TileGrid& grid = plan.grids[g];
    if (grid.level < 0 || grid.level >= plan.levels || grid.tile_w < 1 || grid.tile_h < 1 || grid.tiles_x < 1 ||
        grid.tiles_y < 1 || !grid.list || !grid.count)
      return cudaErrorInvalidValue;
    launch.first[g] = total;
    total += static_cast<unsigned>(grid.tiles_x) * static_cast<unsigned>(grid.tiles_y);
  }
  launch.first[plan.grid_count] = total;
  const unsigned blocks = (total * 32 + kThreads - 1) / kThreads;
  tiles_kernel<<<blocks, kThreads, 0, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace cs::cuda
