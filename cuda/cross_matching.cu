// Method cross's kernels (cross_matching.h; stages.h C1 .. C8).
#include "cross_matching.h"

#include <string>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// A pixel outside the image in a tile of colours: no colour has a fourth
// byte (convert_to_rgb packs R, G, B, 0).
constexpr uint32_t kOutside = 0xFFFFFFFFu;

// ---------------------------------------------------------------- C1

constexpr int kArmX = 32, kArmY = 8;
// The rule reads pixels i + 1 and i + 2 for i < L: up to L + 1 away.
constexpr int kArmApron = kMaxCrossArm + 1;
constexpr int kArmTileW = kArmX + 2 * kArmApron, kArmTileH = kArmY + 2 * kArmApron;

__device__ __forceinline__ bool colour_differs(uint32_t p, uint32_t q, uint32_t tau4) {
  if (q == kOutside) return true;
  return __vcmpgtu4(__vabsdiffu4(p, q), tau4) != 0;
}

// Both views (blockIdx.z); a thread a pixel. The view 1 pixels of the
// sampled rows also reset the right map's keys (C4's offers come next).
__global__ void __launch_bounds__(kArmX * kArmY) cross_arms_kernel(const __grid_constant__ CrossViews v, int tau,
                                                                  int arm_length, int sample) {
  __shared__ uint32_t tile[kArmTileH][kArmTileW];
  const int z = blockIdx.z;
  const ImageView<const uint32_t> c = z ? v.colour[1] : v.colour[0];
  const int w = c.width, h = c.height;
  const int x0 = blockIdx.x * kArmX, y0 = blockIdx.y * kArmY;
  for (int k = threadIdx.y * kArmX + threadIdx.x; k < kArmTileW * kArmTileH; k += kArmX * kArmY) {
    const int tx = k % kArmTileW, ty = k / kArmTileW;
    const int x = x0 - kArmApron + tx, y = y0 - kArmApron + ty;
    tile[ty][tx] = x >= 0 && x < w && y >= 0 && y < h ? drow(c, y)[x] : kOutside;
  }
  __syncthreads();
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  if (x >= w || y >= h) return;
  if (z == 1 && y % sample == 0) drow(v.right_keys, y / sample)[x] = ~0ull;
  const int cx = threadIdx.x + kArmApron, cy = threadIdx.y + kArmApron;
  const uint32_t p = tile[cy][cx];
  const uint32_t tau4 = static_cast<uint32_t>(tau) * 0x01010101u;
  const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
  uint32_t arms = 0;
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    // Bit k - 1: phi(p, p_k), k = 1 .. kMaxCrossArm + 1; the arm is the
    // first i with bits i and i + 1 set (p_{i+1} and p_{i+2} differ), at
    // most L.
    uint32_t flags = 0;
#pragma unroll
    for (int k = 1; k <= kMaxCrossArm + 1; ++k)
      flags |= static_cast<uint32_t>(colour_differs(p, tile[cy + k * dy[a]][cx + k * dx[a]], tau4)) << (k - 1);
    const uint32_t pairs = flags & (flags >> 1);
    const int len = pairs ? min(__ffs(pairs) - 1, arm_length) : arm_length;
    arms |= static_cast<uint32_t>(len) << (8 * a);
  }
  drow(v.arms[z], y)[x] = arms;
}

// ---------------------------------------------------------------- C3, C4

// A block a tile of kTileW x kTileH samples, all disparities in turn (a
// thread follows kTileH / 8 anchors of one column through the sweep). Per
// disparity, over the tile with an apron of kMaxCrossArm samples:
//  1. the pixel costs of the region (coalesced reads), then their prefix
//     sums along each row, a thread an eighth of a row;
//  2. the horizontal sums H and sizes N_H of the tile's columns in every
//     row, a thread an eighth of a column, summed down the column as they
//     are made; then each part adds the parts above it (column
//     prefix sums from the region's first row);
//  3. each anchor's C and N as two differences of the column sums, then its
//     winner, rival and lagged minimum.
// The colours and the right view's arms are read through the cache (the
// left ones are the same every disparity, the right ones shift by one).
// kTileH 32 needs about 70 KiB of shared memory a block (two blocks an SM
// where 64 registers a thread suffice: 1.1 to 1.2 times faster at 1080p on
// an H200 than one block of 95 registers); 16 fits sm_75's 64 KiB.
constexpr int kTileW = 64, kApron = kMaxCrossArm;
constexpr int kRegionW = kTileW + 2 * kApron;
constexpr int kMatchThreads = 512;
constexpr int kRowParts = 8;   // threads a region row (step 1)
constexpr int kRowPart = kRegionW / kRowParts;
constexpr int kColumnParts = kMatchThreads / kTileW;  // 8 threads a tile column (step 2)
static_assert(kRegionW % kRowParts == 0 && kMatchThreads % kRowParts == 0, "whole row parts");

template <int kTileH>
struct MatchTile {
  static constexpr int kRegionH = kTileH + 2 * kApron;
  static constexpr int kAnchors = kTileH / kColumnParts;
  static constexpr int kColumnPart = kRegionH / kColumnParts;
  static_assert(kRegionH % kColumnParts == 0 && kTileH % kColumnParts == 0, "whole column parts");
  // larm: kRegionH x kTileW; prefix: kRegionH x (kRegionW + 1); hsum (the
  // column sums of H, inclusive within a column part): kRegionH x kTileW;
  // nsum (of N_H, 16 bits): kRegionH x kTileW; offsets of the parts, H and N.
  static constexpr size_t kShared = sizeof(uint32_t) * (kRegionH * kTileW + kRegionH * (kRegionW + 1) +
                                                        kRegionH * kTileW + 2 * kColumnParts * kTileW) +
                                    sizeof(uint16_t) * kRegionH * kTileW;
};

__device__ __forceinline__ int arm_of(uint32_t arms, int which) { return (arms >> (8 * which)) & 255; }

// kS: the sample-restore factor (a constant: the arms' divisions by it are
// then shifts or multiplications).
template <int kTileH, int kS>
__global__ void __launch_bounds__(kMatchThreads, 2) cross_match_kernel(const __grid_constant__ CrossViews v,
                                                                   const CrossParams p) {
  using T = MatchTile<kTileH>;
  constexpr int kRegionH = T::kRegionH, kAnchors = T::kAnchors, kColumnPart = T::kColumnPart;
  extern __shared__ uint32_t shared[];
  uint32_t* larm = shared;                               // kRegionH x kTileW
  uint32_t* prefix = larm + kRegionH * kTileW;           // kRegionH x (kRegionW + 1)
  uint32_t* hsum = prefix + kRegionH * (kRegionW + 1);   // kRegionH x kTileW
  uint32_t* hpart = hsum + kRegionH * kTileW;            // kColumnParts x kTileW: the parts' offsets
  uint32_t* npart = hpart + kColumnParts * kTileW;
  uint16_t* nsum = reinterpret_cast<uint16_t*>(npart + kColumnParts * kTileW);  // kRegionH x kTileW
  constexpr int S = kS;
  const int w = v.colour[0].width, h = v.colour[0].height;
  const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
  const int i0 = blockIdx.x * kTileW, j0 = blockIdx.y * kTileH;
  const int tid = threadIdx.x;
  for (int k = tid; k < kRegionH * kTileW; k += kMatchThreads) {
    const int i = i0 + k % kTileW, j = j0 - kApron + k / kTileW;
    larm[k] = i < ws && j >= 0 && j < hs ? drow(v.arms[0], S * j)[S * i] : 0;
  }
  // The region's rows of the colours and of the right view's arms (null
  // outside the samples' rows).
  __shared__ const uint32_t* rows[3][kRegionH];
  for (int r = tid; r < kRegionH; r += kMatchThreads) {
    const int j = j0 - kApron + r;
    const bool in = j >= 0 && j < hs;
    rows[0][r] = in ? drow(v.colour[0], S * j) : nullptr;
    rows[1][r] = in ? drow(v.colour[1], S * j) : nullptr;
    rows[2][r] = in ? drow(v.arms[1], S * j) : nullptr;
  }
  const bool masks = v.mask[0].data != nullptr;
  // Step 2's column part and step 3's anchors: column c of the tile.
  const int c = tid % kTileW, part = tid / kTileW;
  const int ai = i0 + c;
  uint32_t best[kAnchors], rival[kAnchors], lag2[kAnchors], prev[kAnchors];
  int winner[kAnchors];
#pragma unroll
  for (int k = 0; k < kAnchors; ++k) {
    best[k] = rival[k] = lag2[k] = prev[k] = kNoCrossCost;
    winner[k] = -1;
  }
  const uint32_t trunc = static_cast<uint32_t>(p.truncation);
  const int seg = tid % kRowParts;
  // With the background model a tile without a foreground sample has no
  // admissible candidate at any d (C3): its winners are all none, written
  // without the sweep (the background's tiles cost nothing here).
  bool foreground = !masks;
  if (masks)
#pragma unroll
    for (int k = 0; k < kAnchors; ++k) {
      const int aj = j0 + part + kColumnParts * k;
      if (ai < ws && aj < hs && drow(v.mask[0], S * aj)[S * ai]) foreground = true;
    }
  const bool sweep = __syncthreads_or(foreground);
  for (int d = sweep ? p.range.lo : p.range.hi; d < p.range.hi; ++d) {
    // 1. Pixel costs (adjacent threads, adjacent columns), then their prefix
    //    sums along each row of the region in place (a thread an eighth of
    //    a row: its own sums, then the parts before it by shuffles).
    for (int k = tid; k < kRegionH * kRegionW; k += kMatchThreads) {
      const int r = k / kRegionW, cc = k % kRegionW;
      const int i = i0 - kApron + cc, j = j0 - kApron + r;
      const int xr = S * i - d;
      uint32_t e = 0;
      if (j >= 0 && j < hs && i >= 0 && i < ws && xr >= 0)
        e = min(__vsadu4(__ldg(rows[0][r] + S * i), __ldg(rows[1][r] + xr)), trunc);
      prefix[r * (kRegionW + 1) + cc + 1] = e;
    }
    __syncthreads();
    for (int r = tid / kRowParts; r < kRegionH; r += kMatchThreads / kRowParts) {
      uint32_t* pr = prefix + r * (kRegionW + 1) + seg * kRowPart;
      uint32_t total = 0;
#pragma unroll
      for (int k = 1; k <= kRowPart; ++k) {
        total += pr[k];
        pr[k] = total;
      }
      uint32_t before = total;
#pragma unroll
      for (int o = 1; o < kRowParts; o <<= 1) {
        const uint32_t t = __shfl_up_sync(0xFFFFFFFFu, before, o, kRowParts);
        if (seg >= o) before += t;
      }
      before -= total;
      if (seg == 0) pr[0] = 0;
      if (before)
#pragma unroll
        for (int k = 1; k <= kRowPart; ++k) pr[k] += before;
    }
    __syncthreads();
    // 2. Horizontal sums over the overlap of both views' arms, summed down
    //    column c of the tile within this thread's part of the rows.
    {
      const int i = ai;
      const int xr = S * i - d;
      const bool column_in = i < ws && xr >= 0;
      uint32_t hrun = 0, nrun = 0;
      for (int k = 0; k < kColumnPart; ++k) {
        const int r = part * kColumnPart + k;
        const int j = j0 - kApron + r;
        if (column_in && j >= 0 && j < hs) {
          const uint32_t la = larm[r * kTileW + c], ra = __ldg(rows[2][r] + xr);
          const int hm = min(arm_of(la, 0), arm_of(ra, 0)) / S, hp = min(arm_of(la, 1), arm_of(ra, 1)) / S;
          const uint32_t* pr = prefix + r * (kRegionW + 1);
          hrun += pr[kApron + c + hp + 1] - pr[kApron + c - hm];
          nrun += hm + hp + 1;
        }
        hsum[r * kTileW + c] = hrun;
        nsum[r * kTileW + c] = static_cast<uint16_t>(nrun);
      }
      hpart[part * kTileW + c] = hrun;
      npart[part * kTileW + c] = nrun;
    }
    __syncthreads();
    // 2b. The parts before this thread's added to its rows: column sums
    //     from the region's first row.
    if (part > 0) {
      uint32_t hoff = 0, noff = 0;
      for (int q = 0; q < part; ++q) {
        hoff += hpart[q * kTileW + c];
        noff += npart[q * kTileW + c];
      }
      for (int k = 0; k < kColumnPart; ++k) {
        const int r = part * kColumnPart + k;
        hsum[r * kTileW + c] += hoff;
        nsum[r * kTileW + c] = static_cast<uint16_t>(nsum[r * kTileW + c] + noff);
      }
    }
    __syncthreads();
    // 3. Each anchor's vertical sum: the column sums at the ends of its overlap.
    const int xr = S * ai - d;
#pragma unroll
    for (int k = 0; k < kAnchors; ++k) {
      const int ar = part + kColumnParts * k, aj = j0 + ar;
      uint32_t cost = kNoCrossCost;
      if (ai < ws && aj < hs && xr >= 0 &&
          (!masks || (drow(v.mask[0], S * aj)[S * ai] && drow(v.mask[1], S * aj)[xr]))) {
        const uint32_t la = larm[(ar + kApron) * kTileW + c], ra = __ldg(rows[2][ar + kApron] + xr);
        const int vm = min(arm_of(la, 2), arm_of(ra, 2)) / S, vp = min(arm_of(la, 3), arm_of(ra, 3)) / S;
        const int b = ar + kApron + vp, a = ar + kApron - vm - 1;  // rows a + 1 .. b
        const uint32_t hb = hsum[b * kTileW + c], nb = nsum[b * kTileW + c];
        const uint32_t ha = a < 0 ? 0 : hsum[a * kTileW + c], na = a < 0 ? 0 : nsum[a * kTileW + c];
        cost = (hb - ha) | (nb - na) << 20;
      }
      if (cross_cost_below(cost, best[k])) {
        best[k] = cost;
        winner[k] = d;
        rival[k] = lag2[k];  // the candidates d - 2 and below
      } else if (cost != kNoCrossCost && d >= winner[k] + 2 && cross_cost_below(cost, rival[k])) {
        rival[k] = cost;
      }
      if (cross_cost_below(prev[k], lag2[k])) lag2[k] = prev[k];
      prev[k] = cost;
    }
    __syncthreads();
  }
  if (ai >= ws) return;
#pragma unroll
  for (int k = 0; k < kAnchors; ++k) {
    const int aj = j0 + part + kColumnParts * k;
    if (aj >= hs) continue;
    int kept = winner[k];
    if (kept >= 0 && !cross_unique(best[k], rival[k], p.uniqueness_ratio)) kept = -1;
    drow(v.raw, aj)[ai] = static_cast<int16_t>(winner[k]);
    drow(v.disparity, aj)[ai] = static_cast<int16_t>(kept);
    drow(v.best, aj)[ai] = best[k];
    drow(v.rival, aj)[ai] = rival[k];
  }
}

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
    for (int r = ty + kMaxCrossArm - arm_of(arms, 2); r <= ty + kMaxCrossArm + arm_of(arms, 3); ++r) {
      const uint4 e = col[r][threadIdx.x];
      const uint32_t word[4] = {e.x, e.y, e.z, e.w};
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
  // The 5th smallest: the value with at most 4 below it and more than 4 at
  // or below it.
  int d = n[0];
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    int below = 0, upto = 0;
#pragma unroll
    for (int j = 0; j < 9; ++j) {
      below += n[j] < n[i];
      upto += n[j] <= n[i];
    }
    if (below <= 4 && upto > 4) d = n[i];
  }
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
    k.kernel = "cross_match_kernel<16, " + std::to_string(s) + ">";
    k.threads = kMatchThreads;
    k.dynamic_shared = MatchTile<16>::kShared;
    k.min_blocks_per_sm = 1;
    k.required = true;
    k.what = "method cross: the aggregation's tile of 16 rows (every GPU)";
    out.push_back(k);
    k.kernel = "cross_match_kernel<32, " + std::to_string(s) + ">";
    k.dynamic_shared = MatchTile<32>::kShared;
    k.required = false;
    k.what = "method cross: the aggregation's tile of 32 rows (where it fits)";
    out.push_back(k);
  }
  return out;
}

cudaError_t enqueue_cross_arms(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!sizes_agree(v, p)) return cudaErrorInvalidValue;
  const dim3 block(kArmX, kArmY);
  dim3 grid = grid_for(v.colour[0].width, v.colour[0].height, block);
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
  for (cudaError_t e : {allow_shared<16, 1>(), allow_shared<16, 2>(), allow_shared<16, 3>()})
    if (e != cudaSuccess) return e;
  // The taller tile where the GPU has the shared memory for it.
  for (cudaError_t e : {allow_shared<32, 1>(), allow_shared<32, 2>(), allow_shared<32, 3>()})
    if (e != cudaSuccess) (void)cudaGetLastError();
  return cudaSuccess;
}

int cross_tile_rows(const DeviceLimits& limits) {
  // The dynamic part and the kernel's static rows of pointers.
  const size_t tall = MatchTile<32>::kShared + 3 * MatchTile<32>::kRegionH * sizeof(const uint32_t*);
  return limits.shared_per_block_optin >= tall ? 32 : 16;
}

template <int kTileH>
cudaError_t launch_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const dim3 grid((v.raw.width + kTileW - 1) / kTileW, (v.raw.height + kTileH - 1) / kTileH);
  const size_t shared = MatchTile<kTileH>::kShared;
  switch (p.sample) {
    case 1: cross_match_kernel<kTileH, 1><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    case 2: cross_match_kernel<kTileH, 2><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    case 3: cross_match_kernel<kTileH, 3><<<grid, kMatchThreads, shared, stream>>>(v, p); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t enqueue_cross_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!sizes_agree(v, p)) return cudaErrorInvalidValue;
  const int rows = p.tile_rows ? p.tile_rows : 32;
  if (rows == 32) return launch_match<32>(v, p, stream);
  if (rows == 16) return launch_match<16>(v, p, stream);
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
