// Method cross's kernels (cross_matching.h; stages.h C1 .. C8).
#include "cross_matching.h"

#include <algorithm>
#include <climits>
#include <string>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- C1

constexpr int kArmX = 32, kArmY = 8, kArmRows = 32;  // a block's pixels: kArmX x kArmRows
// The rule reads pixels i + 1 and i + 2 for i < L: up to L + 1 away.
constexpr int kArmApron = kMaxCrossArm + 1;
constexpr int kArmTileW = kArmX + 2 * kArmApron, kArmTileH = kArmRows + 2 * kArmApron;

// phi of C1 for two pixels q1, q2 inside the image against p: whether the
// largest of the three channels' differences lies above tau, for both at
// once in the halves of a word (convert_to_rgb's fourth bytes are 0, so the
// absolute differences' are too and serve as the zero bytes). Returns bit
// 0 for q1, bit 1 for q2. below_tau = (0x7FFF - tau) in both halves: a
// half with its top bit set after adding it held more than tau.
__device__ __forceinline__ uint32_t colours_differ(uint32_t p, uint32_t q1, uint32_t q2, uint32_t below_tau) {
  const uint32_t d1 = __vabsdiffu4(p, q1), d2 = __vabsdiffu4(p, q2);
  const uint32_t largest = __vimax3_u16x2(__byte_perm(d1, d2, 0x7430u), __byte_perm(d1, d2, 0x7531u),
                                          __byte_perm(d1, d2, 0x7632u));
  const uint32_t tops = (largest + below_tau) & 0x80008000u;
  return (tops >> 15 | tops >> 30) & 3u;
}

// C1's four arms of the pixel at (cx, cy) of a tile, packed as cross_arm
// reads them; inside: the image's pixels beyond it in each direction (those
// further out differ).
__device__ __forceinline__ uint32_t pixel_arms(const uint32_t (*tile)[kArmTileW], int cx, int cy, const int (&inside)[4],
                                               uint32_t below_tau, int arm_length) {
  const uint32_t p = tile[cy][cx];
  const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
  uint32_t arms = 0;
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    // Bit k - 1: phi(p, p_k), k = 1 .. kMaxCrossArm + 1; the arm is the
    // first i with bits i and i + 1 set (p_{i+1} and p_{i+2} differ), at
    // most L.
    uint32_t flags = ~0u << min(inside[a], 31);
#pragma unroll
    for (int k = 1; k <= kMaxCrossArm + 1; k += 2) {
      const int k2 = min(k + 1, kMaxCrossArm + 1);  // the last pair: bit 17 repeats bit 16 (no effect)
      flags |= colours_differ(p, tile[cy + k * dy[a]][cx + k * dx[a]], tile[cy + k2 * dy[a]][cx + k2 * dx[a]],
                              below_tau) << (k - 1);
    }
    const uint32_t pairs = flags & (flags >> 1);
    const int len = pairs ? min(__ffs(pairs) - 1, arm_length) : arm_length;
    arms |= static_cast<uint32_t>(len) << (8 * a);
  }
  return arms;
}

// Both views (blockIdx.z); a thread kArmRows / kArmY pixels of a column
// (the tile's apron read once for four times the pixels). The view 1 pixels
// of the sampled rows also reset the right map's keys (C4's offers come
// next).
__global__ void __launch_bounds__(kArmX * kArmY) cross_arms_kernel(const __grid_constant__ CrossViews v, int tau,
                                                                  int arm_length, int sample) {
  __shared__ uint32_t tile[kArmTileH][kArmTileW];
  const int z = blockIdx.z;
  const ImageView<const uint32_t> c = z ? v.colour[1] : v.colour[0];
  const int w = c.width, h = c.height;
  const int x0 = blockIdx.x * kArmX, y0 = blockIdx.y * kArmRows;
  for (int ty = threadIdx.y; ty < kArmTileH; ty += kArmY) {
    const int y = y0 - kArmApron + ty;
    const bool row_in = y >= 0 && y < h;
    for (int tx = threadIdx.x; tx < kArmTileW; tx += kArmX) {
      const int x = x0 - kArmApron + tx;
      tile[ty][tx] = row_in && x >= 0 && x < w ? drow(c, y)[x] : 0u;  // outside: see `inside`
    }
  }
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (x >= w) return;
  const uint32_t below_tau = static_cast<uint32_t>(0x7FFF - tau) * 0x00010001u;
  for (int ty = threadIdx.y; ty < kArmRows && y0 + ty < h; ty += kArmY) {
    const int y = y0 + ty;
    if (z == 1 && y % sample == 0) drow(v.right_keys, y / sample)[x] = ~0ull;
    const int inside[4] = {x, w - 1 - x, y, h - 1 - y};
    drow(v.arms[z], y)[x] = pixel_arms(tile, threadIdx.x + kArmApron, ty + kArmApron, inside, below_tau, arm_length);
  }
}

// ---------------------------------------------------------------- C3, C4

// A block a tile of kTileW x kTileH samples (the anchors), all disparities
// in turn, 32 warps. Per disparity, over the tile's region (an apron of
// kMaxCrossArm samples on each side):
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
//     difference of two column sums, then its winner, rival and lagged
//     minimum. The packed sums wrap around 2^32 but every region has C <
//     2^20 and N < 2^11, so the difference is exact.
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

template <int kTileH>
struct MatchTile {
  static constexpr int kRegionH = kTileH + 2 * kApron;
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
// above every real one (C <= kMaxCrossTruncation * N), so one comparison
// serves every case and all products stay within 32 bits (C < 2^20, N <
// 2^11). It becomes kNoCrossCost on the way out.
constexpr uint32_t kSweepNone = 0xFFFFFu | 1u << 20;
static_assert(kMaxCrossTruncation < 0xFFFFF && (2 * kMaxCrossArm + 1) * (2 * kMaxCrossArm + 1) < (1 << 11),
              "packed costs");
static_assert((2 * kMaxCrossArm + 1) * kMaxCrossTruncation < (1 << 16), "a row's horizontal sum in a half word");
__device__ __forceinline__ bool sweep_below(uint32_t a, uint32_t b) {
  return (a & 0xFFFFFu) * (b >> 20) < (b & 0xFFFFFu) * (a >> 20);
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

// Byte k of a packed word (an arm of cross_arm's packing).
template <int k>
__device__ __forceinline__ int byte_at(uint32_t word) {
  return static_cast<int>(__byte_perm(word, 0u, 0x4440u + k));
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
  using T = MatchTile<kTileH>;
  constexpr int kRegionH = T::kRegionH, kRows = T::kRowsPerWarp, kAnchors = T::kAnchors, S = kS;
  constexpr int kSumRows = T::kSumRows, kPairs = T::kRowPairs;
  extern __shared__ uint32_t shared[];
  // The region's rows of both views' colours and arms and of the right
  // mask (null outside the samples' rows; the others row 0 there).
  __shared__ const uint32_t* rows[4][kRegionH];  // left colour, right colour, left arms, right arms
  __shared__ const uint8_t* right_mask[kRegionH];
  const int w = v.colour[0].width, h = v.colour[0].height;
  const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
  const int i0 = blockIdx.x * kTileW, j0 = blockIdx.y * kTileH;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool masks = v.mask[0].data != nullptr;
  uint32_t* const sums = shared;  // 2 x kSumRows x kSumStride
  uint32_t* const prefix = shared + 2 * kSumRows * kSumStride + warp * kPairs * kPrefixStride;
  for (int r = tid; r < kRegionH; r += kMatchThreads) {
    const int j = j0 - kApron + r;
    const bool in = j >= 0 && j < hs;
    const int y = in ? S * j : 0;
    rows[0][r] = drow(v.colour[0], y);
    rows[1][r] = drow(v.colour[1], y);
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
  uint32_t best[kAnchors], rival[kAnchors], lag2[kAnchors], prev[kAnchors];
  int winner[kAnchors];
#pragma unroll
  for (int k = 0; k < kAnchors; ++k) {
    const int aj = j0 + anchor_row + T::kAnchorRowStep * k;
    const bool in = ai < ws && aj < hs;
    anchor_arms[k] = in ? drow(v.arms[0], S * aj)[S * ai] : 0;
    anchor_in |= static_cast<unsigned>(in) << k;
    anchor_fg |= static_cast<unsigned>(in && (!masks || drow(v.mask[0], S * aj)[S * ai])) << k;
    best[k] = rival[k] = lag2[k] = prev[k] = kSweepNone;
    winner[k] = -1;
  }
  const uint32_t trunc = static_cast<uint32_t>(p.truncation);
  // With the background model a tile without a foreground sample has no
  // admissible candidate at any d (C3): its winners are all none, written
  // without the sweep (the background's tiles cost nothing here). Beyond
  // S (i_last) no anchor of the tile has a right pixel: nothing changes.
  const bool sweep = __syncthreads_or(anchor_fg != 0);
  // This block's part of the range (blockIdx.z of gridDim.z: cross_d_parts).
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
        uint32_t e = min(__vsadu4(__ldg(rows[0][r] + cost_x[m]), __ldg(rows[1][r] + xr)), trunc);
        if (second) e |= min(__vsadu4(__ldg(rows[0][r + 1] + cost_x[m]), __ldg(rows[1][r + 1] + xr)), trunc) << 16;
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
    // C. Each anchor's C and N, its winner, rival and lagged minimum.
    const int xr = S * ai - d;
    const unsigned xr_read = max(anchor_x - d, 0);
#pragma unroll
    for (int k = 0; k < kAnchors; ++k) {
      const int ar = anchor_row + T::kAnchorRowStep * k + kApron;  // region row
      bool admissible = ((anchor_in >> k) & 1u) && xr >= 0;
      if (masks) admissible = admissible && ((anchor_fg >> k) & 1u) && right_mask[ar][xr];
      const uint32_t right = __ldg(rows[3][ar] + xr_read);
      const int vm = min(byte_at<2>(anchor_arms[k]), byte_at<2>(right)) / S;
      const int vp = min(byte_at<3>(anchor_arms[k]), byte_at<3>(right)) / S;
      uint32_t cost = sum[(ar + vp + 1) * kSumStride + c] - sum[(ar - vm) * kSumStride + c];
      cost = admissible ? cost : kSweepNone;
      if (sweep_below(cost, best[k])) {
        best[k] = cost;
        winner[k] = d;
        rival[k] = lag2[k];  // the candidates d - 2 and below
      } else if (d >= winner[k] + 2 && sweep_below(cost, rival[k])) {
        rival[k] = cost;
      }
      if (sweep_below(prev[k], lag2[k])) lag2[k] = prev[k];
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
    // A part's sweep for merge_parts_kernel: lag2 as the least cost at d
    // <= part.hi - 2 (where the sweep stopped early the last cost counts).
    uint32_t low = lag2[k];
    if (d_end < part.hi && sweep_below(prev[k], low)) low = prev[k];
    drow(v.parts, aj + blockIdx.z * hs)[ai] = make_uint4(best[k], rival[k], low, static_cast<uint32_t>(winner[k]));
  }
}

// C3's cost of sample (i, j) at d by its definition (stages.h, the CPU's
// cross_cost), in the sweep's form: none where d is not admissible.
template <int kS>
__device__ uint32_t direct_cost(const CrossViews& v, const CrossParams& p, int i, int j, int d) {
  constexpr int S = kS;
  const int x = S * i, xr = x - d, y = S * j;
  if (d < p.range.lo || d >= p.range.hi || xr < 0) return kSweepNone;
  if (v.mask[0].data && !(drow(v.mask[0], y)[x] && drow(v.mask[1], y)[xr])) return kSweepNone;
  const uint32_t la = drow(v.arms[0], y)[x], ra = drow(v.arms[1], y)[xr];
  const int vm = min(byte_at<2>(la), byte_at<2>(ra)) / S, vp = min(byte_at<3>(la), byte_at<3>(ra)) / S;
  uint32_t sum = 0, pixels = 0;
  for (int k = j - vm; k <= j + vp; ++k) {
    const uint32_t* lc = drow(v.colour[0], S * k);
    const uint32_t* rc = drow(v.colour[1], S * k);
    const uint32_t lk = drow(v.arms[0], S * k)[x], rk = drow(v.arms[1], S * k)[xr];
    const int hm = min(byte_at<0>(lk), byte_at<0>(rk)) / S, hp = min(byte_at<1>(lk), byte_at<1>(rk)) / S;
    for (int m = i - hm; m <= i + hp; ++m) sum += min(__vsadu4(lc[S * m], rc[S * m - d]), static_cast<uint32_t>(p.truncation));
    pixels += hm + hp + 1;
  }
  return sum | pixels << 20;
}

// The parts of the range swept apart (cross_d_parts > 1), joined in order
// of d into what one sweep of the whole range gives: the winner is the
// least (cost, d) of all parts; the rival the least (cost, d) more than one
// away from it. Joining part B (from d = m) to what came before (A):
//  - B's winner below A's: A's share of the rival is A's best, or, when B
//    won at m, A's least cost at d <= m - 2 (its lag2);
//  - else B's share is B's best, or, when A won at m - 1, B's least cost at
//    d >= m + 1: B's best unless B won at m, then the lesser of B's rival
//    (d >= m + 2) and the cost at m + 1 (computed here; rare).
// Ties keep the smaller d (A's). A sample a thread.
template <int kS>
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
      rival = sweep_below(b.y, a_share) ? b.y : a_share;
      best = b.x;
      winner = b_winner;
    } else {
      uint32_t b_share = b.x;
      if (winner == m - 1 && b_winner == m) {
        const uint32_t next = direct_cost<kS>(v, p, i, j, m + 1);
        b_share = sweep_below(b.y, next) ? b.y : next;
      }
      if (sweep_below(b_share, rival)) rival = b_share;
    }
    low = sweep_below(b.z, a_best) ? b.z : a_best;
  }
  write_winners(v, p, i, j, best, rival, winner);
}

__device__ __forceinline__ int arm_of(uint32_t arms, int which) { return (arms >> (8 * which)) & 255; }

// ---------------------------------------------------------------- C4 offers, C5

// An offer key: cost << 32 | d. a before b: a lower normalised cost, ties
// to the smaller d; ~0 (none) after every offer. The least key under this
// order is the same whatever order the offers arrive in.
__device__ __forceinline__ bool offer_before(unsigned long long a, unsigned long long b) {
  if (b == ~0ull) return true;
  const uint32_t ca = static_cast<uint32_t>(a >> 32), cb = static_cast<uint32_t>(b >> 32);
  if (cross_cost_below(ca, cb)) return true;
  if (cross_cost_below(cb, ca)) return false;
  return static_cast<uint32_t>(a) < static_cast<uint32_t>(b);
}

__global__ void __launch_bounds__(256) cross_offers_kernel(const __grid_constant__ CrossViews v, int sample) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= v.raw.width || j >= v.raw.height) return;
  const int d = drow(v.raw, j)[i];
  if (d < 0) return;
  const unsigned long long key = static_cast<unsigned long long>(drow(v.best, j)[i]) << 32 | static_cast<uint32_t>(d);
  unsigned long long* slot = drow(v.right_keys, j) + (sample * i - d);
  unsigned long long old = *slot;
  while (offer_before(key, old)) {
    const unsigned long long seen = atomicCAS(slot, old, key);
    if (seen == old) break;
    old = seen;
  }
}

__global__ void __launch_bounds__(256) cross_reliable_kernel(const __grid_constant__ CrossViews v, int sample, bool lr_check,
                                      int tolerance) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= v.disparity.width || j >= v.disparity.height) return;
  int d = drow(v.disparity, j)[i];
  if (d >= 0 && lr_check) {
    const unsigned long long key = drow(v.right_keys, j)[sample * i - d];
    const int dr = key == ~0ull ? -1 : static_cast<int>(static_cast<uint32_t>(key));
    if (dr < 0 || abs(d - dr) > tolerance) d = -1;
  }
  drow(v.reliable, j)[i] = static_cast<int16_t>(d);
}

// ---------------------------------------------------------------- C6

// An estimate's votes, a byte each: bits 0 .. 11 of d in bytes 0 .. 11,
// and 1 (one estimate) in byte 12. Sums of up to 2 L + 1 of them stay
// within a byte.
__device__ __forceinline__ uint4 votes_of(int d) {
  uint32_t word[4] = {0, 0, 0, 1};
#pragma unroll
  for (int l = 0; l < kCrossVoteBits; ++l) word[l / 4] |= static_cast<uint32_t>((d >> l) & 1) << (8 * (l % 4));
  return make_uint4(word[0], word[1], word[2], word[3]);
}

constexpr int kVoteRowThreads = 128;

// A block a run of kVoteRowThreads pixels of one row: each pixel's votes
// over its horizontal arm.
__global__ void __launch_bounds__(kVoteRowThreads) cross_vote_rows_kernel(const __grid_constant__ CrossViews v,
                                                                         int sample) {
  __shared__ uint4 run[kVoteRowThreads + 2 * kMaxCrossArm];
  const int w = v.votes.width, y = blockIdx.y;
  const int x0 = blockIdx.x * kVoteRowThreads;
  const bool row_sampled = y % sample == 0;
  for (int k = threadIdx.x; k < kVoteRowThreads + 2 * kMaxCrossArm; k += kVoteRowThreads) {
    const int x = x0 - kMaxCrossArm + k;
    uint4 e = make_uint4(0, 0, 0, 0);
    if (row_sampled && x >= 0 && x < w && x % sample == 0) {
      const int d = drow(v.reliable, y / sample)[x / sample];
      if (d >= 0) e = votes_of(d);
    }
    run[k] = e;
  }
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (x >= w) return;
  const uint32_t arms = drow(v.arms[0], y)[x];
  uint4 acc = make_uint4(0, 0, 0, 0);
  const int c = threadIdx.x + kMaxCrossArm;
  for (int k = c - arm_of(arms, 0); k <= c + arm_of(arms, 1); ++k) {
    const uint4 e = run[k];
    acc.x += e.x, acc.y += e.y, acc.z += e.z, acc.w += e.w;
  }
  drow(v.votes, y)[x] = acc;
}

constexpr int kVoteX = 32, kVoteY = 8, kVoteTileH = 32;
constexpr int kVoteRun = 255 / (2 * kMaxCrossArm + 1);  // rows whose byte counts cannot carry

// A block a kVoteX x kVoteTileH tile: each pixel's row votes summed over
// its vertical arm (16-bit lanes: a region holds at most 33 x 33
// estimates), then each bit by strict majority (C6).
__global__ void __launch_bounds__(kVoteX * kVoteY) cross_vote_columns_kernel(const __grid_constant__ CrossViews v,
                                                                            Range range) {
  __shared__ uint4 col[kVoteTileH + 2 * kMaxCrossArm][kVoteX];
  const int w = v.votes.width, h = v.votes.height;
  const int x0 = blockIdx.x * kVoteX, y0 = blockIdx.y * kVoteTileH;
  for (int k = threadIdx.y * kVoteX + threadIdx.x; k < (kVoteTileH + 2 * kMaxCrossArm) * kVoteX;
       k += kVoteX * kVoteY) {
    const int r = k / kVoteX, c = k % kVoteX;
    const int x = x0 + c, y = y0 - kMaxCrossArm + r;
    col[r][c] = x < w && y >= 0 && y < h ? drow(v.votes, y)[x] : make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (x >= w) return;
  const bool masks = v.mask[0].data != nullptr;
  for (int q = 0; q < kVoteTileH / kVoteY; ++q) {
    const int ty = threadIdx.y + kVoteY * q, y = y0 + ty;
    if (y >= h) break;
    const uint32_t arms = drow(v.arms[0], y)[x];
    uint32_t lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};  // bytes 0, 2 and 1, 3 of each word, 16 bits each
    // Up to kVoteRun rows summed in bytes (a row's counts are at most 2 L +
    // 1 = 33), then widened into the 16-bit lanes.
    const int last = ty + kMaxCrossArm + arm_of(arms, 3);
    for (int r = ty + kMaxCrossArm - arm_of(arms, 2); r <= last;) {
      uint32_t word[4] = {0, 0, 0, 0};
      for (const int end = min(last, r + kVoteRun - 1); r <= end; ++r) {
        const uint4 e = col[r][threadIdx.x];
        word[0] += e.x, word[1] += e.y, word[2] += e.z, word[3] += e.w;
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        lo[i] += word[i] & 0x00FF00FFu;
        hi[i] += (word[i] >> 8) & 0x00FF00FFu;
      }
    }
    const int n = lo[3] & 0xFFFF;
    int d = 0;
#pragma unroll
    for (int l = 0; l < kCrossVoteBits; ++l) {
      const int byte = l % 4;
      const uint32_t lanes = byte % 2 == 0 ? lo[l / 4] : hi[l / 4];
      const int ones = (lanes >> (16 * (byte / 2))) & 0xFFFF;
      if (2 * ones > n) d |= 1 << l;
    }
    if (n == 0 || d < range.lo || d >= range.hi || (masks && !drow(v.mask[0], y)[x])) d = -1;
    drow(v.voted, y)[x] = static_cast<int16_t>(d);
  }
}

// ---------------------------------------------------------------- C7, C8 confidence

__global__ void __launch_bounds__(256) cross_median_kernel(const __grid_constant__ CrossViews v, int sample) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int w = v.voted.width, h = v.voted.height;
  if (x >= w || y >= h) return;
  int n[9];
#pragma unroll
  for (int b = -1; b <= 1; ++b)
#pragma unroll
    for (int a = -1; a <= 1; ++a)
      n[(b + 1) * 3 + a + 1] = drow(v.voted, min(max(y + b, 0), h - 1))[min(max(x + a, 0), w - 1)];
  // The 5th smallest by a min/max network: each row of three sorted, then
  // the median of (the largest row minimum, the median of the row medians,
  // the smallest row maximum). (A min/max network that sorts every 0/1
  // input right selects right on any input; every 3^9 input of 0, 1, 2 was
  // checked when it was written.)
  int lo = INT_MIN, mid[3], hi = INT_MAX;
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    const int a = n[3 * r], b = n[3 * r + 1], c = n[3 * r + 2];
    const int small = min(a, b), large = max(a, b);
    lo = max(lo, min(small, c));
    hi = min(hi, max(large, c));
    mid[r] = max(small, min(large, c));
  }
  const int m = max(min(mid[0], mid[1]), min(max(mid[0], mid[1]), mid[2]));
  int d = max(min(lo, m), min(max(lo, m), hi));
  if (v.mask[0].data && !drow(v.mask[0], y)[x]) d = -1;
  drow(v.final_map, y)[x] = static_cast<int16_t>(d);
  if (!v.confidence.data) return;
  uint8_t c = 0;
  if (d >= 0) {
    const int i = x / sample, j = y / sample;
    const int won = drow(v.raw, j)[i];
    if (won >= 0 && abs(d - won) <= 1) c = cross_confidence_of(drow(v.best, j)[i], drow(v.rival, j)[i]);
  }
  drow(v.confidence, y)[x] = c;
}

bool sizes_agree(const CrossViews& v, const CrossParams& p) {
  const int w = v.colour[0].width, h = v.colour[0].height;
  const int ws = cross_samples(w, p.sample), hs = cross_samples(h, p.sample);
  auto full = [&](int vw, int vh) { return vw == w && vh == h; };
  auto samples = [&](int vw, int vh) { return vw == ws && vh == hs; };
  return p.sample >= 1 && p.sample <= kMaxSampleRestore && p.arm_length >= 1 && p.arm_length <= kMaxCrossArm &&
         full(v.colour[1].width, v.colour[1].height) && full(v.arms[0].width, v.arms[0].height) &&
         full(v.arms[1].width, v.arms[1].height) && samples(v.raw.width, v.raw.height) &&
         samples(v.disparity.width, v.disparity.height) && samples(v.best.width, v.best.height) &&
         samples(v.rival.width, v.rival.height) && samples(v.reliable.width, v.reliable.height) &&
         v.right_keys.width == w && v.right_keys.height == hs && full(v.votes.width, v.votes.height) &&
         full(v.voted.width, v.voted.height) && full(v.final_map.width, v.final_map.height) &&
         (!v.confidence.data || full(v.confidence.width, v.confidence.height)) &&
         (!v.mask[0].data || (full(v.mask[0].width, v.mask[0].height) && v.mask[1].data));
}

}  // namespace

std::vector<KernelLaunch> cross_kernel_launches() {
  std::vector<KernelLaunch> out;
  for (int s = 1; s <= kMaxSampleRestore; ++s) {
    KernelLaunch k;
    k.kernel = "cross_match_kernel<32, " + std::to_string(s) + ">";
    k.threads = kMatchThreads;
    k.dynamic_shared = MatchTile<32>::kShared;
    k.min_blocks_per_sm = 1;
    k.required = true;
    k.what = "method cross: the aggregation's tile of 32 rows (every GPU)";
    out.push_back(k);
    k.kernel = "cross_match_kernel<64, " + std::to_string(s) + ">";
    k.dynamic_shared = MatchTile<64>::kShared;
    k.required = false;
    k.what = "method cross: the aggregation's tile of 64 rows (where it fits)";
    out.push_back(k);
  }
  return out;
}

cudaError_t enqueue_cross_arms(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!sizes_agree(v, p)) return cudaErrorInvalidValue;
  const dim3 block(kArmX, kArmY);
  dim3 grid((v.colour[0].width + kArmX - 1) / kArmX, (v.colour[0].height + kArmRows - 1) / kArmRows);
  grid.z = 2;
  cross_arms_kernel<<<grid, block, 0, stream>>>(v, p.tau, p.arm_length, p.sample);
  return cudaGetLastError();
}

template <int kTileH, int kS>
cudaError_t allow_shared() {
  return cudaFuncSetAttribute(cross_match_kernel<kTileH, kS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(MatchTile<kTileH>::kShared));
}

cudaError_t prepare_cross_match() {
  for (cudaError_t e : {allow_shared<32, 1>(), allow_shared<32, 2>(), allow_shared<32, 3>()})
    if (e != cudaSuccess) return e;
  // The taller tile where the GPU has the shared memory for it.
  for (cudaError_t e : {allow_shared<64, 1>(), allow_shared<64, 2>(), allow_shared<64, 3>()})
    if (e != cudaSuccess) (void)cudaGetLastError();
  return cudaSuccess;
}

int cross_tile_rows(const DeviceLimits& limits) {
  // The dynamic part and the kernel's static rows of pointers.
  const size_t tall = MatchTile<64>::kShared + 5 * MatchTile<64>::kRegionH * sizeof(const uint32_t*);
  return limits.shared_per_block_optin >= tall ? 64 : 32;
}

int cross_d_parts(int width, int height, int sample, Range range, int tile_rows, const DeviceLimits& limits) {
  // A block an SM (1024 threads). Parts of the range make more blocks of
  // less work each; the frame takes about waves / parts of one part's
  // sweep of the whole range. A part is kept to at least kMinPartSpan
  // disparities, and more parts must save a tenth (the join's cost).
  constexpr int kMinPartSpan = 16;
  const long tiles = static_cast<long>((cross_samples(width, sample) + kTileW - 1) / kTileW) *
                     ((cross_samples(height, sample) + tile_rows - 1) / tile_rows);
  const int sms = std::max(limits.sm_count, 1), span = range.hi - range.lo;
  int best = 1;
  double best_time = static_cast<double>((tiles + sms - 1) / sms);
  for (int parts = 2; parts <= kMaxCrossParts && parts * kMinPartSpan <= span; ++parts) {
    const double time = static_cast<double>((tiles * parts + sms - 1) / sms) / parts;
    if (time < 0.9 * best_time) {
      best = parts;
      best_time = time;
    }
  }
  return best;
}

template <int kTileH>
cudaError_t launch_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const int parts = p.d_parts;
  const dim3 grid((v.raw.width + kTileW - 1) / kTileW, (v.raw.height + kTileH - 1) / kTileH, parts);
  const size_t shared = MatchTile<kTileH>::kShared;
  switch (p.sample) {
    case 1: cross_match_kernel<kTileH, 1><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    case 2: cross_match_kernel<kTileH, 2><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    case 3: cross_match_kernel<kTileH, 3><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    default: return cudaErrorInvalidValue;
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || parts == 1) return e;
  const dim3 block(32, 8), merge_grid = grid_for(v.raw.width, v.raw.height, block);
  switch (p.sample) {
    case 1: merge_parts_kernel<1><<<merge_grid, block, 0, stream>>>(v, p, parts); break;
    case 2: merge_parts_kernel<2><<<merge_grid, block, 0, stream>>>(v, p, parts); break;
    case 3: merge_parts_kernel<3><<<merge_grid, block, 0, stream>>>(v, p, parts); break;
  }
  return cudaGetLastError();
}

cudaError_t enqueue_cross_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!sizes_agree(v, p)) return cudaErrorInvalidValue;
  if (p.d_parts < 1 || p.d_parts > kMaxCrossParts || p.d_parts > p.range.hi - p.range.lo ||
      (p.d_parts > 1 && (v.parts.width != v.raw.width || v.parts.height < p.d_parts * v.raw.height)))
    return cudaErrorInvalidValue;
  const int rows = p.tile_rows ? p.tile_rows : 64;
  if (rows == 64) return launch_match<64>(v, p, stream);
  if (rows == 32) return launch_match<32>(v, p, stream);
  return cudaErrorInvalidValue;
}

cudaError_t enqueue_cross_offers(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const dim3 block(32, 8);
  cross_offers_kernel<<<grid_for(v.raw.width, v.raw.height, block), block, 0, stream>>>(v, p.sample);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_reliable(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const dim3 block(32, 8);
  cross_reliable_kernel<<<grid_for(v.raw.width, v.raw.height, block), block, 0, stream>>>(v, p.sample, p.lr_check,
                                                                                        p.tolerance);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_vote(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const int w = v.votes.width, h = v.votes.height;
  cross_vote_rows_kernel<<<dim3((w + kVoteRowThreads - 1) / kVoteRowThreads, h), kVoteRowThreads, 0, stream>>>(
      v, p.sample);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  cross_vote_columns_kernel<<<dim3((w + kVoteX - 1) / kVoteX, (h + kVoteTileH - 1) / kVoteTileH),
                              dim3(kVoteX, kVoteY), 0, stream>>>(v, p.range);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_median(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const dim3 block(32, 8);
  cross_median_kernel<<<grid_for(v.voted.width, v.voted.height, block), block, 0, stream>>>(v, p.sample);
  return cudaGetLastError();
}

}  // namespace cs::cuda
