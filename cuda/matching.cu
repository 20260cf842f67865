#include "matching.h"

#include <algorithm>
#include <climits>
#include <initializer_list>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// The coarser level's span for the pixels of parent (px, py) (stages.h,
// stage 7, refinement_interval): [2 dc - 2, 2 dc + 3) for a valid parent;
// for a hole [2 dmin - 2, 2 dmax + 3) over the valid ones within hole_radius,
// at most hole_span wide; false when there are none.
// The coarser map's value at (x, y): -1 where the coarser level's mask (the
// background model) says background, whatever the map holds there (the
// engine writes a level's maps around its foreground alone: stages.h stage 3).
__device__ __forceinline__ int coarser_value(const MatchViews& v, int x, int y) {
  const int d = drow(v.coarser, y)[x];
  return v.coarser_mask.data && drow(v.coarser_mask, y)[x] == 0 ? -1 : d;
}

__device__ bool parent_span(const MatchViews& v, int hole_radius, int hole_span, int px, int py, int* a, int* b) {
  const int wc = v.coarser.width, hc = v.coarser.height;
  const int dc = coarser_value(v, px, py);
  int dmin = dc, dmax = dc;
  if (dc < 0) {
    dmin = INT_MAX;
    dmax = -1;
    for (int yy = maxi(py - hole_radius, 0); yy <= mini(py + hole_radius, hc - 1); ++yy) {
      const int16_t* row = drow(v.coarser, yy);
      const uint8_t* mrow = v.coarser_mask.data ? drow(v.coarser_mask, yy) : nullptr;
      for (int xx = maxi(px - hole_radius, 0); xx <= mini(px + hole_radius, wc - 1); ++xx) {
        const int dd = mrow && mrow[xx] == 0 ? -1 : row[xx];
        if (dd >= 0) {
          dmin = mini(dmin, dd);
          dmax = maxi(dmax, dd);
        }
      }
    }
  }
  refinement_interval(dmin, dmax, dc < 0, hole_span, a, b);
  return dmax >= 0;
}

// Candidates [a, b) clipped to non-negative disparities whose matched pixel
// lies in the image; false when none is left.
__device__ __forceinline__ bool admissible_span(bool left, int width, int x, int a, int b, int* lo, int* hi) {
  *lo = maxi(a, 0);
  *hi = mini(b, left ? x + 1 : width - x);
  return *lo < *hi;
}

// Candidate interval [lo, hi) of reference pixel (x, y) (stages.h, stages 6
// and 7, with the matched pixel inside the image); false when it has none.
__device__ bool candidates(const MatchViews& v, bool left, Range range, int hole_radius, int hole_span, int x, int y,
                           int* lo, int* hi) {
  if (v.mask_ref.data && drow(v.mask_ref, y)[x] == 0) return false;
  int a = range.lo, b = range.hi;
  if (v.coarser.data) {
    int pa, pb;
    if (!parent_span(v, hole_radius, hole_span, mini(x / 2, v.coarser.width - 1), mini(y / 2, v.coarser.height - 1),
                     &pa, &pb))
      return false;
    a = maxi(a, pa);
    b = mini(b, pb);
  }
  return admissible_span(left, v.census_ref.width, x, a, b, lo, hi);
}

// The disparities whose costs pixel x evaluates for its candidates [lo, hi):
// with sub-pixel (left reference only) also lo - 1 and hi, where they are in
// the range and the image, for finish_disparity's C(d - 1) and C(d + 1).
__device__ __forceinline__ void evaluation_interval(int lo, int hi, int x, Range range, bool subpixel, int* first,
                                                    int* end) {
  *first = lo;
  *end = hi;
  if (subpixel) {
    *first = maxi(lo - 1, range.lo);
    *end = mini(mini(hi + 1, range.hi), x + 1);
  }
}

// ---------------------------------------------------------------- tile kernel (any radius and window)
//
// A block matches a kTileX x kTileY tile; each thread owns kRowsPerThread
// pixels of one column. Window costs depend only on (x, y, d), so the block
// evaluates every d of its pixels' candidate union in ascending order: each
// pixel then sees its own candidates in ascending order and keeps the first
// strict minimum, which is the specification's tie rule.
constexpr int kTileX = 32;
constexpr int kTileY = 16;
constexpr int kThreadsY = 8;
constexpr int kRowsPerThread = kTileY / kThreadsY;
constexpr int kThreads = kTileX * kThreadsY;

struct Geometry {
  int s;      // sub-window side 2r + 1 = distance between sub-window centres
  int halo;   // s + r: cost pixels needed around the tile
  int cw, ch; // cost region
  int sw, sh; // sub-window-sum region (tile grown by s)
};

__host__ __device__ inline Geometry geometry(int r) {
  Geometry g;
  g.s = 2 * r + 1;
  g.halo = g.s + r;
  g.cw = kTileX + 2 * g.halo;
  g.ch = kTileY + 2 * g.halo;
  g.sw = kTileX + 2 * g.s;
  g.sh = kTileY + 2 * g.s;
  return g;
}

__host__ __device__ inline size_t shared_ints(int r) {
  const Geometry g = geometry(r);
  return static_cast<size_t>(g.cw) * g.ch * 2 + static_cast<size_t>(g.cw) * g.sh + static_cast<size_t>(g.sw) * g.sh;
}

// The value of stereo_math.h adaptive_window_cost (centre plus the kBest
// smallest of the 8 around it: a sum that does not depend on how the values
// are selected), with compile-time indices only, so that the 8 values stay in
// registers; the helper's run-time swap index puts its array in local memory
// (32-byte stack frame per thread), which cost about half the matching time.
// The pipeline tests of every window variant compare against the helper.
template <int kBest>
__device__ __forceinline__ int window_cost_in_registers(int centre, const int (&around)[8]) {
  int v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = around[i];
  int sum = centre;
#pragma unroll
  for (int k = 0; k < kBest; ++k) {
#pragma unroll
    for (int i = k + 1; i < 8; ++i) {
      const int a = v[k], b = v[i];
      v[k] = b < a ? b : a;
      v[i] = b < a ? a : b;
    }
    sum += v[k];
  }
  return sum;
}

// The rival of a pixel's sweep (stages.h SweepCosts, SweepWinner in
// stereo_math.h), tracked as SweepWinner does it for a pixel that meets its
// candidates in ascending order: `before` is the least admissible cost two
// or more disparities back, which a new winner takes as its rival. Costs
// of the radius-2 kernels stay below 2^11; kNoRival16 stands for none in
// their 16-bit state.
constexpr uint32_t kNoRival16 = 0xFFFFu;

__device__ __forceinline__ int32_t rival_or_none(uint32_t rival16) {
  return rival16 == kNoRival16 ? kNoCost : static_cast<int32_t>(rival16);
}

// The sweep's costs of a pixel (optional outputs), then uniqueness: the
// disparity a pixel keeps.
__device__ __forceinline__ int finish_sweep(const MatchViews& v, int x, int y, int d, int32_t best, int32_t rival,
                                            int uniqueness_ratio) {
  if (d < 0) best = rival = kNoCost;
  if (v.best_cost.data) {
    drow(v.best_cost, y)[x] = best;
    drow(v.rival_cost, y)[x] = rival;
  }
  return d >= 0 && !passes_uniqueness(best, rival, uniqueness_ratio) ? -1 : d;
}

template <int kBest, bool kLeft, bool kRival>
__global__ void __launch_bounds__(kThreads) match_kernel(MatchViews v, MatchParams p) {
  extern __shared__ int smem[];
  __shared__ int union_lo, union_hi;
  const Geometry g = geometry(p.radius);
  uint32_t* census_tile = reinterpret_cast<uint32_t*>(smem);
  int* cost = smem + g.cw * g.ch;
  int* vsum = cost + g.cw * g.ch;
  int* wsum = vsum + g.cw * g.sh;

  const int width = v.census_ref.width, height = v.census_ref.height;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  const int x = x0 + threadIdx.x;
  const bool with_masks = v.mask_ref.data != nullptr;
  const bool want_subpixel = v.subpixel_offset.data != nullptr;

  if (tid == 0) {
    union_lo = INT_MAX;
    union_hi = INT_MIN;
  }
  // The reference census of the cost region: columns clamped to the image,
  // zero in rows outside it.
  for (int i = tid; i < g.cw * g.ch; i += kThreads) {
    const int gx = x0 - g.halo + i % g.cw, gy = y0 - g.halo + i / g.cw;
    census_tile[i] = (gy >= 0 && gy < height) ? drow(v.census_ref, gy)[clampi(gx, 0, width - 1)] : 0u;
  }
  __syncthreads();

  // Each pixel's candidate interval [lo, hi) and, with sub-pixel, the wider
  // interval [lo - 1, hi + 1) whose costs are evaluated.
  int lo[kRowsPerThread], hi[kRowsPerThread];
  int best_cost[kRowsPerThread], best_d[kRowsPerThread];
  int prev_cost[kRowsPerThread], cm[kRowsPerThread], c0[kRowsPerThread], cp[kRowsPerThread];
  int rival[kRowsPerThread], before[kRowsPerThread];  // kRival
  bool prev_admissible[kRowsPerThread];
  const int eval_pad = want_subpixel ? 1 : 0;
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    lo[k] = 0;
    hi[k] = 0;
    best_cost[k] = INT_MAX;
    best_d[k] = -1;
    prev_cost[k] = cm[k] = c0[k] = cp[k] = 0;
    rival[k] = before[k] = kNoCost;
    prev_admissible[k] = false;
    if (x >= width || y >= height) continue;
    int a, b;
    if (!candidates(v, kLeft, p.range, p.hole_radius, p.hole_span, x, y, &a, &b)) continue;
    lo[k] = a;
    hi[k] = b;
    atomicMin(&union_lo, a - eval_pad);
    atomicMax(&union_hi, b + eval_pad);
  }
  __syncthreads();
  const int d_first = union_lo, d_end = union_hi;

  int around[8];
  for (int d = d_first; d < d_end; ++d) {
    // Pixel costs of the region; outside pixels add 0.
    for (int i = tid; i < g.cw * g.ch; i += kThreads) {
      const int cx = i % g.cw, cy = i / g.cw;
      const int gx = x0 - g.halo + cx, gy = y0 - g.halo + cy;
      int c = 0;
      if (gy >= 0 && gy < height) {  // columns repeat the edge, rows outside add 0 (stages.h)
        const int ox = clampi(kLeft ? gx - d : gx + d, 0, width - 1);
        c = census_cost(census_tile[i], __ldg(drow(v.census_other, gy) + ox));
      }
      cost[i] = c;
    }
    __syncthreads();
    // Vertical sums over 2r + 1 rows, then horizontal: sub-window sums S.
    for (int i = tid; i < g.cw * g.sh; i += kThreads) {
      const int cx = i % g.cw, sy = i / g.cw;
      const int* col = cost + sy * g.cw + cx;
      int sum = 0;
      for (int j = 0; j < g.s; ++j) sum += col[j * g.cw];
      vsum[i] = sum;
    }
    __syncthreads();
    for (int i = tid; i < g.sw * g.sh; i += kThreads) {
      const int sx = i % g.sw, sy = i / g.sw;
      const int* row = vsum + sy * g.cw + sx;
      int sum = 0;
      for (int j = 0; j < g.s; ++j) sum += row[j];
      wsum[i] = sum;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      if (d < lo[k] - eval_pad || d >= hi[k] + eval_pad) continue;
      const int ty = threadIdx.y + k * kThreadsY;
      const int* centre = wsum + (ty + g.s) * g.sw + threadIdx.x + g.s;
      around[0] = centre[-g.s * g.sw - g.s];
      around[1] = centre[-g.s * g.sw];
      around[2] = centre[-g.s * g.sw + g.s];
      around[3] = centre[-g.s];
      around[4] = centre[g.s];
      around[5] = centre[g.s * g.sw - g.s];
      around[6] = centre[g.s * g.sw];
      around[7] = centre[g.s * g.sw + g.s];
      const int c = window_cost_in_registers<kBest>(centre[0], around);
      bool admissible = d >= lo[k] && d < hi[k];
      if (admissible && with_masks) admissible = drow(v.mask_other, y0 + ty)[kLeft ? x - d : x + d] != 0;
      if (admissible && c < best_cost[k]) {
        best_cost[k] = c;
        best_d[k] = d;
        cm[k] = prev_cost[k];
        c0[k] = c;
        if (kRival) rival[k] = before[k];
      } else if (best_d[k] >= 0 && best_d[k] == d - 1) {
        cp[k] = c;
      } else if (kRival && admissible && c < rival[k]) {
        rival[k] = c;
      }
      if (kRival) {
        if (prev_admissible[k] && prev_cost[k] < before[k]) before[k] = prev_cost[k];
        prev_admissible[k] = admissible;
      }
      prev_cost[k] = c;
    }
  }

#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    if (x >= width || y >= height) continue;
    int d = best_d[k];
    if (d >= 0 && v.offered_keys.data)
      atomicMin(drow(v.offered_keys, y) + (kLeft ? x - d : x + d),
                static_cast<uint32_t>(best_cost[k]) << 16 | static_cast<uint32_t>(d));
    if (kRival) d = finish_sweep(v, x, y, d, best_cost[k], rival[k], p.uniqueness_ratio);
    drow(v.disparity, y)[x] = static_cast<int16_t>(d);
    if (want_subpixel) {
      int offset = 0;
      if (subpixel_neighbours_in_range(d, x, p.range.lo, p.range.hi))
        offset = subpixel_offset_q4(cm[k], c0[k], cp[k]);
      // d = 0 cannot take an offset (d - 1 >= range.lo >= 0 fails), so
      // d * 16 + offset >= 16 - 8 > 0 for every valid pixel with one.
      drow(v.subpixel_offset, y)[x] = static_cast<int8_t>(offset);
    }
  }
}

// Whether a launch tracks the rival (MatchConfig::rival).
bool tracks_rival(const MatchViews& v, const MatchParams& p) {
  return p.uniqueness_ratio > 0 || v.best_cost.data != nullptr;
}

template <int kBest, bool kRival>
void launch_generic(const MatchViews& v, const MatchParams& p, cudaStream_t stream) {
  const dim3 block(kTileX, kThreadsY);
  const dim3 grid((v.census_ref.width + kTileX - 1) / kTileX, (v.census_ref.height + kTileY - 1) / kTileY);
  const size_t shared = match_shared_bytes(p.radius);
  if (p.reference == Reference::Left)
    match_kernel<kBest, true, kRival><<<grid, block, shared, stream>>>(v, p);
  else
    match_kernel<kBest, false, kRival><<<grid, block, shared, stream>>>(v, p);
}

template <int kBest>
cudaError_t launch(const MatchViews& v, const MatchParams& p, cudaStream_t stream) {
  if (tracks_rival(v, p))
    launch_generic<kBest, true>(v, p, stream);
  else
    launch_generic<kBest, false>(v, p, stream);
  return cudaGetLastError();
}

// The dynamic limit is the opt-in maximum less the kernel's static shared memory.
template <typename Kernel>
cudaError_t raise_one(Kernel kernel, int optin) {
  cudaFuncAttributes attr{};
  cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              optin - static_cast<int>(attr.sharedSizeBytes));
}

template <int kBest>
cudaError_t raise_limit(int optin) {
  for (cudaError_t e : {raise_one(match_kernel<kBest, true, false>, optin),
                        raise_one(match_kernel<kBest, false, false>, optin),
                        raise_one(match_kernel<kBest, true, true>, optin),
                        raise_one(match_kernel<kBest, false, true>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

// ---------------------------------------------------------------- streaming kernel (r = 2)
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
// This kernel (stream_match_kernel) matches the coarsest level, where every
// pixel needs the whole range. Below it phased::refine_kernel (further down)
// shares the tiles, the needed set and the pixel-cost streaming, but keeps
// sub-window sums in shared memory and forms windows per pixel. Refined
// pixels whose interval is wide (holes next to outliers) would make every
// disparity of the span a pass over the tile: the block streams them over
// their rows only, or lists them for wide_kernel, which matches them one
// block each over the whole GPU.
//
// Uniqueness and the confidence's costs need each pixel's rival, the least
// cost more than one disparity away from its final winner (stages.h,
// SweepCosts). The kernels above take it in forms of their own (template
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
// everywhere: the list's room is its budget (cuda_engine.cu).
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

// The tile (x, y) of a block of a launch over tiles_x x tiles_y tiles of one
// view (stream_match_kernel's and refine_kernel's), or false for a block
// beyond the list of foreground tiles.
__device__ __forceinline__ bool listed_tile(const TileList& tiles, unsigned block, unsigned tiles_x,
                                            unsigned* tile_x, unsigned* tile_y) {
  if (!tiles.on()) return true;
  if (block >= *tiles.count) return false;
  const unsigned t = tiles.list[block];
  *tile_x = t % tiles_x;
  *tile_y = t / tiles_x;
  return true;
}

__device__ __forceinline__ uint32_t vmin(uint32_t a, uint32_t b) { return __vminu2(a, b); }
__device__ __forceinline__ uint32_t vmax(uint32_t a, uint32_t b) { return __vmaxu2(a, b); }
__device__ __forceinline__ uint32_t vmin3(uint32_t a, uint32_t b, uint32_t c) { return __vimin3_u16x2(a, b, c); }

// The window of one column for one row step: S is this row's sub-window sum,
// sm and sp those 5 columns to the left and right. Returns the window cost of
// the row 5 above (two disparities in 16-bit halves).
template <int kBest>
struct ColumnWindow;

template <>
struct ColumnWindow<0> {
  uint32_t centre[5] = {0, 0, 0, 0, 0};
  // k: the row step modulo 5, a constant once the caller's loop is unrolled.
  __device__ __forceinline__ uint32_t step(int k, uint32_t sm, uint32_t s, uint32_t sp) {
    const uint32_t out = centre[k];
    centre[k] = s;
    return out;
  }
};

template <>
struct ColumnWindow<1> {
  uint32_t best_row[5] = {0, 0, 0, 0, 0};  // min of a row's three sums
  uint32_t partial[5] = {0, 0, 0, 0, 0};   // min over the row above and this row's sides
  uint32_t centre[5] = {0, 0, 0, 0, 0};
  __device__ __forceinline__ uint32_t step(int k, uint32_t sm, uint32_t s, uint32_t sp) {
    const uint32_t row = vmin3(sm, s, sp);
    const uint32_t part = vmin3(best_row[k], sm, sp);
    const uint32_t out = centre[k] + vmin(partial[k], row);
    best_row[k] = row;
    partial[k] = part;
    centre[k] = s;
    return out;
  }
};

template <>
struct ColumnWindow<2> {
  // Two smallest (first <= second) of a row's three sums, and of the partial
  // window (the row above plus this row's two sides).
  uint32_t row1[5] = {0, 0, 0, 0, 0}, row2[5] = {0, 0, 0, 0, 0};
  uint32_t part1[5] = {0, 0, 0, 0, 0}, part2[5] = {0, 0, 0, 0, 0};
  uint32_t centre[5] = {0, 0, 0, 0, 0};
  __device__ __forceinline__ uint32_t step(int k, uint32_t sm, uint32_t s, uint32_t sp) {
    const uint32_t side1 = vmin(sm, sp), side2 = vmax(sm, sp);
    const uint32_t r1 = vmin(side1, s), r2 = vmin(vmax(side1, s), side2);
    // The second smallest of two sorted pairs is min(max(firsts), seconds).
    const uint32_t p1 = vmin(row1[k], side1), p2 = vmin3(vmax(row1[k], side1), row2[k], side2);
    const uint32_t out = centre[k] + vmin(part1[k], r1) + vmin3(vmax(part1[k], r1), part2[k], r2);
    row1[k] = r1;
    row2[k] = r2;
    part1[k] = p1;
    part2[k] = p2;
    centre[k] = s;
    return out;
  }
};

// The window cost at (x, y, d) straight from the definition (stages.h
// window_cost), the warp's lanes over the 15 x 15 pixels (every lane gets
// the result).
template <int kBest>
__device__ int window_cost_by_warp(const MatchViews& v, int sign, int x, int y, int d) {
  const int w = v.census_ref.width, h = v.census_ref.height;
  const int lane = threadIdx.x & 31;
  int sums[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int p = lane + 32 * k;
    if (p >= 225) break;
    const int j = p / 15, i = p - j * 15;
    const int xx = x + i - 7, yy = y + j - 7;
    int c = 0;
    if (yy >= 0 && yy < h)  // columns repeat the edge, rows outside add 0 (stages.h)
      c = census_cost(__ldg(drow(v.census_ref, yy) + clampi(xx, 0, w - 1)),
                      __ldg(drow(v.census_other, yy) + clampi(xx + sign * d, 0, w - 1)));
    const int sub = (j / 5) * 3 + i / 5;
#pragma unroll
    for (int s = 0; s < 9; ++s) sums[s] += sub == s ? c : 0;
  }
#pragma unroll
  for (int s = 0; s < 9; ++s) sums[s] = warp_sum(sums[s]);
  const int around[8] = {sums[0], sums[1], sums[2], sums[3], sums[5], sums[6], sums[7], sums[8]};
  return window_cost_in_registers<kBest>(sums[4], around);
}

// Sets the bits of [first, end) (disparities less `base`) in the block's
// needed set; every lane of the warp calls it, one atomic per word and warp.
__device__ void mark_needed(unsigned* needed, int first, int end, int base) {
  const bool any = first < end;
  const int word_lo = warp_min(any ? (first - base) >> 5 : INT_MAX);
  const int word_hi = warp_max(any ? (end - 1 - base) >> 5 : -1);
  for (int word = word_lo; word <= word_hi; ++word) {
    unsigned bits = 0;
    if (any) {
      const int b0 = maxi(first - base - 32 * word, 0), b1 = mini(end - base - 32 * word, 32);
      if (b0 < b1) bits = (b1 == 32 ? kFull : (1u << b1) - 1u) & ~((1u << b0) - 1u);
    }
    bits = warp_or(bits);
    if ((threadIdx.x & 31) == 0 && bits) atomicOr(&needed[word], bits);
  }
}

// The needed set as an ascending list (one warp).
__device__ void list_needed(const unsigned* needed, int mask_words, int base, uint16_t* list, int* list_count) {
  const int lane = threadIdx.x & 31;
  int count = 0;
  for (int w0 = 0; w0 < mask_words; w0 += 32) {
    const int word = w0 + lane;
    unsigned bits = word < mask_words ? needed[word] : 0u;
    const int c = __popc(bits);
    const int incl = static_cast<int>(warp_inclusive_sum(static_cast<unsigned>(c)));
    int pos = count + incl - c;
    while (bits) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1;
      list[pos++] = static_cast<uint16_t>(base + 32 * word + b);
    }
    count += __shfl_sync(kFull, incl, 31);
  }
  if (lane == 0) *list_count = count;
}

// A lane's two region columns (2 lane and 2 lane + 1, image columns gxa and
// gxb) for disparities d0 and d1: where their census words are read, columns
// clamped to the image in both views (stages.h: beyond the edge, the edge
// repeats). Rows are clamped by the caller, and rows outside add nothing.
struct LaneColumns {
  unsigned ra, rb, oa0, oa1, ob0, ob1;
};

__device__ __forceinline__ LaneColumns lane_columns(int width, int x0, int sign, int d0, int d1) {
  LaneColumns c;
  const int gxa = x0 - kMargin + 2 * static_cast<int>(threadIdx.x & 31), gxb = gxa + 1;
  c.ra = clampi(gxa, 0, width - 1);
  c.rb = clampi(gxb, 0, width - 1);
  c.oa0 = clampi(gxa + sign * d0, 0, width - 1);
  c.oa1 = clampi(gxa + sign * d1, 0, width - 1);
  c.ob0 = clampi(gxb + sign * d0, 0, width - 1);
  c.ob1 = clampi(gxb + sign * d1, 0, width - 1);
  return c;
}

// The six census words of a lane's columns in image row y (inside the
// image); unsigned row offsets and columns keep each address one wide
// multiply-add.
struct RowWords {
  uint32_t ra, rb, oa0, oa1, ob0, ob1;
};

__device__ __forceinline__ RowWords row_words(const MatchViews& v, const LaneColumns& c, int y) {
  const unsigned yy = static_cast<unsigned>(y);
  const uint32_t* ref = reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(v.census_ref.data) +
                                                          yy * static_cast<unsigned>(v.census_ref.pitch));
  const uint32_t* other = reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(v.census_other.data) +
                                                            yy * static_cast<unsigned>(v.census_other.pitch));
  return {__ldg(ref + c.ra),    __ldg(ref + c.rb),    __ldg(other + c.oa0),
          __ldg(other + c.oa1), __ldg(other + c.ob0), __ldg(other + c.ob1)};
}

// The same six words where no column of the warp needs clamping (the
// common case: tiles away from the image's sides): each lane keeps pointers
// to its first column in row 0 of the reference view and of the other view
// at d0 and d1, its second column being the next word, so that a row costs
// three wide multiply-adds and six loads at fixed offsets, against about 30
// instructions of 64-bit address arithmetic for the clamped columns above
// (Nsight Compute on the refine kernel, 640x480 x 128 Aloe, H100: the loads'
// addresses were over half of the phase-1 instructions).
struct DirectColumns {
  const uint32_t *ref, *other0, *other1;
};

// Whether every lane's columns (the reference's and the other view's at d0
// and d1) lie inside the image; then *c is the direct form. Warp-uniform.
__device__ __forceinline__ bool direct_columns(const MatchViews& v, int x0, int sign, int d0, int d1,
                                               DirectColumns* c) {
  const int width = v.census_ref.width;
  const int gxa = x0 - kMargin + 2 * static_cast<int>(threadIdx.x & 31);
  const int o0 = gxa + sign * d0, o1 = gxa + sign * d1;
  const bool inside = gxa >= 0 && gxa + 1 < width && o0 >= 0 && o0 + 1 < width && o1 >= 0 && o1 + 1 < width;
  if (!__all_sync(kFull, inside)) return false;
  c->ref = v.census_ref.data + gxa;
  c->other0 = v.census_other.data + o0;
  c->other1 = v.census_other.data + o1;
  return true;
}

// Calls pass(columns) with the direct columns where every lane's apply
// (warp-uniform), else with the clamped ones: both streaming passes read
// their census words through it.
template <typename Pass>
__device__ __forceinline__ void with_columns(const MatchViews& v, int x0, int sign, int d0, int d1, Pass&& pass) {
  DirectColumns direct;
  if (direct_columns(v, x0, sign, d0, d1, &direct))
    pass(direct);
  else
    pass(lane_columns(v.census_ref.width, x0, sign, d0, d1));
}

__device__ __forceinline__ const uint32_t* row_of(const uint32_t* p, int y, std::ptrdiff_t pitch) {
  return reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(p) +
                                           static_cast<uint64_t>(static_cast<unsigned>(y)) *
                                               static_cast<unsigned>(pitch));
}

__device__ __forceinline__ RowWords row_words(const MatchViews& v, const DirectColumns& c, int y) {
  const uint32_t* ref = row_of(c.ref, y, v.census_ref.pitch);
  const uint32_t* o0 = row_of(c.other0, y, v.census_other.pitch);
  const uint32_t* o1 = row_of(c.other1, y, v.census_other.pitch);
  return {__ldg(ref), __ldg(ref + 1), __ldg(o0), __ldg(o1), __ldg(o0 + 1), __ldg(o1 + 1)};
}

// A row's pixel costs as four bytes (a d0, b d0, a d1, b d1), zero for a
// row outside the image (!row_in). Masked with an AND rather than selected:
// with the select, level-0 refinement took 141 against 131 us at 1024x768 x
// 256 on the H100 (same instructions, other scheduling).
__device__ __forceinline__ uint32_t row_costs(const RowWords& w, bool row_in) {
  const uint32_t a0 = __popc(w.ra ^ w.oa0), a1 = __popc(w.ra ^ w.oa1);
  const uint32_t b0 = __popc(w.rb ^ w.ob0), b1 = __popc(w.rb ^ w.ob1);
  return (a0 | b0 << 8 | a1 << 16 | b1 << 24) & (row_in ? 0xFFFFFFFFu : 0u);
}

// Horizontal 5-sums of the vertical sums (four bytes: a d0, b d0, a d1, b
// d1) over columns 2 lane - 2 .. 2 lane + 3, which live in lanes lane - 1 ..
// lane + 1; as 16-bit halves (d0 low, d1 high) for column a (x) and b (y).
__device__ __forceinline__ uint2 horizontal_sums(uint32_t vsum) {
  const uint32_t v_l = __shfl_up_sync(kFull, vsum, 1), v_r = __shfl_down_sync(kFull, vsum, 1);
  const uint32_t middle = __byte_perm(v_l, 0, 0x4341) + __byte_perm(vsum, 0, 0x4240) +
                          __byte_perm(vsum, 0, 0x4341) + __byte_perm(v_r, 0, 0x4240);
  return make_uint2(middle + __byte_perm(v_l, 0, 0x4240), middle + __byte_perm(v_r, 0, 0x4341));
}

// The right view's share of one row of a left-reference pass (d0, d1):
// column x's admissible key at d goes to right pixel x - d (the admissible
// pairs of the two views are the same ones at full range). A lane holds
// columns xa = x0 - kMargin + 2 lane and xa + 1; with d1 = d0 + 1 right
// pixel xa - d0 takes (xa, d0) and (xa + 1, d1) from this lane, right pixel
// xa + 1 - d0 takes (xa + 1, d0) and (xa + 2, d1) from the next, so each
// right pixel gets one atomic a row. Every lane calls it.
// kUntested: the block's shared rows, where a key of all ones (kNoKey) may
// go in as it is: the lanes whose columns lie in the tile (out_a, out_b)
// offer theirs with no test of the keys (the first right pixel's keys come
// from column a or b, the second's from b and the next lane's a, which is in
// the tile exactly where this lane's b is). Otherwise only admissible keys go.
template <bool kUntested>
__device__ __forceinline__ void offer_right(uint32_t* row, int xa, int d0, int d1, uint32_t ka0, uint32_t ka1,
                                            uint32_t kb0, uint32_t kb1, bool out_a = true, bool out_b = true) {
  auto offer = [&](int x, uint32_t key, bool lane_in) {
    if (kUntested ? lane_in : key != kNoKey) atomicMin(row + x, key);
  };
  if (d1 == d0 + 1) {
    const uint32_t next_a1 = __shfl_down_sync(kFull, ka1, 1);
    offer(xa - d0, min(ka0, kb1), out_a || out_b);
    offer(xa + 1 - d0, min(kb0, (threadIdx.x & 31) < 31 ? next_a1 : kNoKey), out_b);
    return;
  }
  offer(xa - d0, ka0, out_a);
  offer(xa + 1 - d0, kb0, out_b);
  if (d1 == d0) return;
  offer(xa - d1, ka1, out_a);
  offer(xa + 1 - d1, kb1, out_b);
}

// The right view's keys a block gathers before they go to the level's
// (see the end of stream_match_kernel): rows of `width` words, word i of row
// o for right pixel (base + i, y0 + o). Null rows and level: no right view.
struct RightKeys {
  uint32_t* rows;
  int width;
  int base;
  ImageView<uint32_t> level;  // without shared rows: the level's keys, offered directly
};

// One pass of one warp over tile rows [row_begin, row_end) for disparities
// d0 and d1 (d1 may repeat d0). kMasks: the other view has a foreground mask
// (background mode). right: the block's right-view keys, offered every
// admissible window (left reference only), or none.
// kSpanOnly: every pixel's candidates are the range clipped to the image (no
// masks, no second round), so admissibility is worked out here rather than
// read from s_info.
// Columns: where the lane reads its census words (LaneColumns or DirectColumns).
template <int kBest, bool kWithSlots, bool kMasks, bool kSpanOnly, typename Columns>
__device__ __forceinline__ void stream_pair_from(const MatchViews& v, const Columns& c, int sign, int x0, int y0,
                                                 int row_begin, int row_end, int d0, int d1, const uint32_t* s_info,
                                                 uint32_t* s_keys, const uint16_t* s_base, uint16_t* s_slots,
                                                 bool slots, const RightKeys& right) {
  const int height = v.census_ref.height;
  const int width = v.census_ref.width;
  const int lane = threadIdx.x & 31;
  // Pixel costs travel as four bytes (column a, column b for d0; a, b for
  // d1), as do the vertical sums (<= 120): one register for all four.
  const bool out_a = lane >= 4 && lane <= 28;  // region column 2 lane in [7, 57)
  const bool out_b = lane >= 3 && lane <= 27;  // region column 2 lane + 1 in [7, 57)

  uint32_t vsum = 0;
  uint32_t ring[5] = {0, 0, 0, 0, 0};
  ColumnWindow<kBest> win_a, win_b;

  const int gxa = x0 - kMargin + 2 * lane;
  // kSpanOnly: a column's candidates are [range.lo, its image bound) and d0,
  // d1 come from the range, so whether a column admits them holds for the
  // whole pass: a key is then its cost << 16 or'd with the disparity, or with
  // all ones (kNoKey) where not admitted (and in lanes outside the tile).
  uint32_t dkey[4] = {kNoKey, kNoKey, kNoKey, kNoKey};  // a d0, a d1, b d0, b d1
  if constexpr (kSpanOnly) {
    const int bound_a = sign < 0 ? gxa + 1 : width - gxa;  // first inadmissible d of column a
    const int bound_b = sign < 0 ? gxa + 2 : width - gxa - 1;
    const bool in_a = out_a && gxa < width, in_b = out_b && gxa + 1 < width;
    if (in_a && d0 < bound_a) dkey[0] = static_cast<uint32_t>(d0);
    if (in_a && d1 < bound_a) dkey[1] = static_cast<uint32_t>(d1);
    if (in_b && d0 < bound_b) dkey[2] = static_cast<uint32_t>(d0);
    if (in_b && d1 < bound_b) dkey[3] = static_cast<uint32_t>(d1);
  }
  // Otherwise emit() gives the window costs of one output pixel (region
  // column col, tile row o) from its candidates in s_info; k0 and k1 get the
  // admissible keys (kNoKey where not).
  auto emit = [&](uint32_t costs, int o, int col, uint32_t& k0, uint32_t& k1) {
    const uint32_t info = s_info[o * kRegionW + col];
    const uint32_t lo = info & 0xFFFFu, span = (info >> 16) - lo;
    const uint32_t c0 = costs & 0xFFFFu, c1 = costs >> 16;
    bool ok0 = static_cast<uint32_t>(d0) - lo < span;
    bool ok1 = static_cast<uint32_t>(d1) - lo < span;
    if (kMasks) {
      const uint8_t* mrow = drow(v.mask_other, y0 + o) + x0 - kMargin + col;
      ok0 = ok0 && mrow[sign * d0] != 0;
      ok1 = ok1 && mrow[sign * d1] != 0;
    }
    k0 = ok0 ? (c0 << 16 | static_cast<uint32_t>(d0)) : kNoKey;
    k1 = ok1 ? (c1 << 16 | static_cast<uint32_t>(d1)) : kNoKey;
    const uint32_t key = min(k0, k1);
    if (key != kNoKey) atomicMin(&s_keys[o * kRegionW + col], key);
    if (kWithSlots && slots) {
      const int p = o * kTileW + col - kMargin;
      const uint32_t base = s_base[p];
      if (static_cast<uint32_t>(d0) - base < kCostSlots) s_slots[p * kCostSlots + d0 - base] = static_cast<uint16_t>(c0);
      if (static_cast<uint32_t>(d1) - base < kCostSlots) s_slots[p * kCostSlots + d1 - base] = static_cast<uint16_t>(c1);
    }
  };

  // Step i reads image row y0 + row_begin - kMargin + i (rows outside the
  // image read the nearest one and add nothing).
  const int steps = row_end - row_begin + 2 * kMargin;
  const int top = y0 + row_begin - kMargin;
  auto step = [&](int k, int i, const RowWords& words) {
    const int gy = top + i;
    const uint32_t costs = row_costs(words, gy >= 0 && gy < height);
    // Vertical 5-sums centred on region row i - 2 (no byte ever borrows:
    // each stays >= the cost leaving it).
    vsum = vsum + costs - ring[k];
    ring[k] = costs;
    const uint2 h = horizontal_sums(vsum);
    const uint32_t sa = h.x, sb = h.y;
    // Side sub-windows 5 columns away: column 2 lane - 5 is lane - 3's b, and so on.
    const uint32_t sa_m = __shfl_up_sync(kFull, sb, 3), sa_p = __shfl_down_sync(kFull, sb, 2);
    const uint32_t sb_m = __shfl_up_sync(kFull, sa, 2), sb_p = __shfl_down_sync(kFull, sa, 3);
    const uint32_t wa = win_a.step(k, sa_m, sa, sa_p);
    const uint32_t wb = win_b.step(k, sb_m, sb, sb_p);
    // wa, wb are the windows of tile row row_begin + i - 14.
    const int o = row_begin + i - 2 * kMargin;
    if (o >= row_begin) {
      uint32_t ka0 = kNoKey, ka1 = kNoKey, kb0 = kNoKey, kb1 = kNoKey;
      if constexpr (kSpanOnly) {
        ka0 = wa << 16 | dkey[0];
        ka1 = (wa & 0xFFFF0000u) | dkey[1];
        kb0 = wb << 16 | dkey[2];
        kb1 = (wb & 0xFFFF0000u) | dkey[3];
        // A key of all ones changes nothing: no test before the atomics.
        if (out_a) atomicMin(&s_keys[o * kRegionW + 2 * lane], min(ka0, ka1));
        if (out_b) atomicMin(&s_keys[o * kRegionW + 2 * lane + 1], min(kb0, kb1));
        if (right.rows)
          offer_right<true>(right.rows + o * right.width - right.base, gxa, d0, d1, ka0, ka1, kb0, kb1, out_a, out_b);
        else if (right.level.data)
          offer_right<false>(drow(right.level, y0 + o), gxa, d0, d1, ka0, ka1, kb0, kb1);
      } else {
        if (out_a) emit(wa, o, 2 * lane, ka0, ka1);
        if (out_b) emit(wb, o, 2 * lane + 1, kb0, kb1);
        if (right.rows)
          offer_right<false>(right.rows + o * right.width - right.base, gxa, d0, d1, ka0, ka1, kb0, kb1);
        else if (right.level.data)
          offer_right<false>(drow(right.level, y0 + o), gxa, d0, d1, ka0, ka1, kb0, kb1);
      }
    }
  };
  auto load = [&](int i) { return row_words(v, c, clampi(top + i, 0, height - 1)); };
  // Whole blocks of 5 steps as straight-line code, so that the compiler can
  // move a step's loads ahead of the steps before it (branches between the
  // steps kept each step waiting on its own loads: 50.5 against 43.8 us at
  // 1024x768 x 256 on the H100); then the rest, step by step.
  int i0 = 0;
  for (; i0 + 5 <= steps; i0 += 5) {
#pragma unroll
    for (int k = 0; k < 5; ++k) step(k, i0 + k, load(i0 + k));
  }
  for (; i0 < steps; i0 += 5) {
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      if (i0 + k >= steps) break;
      step(k, i0 + k, load(i0 + k));
    }
  }
}

// One pass (stream_pair_from) with the direct columns where they apply.
template <int kBest, bool kWithSlots, bool kMasks, bool kSpanOnly>
__device__ __forceinline__ void stream_pair(const MatchViews& v, int sign, int x0, int y0, int row_begin,
                                            int row_end, int d0, int d1, const uint32_t* s_info, uint32_t* s_keys,
                                            const uint16_t* s_base, uint16_t* s_slots, bool slots,
                                            const RightKeys& right) {
  with_columns(v, x0, sign, d0, d1, [&](const auto& columns) {
    stream_pair_from<kBest, kWithSlots, kMasks, kSpanOnly>(v, columns, sign, x0, y0, row_begin, row_end, d0, d1,
                                                           s_info, s_keys, s_base, s_slots, slots, right);
  });
}

// The template forms of stream_pair behind one run-time choice: without
// masks and cost slots a pixel's candidates are the range clipped to the
// image (kSpanOnly).
template <int kBest, bool kWithSlots>
__device__ __forceinline__ void stream_pair_any(const MatchViews& v, int sign, int x0, int y0, int row_begin,
                                                int row_end, int d0, int d1, const uint32_t* s_info,
                                                uint32_t* s_keys, const uint16_t* s_base, uint16_t* s_slots,
                                                bool slots, const RightKeys& right) {
  if (v.mask_other.data)
    stream_pair<kBest, kWithSlots, true, false>(v, sign, x0, y0, row_begin, row_end, d0, d1, s_info, s_keys, s_base,
                                                s_slots, slots, right);
  else if (kWithSlots || v.mask_ref.data)
    stream_pair<kBest, kWithSlots, false, false>(v, sign, x0, y0, row_begin, row_end, d0, d1, s_info, s_keys, s_base,
                                                 s_slots, slots, right);
  else
    stream_pair<kBest, kWithSlots, false, true>(v, sign, x0, y0, row_begin, row_end, d0, d1, s_info, s_keys, s_base,
                                                s_slots, slots, right);
}

// A pixel's winner (its key, best cost << 16 | d, before uniqueness; kNoKey
// for none) offered to the other view's pixel it matches, where the launch
// makes the other view's map (MatchViews::offered_keys).
__device__ __forceinline__ void offer_winner(const MatchViews& v, int gx, int gy, int sign, uint32_t key) {
  if (v.offered_keys.data && key != kNoKey) atomicMin(drow(v.offered_keys, gy) + gx + sign * key_disparity(key), key);
}

// One warp writes a wide pixel's result from its key (best cost << 16 | d)
// and, with sub-pixel, the offset from its neighbours' costs computed here.
// kRival: rival16 is the pixel's rival (kNoRival16: none); the sweep's
// costs go out and uniqueness applies.
template <int kBest, bool kRival>
__device__ void write_wide_result(const MatchViews& v, int sign, bool want_subpixel, Range range, int gx, int gy,
                                  uint32_t key, uint32_t rival16, int uniqueness_ratio) {
  int best = key_disparity(key);
  if (kRival && (threadIdx.x & 31) == 0)
    best = finish_sweep(v, gx, gy, best, static_cast<int32_t>(key >> 16), rival_or_none(rival16), uniqueness_ratio);
  if (kRival) best = __shfl_sync(kFull, best, 0);
  int offset = 0;
  if (want_subpixel && subpixel_neighbours_in_range(best, gx, range.lo, range.hi)) {
    const int cm = window_cost_by_warp<kBest>(v, sign, gx, gy, best - 1);
    const int cp = window_cost_by_warp<kBest>(v, sign, gx, gy, best + 1);
    offset = subpixel_offset_q4(cm, static_cast<int>(key >> 16), cp);
  }
  if ((threadIdx.x & 31) == 0) {
    drow(v.disparity, gy)[gx] = static_cast<int16_t>(best);
    if (want_subpixel) drow(v.subpixel_offset, gy)[gx] = static_cast<int8_t>(offset);
    offer_winner(v, gx, gy, sign, key);
  }
}

// The coarsest level: every pixel searches the whole range (clipped to the
// image), so the tile's union is its pixels' own intervals and the streaming
// passes waste little. The range's pairs may be split over `slices` blocks
// per tile, which meet in the level's per-pixel keys.
template <int kBest, bool kWithSlots, int kRows, int kMinBlocks = kStreamBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocks) stream_match_kernel(const __grid_constant__ Args a) {
  constexpr int kTilePixels = kTileW * kRows;
  __shared__ uint32_t s_info[kRows * kRegionW];  // per output pixel: lo | hi << 16
  __shared__ uint32_t s_keys[kRows * kRegionW];  // per output pixel: best cost << 16 | d
  __shared__ uint16_t s_base[kTilePixels];           // first disparity of the pixel's cost slots
  __shared__ uint8_t s_state[kTilePixels];
  __shared__ int s_count, s_flag;
  extern __shared__ __align__(16) unsigned char dyn[];

  unsigned tile_x = blockIdx.x, tile_y = blockIdx.y;
  if (!listed_tile(a.tiles, blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, &tile_x, &tile_y)) return;
  const int view = blockIdx.z / a.slices;
  const int slice = blockIdx.z - view * a.slices;
  const MatchViews& v = a.v[view];
  const bool left = a.left[view];
  const int sign = left ? -1 : 1;
  const bool want_subpixel = kWithSlots && a.subpixel[view];
  const int slices = a.slices;
  const int width = v.census_ref.width, height = v.census_ref.height;
  const int x0 = tile_x * kTileW, y0 = tile_y * kRows;
  const int rows = mini(kRows, height - y0);
  const int tid = threadIdx.x, warp = tid >> 5;
  const Range range = a.range;

  const size_t slot_bytes = kWithSlots ? static_cast<size_t>(kTilePixels) * kCostSlots * sizeof(uint16_t) : 0;
  uint16_t* s_slots = reinterpret_cast<uint16_t*>(dyn);
  unsigned* s_needed = reinterpret_cast<unsigned*>(dyn + slot_bytes);
  uint16_t* s_list = reinterpret_cast<uint16_t*>(s_needed + a.mask_words);
  // The block's pairs: a run of pairs_per_slice of the tile's (slices > 1),
  // all of them otherwise. With the right view, its keys gather in shared
  // rows first: a run's disparities [dlo, dlo + 2 pairs_per_slice) reach
  // right pixels x0 - dlo - 2 pairs_per_slice + 1 .. x0 + kTileW - 1 - dlo.
  RightKeys right{};
  if (a.right_keys.data && right_key_columns(a.pairs_per_slice) > 0) {
    right.rows = reinterpret_cast<uint32_t*>(reinterpret_cast<unsigned char*>(s_list) + ((a.list_cap * 2 + 3) & ~3));
    right.width = right_key_columns(a.pairs_per_slice);
    for (int i = tid; i < rows * right.width; i += kThreads) right.rows[i] = kNoKey;
  } else {
    right.level = a.right_keys;
  }

  if (tid == 0) {
    s_count = 0;
    s_flag = 0;
  }
  __syncthreads();

  // Every pixel's candidates. At full range they all start at the range's
  // first admissible disparity (stages.h stage 6: [lo, hi) clipped to the
  // image; the sub-pixel's lo - 1 is clipped to the range again), so the
  // tile's union of evaluation intervals is one run [range.lo, the largest end).
  constexpr int kRounds = (kTilePixels + kThreads - 1) / kThreads;
  int union_end = 0;
  for (int r = 0; r < kRounds; ++r) {
    const int q = r * kThreads + tid;
    if (q < kTilePixels) {
      const int ty = q / kTileW, tx = q - ty * kTileW;
      const int gx = x0 + tx, gy = y0 + ty;
      uint32_t info = kNoCandidates;
      uint16_t base = kNoSlots;
      uint8_t state = kOutside;
      int lo, hi;
      if (gx < width && gy < height) {
        state = kMatched;
        if (candidates(v, left, range, a.hole_radius, a.hole_span, gx, gy, &lo, &hi)) {
          int first, end;
          evaluation_interval(lo, hi, gx, range, want_subpixel, &first, &end);
          if (want_subpixel) base = static_cast<uint16_t>(first);
          info = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
          union_end = maxi(union_end, end);
        }
      }
      s_info[ty * kRegionW + kMargin + tx] = info;
      s_keys[ty * kRegionW + kMargin + tx] = kNoKey;
      s_base[q] = base;
      s_state[q] = state;
    }
  }
  union_end = warp_max(union_end);
  if ((tid & 31) == 0 && union_end > 0) atomicMax(&s_count, union_end - maxi(range.lo, 0));
  __syncthreads();

  // The first round matches. Sub-pixel keeps costs of the first disparities
  // only: a second round evaluates [d - 1, d + 2) around the winners whose
  // neighbours fell outside the slots.
  const int first_d = maxi(range.lo, 0);
  for (int round = 0; round < 2; ++round) {
    if (round > 0) {
      if (warp == 0) list_needed(s_needed, a.mask_words, range.lo, s_list, &s_count);
      __syncthreads();
    }
    // The block takes kWarps / segments pairs at a time, each streamed by
    // `segments` warps over a share of the tile's rows.
    const int n = s_count, pairs = (n + 1) >> 1;
    const int segments = a.segments, per_pass = kWarps / segments;
    const int seg = warp % segments;
    const int row_begin = rows * seg / segments, row_end = rows * (seg + 1) / segments;
    const int run = slices > 1 ? a.pairs_per_slice : pairs;
    const int run_begin = slices > 1 ? slice * run : 0, run_end = mini(pairs, run_begin + run);
    if (round == 0 && right.rows) right.base = x0 - (first_d + 2 * (run_begin + run)) + 1;
    for (int pi = run_begin + warp / segments; pi < run_end; pi += per_pass) {
      // The first round's run is [first_d, first_d + n); the second's, the list.
      const int d0 = round == 0 ? first_d + 2 * pi : s_list[2 * pi];
      const int d1 = 2 * pi + 1 < n ? (round == 0 ? d0 + 1 : s_list[2 * pi + 1]) : d0;
      if (row_begin < row_end)
        stream_pair_any<kBest, kWithSlots>(v, sign, x0, y0, row_begin, row_end, d0, d1, s_info, s_keys, s_base,
                                           s_slots, want_subpixel, round == 0 ? right : RightKeys{});
    }
    __syncthreads();
    if (!want_subpixel || round == 1) break;

    for (int i = tid; i < a.mask_words; i += kThreads) s_needed[i] = 0;
    __syncthreads();
    for (int r = 0; r < kRounds; ++r) {
      const int q = r * kThreads + tid;
      int first = 0, end = 0;
      if (q < kTilePixels) {
        const int ty = q / kTileW, tx = q - ty * kTileW;
        const int gx = x0 + tx;
        uint32_t& info = s_info[ty * kRegionW + kMargin + tx];
        const uint32_t key = s_keys[ty * kRegionW + kMargin + tx];
        bool again = false;
        if (s_state[q] == kMatched && key != kNoKey) {
          const int d = static_cast<int>(key & 0xFFFFu);
          if (subpixel_neighbours_in_range(d, gx, range.lo, range.hi) && d + 1 - s_base[q] >= kCostSlots) {
            again = true;
            info = static_cast<uint32_t>(d) | static_cast<uint32_t>(d + 1) << 16;
            s_base[q] = static_cast<uint16_t>(d - 1);
            first = d - 1;
            end = d + 2;
          }
        }
        if (!again) info = kNoCandidates;
        if (again) s_flag = 1;
      }
      mark_needed(s_needed, first, end, range.lo);
    }
    __syncthreads();
    if (!s_flag) break;
  }

  // The right view's keys to the level's: one atomic a right pixel and block.
  if (right.rows) {
    for (int i = tid; i < rows * right.width; i += kThreads) {
      const uint32_t key = right.rows[i];
      const int o = i / right.width;
      if (key != kNoKey) atomicMin(&drow(a.right_keys, y0 + o)[right.base + i - o * right.width], key);
    }
  }

  // Results: straight from the block's keys, or through the level's keys when
  // the tile's disparities were split over several blocks.
  const bool split = slices > 1;
  if (split) {
    for (int q = tid; q < kTilePixels; q += kThreads) {
      const int ty = q / kTileW, tx = q - ty * kTileW;
      const uint32_t key = s_keys[ty * kRegionW + kMargin + tx];
      if (s_state[q] == kMatched && key != kNoKey) atomicMin(&drow(v.scratch.best_keys, y0 + ty)[x0 + tx], key);
    }
    __threadfence();
    __syncthreads();
    if (tid == 0) {
      unsigned* done = v.scratch.tiles_done + tile_y * gridDim.x + tile_x;
      const bool last = atomicAdd(done, 1u) == static_cast<unsigned>(slices - 1);
      if (last) *done = 0u;
      s_flag = last ? 2 : 0;
    }
    __syncthreads();
    if (s_flag != 2) return;
    __threadfence();
  }
  for (int q = tid; q < kTilePixels; q += kThreads) {
    if (s_state[q] != kMatched) continue;
    const int ty = q / kTileW, tx = q - ty * kTileW;
    const int gx = x0 + tx, gy = y0 + ty;
    const uint32_t key = split ? atomicExch(&drow(v.scratch.best_keys, gy)[gx], kNoKey)
                               : s_keys[ty * kRegionW + kMargin + tx];
    offer_winner(v, gx, gy, sign, key);
    const int d = key_disparity(key);
    drow(v.disparity, gy)[gx] = static_cast<int16_t>(d);
    if (want_subpixel) {
      int offset = 0;
      if (subpixel_neighbours_in_range(d, gx, range.lo, range.hi)) {
        // The second round put both neighbours in the slots.
        const int slot = q * kCostSlots + d - s_base[q];
        offset = subpixel_offset_q4(s_slots[slot - 1], static_cast<int>(key >> 16), s_slots[slot + 1]);
      }
      drow(v.subpixel_offset, gy)[gx] = static_cast<int8_t>(offset);
    }
  }
}

// ---------------------------------------------------------------- two-phase refinement
//
// Below the coarsest level a pixel needs about 7 disparities, but a tile's
// union of them is two or three times that (slanted surfaces, edges), and
// the streaming kernel above evaluates the whole window of every region
// pixel for every disparity of the union. Here a block works through the
// union a few pairs at a time in two phases:
//  1. the warps stream only the sub-window sums S (5x5 box of pixel costs,
//     two disparities as 16-bit halves) of the pairs into shared planes:
//     pixel costs and 5-sums as in stream_pair, but no window state, so few
//     registers and more blocks per SM;
//  2. each thread takes whole pixels and forms the windows of the pairs the
//     pixel needs from nine plane reads.
// A thread owns its pixels in phase 2 and meets their disparities in
// ascending order, so the winner (first strict minimum) and its sub-pixel
// neighbours are kept as the specification reads, with no atomics.
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

// Phase 1, one warp: S of disparities d0 (low half) and d1 (high half) for
// the plane rows [sb, se) (plane row r is image row y0 - 5 + r; plane column
// c is image column x0 - kMargin + c, valid for c in [2, kRegionW - 2)).
template <typename Columns>
__device__ __forceinline__ void stream_sums_from(const MatchViews& v, const Columns& c, int x0, int y0, int sb, int se,
                                                 uint32_t* plane) {
  const int height = v.census_ref.height;
  const int lane = threadIdx.x & 31;
  // Rows outside the image read the nearest one and add nothing.
  uint32_t vsum = 0;
  uint32_t ring[5] = {0, 0, 0, 0, 0};
  // Image row top + i enters at step i; from step 4 on the vertical sums are
  // centred on plane row sb + i - 4.
  const int steps = se - sb + 4;
  const int top = y0 - kMargin + sb;
  uint2* out = reinterpret_cast<uint2*>(plane + sb * kRegionW) + lane;  // plane row sb + i - 4 at step i
  auto step = [&](int k, int i, bool store) {
    const int gy = top + i;
    const RowWords words = row_words(v, c, clampi(gy, 0, height - 1));
    const uint32_t costs = row_costs(words, gy >= 0 && gy < height);
    vsum = vsum + costs - ring[k];
    ring[k] = costs;
    const uint2 sums = horizontal_sums(vsum);
    if (store) out[(i - 4) * (kRegionW / 2)] = sums;
  };
  // The first 4 steps only fill the vertical sums; then whole blocks of 5
  // steps as straight-line code, each step storing its row, then the rest
  // step by step (as in stream_pair). steps >= 5: the caller's rows are
  // never empty.
#pragma unroll
  for (int k = 0; k < 4; ++k) step(k, k, false);
  int i0 = 4;
  for (; i0 + 5 <= steps; i0 += 5) {
#pragma unroll
    for (int j = 0; j < 5; ++j) step((4 + j) % 5, i0 + j, true);
  }
  for (; i0 < steps; i0 += 5) {
#pragma unroll
    for (int j = 0; j < 5; ++j) {
      if (i0 + j >= steps) break;
      step((4 + j) % 5, i0 + j, true);
    }
  }
}

__device__ __forceinline__ void stream_sums(const MatchViews& v, int sign, int x0, int y0, int sb, int se, int d0,
                                            int d1, uint32_t* plane) {
  with_columns(v, x0, sign, d0, d1,
               [&](const auto& columns) { stream_sums_from(v, columns, x0, y0, sb, se, plane); });
}

// Phase 2: the window costs of tile pixel (tx, ty) for the plane's pair
// (the value of window_cost_in_registers: centre plus the kBest smallest).
template <int kBest>
__device__ __forceinline__ uint32_t window_pair(const uint32_t* plane, int tx, int ty) {
  const uint32_t* c = plane + (ty + 5) * kRegionW + tx + kMargin;
  const uint32_t centre = c[0];
  if (kBest == 0) return centre;
  constexpr int kUp = -5 * kRegionW, kDown = 5 * kRegionW;
  const uint32_t a0 = c[kUp - 5], a1 = c[kUp], a2 = c[kUp + 5], a3 = c[-5];
  const uint32_t a4 = c[5], a5 = c[kDown - 5], a6 = c[kDown], a7 = c[kDown + 5];
  if (kBest == 1) return centre + vmin3(vmin3(a0, a1, a2), vmin3(a3, a4, a5), vmin(a6, a7));
  // Two smallest of eight: sorted pairs, merged twice (the second smallest
  // of sorted pairs x, y is min(max(x1, y1), x2, y2)).
  const uint32_t l0 = vmin(a0, a1), h0 = vmax(a0, a1), l1 = vmin(a2, a3), h1 = vmax(a2, a3);
  const uint32_t l2 = vmin(a4, a5), h2 = vmax(a4, a5), l3 = vmin(a6, a7), h3 = vmax(a6, a7);
  const uint32_t m01 = vmin(l0, l1), s01 = vmin3(vmax(l0, l1), h0, h1);
  const uint32_t m23 = vmin(l2, l3), s23 = vmin3(vmax(l2, l3), h2, h3);
  return centre + vmin(m01, m23) + vmin3(vmax(m01, m23), s01, s23);
}

struct Track {
  uint32_t key;  // best cost << 16 | d, kNoKey while none
  uint32_t cm, cp, prev;
  // kRival (kNoRival16: none): the rival of the current winner, the least
  // admissible cost two or more disparities back, and whether d - 1 (prev)
  // was admissible.
  uint32_t rival, before;
  bool prev_admissible;
};

// s_prev's bit for prev_admissible (costs stay below 2^11).
constexpr uint16_t kPrevAdmissible = 0x8000u;

// One evaluated disparity d (ascending per pixel) with window cost c. The
// rival as SweepWinner::visit keeps it.
template <bool kMasks, bool kTrack, bool kRival>
__device__ __forceinline__ void visit(Track& s, const MatchViews& v, int gx, int gy, int sign, int lo, int hi,
                                      int d, uint32_t c) {
  bool ok = d >= lo && d < hi;
  if (kMasks) ok = ok && drow(v.mask_other, gy)[gx + sign * d] != 0;
  const uint32_t cand = c << 16 | static_cast<uint32_t>(d);
  if (ok && cand < s.key) {
    s.key = cand;
    if (kTrack) s.cm = s.prev;
    if (kRival) s.rival = s.before;
  } else if ((kTrack || kRival) && (s.key & 0xFFFFu) == static_cast<uint32_t>(d - 1)) {
    if (kTrack) s.cp = c;
  } else if (kRival && ok && c < s.rival) {
    s.rival = c;
  }
  if (kRival) {
    if (s.prev_admissible && s.prev < s.before) s.before = s.prev;
    s.prev_admissible = ok;
  }
  if (kTrack || kRival) s.prev = c;
}

// visit() where `e` says whether d is evaluated at all, as selects rather
// than branches (the forms without the rival): an evaluated d updates the
// winner, its neighbours' costs and the last cost exactly as visit() does,
// one that is not changes nothing. Nsight Compute on level 0's refinement
// (1080p x 128 Aloe, H100): the branching form took about 17 instructions a
// disparity.
template <bool kMasks, bool kTrack, bool kRival>
__device__ __forceinline__ void visit_if(Track& s, const MatchViews& v, int gx, int gy, int sign, int lo, int hi,
                                         bool e, int d, uint32_t c) {
  if (kRival) {
    if (e) visit<kMasks, kTrack, kRival>(s, v, gx, gy, sign, lo, hi, d, c);
    return;
  }
  bool ok = e && static_cast<unsigned>(d - lo) < static_cast<unsigned>(hi - lo);  // lo < hi
  if (kMasks) ok = ok && drow(v.mask_other, gy)[gx + sign * d] != 0;
  const uint32_t cand = c << 16 | static_cast<uint32_t>(d);
  const bool better = ok && cand < s.key;
  if (kTrack) {
    const bool next = e && !better && (s.key & 0xFFFFu) == static_cast<uint32_t>(d - 1);
    s.cp = next ? c : s.cp;
    s.cm = better ? s.prev : s.cm;
    s.prev = e ? c : s.prev;
  }
  s.key = better ? cand : s.key;
}

// The chunk's pairs as a thread holds them for phase 2: d0 | d1 << 16 (d1 =
// d0 for the list's last disparity alone), kNoPair beyond the chunk.
constexpr uint32_t kNoPair = 0xFFFFFFFFu;

// Phase 2 for one pixel over the chunk's pairs.
template <int kBest, bool kMasks, bool kTrack, bool kRival, int kRows, int kChunk>
__device__ __forceinline__ void pixel_windows(const MatchViews& v, int sign, int x0, int y0, int q, int lo, int hi,
                                              int first, int end, const uint32_t (&pairs)[kChunk],
                                              const uint32_t* planes, uint32_t* s_keys, uint32_t* s_sub,
                                              uint16_t* s_prev, uint32_t* s_rival) {
  const int ty = q / kTileW, tx = q - ty * kTileW;
  const int gx = x0 + tx, gy = y0 + ty;
  Track s;
  s.key = s_keys[q];
  s.cm = s.cp = s.prev = 0;
  s.rival = s.before = kNoRival16;
  s.prev_admissible = false;
  if (kTrack) {
    const uint32_t sub = s_sub[q];
    s.cm = sub & 0xFFFFu;
    s.cp = sub >> 16;
  }
  if (kTrack || kRival) s.prev = kRival ? s_prev[q] & ~kPrevAdmissible : s_prev[q];
  if (kRival) {
    const uint32_t r = s_rival[q];
    s.rival = r & 0xFFFFu;
    s.before = r >> 16;
    s.prev_admissible = (s_prev[q] & kPrevAdmissible) != 0;
  }
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    const int d0 = static_cast<int>(pairs[j] & 0xFFFFu), d1 = static_cast<int>(pairs[j] >> 16);
    if (d1 < first || d0 >= end) continue;
    const uint32_t w = window_pair<kBest>(planes + j * plane_words(kRows), tx, ty);
    visit_if<kMasks, kTrack, kRival>(s, v, gx, gy, sign, lo, hi, d0 >= first, d0, w & 0xFFFFu);
    visit_if<kMasks, kTrack, kRival>(s, v, gx, gy, sign, lo, hi, d1 != d0 && d1 < end, d1, w >> 16);
  }
  s_keys[q] = s.key;
  if (kTrack) s_sub[q] = s.cm | s.cp << 16;
  if (kTrack || kRival) s_prev[q] = static_cast<uint16_t>(s.prev | (kRival && s.prev_admissible ? kPrevAdmissible : 0u));
  if (kRival) s_rival[q] = s.rival | s.before << 16;
}

// Whether a launch of the whole grid takes its tiles from `schedule` and
// records their times (tile_order.h): only where the buffers hold the grid.
__device__ __forceinline__ bool scheduled(const TileSchedule& schedule) {
  return schedule.on() && gridDim.x * gridDim.y * gridDim.z <= schedule.capacity;
}

// kRival: each pixel's rival is tracked too (its state in dynamic shared
// memory after the list, rival | before << 16), uniqueness applies and the
// sweep's costs go out; with a.full_range the kernel matches the coarsest
// level, every pixel over the range.
template <int kBest, bool kMasks, int kRows, bool kRival, int kMinBlocks = kBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocks) refine_kernel(const __grid_constant__ Args a) {
  constexpr int kPixels = kTileW * kRows;
  constexpr int kPlaneWords = plane_words(kRows);
  constexpr int kChunk = chunk_pairs(kRows, kMinBlocks == kDenseBlocksPerSm);
  __shared__ uint32_t s_info[kPixels];  // candidates lo | hi << 16, a narrow pixel's with kFirstBelow and kEndAbove
  __shared__ uint32_t s_keys[kPixels];  // best cost << 16 | d
  __shared__ uint32_t s_sub[kPixels];   // sub-pixel neighbours' costs cm | cp << 16 of the current best
  __shared__ uint16_t s_prev[kPixels];  // cost of the last disparity evaluated
  __shared__ uint16_t s_wide[kPixels];  // wide pixels
  __shared__ uint8_t s_state[kPixels];
  __shared__ int s_count, s_wide_count;
  __shared__ int s_wide_top, s_wide_bottom;
  __shared__ unsigned s_wide_base;
  extern __shared__ __align__(16) unsigned char dyn[];

  // The tile: the block's own (grid order), or the one the schedule gives
  // its place in the grid (longest last time first).
  // (Whether there is a schedule is read from the arguments again at the
  // end rather than held: the plain forms are at their register cap.)
  __shared__ long long s_started;  // the block's start, for its time (in shared memory: no register held)
  unsigned tile = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (a.tiles.on()) {
    unsigned tx = 0, ty = 0;
    if (!listed_tile(a.tiles, tile, gridDim.x, &tx, &ty)) return;
    tile = ty * gridDim.x + tx;
  } else if (scheduled(a.schedule)) {
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    if (threadIdx.x == 0) s_started = clock64();
    if (tile == 0 && threadIdx.x == 0) a.schedule.counts[0] = blocks;
    if (a.schedule.counts[1] == blocks) tile = a.schedule.order[tile];
  }
  const int view = static_cast<int>(tile / (gridDim.x * gridDim.y));
  const int tile_y = static_cast<int>(tile / gridDim.x % gridDim.y), tile_x = static_cast<int>(tile % gridDim.x);
  const MatchViews& v = a.v[view];
  const bool left = a.left[view];
  const int sign = left ? -1 : 1;
  const bool want_subpixel = a.subpixel[view];
  const int width = v.census_ref.width, height = v.census_ref.height;
  const int x0 = tile_x * kTileW, y0 = tile_y * kRows;
  const int rows = mini(kRows, height - y0);
  const int tid = threadIdx.x, warp = tid >> 5;
  const Range range = a.range;

  uint32_t* planes = reinterpret_cast<uint32_t*>(dyn);
  unsigned* s_needed = planes + kChunk * kPlaneWords;
  unsigned* s_wide_needed = s_needed + a.mask_words;
  uint16_t* s_list = reinterpret_cast<uint16_t*>(s_wide_needed + a.mask_words);
  unsigned char* after_list = reinterpret_cast<unsigned char*>(s_list) + ((a.list_cap * 2 + 3) & ~3);
  uint32_t* s_rival = kRival ? reinterpret_cast<uint32_t*>(after_list) : nullptr;
  uint32_t* s_rows = reinterpret_cast<uint32_t*>(after_list + (kRival ? kPixels * sizeof(uint32_t) : 0));
  const int groups = span_groups(a.list_cap);
  const bool full_range = kRival && a.full_range;

  for (int i = tid; i < a.mask_words; i += kThreads) {
    s_needed[i] = 0;
    s_wide_needed[i] = 0;
  }
  for (int i = tid; i < groups; i += kThreads) s_rows[i] = 0;
  if (tid == 0) {
    s_count = 0;
    s_wide_count = 0;
    s_wide_top = INT_MAX;
    s_wide_bottom = -1;
  }
  __syncthreads();

  // Every pixel's candidates, a 2 x 2 group of pixels a thread: x0 and y0
  // are even, so the group's pixels share their coarser parent (one parent
  // span, one hole search for four pixels) and their candidates differ only
  // in the admissible upper end, so the group's narrow evaluation intervals
  // (with sub-pixel, one more on each side) share their first disparity and
  // their union is one interval; so is that of its wide pixels' candidates.
  // The needed set from the narrow pixels' intervals, the wide pixels'
  // needed set from their candidates.
  static_assert(kTileW % 2 == 0 && kRows % 2 == 0, "2 x 2 groups need even tile sides");
  constexpr int kGroupsW = kTileW / 2;
  constexpr int kGroups = kGroupsW * (kRows / 2);
  constexpr int kRounds = (kGroups + kThreads - 1) / kThreads;
  for (int r = 0; r < kRounds; ++r) {
    const int g = r * kThreads + tid;
    int first = 0, end = 0, wide_lo = 0, wide_hi = 0;
    if (g < kGroups) {
      const int ty0 = 2 * (g / kGroupsW), tx0 = 2 * (g - (g / kGroupsW) * kGroupsW);
      const int gx0 = x0 + tx0, gy0 = y0 + ty0;
      int span_a = 0, span_b = 0;
      bool span = false;
      if (gx0 < width && gy0 < height) {
        if (full_range) {
          span = true;
          span_a = range.lo;
          span_b = range.hi;
        } else {
          span = parent_span(v, a.hole_radius, a.hole_span, mini(gx0 / 2, v.coarser.width - 1),
                             mini(gy0 / 2, v.coarser.height - 1), &span_a, &span_b);
          span_a = maxi(span_a, range.lo);
          span_b = mini(span_b, range.hi);
        }
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int tx = tx0 + (k & 1), ty = ty0 + (k >> 1);
        const int gx = x0 + tx, gy = y0 + ty;
        const int q = ty * kTileW + tx;
        uint32_t info = kNoCandidates;
        uint8_t state = kOutside;
        if (gx < width && gy < height) {
          state = kMatched;
          int lo, hi;
          if (span && (!v.mask_ref.data || drow(v.mask_ref, gy)[gx] != 0) &&
              admissible_span(left, width, gx, span_a, span_b, &lo, &hi)) {
            info = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
            int f, e;
            evaluation_interval(lo, hi, gx, range, want_subpixel, &f, &e);
            if (e - f > kWideWidth && !full_range) {
              state = kWide;
              wide_lo = lo;
              wide_hi = maxi(wide_hi, hi);
              s_wide[atomicAdd(&s_wide_count, 1)] = static_cast<uint16_t>(q);
              atomicMin(&s_wide_top, ty);
              atomicMax(&s_wide_bottom, ty);
            } else {
              first = f;
              end = maxi(end, e);
              // The evaluation interval is [lo - 1 or lo, hi or hi + 1): the
              // two flags say which (lo and hi are below 2^15: views are at most
              // 16384 wide, cuda_engine.cu kMaxSide).
              info |= (f < lo ? kFirstBelow : 0u) | (e > hi ? kEndAbove : 0u);
            }
          }
        }
        s_info[q] = info;
        s_keys[q] = kNoKey;
        s_sub[q] = 0;
        s_prev[q] = 0;
        if (kRival) s_rival[q] = kNoRival16 | kNoRival16 << 16;
        s_state[q] = state;
      }
    }
    if (first < end && !full_range) {
      const int ty0 = 2 * (g / kGroupsW);
      for (int k = span_group(first, range.lo); k <= span_group(end - 1, range.lo); ++k)
        atomicOr(&s_rows[k], 3u << ty0);
    }
    mark_needed(s_needed, first, end, range.lo);
    if (__any_sync(kFull, wide_lo < wide_hi)) mark_needed(s_wide_needed, wide_lo, wide_hi, range.lo);
  }
  __syncthreads();

  // The union's pairs, kChunk at a time: phase 1 fills the planes
  // (the warps split the plane rows between them when there are fewer pairs
  // than warps), phase 2 reads them for the pixels of `wide` or the narrow ones.
  auto run = [&](int n, int sb, int se, bool wide) {
    const int pairs = (n + 1) >> 1;
    for (int p0 = 0; p0 < pairs; p0 += kChunk) {
      const int np = mini(kChunk, pairs - p0);
      const int segs = kWarps / np;
      if (warp < np * segs) {
        const int j = warp / segs, seg = warp - j * segs;
        const int i = 2 * (p0 + j);
        const int d0 = s_list[i], d1 = i + 1 < n ? s_list[i + 1] : d0;
        // The narrow pixels that read this pair lie in the rows of its
        // disparities' groups; pixel row ty reads plane rows ty .. ty + 10.
        int psb = sb, pse = se;
        if (!wide && !full_range) {
          const uint32_t m = s_rows[span_group(d0, range.lo)] | s_rows[span_group(d1, range.lo)];
          if (m) {
            psb = maxi(sb, __ffs(m) - 1);
            pse = mini(se, 31 - __clz(m) + 11);
          }
        }
        const int total = pse - psb;
        const int b0 = psb + total * seg / segs, b1 = psb + total * (seg + 1) / segs;
        if (b0 < b1) stream_sums(v, sign, x0, y0, b0, b1, d0, d1, planes + j * kPlaneWords);
      }
      __syncthreads();
      const int d_lo = s_list[2 * p0], d_hi = s_list[mini(2 * (p0 + np) - 1, n - 1)];
      uint32_t pairs[kChunk];
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        pairs[j] = kNoPair;
        if (j < np) {
          const int i = 2 * (p0 + j);
          const uint32_t d0 = s_list[i];
          pairs[j] = d0 | (i + 1 < n ? static_cast<uint32_t>(s_list[i + 1]) : d0) << 16;
        }
      }
      if (!wide) {
        for (int q = tid; q < kPixels; q += kThreads) {
          if (s_state[q] != kMatched) continue;
          const uint32_t info = s_info[q];
          if (info == kNoCandidates) continue;
          const int lo = static_cast<int>(info & 0x7FFFu), hi = static_cast<int>((info >> 16) & 0x7FFFu);
          const int first = lo - static_cast<int>((info & kFirstBelow) >> 15);
          const int end = hi + static_cast<int>(info >> 31);
          if (end <= d_lo || first > d_hi) continue;
          if (want_subpixel)
            pixel_windows<kBest, kMasks, true, kRival, kRows, kChunk>(v, sign, x0, y0, q, lo, hi, first, end, pairs,
                                                                      planes, s_keys, s_sub, s_prev, s_rival);
          else
            pixel_windows<kBest, kMasks, false, kRival, kRows, kChunk>(v, sign, x0, y0, q, lo, hi, first, end, pairs,
                                                                       planes, s_keys, s_sub, s_prev, s_rival);
        }
      } else {
        for (int j = tid; j < s_wide_count; j += kThreads) {
          const int q = s_wide[j];
          const uint32_t info = s_info[q];
          const int lo = static_cast<int>(info & 0xFFFFu), hi = static_cast<int>(info >> 16);
          if (hi <= d_lo || lo > d_hi) continue;
          pixel_windows<kBest, kMasks, false, kRival, kRows, kChunk>(v, sign, x0, y0, q, lo, hi, lo, hi, pairs,
                                                                     planes, s_keys, s_sub, s_prev, s_rival);
        }
      }
      __syncthreads();
    }
  };

  if (warp == 0) list_needed(s_needed, a.mask_words, range.lo, s_list, &s_count);
  __syncthreads();
  run(s_count, 0, rows + 10, false);

  // The wide pixels: to the level's list when it has room for all of them
  // (one reservation per block, so a tile is never split), else streamed
  // here over the rows they occupy for the union of their candidates.
  if (s_wide_count > 0) {
    if (tid == 0) {
      unsigned base = kNoRoom;
      if (a.wide_list) {
        unsigned old = *reinterpret_cast<volatile unsigned*>(a.wide_count);
        while (old + s_wide_count <= a.wide_capacity) {
          const unsigned seen = atomicCAS(a.wide_count, old, old + s_wide_count);
          if (seen == old) {
            base = old;
            break;
          }
          old = seen;
        }
      }
      s_wide_base = base;
    }
    __syncthreads();
    const unsigned base = s_wide_base;
    if (base != kNoRoom) {
      for (int j = tid; j < s_wide_count; j += kThreads) {
        const int q = s_wide[j];
        const int ty = q / kTileW;
        const int gx = x0 + q - ty * kTileW, gy = y0 + ty;
        a.wide_list[2 * (base + j)] =
            static_cast<uint32_t>(view) << 31 | static_cast<uint32_t>(gy) << 16 | static_cast<uint32_t>(gx);
        a.wide_list[2 * (base + j) + 1] = s_info[q];
      }
    } else {
      if (warp == 0) list_needed(s_wide_needed, a.mask_words, range.lo, s_list, &s_count);
      __syncthreads();
      const int top = s_wide_top, wide_rows = s_wide_bottom - top + 1;
      run(s_count, top, top + wide_rows + 10, true);
      for (int j = warp; j < s_wide_count; j += kWarps) {
        const int q = s_wide[j];
        const int ty = q / kTileW;
        write_wide_result<kBest, kRival>(v, sign, want_subpixel, range, x0 + q - ty * kTileW, y0 + ty, s_keys[q],
                                         kRival ? s_rival[q] & 0xFFFFu : kNoRival16, a.uniqueness_ratio);
      }
    }
  }

  for (int q = tid; q < kPixels; q += kThreads) {
    if (s_state[q] != kMatched) continue;
    const int ty = q / kTileW, tx = q - ty * kTileW;
    const int gx = x0 + tx, gy = y0 + ty;
    const uint32_t key = s_keys[q];
    offer_winner(v, gx, gy, sign, key);
    int d = key_disparity(key);
    if (kRival)
      d = finish_sweep(v, gx, gy, d, static_cast<int32_t>(key >> 16), rival_or_none(s_rival[q] & 0xFFFFu),
                       a.uniqueness_ratio);
    drow(v.disparity, gy)[gx] = static_cast<int16_t>(d);
    if (want_subpixel) {
      int offset = 0;
      if (subpixel_neighbours_in_range(d, gx, range.lo, range.hi)) {
        const uint32_t sub = s_sub[q];
        offset = subpixel_offset_q4(static_cast<int>(sub & 0xFFFFu), static_cast<int>(key >> 16),
                                    static_cast<int>(sub >> 16));
      }
      drow(v.subpixel_offset, gy)[gx] = static_cast<int8_t>(offset);
    }
  }
  if (scheduled(a.schedule) && tid == 0) {
    const unsigned done = (static_cast<unsigned>(view) * gridDim.y + y0 / kRows) * gridDim.x + x0 / kTileW;
    a.schedule.costs[done] = static_cast<uint32_t>(min(clock64() - s_started, static_cast<long long>(UINT32_MAX)));
  }
}

// Planes (chunk_pairs of them for the form: dense, the register-capped one),
// both needed sets, the list and, with the rival, its state.
size_t dynamic_bytes(int rows, int mask_words, int list_cap, bool rival, bool dense) {
  return static_cast<size_t>(chunk_pairs(rows, dense)) * plane_words(rows) * sizeof(uint32_t) +
         static_cast<size_t>(mask_words) * 8 +
         ((list_cap * 2 + 3) & ~3) + (rival ? static_cast<size_t>(kTileW) * rows * sizeof(uint32_t) : 0) +
         static_cast<size_t>(span_groups(list_cap)) * sizeof(uint32_t);
}

}  // namespace phased

// The wide pixels the matching blocks listed, one block an entry, all over
// the GPU. The block stages the pixel's 15 x 15 reference census and the
// other view's columns for kWideThreads consecutive disparities in shared
// memory (coalesced loads, all in flight together), then each thread sums
// the window of one disparity from shared memory. The block's smallest key (cost << 16 | d) is the
// result; with sub-pixel the costs of its neighbours come from the block's
// cost array, which holds the whole evaluation interval.
constexpr int kWideThreads = 128;
constexpr int kWideSpan = 15;                                // window side
constexpr int kWideColumns = kWideSpan + kWideThreads - 1;   // other-view columns of one pass
constexpr int kWideBlocksPerSm = 4;  // the wide kernel's grid: up to 4 blocks an SM (bench/RESULTS.md, H100)

size_t wide_dynamic_bytes(int range_width) { return static_cast<size_t>(range_width + 2) * sizeof(uint16_t); }

// kRival: the costs of the whole interval are kept, and once the winner is
// known the block takes the least admissible one two or more disparities
// from it (the rival; the same value SweepWinner's ascending sweep gives).
template <int kBest, bool kRival>
__global__ void __launch_bounds__(kWideThreads) wide_kernel(const __grid_constant__ Args a) {
  __shared__ uint32_t s_ref[kWideSpan * kWideSpan];
  __shared__ uint32_t s_other[kWideSpan * kWideColumns];
  __shared__ uint32_t s_key;
  __shared__ uint32_t s_rival;          // kRival
  extern __shared__ uint16_t s_cost[];  // window costs of the evaluation interval (sub-pixel, rival)
  const unsigned count = min(*reinterpret_cast<volatile unsigned*>(a.wide_count), a.wide_capacity);
  const int tid = threadIdx.x;
  for (unsigned j = blockIdx.x; j < count; j += gridDim.x) {
    const uint32_t e = a.wide_list[2 * j], span = a.wide_list[2 * j + 1];
    const int view = static_cast<int>(e >> 31);
    const int gx = static_cast<int>(e & 0xFFFFu), gy = static_cast<int>((e >> 16) & 0x7FFFu);
    const int lo = static_cast<int>(span & 0xFFFFu), hi = static_cast<int>(span >> 16);
    const MatchViews& v = a.v[view];
    const bool left = a.left[view], subpixel = a.subpixel[view];
    const int width = v.census_ref.width, height = v.census_ref.height;
    int first, end;
    evaluation_interval(lo, hi, gx, a.range, subpixel, &first, &end);
    // Which window rows lie in the image: rows outside are staged as zero in
    // both views, so they add 0 (columns repeat the edge).
    unsigned row_in = 0;
#pragma unroll
    for (int i = 0; i < kWideSpan; ++i) row_in |= (gy + i - 7 >= 0 && gy + i - 7 < height) ? 1u << i : 0u;
    if (tid == 0) {
      s_key = kNoKey;
      if (kRival) s_rival = kNoKey;
    }
    for (int i = tid; i < kWideSpan * kWideSpan; i += kWideThreads) {
      const int r = i / kWideSpan, c = i - r * kWideSpan;
      s_ref[i] = (row_in >> r & 1u) ? drow(v.census_ref, gy + r - 7)[clampi(gx + c - 7, 0, width - 1)] : 0u;
    }
    for (int d0 = first; d0 < end; d0 += kWideThreads) {
      // Staged column k is image column base + k, clamped: thread t's window
      // column c at disparity d0 + t reads column c - t + kWideThreads - 1
      // (left reference, x - d) or c + t (right, x + d).
      const int base = left ? gx - 7 - d0 - (kWideThreads - 1) : gx - 7 + d0;
      __syncthreads();  // the previous pass has read s_other
      for (int i = tid; i < kWideSpan * kWideColumns; i += kWideThreads) {
        const int r = i / kWideColumns, k = i - r * kWideColumns;
        s_other[i] = (row_in >> r & 1u) ? __ldg(drow(v.census_other, gy + r - 7) + clampi(base + k, 0, width - 1)) : 0u;
      }
      __syncthreads();
      const int d = d0 + tid;
      const int k0 = left ? kWideThreads - 1 - tid : tid;
      int sums[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
      for (int r = 0; r < kWideSpan; ++r) {
#pragma unroll
        for (int c = 0; c < kWideSpan; ++c) {
          const int cost = census_cost(s_ref[r * kWideSpan + c], s_other[r * kWideColumns + k0 + c]);
          sums[(r / 5) * 3 + c / 5] += cost;  // rows outside: both staged words are 0
        }
      }
      if (d < end) {
        const int around[8] = {sums[0], sums[1], sums[2], sums[3], sums[5], sums[6], sums[7], sums[8]};
        const int cost = window_cost_in_registers<kBest>(sums[4], around);
        if (subpixel || kRival) s_cost[d - first] = static_cast<uint16_t>(cost);
        const bool ok = d >= lo && d < hi && !(v.mask_other.data && drow(v.mask_other, gy)[gx + (left ? -d : d)] == 0);
        if (ok) atomicMin(&s_key, static_cast<uint32_t>(cost) << 16 | static_cast<uint32_t>(d));
      }
    }
    __syncthreads();
    if (kRival) {
      const uint32_t key = s_key;
      if (key != kNoKey) {
        const int winner = static_cast<int>(key & 0xFFFFu);
        for (int d = lo + tid; d < hi; d += kWideThreads) {
          const bool ok = (d < winner - 1 || d > winner + 1) &&
                          !(v.mask_other.data && drow(v.mask_other, gy)[gx + (left ? -d : d)] == 0);
          if (ok) atomicMin(&s_rival, static_cast<uint32_t>(s_cost[d - first]));
        }
      }
      __syncthreads();
    }
    if (tid == 0) {
      const uint32_t key = s_key;
      offer_winner(v, gx, gy, left ? -1 : 1, key);
      int best = key_disparity(key);
      if (kRival)
        best = finish_sweep(v, gx, gy, best, static_cast<int32_t>(key >> 16),
                            s_rival == kNoKey ? kNoCost : static_cast<int32_t>(s_rival), a.uniqueness_ratio);
      drow(v.disparity, gy)[gx] = static_cast<int16_t>(best);
      if (subpixel) {
        int offset = 0;
        if (subpixel_neighbours_in_range(best, gx, a.range.lo, a.range.hi))
          offset = subpixel_offset_q4(s_cost[best - 1 - first], static_cast<int>(key >> 16), s_cost[best + 1 - first]);
        drow(v.subpixel_offset, gy)[gx] = static_cast<int8_t>(offset);
      }
    }
    __syncthreads();  // s_key and s_cost are free again
  }
  // The last block out empties the list for the next launch (every block
  // has read the count by then).
  if (tid == 0) {
    __threadfence();
    if (atomicAdd(&a.wide_count[1], 1u) == gridDim.x - 1) {
      a.wide_count[0] = 0u;
      a.wide_count[1] = 0u;
    }
  }
}

// The right view's map from the keys a shared-cost launch left (-1 where
// none was admissible); the keys are reset for the next launch.
constexpr int kResolveX = 64, kResolveY = 4;

__global__ void __launch_bounds__(kResolveX * kResolveY) resolve_keys_kernel(ImageView<uint32_t> keys,
                                                                             ImageView<int16_t> disparity) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= keys.width || y >= keys.height) return;
  uint32_t* key = drow(keys, y) + x;
  const uint32_t k = *key;
  *key = kNoKey;
  drow(disparity, y)[x] = static_cast<int16_t>(key_disparity(k));
}

cudaError_t resolve_keys(const ImageView<uint32_t>& keys, const ImageView<int16_t>& disparity, cudaStream_t stream) {
  const dim3 block(kResolveX, kResolveY);
  resolve_keys_kernel<<<grid_for(keys.width, keys.height, block), block, 0, stream>>>(keys, disparity);
  return cudaGetLastError();
}

// right_columns: the shared right-view keys' row width (right_key_columns),
// 0 without them.
size_t dynamic_bytes(bool slots, int rows, int mask_words, int list_cap, int right_columns) {
  const size_t slot_bytes = slots ? static_cast<size_t>(kTileW) * rows * kCostSlots * sizeof(uint16_t) : 0;
  // Cost slots, needed set, list, right keys.
  return slot_bytes + static_cast<size_t>(mask_words) * 4 + ((list_cap * 2 + 3) & ~3) +
         static_cast<size_t>(rows) * right_columns * sizeof(uint32_t);
}

// The shared right keys' width of a launch's Args (0: none).
int right_columns_of(const Args& a) { return a.right_keys.data ? right_key_columns(a.pairs_per_slice) : 0; }

bool applies(const MatchParams& p) { return p.radius == 2 && (p.best == 0 || p.best == 1 || p.best == 2); }

template <int kBest, bool kRival>
void launch_wide(const Args& a, int grid, cudaStream_t stream) {
  if (grid > 0) wide_kernel<kBest, kRival><<<grid, kWideThreads, wide_dynamic_bytes(a.list_cap), stream>>>(a);
}

template <int kBest, bool kWithSlots, int kMinBlocks = kStreamBlocksPerSm>
cudaError_t launch_full_range(const Args& a, int rows, int views, cudaStream_t stream) {
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  const dim3 grid((width + kTileW - 1) / kTileW, (height + rows - 1) / rows, views * a.slices);
  const size_t shared = dynamic_bytes(kWithSlots, rows, a.mask_words, a.list_cap, right_columns_of(a));
  if constexpr (!kWithSlots) {
    if (rows == kLowTileH) {
      stream_match_kernel<kBest, false, kLowTileH, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
      return cudaGetLastError();
    }
  }
  if (rows == kTallTileH)
    stream_match_kernel<kBest, kWithSlots, kTallTileH, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
  else if (rows == kMiddleTileH)
    stream_match_kernel<kBest, kWithSlots, kMiddleTileH, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
  else
    stream_match_kernel<kBest, kWithSlots, kTileH, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
  return cudaGetLastError();
}

// dense: the register-capped form (no cost slots).
template <int kBest>
cudaError_t launch_full_range(const Args& a, int rows, int views, bool slots, bool dense, cudaStream_t stream) {
  if (dense && !slots) return launch_full_range<kBest, false, kDenseStreamBlocksPerSm>(a, rows, views, stream);
  return slots ? launch_full_range<kBest, true>(a, rows, views, stream)
               : launch_full_range<kBest, false>(a, rows, views, stream);
}

// The kernels behind a run-time (window, form, tile height), for their
// attributes.
template <int kBest, bool kWithSlots, int kMinBlocks = kStreamBlocksPerSm>
const void* full_range_kernel_of(int rows) {
  if constexpr (!kWithSlots) {
    if (rows == kLowTileH)
      return reinterpret_cast<const void*>(stream_match_kernel<kBest, false, kLowTileH, kMinBlocks>);
  }
  if (rows == kTallTileH)
    return reinterpret_cast<const void*>(stream_match_kernel<kBest, kWithSlots, kTallTileH, kMinBlocks>);
  if (rows == kMiddleTileH)
    return reinterpret_cast<const void*>(stream_match_kernel<kBest, kWithSlots, kMiddleTileH, kMinBlocks>);
  return reinterpret_cast<const void*>(stream_match_kernel<kBest, kWithSlots, kTileH, kMinBlocks>);
}

template <int kBest>
const void* full_range_kernel_of(bool slots, int rows, bool dense) {
  if (dense && !slots) return full_range_kernel_of<kBest, false, kDenseStreamBlocksPerSm>(rows);
  return slots ? full_range_kernel_of<kBest, true>(rows) : full_range_kernel_of<kBest, false>(rows);
}

const void* full_range_kernel_of(int best, bool slots, int rows, bool dense) {
  switch (best) {
    case 0: return full_range_kernel_of<0>(slots, rows, dense);
    case 1: return full_range_kernel_of<1>(slots, rows, dense);
    default: return full_range_kernel_of<2>(slots, rows, dense);
  }
}

// The rival forms of the refine kernel come in the two shorter tile
// heights only: with their state a 32-row tile holds 2 blocks an SM on the
// H100 where 28 rows hold 3.
template <int kBest, bool kMasks>
const void* refine_kernel_of(int rows, bool rival, bool dense) {
  if (dense && !rival) {
    if (rows == phased::kLowTileH)
      return reinterpret_cast<const void*>(
          phased::refine_kernel<kBest, kMasks, phased::kLowTileH, false, phased::kDenseBlocksPerSm>);
    if (rows == phased::kShortTileH)
      return reinterpret_cast<const void*>(
          phased::refine_kernel<kBest, kMasks, phased::kShortTileH, false, phased::kDenseBlocksPerSm>);
    if (rows == phased::kMiddleTileH)
      return reinterpret_cast<const void*>(
          phased::refine_kernel<kBest, kMasks, phased::kMiddleTileH, false, phased::kDenseBlocksPerSm>);
    return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, kTileH, false, phased::kDenseBlocksPerSm>);
  }
  if (rival)
    return rows == phased::kShortTileH
               ? reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kShortTileH, true>)
               : reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kMiddleTileH, true>);
  if (rows == phased::kLowTileH)
    return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kLowTileH, false>);
  if (rows == phased::kTinyTileH)
    return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kTinyTileH, false>);
  if (rows == phased::kShortTileH)
    return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kShortTileH, false>);
  if (rows == phased::kMiddleTileH)
    return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, phased::kMiddleTileH, false>);
  return reinterpret_cast<const void*>(phased::refine_kernel<kBest, kMasks, kTileH, false>);
}

const void* refine_kernel_of(int best, bool masks, int rows, bool rival, bool dense) {
  switch (best) {
    case 0: return masks ? refine_kernel_of<0, true>(rows, rival, dense) : refine_kernel_of<0, false>(rows, rival, dense);
    case 1: return masks ? refine_kernel_of<1, true>(rows, rival, dense) : refine_kernel_of<1, false>(rows, rival, dense);
    default:
      return masks ? refine_kernel_of<2, true>(rows, rival, dense) : refine_kernel_of<2, false>(rows, rival, dense);
  }
}

template <int kBest>
const void* wide_kernel_of(bool rival) {
  return rival ? reinterpret_cast<const void*>(wide_kernel<kBest, true>)
               : reinterpret_cast<const void*>(wide_kernel<kBest, false>);
}

const void* wide_kernel_of(int best, bool rival) {
  switch (best) {
    case 0: return wide_kernel_of<0>(rival);
    case 1: return wide_kernel_of<1>(rival);
    default: return wide_kernel_of<2>(rival);
  }
}

// Of the tile heights a kernel comes in (`heights`, tallest first; `forced`
// alone when not 0), in one register form (`dense`: kernel_of(rows, dense)
// and dynamic_of(rows, dense) give its kernel and dynamic shared bytes), the
// one that fits the GPU and whose grid costs the
// fewest row steps per block slot: the grid's waves (blocks over the
// blocks one SM holds of that height, times the SMs, rounded up) times the
// row steps of a pass (tile rows plus the window margins); ties to the
// taller, which streams fewer margin rows a pixel. On the H100 (132 SMs)
// the coarsest level chooses among 48, 40, 32 and 24 rows (24 without cost
// slots, where the grid leaves slots empty): at 1024x768 x 256 (a
// 256x192 level) 32-row tiles make 288 blocks, a second wave of 24 on 264
// slots (2 a SM), 40-row tiles 240 (one wave). Refinement chooses among 32,
// 28, 24 and 16 (16 where the grid leaves most slots empty): level 1 of 1024x768 (512x384) makes 264 blocks of 32 rows, 2
// per SM where 3 fit, or 352 of 24 rows; level 0 makes 1008 blocks of 32
// rows, 2.55 waves of 396 slots, or 1176 of 28 rows, 2.97 waves (113
// against 116 us). On a smaller GPU a height whose shared memory does not
// fit is passed over, and the slots are that GPU's.
//
// A refinement that takes its tiles longest first (`scheduled`: a tile
// schedule, tile_order.h) is costed otherwise. Its tiles differ: on real
// content the slowest take about twice the average (kSlowestTile). Taken
// longest first over several waves they even out, so the grid costs its
// blocks' row steps over the slots, fractional waves and all; but a grid of
// one wave lasts as long as its slowest tile, whatever the order. So a
// scheduled grid costs the larger of its row steps over the slots and
// kSlowestTile times a block's row steps. On the H100 (Aloe, tiles longest
// first, bench/RESULTS.md) a 640x480 frame took 0.133 ms with 16-row tiles
// at level 0 (780 blocks, 1.5 waves) against 0.149 with 24 (520, one wave);
// with level 0 of 1024x768 and level 1 of 1920x1080 (2.5 and 1.7 waves of
// 24-row tiles) frames were faster with 24 rows than with 16, as this cost
// says.
// Returns false when no height fits.
constexpr int kSlowestTile = 2;

// Blocks of a grid of tiles `rows` high over width x height, blocks_per_tile
// a tile; and the block slots of a GPU that holds per_sm blocks an SM.
long long grid_blocks(int width, int height, int rows, int blocks_per_tile) {
  return static_cast<long long>((width + kTileW - 1) / kTileW) * ((height + rows - 1) / rows) * blocks_per_tile;
}
long long block_slots(const DeviceLimits& limits, int per_sm) {
  return static_cast<long long>(per_sm) * std::max(limits.sm_count, 1);
}

template <typename KernelOf, typename SharedOf>
bool pick_tile_rows(const DeviceLimits& limits, int width, int height, int blocks_per_tile,
                    std::initializer_list<int> heights, int forced, bool scheduled, bool dense, KernelOf kernel_of,
                    SharedOf dynamic_of, MatchConfig* out, long long* cost_out = nullptr) {
  bool found = false;
  long long best_cost = 0;
  for (int rows : heights) {
    if (forced != 0 && rows != forced) continue;
    const size_t dynamic = dynamic_of(rows, dense);
    cudaFuncAttributes attr{};
    const int per_sm = blocks_per_sm(limits, kernel_of(rows, dense), kThreads, dynamic, &attr);
    if (per_sm <= 0) continue;
    const long long slots = block_slots(limits, per_sm);
    const long long blocks = grid_blocks(width, height, rows, blocks_per_tile);
    // In sixteenths of a row step, so that fractional waves compare.
    const long long steps = 16LL * (rows + 2 * kMargin);
    const long long cost = scheduled ? std::max((blocks * steps + slots - 1) / slots, kSlowestTile * steps)
                                     : (blocks + slots - 1) / slots * steps;
    if (!found || cost < best_cost) {
      found = true;
      best_cost = cost;
      out->tile_rows = rows;
      out->tile_width = kTileW;
      out->threads = kThreads;
      out->static_shared = attr.sharedSizeBytes;
      out->dynamic_shared = dynamic;
      out->registers = attr.numRegs;
      out->blocks_per_sm = per_sm;
    }
  }
  if (cost_out) *cost_out = best_cost;
  return found;
}

// Whether the register-capped form is worth considering after the plain
// form's choice `plain`: only where the plain grid fills at least half the
// GPU's block slots. Its smaller tiles stream more margin rows a pixel; that
// can pay where more blocks an SM hide latency, not where the SMs are half
// empty anyway. A guard, not a measured gain: on the H100 (Aloe, 2026-11-25)
// no time changed with it, and 640x480 x 256 takes 2.5 % longer with the
// register-capped forms than without them either way (cause not found),
// while every other size and range of the grid takes 4 to 9 % less.
bool dense_worth_trying(const MatchConfig& plain, const DeviceLimits& limits, int width, int height,
                        int blocks_per_tile) {
  return 2 * grid_blocks(width, height, plain.tile_rows, blocks_per_tile) >= block_slots(limits, plain.blocks_per_sm);
}

// A kernel's configuration in one of its register forms (MatchParams::
// kernel_form): the plain form's best tile height, or, where the kernel has a
// register-capped form (has_dense) and the plain grid makes it worth trying,
// the capped form's where its grid costs less; either form when forced.
// kernel_of(rows, dense) gives the kernel, dynamic_of(rows, dense) its dynamic
// shared bytes. False when the asked form does not exist or does not fit.
template <typename KernelOf, typename SharedOf>
bool pick_form(const MatchParams& p, const DeviceLimits& limits, int width, int height, int blocks_per_tile,
               std::initializer_list<int> plain_heights, std::initializer_list<int> dense_heights, bool has_dense,
               bool scheduled, KernelOf kernel_of, SharedOf dynamic_of, MatchConfig* out) {
  const bool forced_dense = p.kernel_form == MatchParams::kDenseForm;
  out->dense = false;
  long long cost = 0;
  if (!forced_dense && !pick_tile_rows(limits, width, height, blocks_per_tile, plain_heights, p.tile_rows, scheduled,
                                       false, kernel_of, dynamic_of, out, &cost))
    return false;
  if (!has_dense) return !forced_dense;
  if (p.kernel_form == MatchParams::kPlainForm ||
      (!forced_dense && !dense_worth_trying(*out, limits, width, height, blocks_per_tile)))
    return true;
  MatchConfig dense = *out;
  long long dense_cost = 0;
  const bool fits = pick_tile_rows(limits, width, height, blocks_per_tile, dense_heights, p.tile_rows, scheduled,
                                   true, kernel_of, dynamic_of, &dense, &dense_cost);
  if (fits && (forced_dense || dense_cost < cost)) {
    *out = dense;
    out->dense = true;
    return true;
  }
  return !forced_dense;
}

// A launch of `count` views (1 or 2) of one level: the kernels' arguments
// and the choices that follow from the views.
struct Plan {
  Args a{};
  bool full_range = false;
  bool slots = false;         // full range: cost slots for the sub-pixel step
  bool shared_costs = false;  // full range: the left view's tiles serve the right view too
  bool masks = false;         // refinement: the other view has a foreground mask
  bool wide_list = false;     // refinement: a list of wide pixels for wide_kernel
  // The rival forms (MatchConfig::rival): at the coarsest level too the
  // refine kernel runs (Args::full_range), each view its own tiles.
  bool rival = false;
  bool refine_kernel = false;  // phased::refine_kernel (else stream_match_kernel)
  int grid_views = 1;
  // The launch runs over the background model's foreground tiles (Args::
  // tiles): a few tiles of the grid, so the level's time is its slowest
  // tile's, whatever the grid's waves; the configuration is chosen for
  // short tiles rather than for the whole grid's cost.
  bool sparse = false;
};

Plan plan(const MatchViews* views, const bool* left, int count, const MatchParams& p) {
  Plan pl;
  Args& a = pl.a;
  bool scratch = true;
  for (int i = 0; i < count; ++i) {
    a.v[i] = views[i];
    a.left[i] = left[i];
    // The sub-pixel step is defined on the left-reference costs only.
    a.subpixel[i] = left[i] && views[i].subpixel_offset.data != nullptr;
    pl.slots = pl.slots || a.subpixel[i];
    scratch = scratch && views[i].scratch.best_keys.data != nullptr && views[i].scratch.tiles_done != nullptr;
    pl.masks = pl.masks || views[i].mask_other.data != nullptr;
    pl.rival = pl.rival || tracks_rival(views[i], p);
  }
  a.range = p.range;
  a.hole_radius = p.hole_radius;
  a.hole_span = p.hole_span;
  a.uniqueness_ratio = p.uniqueness_ratio;
  const int range_width = maxi(p.range.hi - p.range.lo, 0);
  a.mask_words = (range_width + 31) / 32;
  a.list_cap = range_width;
  pl.full_range = views[0].coarser.data == nullptr;
  pl.refine_kernel = !pl.full_range || pl.rival;
  a.full_range = pl.full_range && pl.rival;
  // Both views at the coarsest level: the left view's tiles serve the right
  // view too (Args::right_keys).
  pl.shared_costs = pl.full_range && !pl.rival && count == 2 && left[0] && !left[1] &&
                    views[1].scratch.best_keys.data != nullptr;
  if (pl.shared_costs) a.right_keys = views[1].scratch.best_keys;
  pl.grid_views = pl.shared_costs ? 1 : count;
  // With one view's tiles there are half the blocks: two warps share each
  // pair's rows, so that as many warps are in flight (likewise where the
  // left view's winners offer the right map: its tiles alone).
  const bool offering = count == 1 && views[0].offered_keys.data != nullptr;
  a.segments = pl.shared_costs || (pl.full_range && !pl.rival && offering) ? 2 : 1;
  if (p.segments > 0 && pl.full_range && !pl.rival && !pl.slots) a.segments = p.segments;
  a.slices = 1;
  const int pairs = (range_width + 1) / 2;
  if (pl.full_range && !pl.rival && scratch && !pl.slots) a.slices = full_range_slices(pairs, a.segments);
  a.pairs_per_slice = (pairs + a.slices - 1) / a.slices;
  const MatchScratch& sc = views[0].scratch;
  // No list, and so no wide kernel, where no pixel can be wide (the default
  // hole span): the launch cost 4 us a refined level on the H100.
  const bool may_be_wide = p.hole_span <= 0 || p.hole_span > kMaxNarrowHoleSpan;
  pl.wide_list = !pl.full_range && may_be_wide && sc.wide_pixels != nullptr && sc.wide_counters != nullptr;
  if (!pl.full_range) a.schedule = sc.schedule;
  // Foreground tiles: launches of one view's grid (the left view offering
  // the right map); the list takes the schedule's place.
  if (sc.tiles.on() && pl.grid_views == 1 && count == 1) {
    a.tiles = sc.tiles;
    a.schedule = TileSchedule{};
    pl.sparse = p.sparse_tiles;
  }
  if (pl.wide_list) {
    a.wide_list = sc.wide_pixels;
    a.wide_count = sc.wide_counters;
    a.wide_capacity = sc.wide_capacity / 2;
  }
  return pl;
}

// The coarsest level's full search with four warps a pair instead of two,
// each streaming a quarter of the tile's rows (with the window's margins)
// instead of a half: twice the blocks, the same tile height and form. Taken
// where the grid of two warps a pair fills at most half the GPU's block
// slots (so that twice the blocks still start together and the search ends
// sooner) and a tile's range is at least kSpreadPairs pairs. On the H100
// (Aloe, bench/RESULTS.md, sixteenth session, forced everywhere against
// two): 1080p x 256 (240x135 x 32) -1.7 %, 800x600 x 128 (200x150 x 32)
// -2.5 %, 640x480 x 512 (80x60 x 64) -2.1 %, 1024x768 x 512 and 4K x 512
// within 0.2 %; with ranges of 8 and 16 disparities the frame took 3 to 12 %
// longer (1280x720 x 32: 320x180 x 8, +11.7 %; the search there is perhaps
// shorter than the finer census beside it on the graph's branch, whose SMs
// its extra blocks take: not measured); where the doubled grid no longer
// fits one wave of the chosen form, 2 to 18 % longer. The rule against two
// everywhere: 1080p x 256 -1.5 %, 800x600 x 128 -2.2 %, 640x480 x 512
// -2.6 %, 4K x 512 +0.5 %, the rest within 0.5 %.
constexpr int kSpreadPairs = 16;
void spread_rows(Plan* pl, const MatchParams& p, const DeviceLimits& limits, MatchConfig* c) {
  Args& a = pl->a;
  if (pl->refine_kernel || pl->slots || a.segments != 2 || p.segments != 0) return;
  const int pairs = (maxi(a.range.hi - a.range.lo, 0) + 1) / 2;
  const int slices = full_range_slices(pairs, 4);
  if (pairs < kSpreadPairs || slices != 2 * a.slices) return;
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  if (!pl->sparse &&
      2 * grid_blocks(width, height, c->tile_rows, pl->grid_views * a.slices) > block_slots(limits, c->blocks_per_sm))
    return;
  a.segments = 4;
  a.slices = slices;
  a.pairs_per_slice = (pairs + slices - 1) / slices;
  // Fewer pairs a block: fewer columns of shared right keys.
  c->dynamic_shared = dynamic_bytes(false, c->tile_rows, a.mask_words, a.list_cap, right_columns_of(a));
}

// The streaming configuration of *plan on `limits`' GPU (the full range's
// warps a pair set in it: spread_rows); false when no tile height fits it
// (the caller takes the generic kernel).
bool choose_wide(const Plan& pl, const MatchParams& p, const DeviceLimits& limits, MatchConfig* out);

bool choose(Plan* plan, const MatchParams& p, const DeviceLimits& limits, MatchConfig* out) {
  const Plan& pl = *plan;
  const Args& a = pl.a;
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  out->rival = pl.rival;
  if (!pl.refine_kernel) {
    out->kernel = MatchConfig::FullRange;
    // The cost slots have no register-capped form.
    const std::initializer_list<int> heights = {kTallTileH, kMiddleTileH, kTileH};
    const std::initializer_list<int> low_heights = {kTallTileH, kMiddleTileH, kTileH, kLowTileH};
    // Sparse: the shortest tiles (the cost slots have none lower than kTileH).
    const std::initializer_list<int> sparse_heights = {kLowTileH}, sparse_slot_heights = {kTileH};
    const bool sparse = pl.sparse && p.tile_rows == 0;
    if (!pick_form(
            p, limits, width, height, pl.grid_views * a.slices,
            sparse ? (pl.slots ? sparse_slot_heights : sparse_heights) : pl.slots ? heights : low_heights,
            sparse ? sparse_heights : low_heights, !pl.slots, false, [&](int rows, bool dense) { return full_range_kernel_of(p.best, pl.slots, rows, dense); },
            [&](int rows, bool) { return dynamic_bytes(pl.slots, rows, a.mask_words, a.list_cap, right_columns_of(a)); },
            out))
      return false;
    spread_rows(plan, p, limits, out);
    out->segments = a.segments;
    return true;
  }
  out->kernel = MatchConfig::Refine;
  out->scheduled = a.schedule.on();
  const std::initializer_list<int> heights = {kTileH, phased::kMiddleTileH, phased::kShortTileH, phased::kLowTileH};
  const std::initializer_list<int> tiny_heights = {kTileH, phased::kMiddleTileH, phased::kShortTileH,
                                                   phased::kLowTileH, phased::kTinyTileH};
  const std::initializer_list<int> rival_heights = {phased::kMiddleTileH, phased::kShortTileH};
  // Sparse (a few foreground tiles): the shortest tiles of the form, whose
  // slowest tile ends soonest.
  const std::initializer_list<int> sparse_heights = {phased::kTinyTileH}, sparse_rival_heights = {phased::kShortTileH};
  if (pl.sparse && p.tile_rows == 0 && p.kernel_form != MatchParams::kDenseForm) {
    if (!pick_form(
            p, limits, width, height, pl.grid_views, pl.rival ? sparse_rival_heights : sparse_heights, heights, false,
            false, [&](int rows, bool dense) { return refine_kernel_of(p.best, pl.masks, rows, pl.rival, dense); },
            [&](int rows, bool dense) { return phased::dynamic_bytes(rows, a.mask_words, a.list_cap, pl.rival, dense); },
            out))
      return false;
    return choose_wide(pl, p, limits, out);
  }
  // Tiny tiles (plain form) where the low tiles' plain grid is less than one
  // wave, or forced. Such a grid costs its slowest tile, which tiny tiles
  // shorten. On the H100 (Aloe, bench/RESULTS.md, fourteenth session, the
  // left view's grid alone): 640x480 x 128 -4 %, x 512 -7 %, 1024x768 -3
  // to -5 %, 1280x720 -6 to -10 %, the rest within 0.5 %, against two
  // thirds of a wave as the bound (the thirteenth session's, when both
  // views' tiles made the grid).
  bool tiny = p.tile_rows == phased::kTinyTileH && p.kernel_form != MatchParams::kDenseForm;
  if (!pl.rival && p.tile_rows == 0) {
    const int per_sm =
        blocks_per_sm(limits, refine_kernel_of(p.best, pl.masks, phased::kLowTileH, false, false), kThreads,
                      phased::dynamic_bytes(phased::kLowTileH, a.mask_words, a.list_cap, false, false));
    tiny = per_sm > 0 && grid_blocks(width, height, phased::kLowTileH, pl.grid_views) < block_slots(limits, per_sm);
  }
  // The rival forms have no register-capped form, nor tiny tiles.
  if (!pick_form(
          p, limits, width, height, pl.grid_views, pl.rival ? rival_heights : tiny ? tiny_heights : heights, heights,
          !pl.rival,
          out->scheduled, [&](int rows, bool dense) { return refine_kernel_of(p.best, pl.masks, rows, pl.rival, dense); },
          [&](int rows, bool dense) { return phased::dynamic_bytes(rows, a.mask_words, a.list_cap, pl.rival, dense); },
          out))
    return false;
  return choose_wide(pl, p, limits, out);
}

// The wide kernel's part of a refinement's configuration.
bool choose_wide(const Plan& pl, const MatchParams& p, const DeviceLimits& limits, MatchConfig* out) {
  const Args& a = pl.a;
  if (pl.wide_list) {
    // Up to kWideBlocksPerSm blocks an SM, as many as fit: the list's
    // entries are spread over the grid, whatever its size.
    cudaFuncAttributes attr{};
    const size_t dynamic = wide_dynamic_bytes(a.list_cap);
    const int per_sm = blocks_per_sm(limits, wide_kernel_of(p.best, pl.rival), kWideThreads, dynamic, &attr);
    // Without room for the wide kernel the tiles match their wide pixels
    // themselves (no list).
    out->wide_blocks_per_sm = per_sm;
    out->wide_grid = std::min(per_sm, kWideBlocksPerSm) * std::max(limits.sm_count, 1);
    out->wide_shared = attr.sharedSizeBytes + dynamic;
    if (per_sm <= 0) out->wide_grid = 0;
  }
  return true;
}

template <int kBest, int kRows, bool kRival, int kMinBlocks = phased::kBlocksPerSm>
void launch_refine_rows(const Args& a, int views, bool masks, cudaStream_t stream) {
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  const dim3 grid((width + kTileW - 1) / kTileW, (height + kRows - 1) / kRows, views);
  const size_t shared =
      phased::dynamic_bytes(kRows, a.mask_words, a.list_cap, kRival, kMinBlocks == phased::kDenseBlocksPerSm);
  if (masks)
    phased::refine_kernel<kBest, true, kRows, kRival, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
  else
    phased::refine_kernel<kBest, false, kRows, kRival, kMinBlocks><<<grid, kThreads, shared, stream>>>(a);
}

template <int kBest>
cudaError_t launch_refine(const Args& a, int rows, int views, bool masks, bool rival, bool dense, int wide_grid,
                          cudaStream_t stream) {
  if (rival) {
    if (rows == phased::kShortTileH)
      launch_refine_rows<kBest, phased::kShortTileH, true>(a, views, masks, stream);
    else
      launch_refine_rows<kBest, phased::kMiddleTileH, true>(a, views, masks, stream);
    launch_wide<kBest, true>(a, wide_grid, stream);
    return cudaGetLastError();
  }
  constexpr int kDense = phased::kDenseBlocksPerSm;
  if (dense && rows == phased::kLowTileH)
    launch_refine_rows<kBest, phased::kLowTileH, false, kDense>(a, views, masks, stream);
  else if (dense && rows == phased::kShortTileH)
    launch_refine_rows<kBest, phased::kShortTileH, false, kDense>(a, views, masks, stream);
  else if (dense && rows == phased::kMiddleTileH)
    launch_refine_rows<kBest, phased::kMiddleTileH, false, kDense>(a, views, masks, stream);
  else if (dense)
    launch_refine_rows<kBest, kTileH, false, kDense>(a, views, masks, stream);
  else if (rows == phased::kLowTileH)
    launch_refine_rows<kBest, phased::kLowTileH, false>(a, views, masks, stream);
  else if (rows == phased::kTinyTileH)
    launch_refine_rows<kBest, phased::kTinyTileH, false>(a, views, masks, stream);
  else if (rows == phased::kShortTileH)
    launch_refine_rows<kBest, phased::kShortTileH, false>(a, views, masks, stream);
  else if (rows == phased::kMiddleTileH)
    launch_refine_rows<kBest, phased::kMiddleTileH, false>(a, views, masks, stream);
  else
    launch_refine_rows<kBest, kTileH, false>(a, views, masks, stream);
  launch_wide<kBest, false>(a, wide_grid, stream);
  return cudaGetLastError();
}

// Launches a plan in the configuration chosen for it.
// right_keys_kept: see enqueue_match_pair.
cudaError_t launch(const Plan& pl, const MatchParams& p, const MatchConfig& c, cudaStream_t stream,
                   bool* right_keys_kept = nullptr) {
  Args a = pl.a;
  if (pl.refine_kernel) {
    // No room for the wide kernel: every tile matches its own wide pixels.
    if (c.wide_grid <= 0) {
      a.wide_list = nullptr;
      a.wide_count = nullptr;
      a.wide_capacity = 0;
    }
    switch (p.best) {
      case 0: return launch_refine<0>(a, c.tile_rows, pl.grid_views, pl.masks, pl.rival, c.dense, c.wide_grid,
                                          stream);
      case 1: return launch_refine<1>(a, c.tile_rows, pl.grid_views, pl.masks, pl.rival, c.dense, c.wide_grid,
                                          stream);
      case 2: return launch_refine<2>(a, c.tile_rows, pl.grid_views, pl.masks, pl.rival, c.dense, c.wide_grid,
                                          stream);
      default: return cudaErrorInvalidValue;
    }
  }
  cudaError_t e = cudaErrorInvalidValue;
  switch (p.best) {
    case 0: e = launch_full_range<0>(a, c.tile_rows, pl.grid_views, pl.slots, c.dense, stream); break;
    case 1: e = launch_full_range<1>(a, c.tile_rows, pl.grid_views, pl.slots, c.dense, stream); break;
    case 2: e = launch_full_range<2>(a, c.tile_rows, pl.grid_views, pl.slots, c.dense, stream); break;
    default: break;
  }
  if (e != cudaSuccess || !pl.shared_costs) return e;
  if (right_keys_kept) {
    *right_keys_kept = true;
    return cudaSuccess;
  }
  return resolve_keys(pl.a.v[1].scratch.best_keys, pl.a.v[1].disparity, stream);
}

// Tiles of kLowTileH rows: the most a full-range grid has (tiles_done counters).
int tile_count(int width, int height) {
  return ((width + kTileW - 1) / kTileW) * ((height + kLowTileH - 1) / kLowTileH);
}

}  // namespace streaming

}  // namespace

// Every window and mask form of the refinement kernel for tiles of kRows rows.
// kMinBlocks: the plain form's launch bounds, or the register-capped form's.
template <int kRows, bool kRival, int kMinBlocks = streaming::phased::kBlocksPerSm>
cudaError_t raise_refine(int optin) {
  using streaming::phased::refine_kernel;
  for (cudaError_t e : {raise_one(refine_kernel<0, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<0, true, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<1, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<1, true, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<2, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<2, true, kRows, kRival, kMinBlocks>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

// The full-range kernel's register-capped forms (no cost slots) of one window.
template <int kBest>
cudaError_t raise_stream_dense(int optin) {
  using streaming::stream_match_kernel;
  constexpr int kDense = streaming::kDenseStreamBlocksPerSm;
  for (cudaError_t e : {raise_one(stream_match_kernel<kBest, false, streaming::kLowTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, streaming::kLowTileH>, optin),
                        raise_one(stream_match_kernel<kBest, false, streaming::kTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, streaming::kMiddleTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, streaming::kTallTileH, kDense>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

size_t match_shared_bytes(int radius) { return shared_ints(radius) * sizeof(int); }

cudaError_t prepare_match(int radius) {
  int device = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return e;
  const size_t need = match_shared_bytes(radius);
  if (need + 64 > static_cast<size_t>(optin)) return cudaErrorInvalidConfiguration;
  // Every engine sets the same value (the device's maximum), so engines with
  // different radii never lower each other's limit.
  for (cudaError_t r : {raise_limit<0>(optin), raise_limit<1>(optin), raise_limit<2>(optin), raise_limit<4>(optin),
                        raise_one(streaming::stream_match_kernel<0, false, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<0, false, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<0, false, streaming::kMiddleTileH>, optin),
                        raise_one(streaming::stream_match_kernel<0, true, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<0, true, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<0, true, streaming::kMiddleTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, false, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, false, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, false, streaming::kMiddleTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, true, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, true, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<1, true, streaming::kMiddleTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, false, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, false, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, false, streaming::kMiddleTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, true, streaming::kTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, true, streaming::kTallTileH>, optin),
                        raise_one(streaming::stream_match_kernel<2, true, streaming::kMiddleTileH>, optin),
                        raise_refine<streaming::kTileH, false>(optin),
                        raise_refine<streaming::phased::kMiddleTileH, false>(optin),
                        raise_refine<streaming::phased::kShortTileH, false>(optin),
                        raise_refine<streaming::phased::kLowTileH, false>(optin),
                        raise_refine<streaming::phased::kTinyTileH, false>(optin),
                        raise_refine<streaming::phased::kMiddleTileH, true>(optin),
                        raise_refine<streaming::phased::kShortTileH, true>(optin),
                        raise_stream_dense<0>(optin), raise_stream_dense<1>(optin), raise_stream_dense<2>(optin),
                        raise_refine<streaming::kTileH, false, streaming::phased::kDenseBlocksPerSm>(optin),
                        raise_refine<streaming::phased::kMiddleTileH, false, streaming::phased::kDenseBlocksPerSm>(optin),
                        raise_refine<streaming::phased::kShortTileH, false, streaming::phased::kDenseBlocksPerSm>(optin),
                        raise_refine<streaming::phased::kLowTileH, false, streaming::phased::kDenseBlocksPerSm>(optin)})
    if (r != cudaSuccess) return r;
  return cudaSuccess;
}

int match_tile_count(int width, int height) { return streaming::tile_count(width, height); }

unsigned refine_tile_capacity(int width, int height) {
  using namespace streaming;
  return static_cast<unsigned>((width + kTileW - 1) / kTileW) * ((height + phased::kTinyTileH - 1) / phased::kTinyTileH) *
         2;
}

std::vector<KernelLaunch> match_kernel_launches(int range_width) {
  using streaming::dynamic_bytes;
  using streaming::kMiddleTileH;
  using streaming::kTallTileH;
  using streaming::kTileH;
  using streaming::kWideThreads;
  using streaming::wide_dynamic_bytes;
  namespace phased = streaming::phased;
  std::vector<KernelLaunch> out;
  const int mask_words = (range_width + 31) / 32;
  const std::string at = " at " + std::to_string(range_width) + " disparities";
  // The full-range kernel's shared right keys with both views at this range
  // (plan(): two warps a pair, the pairs split over slices without cost slots).
  const int pairs = (range_width + 1) / 2;
  const int slices = streaming::full_range_slices(pairs, 2);
  auto right_columns = [&](bool slots) {
    return streaming::right_key_columns(slots ? pairs : (pairs + slices - 1) / slices);
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  // The engine falls back to the generic kernel where no radius-2 tile fits,
  // and takes the smallest tiles where the taller ones do not: those must
  // fit every target at the reference range.
  // The rival forms (uniqueness, confidence) likewise, in their own tile
  // heights.
  for (int best : {0, 1, 2, 4})
    for (bool left : {true, false})
      for (bool rival : {false, true})
        out.push_back({"match_kernel<" + std::to_string(best) + ", " + flag(left) + ", " + flag(rival) + ">",
                       kThreads, match_shared_bytes(2), 0, best != 4,
                       std::string("generic tile, radius 2") + (rival ? ", rival" : "")});
  for (int best : {0, 1, 2}) {
    const std::string b = std::to_string(best);
    for (bool slots : {false, true})
      for (int rows : {streaming::kLowTileH, kTileH, kMiddleTileH, kTallTileH}) {
        if (slots && rows == streaming::kLowTileH) continue;  // no low form with cost slots
        out.push_back({"streaming::stream_match_kernel<" + b + ", " + flag(slots) + ", " + std::to_string(rows) + ", " +
                           std::to_string(streaming::kStreamBlocksPerSm) + ">",
                       streaming::kThreads, dynamic_bytes(slots, rows, mask_words, range_width, right_columns(slots)),
                       streaming::kStreamBlocksPerSm, rows == kTileH, std::to_string(rows) + " rows" + at});
        if (!slots)  // the register-capped form: taken only where it fits better
          out.push_back({"streaming::stream_match_kernel<" + b + ", false, " + std::to_string(rows) + ", " +
                             std::to_string(streaming::kDenseStreamBlocksPerSm) + ">",
                         streaming::kThreads, dynamic_bytes(false, rows, mask_words, range_width, right_columns(false)),
                         streaming::kDenseStreamBlocksPerSm, false,
                         std::to_string(rows) + " rows, register-capped" + at});
      }
    for (bool rival : {false, true})
      for (bool masks : {false, true})
        for (int rows : {kTileH, phased::kMiddleTileH, phased::kShortTileH, phased::kLowTileH, phased::kTinyTileH}) {
          if (rival && (rows == kTileH || rows == phased::kLowTileH || rows == phased::kTinyTileH)) continue;
          out.push_back({"streaming::phased::refine_kernel<" + b + ", " + flag(masks) + ", " + std::to_string(rows) +
                             ", " + flag(rival) + ", " + std::to_string(phased::kBlocksPerSm) + ">",
                         streaming::kThreads, phased::dynamic_bytes(rows, mask_words, range_width, rival, false),
                         phased::kBlocksPerSm, rows == phased::kShortTileH,
                         std::to_string(rows) + " rows" + (rival ? ", rival" : "") + at});
          // The register-capped form: taken only where it fits better.
          if (!rival && rows != phased::kTinyTileH)
            out.push_back({"streaming::phased::refine_kernel<" + b + ", " + flag(masks) + ", " + std::to_string(rows) +
                               ", false, " + std::to_string(phased::kDenseBlocksPerSm) + ">",
                           streaming::kThreads, phased::dynamic_bytes(rows, mask_words, range_width, false, true),
                           phased::kDenseBlocksPerSm, false, std::to_string(rows) + " rows, register-capped" + at});
        }
    for (bool rival : {false, true})
      out.push_back({"streaming::wide_kernel<" + b + ", " + flag(rival) + ">", kWideThreads,
                     wide_dynamic_bytes(range_width), 0, true, std::string("wide pixels") + (rival ? ", rival" : "") + at});
  }
  out.push_back(
      {"streaming::resolve_keys_kernel", streaming::kResolveX * streaming::kResolveY, 0, 0, true, "right keys"});
  return out;
}

cudaError_t match_code_status() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, streaming::stream_match_kernel<2, true, streaming::kTileH>);
}


namespace {

template <int kBest, bool kRival>
const void* generic_kernel(bool left) {
  return left ? reinterpret_cast<const void*>(match_kernel<kBest, true, kRival>)
              : reinterpret_cast<const void*>(match_kernel<kBest, false, kRival>);
}

template <int kBest>
const void* generic_kernel(bool left, bool rival) {
  return rival ? generic_kernel<kBest, true>(left) : generic_kernel<kBest, false>(left);
}

// The tile kernel of any radius for `views` with the references in `left`
// (count of them): it must fit for each.
cudaError_t choose_generic(const MatchViews* views, const bool* left, int count, const MatchParams& p,
                           const DeviceLimits& limits, MatchConfig* out) {
  *out = MatchConfig{};
  const size_t dynamic = match_shared_bytes(p.radius);
  for (int i = 0; i < count; ++i) {
    const void* kernel = nullptr;
    const bool rival = tracks_rival(views[i], p);
    out->rival = out->rival || rival;
    switch (p.best) {
      case 0: kernel = generic_kernel<0>(left[i], rival); break;
      case 1: kernel = generic_kernel<1>(left[i], rival); break;
      case 2: kernel = generic_kernel<2>(left[i], rival); break;
      case 4: kernel = generic_kernel<4>(left[i], rival); break;
      default: return cudaErrorInvalidValue;
    }
    cudaFuncAttributes attr{};
    cudaError_t e = cudaSuccess;
    const int per_sm = blocks_per_sm(limits, kernel, kThreads, dynamic, &attr, &e);
    if (e != cudaSuccess) return e;
    if (per_sm <= 0) return cudaErrorInvalidConfiguration;
    if (i == 0 || per_sm < out->blocks_per_sm) {
      out->kernel = MatchConfig::Generic;
      out->threads = kThreads;
      out->static_shared = attr.sharedSizeBytes;
      out->dynamic_shared = dynamic;
      out->registers = attr.numRegs;
      out->blocks_per_sm = per_sm;
    }
  }
  return cudaSuccess;
}

// Streaming where it applies and fits (with a plan, *streamed), else the
// generic kernel.
cudaError_t choose_config(const MatchViews* views, const bool* left, int count, const MatchParams& p,
                          const DeviceLimits& limits, streaming::Plan* plan, MatchConfig* out, bool* streamed) {
  *streamed = false;
  if (streaming::applies(p) && !p.generic_kernel) {
    *plan = streaming::plan(views, left, count, p);
    if (streaming::choose(plan, p, limits, out)) {
      *streamed = true;
      return cudaSuccess;
    }
    if (p.tile_rows != 0) return cudaErrorInvalidConfiguration;
  }
  return choose_generic(views, left, count, p, limits, out);
}

// The right map offered by the left view's winners (MatchParams::offer_right,
// where the right view has keys to take them): enqueue_match_pair.
bool offers_right_map(const MatchViews& right, const MatchParams& p) {
  return p.offer_right && right.scratch.best_keys.data != nullptr;
}

// The left view as it is matched then: offering to the right view's keys.
MatchViews offering(const MatchViews& left, const MatchViews& right) {
  MatchViews v = left;
  v.offered_keys = right.scratch.best_keys;
  return v;
}

}  // namespace

cudaError_t choose_match_config(const MatchViews* views, int count, const MatchParams& params, MatchConfig* out) {
  if (count != 1 && count != 2) return cudaErrorInvalidValue;
  DeviceLimits own;
  const DeviceLimits* limits = nullptr;
  cudaError_t e = limits_or_current(params.limits, &own, &limits);
  if (e != cudaSuccess) return e;
  const bool one[1] = {params.reference == Reference::Left};
  const bool both[2] = {true, false};
  streaming::Plan plan;
  bool streamed = false;
  if (count == 2 && offers_right_map(views[1], params)) {
    // As enqueue_match_pair: the left view alone, offering.
    const MatchViews left = offering(views[0], views[1]);
    const bool is_left[1] = {true};
    return choose_config(&left, is_left, 1, params, *limits, &plan, out, &streamed);
  }
  return choose_config(views, count == 2 ? both : one, count, params, *limits, &plan, out, &streamed);
}

cudaError_t enqueue_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream) {
  DeviceLimits own;
  const DeviceLimits* limits = nullptr;
  cudaError_t e = limits_or_current(params.limits, &own, &limits);
  if (e != cudaSuccess) return e;
  const bool left = params.reference == Reference::Left;
  streaming::Plan plan;
  MatchConfig config;
  bool streamed = false;
  e = choose_config(&views, &left, 1, params, *limits, &plan, &config, &streamed);
  if (e != cudaSuccess) return e;
  if (streamed) return streaming::launch(plan, params, config, stream);
  switch (params.best) {
    case 0: return launch<0>(views, params, stream);
    case 1: return launch<1>(views, params, stream);
    case 2: return launch<2>(views, params, stream);
    case 4: return launch<4>(views, params, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t enqueue_match_pair(const MatchViews& left, const MatchViews& right, const MatchParams& params,
                               cudaStream_t stream, bool* right_keys_kept) {
  if (right_keys_kept) *right_keys_kept = false;
  if (offers_right_map(right, params)) {
    // The right map is the one the left view's winners offer.
    MatchParams p = params;
    p.reference = Reference::Left;
    const cudaError_t e = enqueue_match(offering(left, right), p, stream);
    if (e != cudaSuccess) return e;
    if (right_keys_kept) {
      *right_keys_kept = true;
      return cudaSuccess;
    }
    return streaming::resolve_keys(right.scratch.best_keys, right.disparity, stream);
  }
  const bool same_size =
      left.census_ref.width == right.census_ref.width && left.census_ref.height == right.census_ref.height;
  const bool same_level = (left.coarser.data == nullptr) == (right.coarser.data == nullptr);
  if (streaming::applies(params) && !params.generic_kernel && same_size && same_level) {
    DeviceLimits own;
    const DeviceLimits* limits = nullptr;
    cudaError_t e = limits_or_current(params.limits, &own, &limits);
    if (e != cudaSuccess) return e;
    const MatchViews views[2] = {left, right};
    const bool is_left[2] = {true, false};
    streaming::Plan plan = streaming::plan(views, is_left, 2, params);
    MatchConfig config;
    if (streaming::choose(&plan, params, *limits, &config))
      return streaming::launch(plan, params, config, stream, right_keys_kept);
    if (params.tile_rows != 0) return cudaErrorInvalidConfiguration;
    // No tile height fits this GPU: each view on its own (the generic kernel).
  }
  MatchParams p = params;
  p.reference = Reference::Left;
  cudaError_t e = enqueue_match(left, p, stream);
  if (e != cudaSuccess) return e;
  p.reference = Reference::Right;
  return enqueue_match(right, p, stream);
}

cudaError_t enqueue_resolve_keys(ImageView<uint32_t> keys, ImageView<int16_t> disparity, cudaStream_t stream) {
  return streaming::resolve_keys(keys, disparity, stream);
}

}  // namespace cs::cuda
