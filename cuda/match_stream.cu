// stream_match_kernel: the coarsest level's search, every pixel over the
// whole range (stages.h stage 6), for sub-window radius 2 and the Box, Best1
// and Best2 windows (match_args.h says how the radius-2 kernels share the
// work), with its launcher and its forms' attributes.
#include <climits>

#include "match_device.cuh"
#include "match_kernels.h"

namespace cs::cuda::streaming {

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

// The coarsest level: every pixel searches the whole range (clipped to the
// image), so the tile's union is its pixels' own intervals and the streaming
// passes waste little. The range's pairs may be split over `slices` blocks
// per tile, which meet in the level's per-pixel keys.
// Its length (about 190 lines) is one block's tile in steps between
// barriers: candidates, the passes over the tile's pairs (the per-warp work
// is stream_pair), the sub-pixel's second round, the right view's keys, the
// slices' meeting and the results; they share the block's shared arrays.
template <int kBest, bool kWithSlots, int kRows, int kMinBlocks = kStreamBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocks) stream_match_kernel(const __grid_constant__ Args a) {
  constexpr int kTilePixels = kTileW * kRows;
  __shared__ uint32_t s_info[kRows * kRegionW];  // per output pixel: lo | hi << 16
  __shared__ uint32_t s_keys[kRows * kRegionW];  // per output pixel: best cost << 16 | d
  __shared__ uint16_t s_base[kTilePixels];           // first disparity of the pixel's cost slots
  __shared__ uint8_t s_state[kTilePixels];
  __shared__ int s_count, s_flag;
  extern __shared__ __align__(16) unsigned char dyn[];

  // The block's tile and its run of pairs (slice). Over a list of
  // foreground tiles the listed tiles' blocks come first in launch order,
  // each tile's slices side by side, so that every block with work is among
  // the grid's first ones whatever the slices (z-major order would put the
  // last slice's blocks behind all the others' empty ones).
  unsigned tile_x = blockIdx.x, tile_y = blockIdx.y, z = blockIdx.z;
  if (a.tiles.on()) {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (!listed_tile(a.tiles, b / gridDim.z, gridDim.x, &tile_x, &tile_y)) return;
    z = b % gridDim.z;
  }
  const int view = static_cast<int>(z) / a.slices;
  const int slice = static_cast<int>(z) - view * a.slices;
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

namespace {

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

// Every form of one window: with and without cost slots in the three tall
// heights, and without them the low and register-capped ones.
template <int kBest>
cudaError_t raise_window(int optin) {
  constexpr int kDense = kDenseStreamBlocksPerSm;
  for (cudaError_t e : {raise_one(stream_match_kernel<kBest, false, kTileH>, optin),
                        raise_one(stream_match_kernel<kBest, false, kTallTileH>, optin),
                        raise_one(stream_match_kernel<kBest, false, kMiddleTileH>, optin),
                        raise_one(stream_match_kernel<kBest, true, kTileH>, optin),
                        raise_one(stream_match_kernel<kBest, true, kTallTileH>, optin),
                        raise_one(stream_match_kernel<kBest, true, kMiddleTileH>, optin),
                        raise_one(stream_match_kernel<kBest, false, kLowTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, kLowTileH>, optin),
                        raise_one(stream_match_kernel<kBest, false, kTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, kMiddleTileH, kDense>, optin),
                        raise_one(stream_match_kernel<kBest, false, kTallTileH, kDense>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace

cudaError_t enqueue_full_range(const Args& a, int best, int rows, int views, bool slots, bool dense,
                               cudaStream_t stream) {
  switch (best) {
    case 0: return launch_full_range<0>(a, rows, views, slots, dense, stream);
    case 1: return launch_full_range<1>(a, rows, views, slots, dense, stream);
    case 2: return launch_full_range<2>(a, rows, views, slots, dense, stream);
    default: return cudaErrorInvalidValue;
  }
}

bool full_range_attributes(int best, bool slots, int rows, bool dense, cudaFuncAttributes* out) {
  return kernel_attributes(full_range_kernel_of(best, slots, rows, dense), out);
}

cudaError_t raise_full_range_limits(int optin) {
  for (cudaError_t e : {raise_window<0>(optin), raise_window<1>(optin), raise_window<2>(optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

cudaError_t full_range_code_status() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, stream_match_kernel<2, true, kTileH>);
}

}  // namespace cs::cuda::streaming
