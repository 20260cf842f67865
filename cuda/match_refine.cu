// phased::refine_kernel: the levels below the coarsest (stages.h stage 7),
// each pixel over the few disparities its coarser parent allows, in two
// phases, and the coarsest level's rival forms (uniqueness, confidence), for
// sub-window radius 2 and the Box, Best1 and Best2 windows; with its launcher
// and its forms' attributes.
#include <climits>

#include "match_device.cuh"
#include "match_kernels.h"

namespace cs::cuda::streaming {

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
// Its length (about 290 lines) is one block's tile in four steps between
// barriers: the pixels' candidates and the needed sets, the union's pairs in
// chunks (run: phase 1, then phase 2, whose per-pixel work is pixel_windows),
// the wide pixels (listed or streamed here), the results. The steps share a
// dozen shared arrays and the tile's coordinates; the per-pixel and per-warp
// work is in the functions above, and what is left is their order.
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
              // 16384 wide, engine_impl.h kMaxSide).
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

}  // namespace phased

namespace {

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
cudaError_t launch_refine(const Args& a, int rows, int views, bool masks, bool rival, bool dense,
                          cudaStream_t stream) {
  if (rival) {
    if (rows == phased::kShortTileH)
      launch_refine_rows<kBest, phased::kShortTileH, true>(a, views, masks, stream);
    else
      launch_refine_rows<kBest, phased::kMiddleTileH, true>(a, views, masks, stream);
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
  return cudaGetLastError();
}

// Every window and mask form of the refinement kernel for tiles of kRows rows.
// kMinBlocks: the plain form's launch bounds, or the register-capped form's.
template <int kRows, bool kRival, int kMinBlocks = phased::kBlocksPerSm>
cudaError_t raise_refine(int optin) {
  using phased::refine_kernel;
  for (cudaError_t e : {raise_one(refine_kernel<0, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<0, true, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<1, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<1, true, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<2, false, kRows, kRival, kMinBlocks>, optin),
                        raise_one(refine_kernel<2, true, kRows, kRival, kMinBlocks>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace

cudaError_t enqueue_refine(const Args& a, int best, int rows, int views, bool masks, bool rival, bool dense,
                           cudaStream_t stream) {
  switch (best) {
    case 0: return launch_refine<0>(a, rows, views, masks, rival, dense, stream);
    case 1: return launch_refine<1>(a, rows, views, masks, rival, dense, stream);
    case 2: return launch_refine<2>(a, rows, views, masks, rival, dense, stream);
    default: return cudaErrorInvalidValue;
  }
}

bool refine_attributes(int best, bool masks, int rows, bool rival, bool dense, cudaFuncAttributes* out) {
  return kernel_attributes(refine_kernel_of(best, masks, rows, rival, dense), out);
}

cudaError_t raise_refine_limits(int optin) {
  for (cudaError_t e : {raise_refine<kTileH, false>(optin), raise_refine<phased::kMiddleTileH, false>(optin),
                        raise_refine<phased::kShortTileH, false>(optin), raise_refine<phased::kLowTileH, false>(optin),
                        raise_refine<phased::kTinyTileH, false>(optin), raise_refine<phased::kMiddleTileH, true>(optin),
                        raise_refine<phased::kShortTileH, true>(optin),
                        raise_refine<kTileH, false, phased::kDenseBlocksPerSm>(optin),
                        raise_refine<phased::kMiddleTileH, false, phased::kDenseBlocksPerSm>(optin),
                        raise_refine<phased::kShortTileH, false, phased::kDenseBlocksPerSm>(optin),
                        raise_refine<phased::kLowTileH, false, phased::kDenseBlocksPerSm>(optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace cs::cuda::streaming
