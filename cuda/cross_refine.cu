// Method cross, stages C4 (the offered right map) to C8 (stages.h): the
// reliability check, bitwise fast voting, the median and the confidence
// (cross_matching.h).
#include <climits>

#include "cross_device.cuh"
#include "cuda_util.h"

namespace cs::cuda {
namespace {

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

// An estimate's votes, a byte each: bits 0 .. 11 of its code (stages.h C6:
// cross_vote_code) in bytes 0 .. 11, and 1 (one estimate) in byte 12. Sums
// of up to 2 L + 1 of them stay within a byte.
__device__ __forceinline__ uint4 votes_of(int d) {
  const int code = cross_vote_code(d);
  uint32_t word[4] = {0, 0, 0, 1};
#pragma unroll
  for (int l = 0; l < kCrossVoteBits; ++l) word[l / 4] |= static_cast<uint32_t>((code >> l) & 1) << (8 * (l % 4));
  return make_uint4(word[0], word[1], word[2], word[3]);
}

constexpr int kVoteRowThreads = 128;

// A block a run of kVoteRowThreads pixels of one row: each pixel's votes
// over its horizontal arm.
template <int kS>
__global__ void __launch_bounds__(kVoteRowThreads) cross_vote_rows_kernel(const __grid_constant__ CrossViews v,
                                                                         int vote_arm) {
  constexpr int sample = kS;  // a constant: the divisions below are shifts or multiplications
  __shared__ uint4 run[kVoteRowThreads + 2 * kMaxCrossArm];
  const int w = v.votes.width, y = blockIdx.y;
  const int x0 = blockIdx.x * kVoteRowThreads;
  // A row between the samples' holds no estimate: its votes are all 0, and
  // cross_vote_columns_kernel reads none of them.
  if (y % sample != 0) return;
  for (int k = threadIdx.x; k < kVoteRowThreads + 2 * kMaxCrossArm; k += kVoteRowThreads) {
    const int x = x0 - kMaxCrossArm + k;
    uint4 e = make_uint4(0, 0, 0, 0);
    if (x >= 0 && x < w && x % sample == 0) {
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
  for (int k = c - cross_vote_arm(arms, 0, vote_arm); k <= c + cross_vote_arm(arms, 1, vote_arm); ++k) {
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
template <int kS>
__global__ void __launch_bounds__(kVoteX * kVoteY) cross_vote_columns_kernel(const __grid_constant__ CrossViews v,
                                                                            Range range, int vote_arm) {
  constexpr int sample = kS;
  __shared__ uint4 col[kVoteTileH + 2 * kMaxCrossArm][kVoteX];
  const int w = v.votes.width, h = v.votes.height;
  const int x0 = blockIdx.x * kVoteX, y0 = blockIdx.y * kVoteTileH;
  // Only the samples' rows hold votes (cross_vote_rows_kernel).
  for (int k = threadIdx.y * kVoteX + threadIdx.x; k < (kVoteTileH + 2 * kMaxCrossArm) * kVoteX;
       k += kVoteX * kVoteY) {
    const int r = k / kVoteX, c = k % kVoteX;
    const int x = x0 + c, y = y0 - kMaxCrossArm + r;
    col[r][c] = x < w && y >= 0 && y < h && y % sample == 0 ? drow(v.votes, y)[x] : make_uint4(0, 0, 0, 0);
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
    // Only the samples' rows: the first at or below the arm's top (an arm
    // never leaves the image), then every sample-th.
    const int up = cross_vote_arm(arms, 2, vote_arm);
    const int last = ty + kMaxCrossArm + cross_vote_arm(arms, 3, vote_arm), top = y - up;
    for (int r = ty + kMaxCrossArm - up + (sample - top % sample) % sample; r <= last;) {
      uint32_t word[4] = {0, 0, 0, 0};
      for (const int end = min(last, r + sample * (kVoteRun - 1)); r <= end; r += sample) {
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
    int code = 0;
#pragma unroll
    for (int l = 0; l < kCrossVoteBits; ++l) {
      const int byte = l % 4;
      const uint32_t lanes = byte % 2 == 0 ? lo[l / 4] : hi[l / 4];
      const int ones = (lanes >> (16 * (byte / 2))) & 0xFFFF;
      if (2 * ones > n) code |= 1 << l;
    }
    int d = cross_vote_value(code);
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

}  // namespace

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

template <int kS>
cudaError_t launch_vote(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const int w = v.votes.width, h = v.votes.height;
  cross_vote_rows_kernel<kS>
      <<<dim3((w + kVoteRowThreads - 1) / kVoteRowThreads, h), kVoteRowThreads, 0, stream>>>(v, p.vote_arm_length);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  cross_vote_columns_kernel<kS><<<dim3((w + kVoteX - 1) / kVoteX, (h + kVoteTileH - 1) / kVoteTileH),
                                  dim3(kVoteX, kVoteY), 0, stream>>>(v, p.range, p.vote_arm_length);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_vote(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  switch (p.sample) {
    case 1: return launch_vote<1>(v, p, stream);
    case 2: return launch_vote<2>(v, p, stream);
    case 3: return launch_vote<3>(v, p, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t enqueue_cross_median(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  const dim3 block(32, 8);
  cross_median_kernel<<<grid_for(v.voted.width, v.voted.height, block), block, 0, stream>>>(v, p.sample);
  return cudaGetLastError();
}

}  // namespace cs::cuda
