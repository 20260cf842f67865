// What the radius-2 matching kernels (match_stream.cu, match_refine.cu,
// match_wide.cu) and their host side (match_plan.cpp, matching.cpp) share:
// the tile geometry, the launch arguments and the shared-memory sizes the
// launches ask for. Host and device code; no kernel here.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "matching.h"
#include "stereo_math.h"

namespace cs::cuda {

// Whether a launch tracks the rival (MatchConfig::rival).
inline bool tracks_rival(const MatchViews& v, const MatchParams& p) {
  return p.uniqueness_ratio > 0 || v.best_cost.data != nullptr;
}

// The radius-2 kernels (streaming::).
//
// The fast path for sub-window radius 2 and the Box, Best1 and Best2
// windows. A block owns a tile of kTileW x kTileH reference pixels (or
// another height, tile_rows). It first
// works out which disparities some pixel of the tile needs (each pixel's
// candidate interval, widened by one on each side where the sub-pixel step
// wants C(d - 1) and C(d + 1)), then each warp takes pairs of those
// disparities and streams down the tile's rows once per pair:
//  - a lane holds two columns of the 64-column region (tile plus the 7-pixel
//    window margin on each side) and the two disparities as 16-bit halves of
//    one register (pixel costs <= 24, sums <= 600, window costs <= 1800);
//  - vertical 5-sums run in registers (add the entering row, subtract the
//    one that left, kept in a 5-deep ring), horizontal 5-sums come from
//    neighbouring lanes by shuffles: no shared memory and no barrier per row;
//  - the window cost needs sub-window sums 5 rows above and below: each row's
//    best-k of its three sums is kept for 5 rows, merged with the next row's
//    side sums (the partial window), and 5 rows later with the bottom row's.
// A pixel's result is the atomic minimum of (cost << 16 | d) over its
// admissible disparities, which is the specification's winner (smallest
// cost, ties to the smaller d) whatever the order the warps run in.
// stream_match_kernel (match_stream.cu) matches the coarsest level, where every
// pixel needs the whole range. Below it phased::refine_kernel (match_refine.cu)
// shares the tiles, the needed set and the pixel-cost streaming, but keeps
// sub-window sums in shared memory and forms windows per pixel. Refined
// pixels whose interval is wide (holes next to outliers) would make every
// disparity of the span a pass over the tile: the block streams them over
// their rows only, or lists them for wide_kernel (match_wide.cu), which matches them one
// block each over the whole GPU.
//
// Uniqueness and the confidence's costs need each pixel's rival, the least
// cost more than one disparity away from its final winner (stages.h,
// SweepCosts). The kernels take it in forms of their own (template
// kRival; the plain forms stay as they were):
//  - refine_kernel's phase 2 and match_kernel meet a pixel's candidates in
//    ascending order and keep SweepWinner's state (rival, the least cost two
//    or more back, and whether the last was admissible) beside the winner;
//  - wide_kernel keeps the costs of the whole interval and, the winner
//    known, takes the least admissible one two or more away;
//  - stream_match_kernel meets a pixel's disparities in no order (warps,
//    slices, the shared cost volume), where the rival of the final winner
//    cannot be kept with atomics on one word: the coarsest level's rival
//    form is refine_kernel over the full range (Args::full_range), each
//    view its own tiles.
namespace streaming {


constexpr int kMargin = 7;  // s + r for r = 2: region columns/rows around the tile
constexpr int kRegionW = 64;
constexpr int kTileW = kRegionW - 2 * kMargin;
constexpr int kTileH = 32;
constexpr int kTallTileH = 48;    // the coarsest level's alternatives (tile_rows)
constexpr int kMiddleTileH = 40;
// The coarsest level's low tiles, for grids that leave block slots empty
// (160x120 x 64, the coarsest level of 640x480 x 256, makes 128 blocks of
// 32 rows): forms without cost slots only. The grid's cost model takes them
// only where they add no wave.
constexpr int kLowTileH = 24;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kCostSlots = 12;   // costs kept per pixel for the sub-pixel step at the coarsest
                                 // level (a second round evaluates winners beyond them)
constexpr int kWideWidth = 24;   // a pixel with a wider evaluation interval is wide (listed or streamed apart)
// A pixel's evaluation interval is its candidates (5 from a valid parent, at
// most hole_span for a hole: refinement_interval) and, with sub-pixel, one
// disparity on each side.
static_assert(kMaxNarrowHoleSpan + 2 == kWideWidth && 5 + 2 <= kWideWidth, "matching.h kMaxNarrowHoleSpan");
// A tile's wide pixels go to the level's list for wide_kernel, which
// spreads them over the whole GPU, when the list has room for all of them;
// else (or without a list) the tile's block streams them itself, over the
// rows they occupy, for the union of their candidates: a tile streamed in
// place finishes long after the others. Measured on the H100
// (bench/RESULTS.md): listing every wide pixel beats every per-tile rule
// that streamed some tiles in place (1024x768x512 1.30 ms against 1.6-2.0,
// 1024x768x256 0.320 against 0.329-0.367), unless wide pixels are
// everywhere: the list's room is its budget (progressive_method.cu).
constexpr int kMaxSlices = 16;
// Blocks a tile's `pairs` pairs are split over at full range, kWarps /
// segments pairs a block at a time (Args::slices).
__host__ __device__ inline int full_range_slices(int pairs, int segments) {
  return clampi((pairs + kWarps / segments - 1) / (kWarps / segments), 1, kMaxSlices);
}
// Columns of a block's shared right-view keys for runs of `pairs` pairs;
// runs of more than kMaxSharedRightPairs (a single level's whole range, which
// cannot be split) offer theirs to the level's keys directly.
constexpr int kMaxSharedRightPairs = 32;
__host__ __device__ constexpr int right_key_columns(int pairs) {
  return pairs <= kMaxSharedRightPairs ? kTileW + 2 * pairs : 0;
}
// stream_match_kernel's launch bounds: 2 blocks an SM (about 115 registers
// a thread), or the register-capped form without cost slots, 3 (80),
// chosen where the grid's cost model says it costs less.
constexpr int kStreamBlocksPerSm = 2;
constexpr int kDenseStreamBlocksPerSm = 3;
constexpr unsigned kNoKey = 0xFFFFFFFFu;
constexpr unsigned kNoRoom = 0xFFFFFFFFu;
constexpr unsigned kNoCandidates = 0xFFFFFFFFu;  // lo = hi = 0xFFFF: nothing admissible
constexpr uint16_t kNoSlots = 0xFFFF;
constexpr unsigned kFull = 0xFFFFFFFFu;

enum PixelState : uint8_t { kMatched = 0, kWide = 1, kOutside = 2 };

struct Args {
  MatchViews v[2];
  bool left[2];
  bool subpixel[2];
  Range range;
  int hole_radius;
  int hole_span;
  int slices;      // blocks per tile (full range only; 1 otherwise)
  // The level's wide pixels for wide_kernel, two words an entry: view << 31 |
  // y << 16 | x, and the pixel's candidates lo | hi << 16. Null: each block
  // matches its own.
  uint32_t* wide_list;
  unsigned* wide_count;  // [0] entries, [1] blocks of wide_kernel done
  unsigned wide_capacity;
  int mask_words;  // needed-disparity bitmask words
  int list_cap;    // needed-disparity list entries
  // The coarsest level with both views: only the left view's tiles run, and
  // every admissible window they evaluate is also the right view's at the
  // matched pixel (stages.h: one cost volume), offered to these per-pixel
  // keys (cost << 16 | d); resolve_keys_kernel turns them into the right
  // map. Null: each view matches its own tiles.
  ImageView<uint32_t> right_keys;
  int segments;  // full range: warps that stream one pair, each over a share of the tile's rows
  int pairs_per_slice;  // slices > 1: the run of a tile's pairs each block takes; else the range's pairs
  int uniqueness_ratio;  // MatchParams::uniqueness_ratio (the rival forms of the kernels)
  // The rival forms of phased::refine_kernel at the coarsest level: every
  // pixel's candidates are the range (no coarser map), none is wide.
  bool full_range;
  // Refinement: which tile each block takes, and where it records its time
  // (tile_order.h); off: grid order.
  TileSchedule schedule;
  // The background model's foreground tiles (foreground_tiles.h), one view:
  // block i takes tile list[i] (y * tiles_x + x of the grid), blocks beyond
  // the list return at once. Off: every tile (grid order or the schedule).
  TileList tiles;
};

// right_columns: the shared right-view keys' row width (right_key_columns),
// 0 without them.
inline size_t dynamic_bytes(bool slots, int rows, int mask_words, int list_cap, int right_columns) {
  const size_t slot_bytes = slots ? static_cast<size_t>(kTileW) * rows * kCostSlots * sizeof(uint16_t) : 0;
  // Cost slots, needed set, list, right keys.
  return slot_bytes + static_cast<size_t>(mask_words) * 4 + ((list_cap * 2 + 3) & ~3) +
         static_cast<size_t>(rows) * right_columns * sizeof(uint32_t);
}

// The shared right keys' width of a launch's Args (0: none).
inline int right_columns_of(const Args& a) { return a.right_keys.data ? right_key_columns(a.pairs_per_slice) : 0; }

inline bool applies(const MatchParams& p) { return p.radius == 2 && (p.best == 0 || p.best == 1 || p.best == 2); }

// Tiles of kLowTileH rows: the most a full-range grid has (tiles_done counters).
inline int tile_count(int width, int height) {
  return ((width + kTileW - 1) / kTileW) * ((height + kLowTileH - 1) / kLowTileH);
}

// The two-phase refinement kernel's tiles (match_refine.cu).
namespace phased {

constexpr int kChunkPairs = 4;  // S planes held at once
// The tile rows that need each group of 1 << kSpanShift disparities (a bit
// per row; tiles have at most 32 rows): a pair's plane is streamed only over
// the rows its pixels read.
// Groups of 4: on the H100 (2026-11-26) groups of 2 were 0 to 3 % faster up
// to D = 256 but 2.4 and 5.7 % slower at 1080p and 4K x 512 (the row masks'
// shared memory grows with the range), groups of 1 up to 1 % slower at 1080p
// and 4K x 256 (bench/RESULTS.md).
constexpr int kSpanShift = 2;
// The row group of disparity d of a level searching from lo, and the groups
// a list of list_cap disparities can touch (the kernel's s_rows words).
__host__ __device__ constexpr int span_group(int d, int lo) { return (d - lo) >> kSpanShift; }
__host__ __device__ constexpr int span_groups(int list_cap) { return (list_cap + (1 << kSpanShift) - 1) >> kSpanShift; }
static_assert(kTileH <= 32, "a row mask per disparity group");
constexpr uint32_t kFirstBelow = 0x8000u;     // s_info: the evaluation interval starts at lo - 1
constexpr uint32_t kEndAbove = 0x80000000u;   // s_info: it ends at hi + 1
constexpr int kBlocksPerSm = 3;
// The register-capped form of the plain kernel (launch bounds for 4 blocks:
// 64 registers a thread, against about 80): where shared memory lets an SM
// hold 4 blocks of a tile height it hides more latency (choose() takes it
// where it makes the grid cheaper).
constexpr int kDenseBlocksPerSm = 4;
constexpr int kMiddleTileH = 28;  // the alternative tile heights (tile_rows)
constexpr int kShortTileH = 24;
// Low tiles for grids that leave most of the GPU's block slots empty (a
// level of a small frame: 320x240 makes 140 blocks of 24 rows, one an SM):
// a block's time is the level's time there, and 16 rows stream 30 row steps
// a pass against 38, over two thirds of the pixels. The grid's cost model
// takes them only where they add no wave.
constexpr int kLowTileH = 16;
// Tiny tiles, plain form only, for grids of less than one wave even with
// low tiles (a level of a small frame: 640x480 makes 390 blocks of 16 rows
// on the H100's 396 slots, 780 of 8): such a grid costs its slowest tile,
// which is shorter, and pays for the 22 row steps a pass streams for 8
// rows. Offered only there (choose): where the 16-row grid has more than a
// wave they lost (bench/RESULTS.md, ninth, thirteenth and fourteenth
// sessions).
constexpr int kTinyTileH = 8;
// S planes held at once by the plain form of the low tiles: 8 planes of
// 16 rows fit the shared memory of the 3 blocks an SM its registers allow
// (on the H100), so each pair's plane is streamed by one warp over all its
// rows (no second warp streaming the window margins again) and a tile's
// union takes half the chunks and barriers. On the H100 (Aloe, against 4
// planes): 640x480 x 64 / 256 / 512 5 to 7 % faster, 1024x768 x 64 4 %
// (bench/RESULTS.md). Where the 8 planes cost the form a block an SM (a
// smaller GPU), the grid's cost sees it (blocks_per_sm from these bytes).
constexpr int kLowChunkPairs = 8;
__host__ __device__ constexpr int chunk_pairs(int rows, bool dense) {
  return (rows == kLowTileH || rows == kTinyTileH) && !dense ? kLowChunkPairs : kChunkPairs;
}

// Words of one S plane for tiles of kRows rows: 5 S rows above and below the
// tile's output rows.
__host__ __device__ constexpr int plane_words(int rows) { return (rows + 10) * kRegionW; }

// Planes (chunk_pairs of them for the form: dense, the register-capped one),
// both needed sets, the list and, with the rival, its state.
inline size_t dynamic_bytes(int rows, int mask_words, int list_cap, bool rival, bool dense) {
  return static_cast<size_t>(chunk_pairs(rows, dense)) * plane_words(rows) * sizeof(uint32_t) +
         static_cast<size_t>(mask_words) * 8 +
         ((list_cap * 2 + 3) & ~3) + (rival ? static_cast<size_t>(kTileW) * rows * sizeof(uint32_t) : 0) +
         static_cast<size_t>(span_groups(list_cap)) * sizeof(uint32_t);
}

}  // namespace phased

// The wide kernel (match_wide.cu): threads a block, window side, staged
// columns, and the blocks an SM its grid takes.
constexpr int kWideThreads = 128;
constexpr int kWideSpan = 15;                                // window side
constexpr int kWideColumns = kWideSpan + kWideThreads - 1;   // other-view columns of one pass
constexpr int kWideBlocksPerSm = 4;  // the wide kernel's grid: up to 4 blocks an SM (bench/RESULTS.md, H100)

inline size_t wide_dynamic_bytes(int range_width) { return static_cast<size_t>(range_width + 2) * sizeof(uint16_t); }

// resolve_keys_kernel's block (match_wide.cu).
constexpr int kResolveX = 64, kResolveY = 4;

}  // namespace streaming
}  // namespace cs::cuda
