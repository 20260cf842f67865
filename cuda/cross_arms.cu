// Method cross, stages C1 and C1b (stages.h): both views' crosses and
// census words (cross_matching.h).
#include <cstdint>

#include "cross_device.cuh"
#include "cuda_util.h"

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

// C1b: S = 1 reads pixels up to 2 around a pixel; S > 1 the sample
// colours 1 around it, each from the S x S pixels from it on (the block's
// are computed once into a second tile, kArmBox): all within the apron.
static_assert(kArmApron >= 2 && kArmApron >= kMaxSampleRestore, "C1b's reads within the tile");
constexpr int kArmBoxW = kArmX + 2, kArmBoxH = kArmRows + 2;

// Both views (blockIdx.z); a thread kArmRows / kArmY pixels of a column
// (the tile's apron read once for four times the pixels): the crosses and
// the words. The right view (z = 1) only on the sampled rows, whose pixels
// also reset the right map's keys (C4's offers come next).
template <int kS>
__global__ void __launch_bounds__(kArmX * kArmY) cross_arms_kernel(const __grid_constant__ CrossViews v, int tau,
                                                                  int arm_length) {
  constexpr int sample = kS;  // a constant: the row tests below are cheap
  __shared__ uint32_t tile[kArmTileH][kArmTileW];
  __shared__ uint32_t box[kS > 1 ? kArmBoxH : 1][kS > 1 ? kArmBoxW : 1];  // S > 1: from (x0 - 1, y0 - 1)
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
  // The image's pixel (px, py), from the tile.
  auto pixel = [&](int px, int py) { return tile[py - y0 + kArmApron][px - x0 + kArmApron]; };
  if constexpr (kS > 1) {
    for (int by = threadIdx.y; by < kArmBoxH; by += kArmY)
      for (int bx = threadIdx.x; bx < kArmBoxW; bx += kArmX) {
        const int px = x0 - 1 + bx, py = y0 - 1 + by;
        if (px >= 0 && px < w && py >= 0 && py < h) box[by][bx] = cross_sample_colour(pixel, px, py, w, h, kS);
      }
    __syncthreads();
  }
  const int x = x0 + threadIdx.x;
  if (x >= w) return;
  const uint32_t below_tau = static_cast<uint32_t>(0x7FFF - tau) * 0x00010001u;
  for (int ty = threadIdx.y; ty < kArmRows && y0 + ty < h; ty += kArmY) {
    const int y = y0 + ty;
    const bool sampled = y % sample == 0;
    if (z == 1 && sampled) drow(v.right_keys, y / sample)[x] = ~0ull;
    const int inside[4] = {x, w - 1 - x, y, h - 1 - y};
    // The right view's crosses on the sampled rows only, both views' words
    // (stages.h C1, C1b).
    const int cx = threadIdx.x + kArmApron, cy = ty + kArmApron;
    drow(v.arms[z], y)[x] = z == 0 || sampled ? pixel_arms(tile, cx, cy, inside, below_tau, arm_length) : 0u;
    uint32_t word = 0u;
    if (sampled) {
      if constexpr (kS == 1)
        word = cross_word_of([&](int px, int py) { return pixel(px, py) & 0xFFFFFFu; }, x, y, w, h,
                             cross_census_reach(1));
      else
        word = cross_word_of([&](int px, int py) { return box[py - y0 + 1][px - x0 + 1]; }, x, y, w, h,
                             cross_census_reach(kS));
    }
    drow(v.words[z], y)[x] = word;
  }
}

}  // namespace

cudaError_t enqueue_cross_arms(const CrossViews& v, const CrossParams& p, cudaStream_t stream) {
  if (!cross_sizes_agree(v, p)) return cudaErrorInvalidValue;
  const dim3 block(kArmX, kArmY);
  dim3 grid((v.colour[0].width + kArmX - 1) / kArmX, (v.colour[0].height + kArmRows - 1) / kArmRows);
  grid.z = 2;
  switch (p.sample) {
    case 1: cross_arms_kernel<1><<<grid, block, 0, stream>>>(v, p.tau, p.arm_length); break;
    case 2: cross_arms_kernel<2><<<grid, block, 0, stream>>>(v, p.tau, p.arm_length); break;
    case 3: cross_arms_kernel<3><<<grid, block, 0, stream>>>(v, p.tau, p.arm_length); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace cs::cuda
