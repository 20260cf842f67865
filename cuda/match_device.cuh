// Device helpers the matching kernels share (match_tile.cu, match_stream.cu,
// match_refine.cu, match_wide.cu): a pixel's candidate disparities (stages.h,
// stages 6 and 7), the adaptive window's cost, the sweep's rival, and the
// radius-2 kernels' row streaming (census words, pixel costs, 5-sums) and
// needed-disparity sets. Device code only.
#pragma once

#include <climits>

#include "cuda_util.h"
#include "match_args.h"

namespace cs::cuda {


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

inline __device__ bool parent_span(const MatchViews& v, int hole_radius, int hole_span, int px, int py, int* a,
                                   int* b) {
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
inline __device__ bool candidates(const MatchViews& v, bool left, Range range, int hole_radius, int hole_span, int x,
                                  int y, int* lo, int* hi) {
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

namespace streaming {

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

// Sets the bits of [first, end) (disparities less `base`) in the block's
// needed set; every lane of the warp calls it, one atomic per word and warp.
inline __device__ void mark_needed(unsigned* needed, int first, int end, int base) {
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
inline __device__ void list_needed(const unsigned* needed, int mask_words, int base, uint16_t* list,
                                   int* list_count) {
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

// A pixel's winner (its key, best cost << 16 | d, before uniqueness; kNoKey
// for none) offered to the other view's pixel it matches, where the launch
// makes the other view's map (MatchViews::offered_keys).
__device__ __forceinline__ void offer_winner(const MatchViews& v, int gx, int gy, int sign, uint32_t key) {
  if (v.offered_keys.data && key != kNoKey) atomicMin(drow(v.offered_keys, gy) + gx + sign * key_disparity(key), key);
}

}  // namespace streaming
}  // namespace cs::cuda
