// Method cross, stages C3 and C4 (stages.h): the aggregation over both
// views' regions and each sample's winner, best and rival, by tiles and
// parts of the range (cross_matching.h).
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cross_device.cuh"
#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- C3, C4

// A block a tile of kTileW x kTileH samples (the anchors), all disparities
// in turn, 32 warps. Per disparity, over the tile's region (an apron of
// kApron columns and apron_rows(S) rows on each side):
//  A. a warp kRowsPerWarp consecutive rows of the region: a lane the pixel
//     costs of three adjacent columns and their prefix sums along the row
//     (its own, then the lanes before it by shuffles; two rows a scan, one
//     in each half of a word) into the warp's row buffers; then the
//     horizontal sum H and size N_H of two tile columns, two reads of a
//     buffer each, packed as H | N_H << 20;
//  B. a warp two tile columns, a lane kRowsPerWarp rows: the packed sums
//     summed down each column (inclusive column prefix sums; row 0 of the
//     buffer holds the zeros before the region);
//  C. a thread kAnchors anchors of one tile column: C | N << 20 as the
//     difference of two column sums, then its winner and rival (one
//     comparison a disparity where neither changes). The packed sums wrap
//     around 2^32 but every region has C < 2^20 and N < 2^11, so the
//     difference is exact.
// The column sums are double-buffered by disparity: C of d reads one buffer
// while A of d + 1 fills the other, so a disparity takes two barriers. The
// colours and the right view's arms are read through the cache.
constexpr int kTileW = 64, kApron = kMaxCrossArm;
constexpr int kRegionW = kTileW + 2 * kApron;
constexpr int kMatchWarps = 32, kMatchThreads = 32 * kMatchWarps;
constexpr int kLaneColumns = kRegionW / 32;   // step A's costs a lane
constexpr int kPrefixStride = kRegionW + 1;  // a row's prefix sums, P[0] = 0
constexpr int kSumStride = kTileW + 1;       // padded: step B's lanes read a column
constexpr int kTileColumns = kTileW / 32;    // step A's H a lane, step B's columns a warp
static_assert(kRegionW % 32 == 0 && kTileW % 32 == 0 && kMatchThreads % kTileW == 0, "whole lanes");
static_assert(kTileColumns * kMatchWarps == kTileW, "step B: every tile column has a warp");

// The rows of apron a tile needs: a sample's arms are its pixel's / S
// (stages.h C2), so a region reaches at most kMaxCrossArm / S samples up or
// down from its anchor. S = 1 takes kMaxCrossArm; S > 1 half of it, which
// holds S = 2's reach and S = 3's (5), so that both take tiles of 48 and 16
// rows (regions of 64 and 32 rows: whole rows a warp). The columns keep
// kApron whatever S, so that a region's row is whole lanes' columns.
constexpr int apron_rows(int sample) { return sample == 1 ? kMaxCrossArm : kMaxCrossArm / 2; }
static_assert(kMaxCrossArm / 2 <= apron_rows(2) && kMaxCrossArm / kMaxSampleRestore <= apron_rows(kMaxSampleRestore),
              "every sample's region inside its tile's apron");
// The aggregation's tile heights (cross_layout): the tall and the short
// one, rows of samples.
constexpr int tall_rows(int sample) { return sample == 1 ? 64 : 48; }
constexpr int short_rows(int sample) { return sample == 1 ? 32 : 16; }

template <int kTileH, int kS>
struct MatchTile {
  static constexpr int kApronRows = apron_rows(kS);
  static constexpr int kRegionH = kTileH + 2 * kApronRows;
  static constexpr int kRowsPerWarp = kRegionH / kMatchWarps;
  static constexpr int kAnchors = kTileW * kTileH / kMatchThreads;
  static constexpr int kAnchorRowStep = kMatchThreads / kTileW;
  static constexpr int kSumRows = kRegionH + 1;
  static constexpr int kRowPairs = (kRowsPerWarp + 1) / 2;  // step A's scans a warp
  static_assert(kRegionH % kMatchWarps == 0 && (kTileW * kTileH) % kMatchThreads == 0, "whole parts");
  // Two buffers of column sums, each warp's row buffers.
  static constexpr size_t kShared =
      sizeof(uint32_t) * (2 * kSumRows * kSumStride + kMatchWarps * kRowPairs * kPrefixStride);
};

// Inside the sweep "none" is C = 2^20 - 1, N = 1: its normalised cost lies
// above every real one (C <= kMaxCrossPixelCost * N), so one comparison
// serves every case and all products stay within 32 bits (C < 2^20, N <
// 2^11). It becomes kNoCrossCost on the way out.
constexpr uint32_t kSweepNone = 0xFFFFFu | 1u << 20;
static_assert(kMaxCrossPixelCost * (2 * kMaxCrossArm + 1) * (2 * kMaxCrossArm + 1) < 0xFFFFF &&
                  (2 * kMaxCrossArm + 1) * (2 * kMaxCrossArm + 1) < (1 << 11),
              "packed costs: every real C below none's, N within its 11 bits");
static_assert((2 * kMaxCrossArm + 1) * kMaxCrossPixelCost < (1 << 16), "a row's horizontal sum in a half word");

// C3's pixel cost e of two words (cross_pixel_cost): the colour bytes'
// truncated sum of absolute differences (the byte differences summed by a
// dot product that leaves out the fourth: 1 % faster than masking both
// words for __vsadu4, H200), plus weight per differing bit of the census
// bytes.
__device__ __forceinline__ uint32_t pixel_cost(uint32_t l, uint32_t r, uint32_t trunc, uint32_t weight) {
  return min(__dp4a(__vabsdiffu4(l, r), 0x00010101u, 0u), trunc) + weight * __popc((l ^ r) & 0xFF000000u);
}
__device__ __forceinline__ bool sweep_below(uint32_t a, uint32_t b) {
  return (a & 0xFFFFFu) * (b >> 20) < (b & 0xFFFFFu) * (a >> 20);
}
// The lesser of two costs in the sweep's form; `earlier` (the smaller d)
// where they are equal.
__device__ __forceinline__ uint32_t sweep_lesser(uint32_t earlier, uint32_t later) {
  return sweep_below(later, earlier) ? later : earlier;
}
__device__ __forceinline__ uint32_t swept_cost(uint32_t c) { return c == kSweepNone ? kNoCrossCost : c; }

// The inclusive prefix sum of v over the lanes of a warp: each step adds
// the value o lanes below where that lane exists (shfl's own predicate, so
// the steps need no comparisons of the lane).
__device__ __forceinline__ uint32_t warp_prefix(uint32_t v) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1)
    asm("{\n\t.reg .u32 t;\n\t.reg .pred p;\n\t"
        "shfl.sync.up.b32 t|p, %0, %1, 0, 0xffffffff;\n\t"
        "@p add.u32 %0, %0, t;\n\t}"
        : "+r"(v)
        : "r"(o));
  return v;
}

// Part `index` of `count` of a range of disparities: contiguous, in order,
// sizes differing by at most one.
__device__ __forceinline__ Range range_part(Range r, int index, int count) {
  const int span = r.hi - r.lo;
  return Range{r.lo + span * index / count, r.lo + span * (index + 1) / count};
}

// C4's outputs of one sample from its sweep (costs in the sweep's form).
__device__ __forceinline__ void write_winners(const CrossViews& v, const CrossParams& p, int i, int j, uint32_t best,
                                              uint32_t rival, int winner) {
  const uint32_t b = swept_cost(best), r = swept_cost(rival);
  int kept = winner;
  if (kept >= 0 && !cross_unique(b, r, p.uniqueness_ratio)) kept = -1;
  drow(v.raw, j)[i] = static_cast<int16_t>(winner);
  drow(v.disparity, j)[i] = static_cast<int16_t>(kept);
  drow(v.best, j)[i] = b;
  drow(v.rival, j)[i] = r;
}

// Every read of the kernel below stays inside the images: columns are
// clamped to [0, w) and rows outside the samples' read row 0. What such a
// read feeds is never counted: a pixel cost outside every admissible
// anchor's region cancels in the difference of two row prefix sums, a
// horizontal sum outside its vertical overlap in the difference of two
// column sums (an arm never leaves the image), and an anchor that is not
// admissible takes none.
//
// kS: the sample-restore factor (a constant: the arms' divisions by it are
// then shifts or multiplications).
template <int kTileH, int kS>
__global__ void __launch_bounds__(kMatchThreads, 1) cross_match_kernel(const __grid_constant__ CrossViews v,
                                                                      const CrossParams p) {
  using T = MatchTile<kTileH, kS>;
  constexpr int kApronRows = T::kApronRows;
  constexpr int kRegionH = T::kRegionH, kRows = T::kRowsPerWarp, kAnchors = T::kAnchors, S = kS;
  constexpr int kSumRows = T::kSumRows, kPairs = T::kRowPairs;
  extern __shared__ uint32_t shared[];
  // The region's rows of both views' words and arms and of the right mask
  // (null outside the samples' rows; the others row 0 there).
  __shared__ const uint32_t* rows[4][kRegionH];  // left words, right words, left arms, right arms
  __shared__ const uint8_t* right_mask[kRegionH];
  const int w = v.colour[0].width, h = v.colour[0].height;
  const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
  const int i0 = blockIdx.x * kTileW, j0 = blockIdx.y * kTileH;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool masks = v.mask[0].data != nullptr;
  uint32_t* const sums = shared;  // 2 x kSumRows x kSumStride
  uint32_t* const prefix = shared + 2 * kSumRows * kSumStride + warp * kPairs * kPrefixStride;
  for (int r = tid; r < kRegionH; r += kMatchThreads) {
    const int j = j0 - kApronRows + r;
    const bool in = j >= 0 && j < hs;
    const int y = in ? S * j : 0;
    rows[0][r] = drow(v.words[0], y);
    rows[1][r] = drow(v.words[1], y);
    rows[2][r] = drow(v.arms[0], y);
    rows[3][r] = drow(v.arms[1], y);
    right_mask[r] = in && masks ? drow(v.mask[1], y) : nullptr;
  }
  for (int k = tid; k < 2 * kSumStride; k += kMatchThreads)
    sums[(k / kSumStride) * kSumRows * kSumStride + k % kSumStride] = 0;  // row 0 of both buffers
  if (lane < kPairs) prefix[lane * kPrefixStride] = 0;

  // Step A: row q of this warp is region row warp * kRows + q; cost column
  // m of this lane region column kLaneColumns * lane + m, tile column n of
  // it lane + 32 n. Their pixels' columns, clamped.
  int cost_x[kLaneColumns], sum_x[kTileColumns];
#pragma unroll
  for (int m = 0; m < kLaneColumns; ++m) cost_x[m] = min(max(S * (i0 - kApron + kLaneColumns * lane + m), 0), w - 1);
#pragma unroll
  for (int n = 0; n < kTileColumns; ++n) sum_x[n] = min(S * (i0 + lane + 32 * n), w - 1);
  // Step C: tile column c, tile rows anchor_row + kAnchorRowStep k.
  const int c = tid % kTileW, anchor_row = tid / kTileW;
  const int ai = i0 + c, anchor_x = min(S * ai, w - 1);
  uint32_t anchor_arms[kAnchors];
  unsigned anchor_in = 0, anchor_fg = 0;
  uint32_t best[kAnchors], rival[kAnchors], prev[kAnchors], prev2[kAnchors];
  int winner[kAnchors];
#pragma unroll
  for (int k = 0; k < kAnchors; ++k) {
    const int aj = j0 + anchor_row + T::kAnchorRowStep * k;
    const bool in = ai < ws && aj < hs;
    anchor_arms[k] = in ? drow(v.arms[0], S * aj)[S * ai] : 0;
    anchor_in |= static_cast<unsigned>(in) << k;
    anchor_fg |= static_cast<unsigned>(in && (!masks || drow(v.mask[0], S * aj)[S * ai])) << k;
    best[k] = rival[k] = prev[k] = prev2[k] = kSweepNone;
    winner[k] = -1;
  }
  // With the background model a tile without a foreground sample has no
  // admissible candidate at any d (C3): its winners are all none, written
  // without the sweep (the background's tiles cost nothing here). Beyond
  // S (i_last) no anchor of the tile has a right pixel: nothing changes.
  const bool sweep = __syncthreads_or(anchor_fg != 0);
  const uint32_t trunc = static_cast<uint32_t>(p.truncation), weight = static_cast<uint32_t>(p.census_weight);
  // This block's part of the range (blockIdx.z of gridDim.z: cross_layout).
  const Range part = range_part(p.range, blockIdx.z, gridDim.z);
  const int d_end = min(part.hi, S * (min(i0 + kTileW, ws) - 1) + 1);
  for (int d = sweep ? part.lo : d_end; d < d_end; ++d) {
    uint32_t* const sum = sums + (d & 1) * kSumRows * kSumStride;
    // A. Pixel costs, row prefix sums, packed horizontal sums. Rows 2 g and
    //    2 g + 1 share a scan, their costs in the low and high halves of a
    //    word: the sums carry from one half into the other, but a row's
    //    difference of two prefix sums (< 2^16: at most 33 costs) comes out
    //    exact in its half.
#pragma unroll
    for (int g = 0; g < kPairs; ++g) {
      const int r = warp * kRows + 2 * g;
      const bool second = 2 * g + 1 < kRows;
      uint32_t run[kLaneColumns];
      uint32_t total = 0;
#pragma unroll
      for (int m = 0; m < kLaneColumns; ++m) {
        const unsigned xr = max(cost_x[m] - d, 0);
        uint32_t e = pixel_cost(__ldg(rows[0][r] + cost_x[m]), __ldg(rows[1][r] + xr), trunc, weight);
        if (second)
          e |= pixel_cost(__ldg(rows[0][r + 1] + cost_x[m]), __ldg(rows[1][r + 1] + xr), trunc, weight) << 16;
        total += e;
        run[m] = total;
      }
      const uint32_t before = warp_prefix(total) - total;
#pragma unroll
      for (int m = 0; m < kLaneColumns; ++m) prefix[g * kPrefixStride + kLaneColumns * lane + m + 1] = before + run[m];
    }
    __syncwarp();
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
      const int r = warp * kRows + q;
      const uint32_t* la = rows[2][r];
      const uint32_t* ra = rows[3][r];
#pragma unroll
      for (int n = 0; n < kTileColumns; ++n) {
        const int tc = lane + 32 * n;
        const unsigned xr = max(sum_x[n] - d, 0);
        const uint32_t left = __ldg(la + sum_x[n]), right = __ldg(ra + xr);
        const int hm = min(byte_at<0>(left), byte_at<0>(right)) / S;
        const int hp = min(byte_at<1>(left), byte_at<1>(right)) / S;
        const uint32_t* pr = prefix + (q / 2) * kPrefixStride + kApron + tc;
        const uint32_t both = pr[hp + 1] - pr[-hm];
        const uint32_t hsum = q % 2 ? both >> 16 : both & 0xFFFFu;
        sum[(r + 1) * kSumStride + tc] = hsum + (static_cast<uint32_t>(hm + hp + 1) << 20);
      }
    }
    __syncthreads();
    // B. Column prefix sums: this lane's kRows rows of the warp's columns.
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n) {
      uint32_t* col = sum + (kRows * lane + 1) * kSumStride + kTileColumns * warp + n;
      uint32_t run[kRows];
      uint32_t total = 0;
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        total += col[q * kSumStride];
        run[q] = total;
      }
      const uint32_t before = warp_prefix(total) - total;
#pragma unroll
      for (int q = 0; q < kRows; ++q) col[q * kSumStride] = before + run[q];
    }
    __syncthreads();
    // C. Each anchor's C and N, its winner and rival (and the two costs before d).
    const int xr = S * ai - d;
    const unsigned xr_read = max(anchor_x - d, 0);
#pragma unroll
    for (int k = 0; k < kAnchors; ++k) {
      const int ar = anchor_row + T::kAnchorRowStep * k + kApronRows;  // region row
      bool admissible = ((anchor_in >> k) & 1u) && xr >= 0;
      if (masks) admissible = admissible && ((anchor_fg >> k) & 1u) && right_mask[ar][xr];
      const uint32_t right = __ldg(rows[3][ar] + xr_read);
      const int vm = min(byte_at<2>(anchor_arms[k]), byte_at<2>(right)) / S;
      const int vp = min(byte_at<3>(anchor_arms[k]), byte_at<3>(right)) / S;
      uint32_t cost = sum[(ar + vp + 1) * kSumStride + c] - sum[(ar - vm) * kSumStride + c];
      cost = admissible ? cost : kSweepNone;
      // best <= rival always, so a cost not below the rival changes
      // neither (the common case: one comparison). A new winner's rival is
      // the least cost at d - 2 and below: the old best where the old
      // winner lies there, else (the old winner d - 1) the lesser of the
      // old rival (d - 3 and below) and the cost at d - 2; ties keep the
      // smaller d.
      if (sweep_below(cost, rival[k])) {
        if (sweep_below(cost, best[k])) {
          rival[k] = winner[k] != d - 1 ? best[k] : sweep_lesser(rival[k], prev2[k]);
          best[k] = cost;
          winner[k] = d;
        } else if (d >= winner[k] + 2) {
          rival[k] = cost;
        }
      }
      prev2[k] = prev[k];
      prev[k] = cost;
    }
  }
#pragma unroll
  for (int k = 0; k < kAnchors; ++k) {
    if (!((anchor_in >> k) & 1u)) continue;
    const int aj = j0 + anchor_row + T::kAnchorRowStep * k;
    if (gridDim.z == 1) {
      write_winners(v, p, ai, aj, best[k], rival[k], winner[k]);
      continue;
    }
    // A part's sweep for merge_parts_kernel: `low`, the least cost at d
    // <= part.hi - 2 (where the sweep stopped early, at every d swept: the
    // best): the best unless the winner is part.hi - 1, then the lesser of
    // the rival (d <= part.hi - 3) and the cost at part.hi - 2.
    uint32_t low = best[k];
    if (d_end == part.hi && winner[k] == part.hi - 1)
      low = sweep_lesser(rival[k], prev2[k]);
    drow(v.parts, aj + blockIdx.z * hs)[ai] = make_uint4(best[k], rival[k], low, static_cast<uint32_t>(winner[k]));
  }
}

// C3's cost of sample (i, j) at d by its definition (cross_rules.h, as
// the CPU's cross_cost), in the sweep's form: none where d is not
// admissible.
__device__ uint32_t direct_cost(const CrossViews& v, const CrossParams& p, int i, int j, int d) {
  const int x = p.sample * i, xr = x - d, y = p.sample * j;
  if (d < p.range.lo || d >= p.range.hi || xr < 0) return kSweepNone;
  if (v.mask[0].data && !(drow(v.mask[0], y)[x] && drow(v.mask[1], y)[xr])) return kSweepNone;
  return cross_region_cost([&](int view, int cx, int cy) { return drow(v.words[view], cy)[cx]; },
                           [&](int view, int ax, int ay) { return drow(v.arms[view], ay)[ax]; }, i, j, d, p.truncation,
                           p.census_weight, p.sample);
}

// The parts of the range swept apart (cross_layout's parts > 1), joined in order
// of d into what one sweep of the whole range gives: the winner is the
// least (cost, d) of all parts; the rival the least (cost, d) more than one
// away from it. Joining part B (from d = m) to what came before (A):
//  - B's winner below A's: A's share of the rival is A's best, or, when B
//    won at m, A's least cost at d <= m - 2 (its `low`);
//  - else B's share is B's best, or, when A won at m - 1, B's least cost at
//    d >= m + 1: B's best unless B won at m, then the lesser of B's rival
//    (d >= m + 2) and the cost at m + 1 (computed here; rare).
// Ties keep the smaller d (A's). A sample a thread.
__global__ void __launch_bounds__(256) merge_parts_kernel(const __grid_constant__ CrossViews v, const CrossParams p,
                                                          int parts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  const int hs = v.raw.height;
  if (i >= v.raw.width || j >= hs) return;
  uint4 a = drow(v.parts, j)[i];
  uint32_t best = a.x, rival = a.y, low = a.z;
  int winner = static_cast<int>(a.w);
  for (int c = 1; c < parts; ++c) {
    const uint4 b = drow(v.parts, j + c * hs)[i];
    const int m = range_part(p.range, c, parts).lo, b_winner = static_cast<int>(b.w);
    const uint32_t a_best = best;
    if (sweep_below(b.x, best)) {
      const uint32_t a_share = b_winner == m ? low : best;
      rival = sweep_lesser(a_share, b.y);
      best = b.x;
      winner = b_winner;
    } else {
      uint32_t b_share = b.x;
      if (winner == m - 1 && b_winner == m) {
        const uint32_t next = direct_cost(v, p, i, j, m + 1);
        b_share = sweep_lesser(next, b.y);
      }
      rival = sweep_lesser(rival, b_share);
    }
    low = sweep_lesser(a_best, b.z);
  }
  write_winners(v, p, i, j, best, rival, winner);
}

}  // namespace

std::vector<KernelLaunch> cross_kernel_launches() {
  std::vector<KernelLaunch> out;
  const size_t shared[kMaxSampleRestore][2] = {{MatchTile<32, 1>::kShared, MatchTile<64, 1>::kShared},
                                               {MatchTile<16, 2>::kShared, MatchTile<48, 2>::kShared},
                                               {MatchTile<16, 3>::kShared, MatchTile<48, 3>::kShared}};
  static_assert(kMaxSampleRestore == 3, "a row of the table above for each factor");
  for (int s = 1; s <= kMaxSampleRestore; ++s) {
    const std::string factor = std::to_string(s);
    KernelLaunch k;
    k.kernel = "cross_match_kernel<" + std::to_string(short_rows(s)) + ", " + factor + ">";
    k.threads = kMatchThreads;
    k.dynamic_shared = shared[s - 1][0];
    k.min_blocks_per_sm = 1;
    k.required = true;
    k.what = "method cross: the aggregation's short tile (every GPU)";
    out.push_back(k);
    k.kernel = "cross_match_kernel<" + std::to_string(tall_rows(s)) + ", " + factor + ">";
    k.dynamic_shared = shared[s - 1][1];
    k.required = s > 1;
    k.what = s > 1 ? "method cross: the aggregation's tall tile with sample-restore (every GPU: the short one's "
                     "memory at sample-restore 1)"
                   : "method cross: the aggregation's tall tile (where it fits)";
    out.push_back(k);
  }
  return out;
}

template <int kTileH, int kS>
cudaError_t allow_shared() {
  return cudaFuncSetAttribute(cross_match_kernel<kTileH, kS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(MatchTile<kTileH, kS>::kShared));
}

cudaError_t prepare_cross_match() {
  for (cudaError_t e : {allow_shared<32, 1>(), allow_shared<16, 2>(), allow_shared<48, 2>(), allow_shared<16, 3>(),
                        allow_shared<48, 3>()})
    if (e != cudaSuccess) return e;
  // The taller tile of sample-restore 1 where the GPU has the shared memory for it.
  if (allow_shared<64, 1>() != cudaSuccess) (void)cudaGetLastError();
  return cudaSuccess;
}

int cross_tile_rows(const DeviceLimits& limits, int sample) {
  static_assert(MatchTile<48, 2>::kShared == MatchTile<32, 1>::kShared &&
                    MatchTile<48, 3>::kShared == MatchTile<32, 1>::kShared,
                "with sample-restore the tall tile takes sample-restore 1's short one's memory");
  if (sample > 1) return tall_rows(sample);
  // The dynamic part and the kernel's static rows of pointers.
  const size_t tall = MatchTile<64, 1>::kShared + 5 * MatchTile<64, 1>::kRegionH * sizeof(const uint32_t*);
  return limits.shared_per_block_optin >= tall ? 64 : 32;
}

CrossLayout cross_layout(int width, int height, int sample, Range range, const DeviceLimits& limits) {
  // A block an SM (1024 threads). Each candidate layout's blocks are handed,
  // in launch order (x, then y, then the part), to the SM that comes free
  // first; a block's work is its tile's disparities in its part up to where
  // no anchor of the tile has a right pixel (the kernel stops there), times
  // the tile's cost by its region's rows (below). The layout whose last SM
  // ends first wins, the join counted as a tenth more; ties keep the tall
  // tile and fewer parts. A part is kept to at least kMinPartSpan
  // disparities.
  constexpr int kMinPartSpan = 16;
  const int ws = cross_samples(width, sample), hs = cross_samples(height, sample);
  const int sms = std::max(limits.sm_count, 1), span = range.hi - range.lo;
  const int tallest = cross_tile_rows(limits, sample);
  CrossLayout best{tallest, 1};
  double best_time = -1;
  std::vector<double> free_at;
  for (int rows : {tall_rows(sample), short_rows(sample)}) {
    if (rows > tallest) continue;
    const int tiles_x = (ws + kTileW - 1) / kTileW, tiles_y = (hs + rows - 1) / rows;
    // A tile's cost a disparity by its region's rows: 96 1.0, 64 0.58
    // (1080p on an H200: 0.278 against 0.485 ms a wave of sample-restore
    // 1's 32- and 64-row tiles), 32 half of 64's (not measured).
    const int region_rows = rows + 2 * apron_rows(sample);
    const double tile_cost = region_rows == 96 ? 1.0 : region_rows == 64 ? 0.58 : 0.29;
    for (int parts = 1; parts <= kMaxCrossParts && (parts == 1 || parts * kMinPartSpan <= span); ++parts) {
      free_at.assign(sms, 0.0);  // a min-heap of the SMs' finishing times
      for (int z = 0; z < parts; ++z) {
        const int lo = range.lo + span * z / parts, hi = range.lo + span * (z + 1) / parts;
        for (int y = 0; y < tiles_y; ++y)
          for (int x = 0; x < tiles_x; ++x) {
            const int end = std::min(hi, sample * (std::min(kTileW * (x + 1), ws) - 1) + 1);
            std::pop_heap(free_at.begin(), free_at.end(), std::greater<double>());
            free_at.back() += std::max(end - lo, 0) * tile_cost;
            std::push_heap(free_at.begin(), free_at.end(), std::greater<double>());
          }
      }
      const double time = *std::max_element(free_at.begin(), free_at.end()) * (parts > 1 ? 1.1 : 1.0);
      if (best_time < 0 || time < best_time) {
        best = {rows, parts};
        best_time = time;
      }
    }
  }
  return best;
}

template <int kTileH, int kS>
cudaError_t launch_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const int parts = p.d_parts;
  const dim3 grid((v.raw.width + kTileW - 1) / kTileW, (v.raw.height + kTileH - 1) / kTileH, parts);
  cross_match_kernel<kTileH, kS><<<grid, kMatchThreads, MatchTile<kTileH, kS>::kShared, stream>>>(v, p);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || parts == 1) return e;
  const dim3 block(32, 8), merge_grid = grid_for(v.raw.width, v.raw.height, block);
  merge_parts_kernel<<<merge_grid, block, 0, stream>>>(v, p, parts);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!cross_sizes_agree(v, p)) return cudaErrorInvalidValue;
  if (p.d_parts < 1 || p.d_parts > kMaxCrossParts || p.d_parts > p.range.hi - p.range.lo ||
      (p.d_parts > 1 && (v.parts.width != v.raw.width || v.parts.height < p.d_parts * v.raw.height)))
    return cudaErrorInvalidValue;
  const int rows = p.tile_rows ? p.tile_rows : tall_rows(p.sample);
  switch (p.sample) {
    case 1: return rows == 64 ? launch_match<64, 1>(v, p, stream) : rows == 32 ? launch_match<32, 1>(v, p, stream)
                                                                               : cudaErrorInvalidValue;
    case 2: return rows == 48 ? launch_match<48, 2>(v, p, stream) : rows == 16 ? launch_match<16, 2>(v, p, stream)
                                                                               : cudaErrorInvalidValue;
    case 3: return rows == 48 ? launch_match<48, 3>(v, p, stream) : rows == 16 ? launch_match<16, 3>(v, p, stream)
                                                                               : cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace cs::cuda
