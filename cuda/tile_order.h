// The order in which a refinement launch's blocks take its tiles (matching.h
// MatchScratch::schedule): longest first, from the times the tiles took in
// the previous launch of the same level.
//
// A refined level's tiles cost very different times on real content: a tile
// across a depth edge or a textureless area needs several times the
// disparities of its neighbours. Blocks start in grid order, so a slow tile
// that starts in the last wave leaves most of the GPU idle while it ends
// (Nsight Compute on the H100, Aloe: 20 to 28 us of idle SM time in every
// refinement launch, bench/RESULTS.md). Video is coherent from frame to
// frame, so last frame's times are a good guess at this frame's.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cs::cuda {

// Device buffers of one refined level; all null: grid order, no times kept.
// capacity: the entries of costs and order (at least the grid's blocks,
// matching.h refine_tile_capacity); counts[0] the blocks of the last launch (written by
// it), counts[1] the entries of order (0: none yet, grid order). Zeroed
// before the first launch.
struct TileSchedule {
  uint32_t* costs = nullptr;  // per tile: the cycles its block took in the last launch
  uint32_t* order = nullptr;  // order[i]: the tile (linear: x, then y, then view) block i takes
  unsigned* counts = nullptr;
  unsigned capacity = 0;
  __host__ __device__ bool on() const { return costs && order && counts && capacity > 0; }
};

// The next launch's order from the last launch's times: the tiles sorted by
// time, longest first (ties in any order), a permutation of 0 .. n - 1 for the
// n tiles that launch had; none (grid order) when it had none or more than
// capacity. One block; runs beside the frame's earlier stages.
cudaError_t enqueue_tile_order(const TileSchedule& schedule, cudaStream_t stream);

}  // namespace cs::cuda
