#include "background.h"

#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32;
// A region is a block's serial work; 512 threads a block, not 1024, so that
// four blocks share an SM and a 1080p pair's 270 regions run in one wave of
// a 132-SM GPU instead of two.
constexpr int kThreadsY = 16;
constexpr int kThreads = kThreadsX * kThreadsY;

// A region's masks are made on bits: each row of the region and its apron
// as kWords 32-bit words, bit b of word j the pixel x0 - 32 + 32 j + b, so
// that a pass over the region is a few word operations a row. The apron
// (one pixel for the speckle filter, r + r for the closing's dilation and
// erosion, 1 + 1 for the opening's) fits in the word on either side.
constexpr int kWords = kMaskRegion / 32 + 2;
__host__ __device__ constexpr int apron(int radius) { return 3 + 2 * radius; }
constexpr int kMaxApron = apron(8);  // Params' largest morph radius
static_assert(kMaxApron <= 32, "the apron fits in a word");
constexpr int kMaxRows = kMaskRegion + 2 * kMaxApron;
static_assert(kMaskRegion == kModelBlockCells * kBackgroundCell, "a region's columns are one block's of the pixels' pass");

// Bits [0, n) set.
__device__ __forceinline__ unsigned low_bits(int n) { return n >= 32 ? 0xFFFFFFFFu : n <= 0 ? 0u : (1u << n) - 1u; }

// A row's bits shifted so that bit b holds the pixel k to its right (k > 0)
// or -k to its left (k < 0), with the words beside it (0 beyond the row).
__device__ __forceinline__ unsigned shifted(const unsigned* row, int j, int k) {
  const unsigned c = row[j];
  if (k > 0) return (c >> k) | (j + 1 < kWords ? row[j + 1] << (32 - k) : 0u);
  if (k < 0) return (c << -k) | (j > 0 ? row[j - 1] >> (32 + k) : 0u);
  return c;
}

// Every other bit of x (bits 0, 2, .., 30) packed into bits 0 .. 15.
__device__ __forceinline__ unsigned even_bits(unsigned x) {
  x &= 0x55555555u;
  x = (x | (x >> 1)) & 0x33333333u;
  x = (x | (x >> 2)) & 0x0F0F0F0Fu;
  x = (x | (x >> 4)) & 0x00FF00FFu;
  return (x | (x >> 8)) & 0x0000FFFFu;
}

struct RegionBits {
  unsigned a[kMaxRows][kWords];
  unsigned b[kMaxRows][kWords];
  // The pooled levels 1 .. kMaxLevels - 1 of the region, a bit a pixel:
  // level l's row y in words [pool_word(l, y), +pool_words(l)).
  unsigned pool[kMaskRegion / 2 * 2 + kMaskRegion / 4 + 64];
};

__device__ __forceinline__ int pool_words(int l) { return (kMaskRegion >> l) > 32 ? (kMaskRegion >> l) / 32 : 1; }
__device__ __forceinline__ int pool_base(int l) {
  int base = 0;
  for (int k = 1; k < l; ++k) base += (kMaskRegion >> k) * pool_words(k);
  return base;
}

// The region's level-0 mask (stages.h clean_mask) into bits.a, rows [ap,
// ap + kMaskRegion) and words 1 .. kWords - 2 holding it (ap = apron);
// bits.b is scratch. Returns false, with bits.a unspecified, where the
// speckle filter leaves no foreground in the region and its apron (camera
// noise alone): the closing of nothing is nothing. Every thread calls it.
__device__ bool clean_region(const ImageView<const uint32_t>& raw, int x0, int y0, int width, int height, int radius,
                             RegionBits& bits) {
  const int ap = apron(radius), rows = kMaskRegion + 2 * ap;
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const int gx0 = x0 - 32, gy0 = y0 - ap;  // image position of bit 0 of word 0, row 0
  // Which bits of word j of a row lie in the image (rows: the caller's test).
  auto inside = [&](int j) {
    const int x = gx0 + 32 * j;
    return x >= width || x + 32 <= 0 ? 0u : (low_bits(width - x) & ~low_bits(-x));
  };
  // The raw test's bits (0 outside the image) into b: its words are the
  // rows' words, the region starting on one.
  for (int q = tid; q < rows * kWords; q += kThreads) {
    const int r = q / kWords, j = q - r * kWords;
    const int y = gy0 + r, x = gx0 + 32 * j;
    bits.b[r][j] = y >= 0 && y < height && x >= 0 && x < width ? drow(raw, y)[x / 32] : 0u;
  }
  __syncthreads();
  // The speckle and pinhole filter (stages.h clean_mask: a foreground pixel
  // stays with 2 of its 8 neighbours foreground, a background one turns with
  // 5; outside the image counts as background), rows [1, rows - 1): per bit,
  // the rows' sums of their neighbours as two bits (the middle row's
  // without the centre), added.
  bool any = false;
  for (int q = tid; q < rows * kWords; q += kThreads) {
    const int r = q / kWords, j = q - r * kWords;
    unsigned v = 0;
    if (r >= 1 && r < rows - 1) {
      unsigned s0[3], s1[3];
      const unsigned centre = bits.b[r][j];
#pragma unroll
      for (int i = 0; i < 3; ++i) {
        const unsigned* row = bits.b[r - 1 + i];
        const unsigned l = shifted(row, j, -1), c = i == 1 ? 0u : row[j], rr = shifted(row, j, 1);
        s0[i] = l ^ c ^ rr;
        s1[i] = (l & c) | (l & rr) | (c & rr);
      }
      // u = s[0] + s[1] (u2 u1 u0), then + s[2] (v3 v2 v1 v0).
      const unsigned u0 = s0[0] ^ s0[1], k0 = s0[0] & s0[1];
      const unsigned u1 = s1[0] ^ s1[1] ^ k0, u2 = (s1[0] & s1[1]) | (s1[0] & k0) | (s1[1] & k0);
      const unsigned v0 = u0 ^ s0[2], k1 = u0 & s0[2];
      const unsigned v1 = u1 ^ s1[2] ^ k1, k2 = (u1 & s1[2]) | (u1 & k1) | (s1[2] & k1);
      const unsigned v2 = u2 ^ k2, v3 = u2 & k2;
      const int y = gy0 + r;
      const unsigned two = v3 | v2 | v1, five = v3 | (v2 & (v1 | v0));  // at least 2, 5 neighbours
      v = ((centre & two) | (~centre & five)) & (y >= 0 && y < height ? inside(j) : 0u);  // 0 outside (the dilation's)
    }
    bits.a[r][j] = v;
    any = any || v != 0;
  }
  if (!__syncthreads_or(any)) return false;
  // The closing: dilation (OR; outside the image counts 0, as a holds it),
  // then erosion (AND; outside counts 1), rows then columns each; then the
  // opening of radius 1, erosion then dilation. A pass fills rows [m, rows -
  // m); its row neighbours and bits beyond a word's reach lie outside what
  // the later passes read.
  auto horizontal = [&](unsigned (*src)[kWords], unsigned (*dst)[kWords], bool dilate, int m, int rad) {
    for (int q = tid; q < rows * kWords; q += kThreads) {
      const int r = q / kWords, j = q - r * kWords;
      if (r < m || r >= rows - m) continue;
      unsigned v = src[r][j];
      for (int k = 1; k <= rad; ++k) {
        const unsigned lo = shifted(src[r], j, -k), hi = shifted(src[r], j, k);
        v = dilate ? (v | lo | hi) : (v & lo & hi);
      }
      dst[r][j] = v;
    }
    __syncthreads();
  };
  auto vertical = [&](unsigned (*src)[kWords], unsigned (*dst)[kWords], bool dilate, int m, int rad) {
    for (int q = tid; q < rows * kWords; q += kThreads) {
      const int r = q / kWords, j = q - r * kWords;
      if (r < m || r >= rows - m) continue;
      unsigned v = src[r][j];
      for (int k = 1; k <= rad; ++k) v = dilate ? (v | src[r - k][j] | src[r + k][j]) : (v & src[r - k][j] & src[r + k][j]);
      dst[r][j] = v;
    }
    __syncthreads();
  };
  // Outside the image the neutral value of the next step: 0 for a
  // dilation, 1 for an erosion.
  auto neutral = [&](bool one) {
    for (int q = tid; q < rows * kWords; q += kThreads) {
      const int r = q / kWords, j = q - r * kWords;
      const int y = gy0 + r;
      const unsigned in = y >= 0 && y < height ? inside(j) : 0u;
      bits.a[r][j] = one ? bits.a[r][j] | ~in : bits.a[r][j] & in;
    }
    __syncthreads();
  };
  const int rad = radius;
  int m = 1;  // rows [m, rows - m) hold the mask so far
  if (rad > 0) {
    horizontal(bits.a, bits.b, true, m, rad);
    vertical(bits.b, bits.a, true, m + rad, rad);
    neutral(true);
    horizontal(bits.a, bits.b, false, m + rad, rad);
    vertical(bits.b, bits.a, false, m + 2 * rad, rad);
    m += 2 * rad;
  } else {
    neutral(true);
  }
  horizontal(bits.a, bits.b, false, m, 1);
  vertical(bits.b, bits.a, false, m + 1, 1);
  neutral(false);
  horizontal(bits.a, bits.b, true, m + 1, 1);
  vertical(bits.b, bits.a, true, m + 2, 1);
  return true;
}

// clean_region, and then whether the region's level-0 mask (its pixels in
// the image) holds any foreground: where the speckle filter leaves camera
// noise that the opening then removes, the region is as empty as one with
// no raw bit (its outputs all background, and not dirty after). Every
// thread calls it.
__device__ bool region_holds_mask(const ImageView<const uint32_t>& raw, int x0, int y0, int width, int height,
                                  int radius, RegionBits& bits) {
  if (!clean_region(raw, x0, y0, width, height, radius, bits)) return false;
  static_assert(kMaskRegion * kMaskRegion / 32 == kThreads, "a word of the region a thread");
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const int j = tid / (kMaskRegion / 32), i = tid - j * (kMaskRegion / 32);
  const int cols = min(kMaskRegion, width - x0), rows = min(kMaskRegion, height - y0);
  const unsigned keep = j < rows ? low_bits(cols - 32 * i) : 0u;
  return __syncthreads_or((bits.a[apron(radius) + j][1 + i] & keep) != 0) != 0;
}

// Whether the raw words around a region hold no foreground (0), foreground
// on every pixel of the image (1), or both (2). Every thread calls it.
__device__ int raw_uniformity(const ImageView<const uint32_t>& raw, int x0, int y0, int a, int width, int height) {
  // The words under the region and its apron (a <= 32: one word a side).
  const int wx0 = max(x0 - 32, 0) / 32, wx1 = min(x0 + kMaskRegion + 32, (width + 31) / 32 * 32) / 32;
  const int ry0 = max(y0 - a, 0), ry1 = min(y0 + kMaskRegion + a, height);
  const int nx = wx1 - wx0, n = nx * max(ry1 - ry0, 0);
  bool any = false, all = true;
  for (int i = threadIdx.x + threadIdx.y * kThreadsX; i < n; i += kThreads) {
    const int y = ry0 + i / nx, wx = wx0 + i % nx;
    const unsigned word = drow(raw, y)[wx];
    any = any || word != 0;
    all = all && word == low_bits(width - 32 * wx);  // every pixel of the word in the image
  }
  const int found_any = __syncthreads_or(any), found_all = __syncthreads_and(all);
  return !found_any ? 0 : (found_all ? 1 : 2);
}

// Four mask bytes (255 foreground, 0 not) from four bits.
__device__ __forceinline__ uint32_t mask_bytes(unsigned nibble) {
  return (nibble & 1u ? 0xFFu : 0u) | (nibble & 2u ? 0xFF00u : 0u) | (nibble & 4u ? 0xFF0000u : 0u) |
         (nibble & 8u ? 0xFF000000u : 0u);
}

// A region of one view (the block's): its masks, occupancy and counts.
// Every thread calls it; every return is the whole block's.
__device__ void mask_region(const MaskViews& v, int width, int height, int radius) {
  __shared__ RegionBits bits;
  __shared__ unsigned s_count[kMaxLevels];
  __shared__ uint8_t s_cells[kOccupancyLevels][(kMaskRegion / kOccupancyCell) * (kMaskRegion / kOccupancyCell)];
  // The two views' blocks of a region are neighbours in the grid (x: 2
  // region + view), so that a moving object's regions of both views start
  // on different SMs rather than view 1's a grid's width after view 0's.
  const int view = blockIdx.x & 1, rx = blockIdx.x >> 1;
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const int x0 = rx * kMaskRegion, y0 = blockIdx.y * kMaskRegion;
  if ((blockIdx.x | blockIdx.y) == 0 && tid == 0 && *v.frames_seen < INT_MAX) ++*v.frames_seen;
  uint8_t& dirty = v.dirty[(view * gridDim.y + blockIdx.y) * v.regions_x + rx];
  if (v.raw_any[view].data && !dirty) {
    // The pixels' pass's blocks under the region and its apron (a word a
    // side, apron(radius) rows): with no foreground bit in any, there is
    // nothing to read.
    const ImageView<const uint8_t>& marks = v.raw_any[view];
    const int rows_per = kModelBlockCellRows * kBackgroundCell;  // image rows a block
    const int ap = apron(radius);
    const int j0 = max(y0 - ap, 0) / rows_per, j1 = min((y0 + kMaskRegion + ap - 1) / rows_per, marks.height - 1);
    const int i0 = max(rx - 1, 0), i1 = min(rx + 1, marks.width - 1);
    const int cols = i1 - i0 + 1, n = cols * (j1 - j0 + 1);
    bool any = false;
    for (int q = tid; q < n; q += kThreads) any = any || drow(marks, j0 + q / cols)[i0 + q % cols] != 0;
    if (!__syncthreads_or(any)) return;
  }
  const int raw = raw_uniformity(v.raw[view], x0, y0, apron(radius), width, height);
  // A region that stays empty: its outputs are empty already.
  if (raw == 0 && !dirty) return;
  const int ap = apron(radius);
  // Raw foreground everywhere is foreground everywhere (an image corner
  // keeps 3 of its 8 neighbours; the closing and opening keep it all).
  int uniform = raw;
  if (uniform == 2 && !region_holds_mask(v.raw[view], x0, y0, width, height, radius, bits)) {
    // Noise alone (the filters leave nothing): an empty region, already so
    // where it was; cleared, and not dirty after, where it was not.
    if (!dirty) return;
    uniform = 0;
  }
  if (tid < kMaxLevels) s_count[tid] = 0;
  for (int i = tid; i < kOccupancyLevels * (kMaskRegion / kOccupancyCell) * (kMaskRegion / kOccupancyCell); i += kThreads)
    (&s_cells[0][0])[i] = 0;
  __syncthreads();
  // Level 0, from the cleaned bits, and each next level pooled from the
  // last (bits.pool), a bit a pixel; pixels outside the level are 0 there.
  for (int l = 0; l < v.levels; ++l) {
    const int n = kMaskRegion >> l, words = pool_words(l);
    const int bx = x0 >> l, by = y0 >> l;
    const int cols = min(n, (width >> l) - bx), rows = min(n, (height >> l) - by);
    unsigned* level = l == 0 ? nullptr : bits.pool + pool_base(l);
    // The level's row j, word i (bits of pixels 32 i ..), within the level.
    auto word_of = [&](int j, int i) -> unsigned {
      const unsigned keep = j < rows ? low_bits(cols - 32 * i) : 0u;
      if (uniform != 2) return uniform ? keep : 0u;
      if (l == 0) return bits.a[ap + j][1 + i] & keep;
      return level[j * words + i] & keep;
    };
    if (l > 0 && uniform == 2) {
      // Rows 2 j, 2 j + 1 of the finer level, OR'd, then pairs of bits.
      const unsigned* finer = l == 1 ? nullptr : bits.pool + pool_base(l - 1);
      const int finer_words = pool_words(l - 1);
      const int word_shift = __ffs(words) - 1;  // words is a power of two
      for (int q = tid; q < n * words; q += kThreads) {
        const int j = q >> word_shift, i = q & (words - 1);
        auto fine = [&](int row, int w) -> unsigned {
          return l == 1 ? bits.a[ap + row][1 + w] : finer[row * finer_words + w];
        };
        unsigned out = 0;
        if (2 * n > 32) {  // two finer words make one
          const unsigned lo = fine(2 * j, 2 * i) | fine(2 * j + 1, 2 * i);
          const unsigned hi = fine(2 * j, 2 * i + 1) | fine(2 * j + 1, 2 * i + 1);
          out = even_bits(lo | (lo >> 1)) | even_bits(hi | (hi >> 1)) << 16;
        } else {
          const unsigned f = fine(2 * j, 0) | fine(2 * j + 1, 0);
          out = even_bits(f | (f >> 1)) & low_bits(n);
        }
        level[q] = out;
      }
      __syncthreads();
    }
    // The level's bytes, a chunk of eight (a cell's row: one 8-byte store
    // where it is whole; a row of fewer than eight is one chunk) an item;
    // the counts and the occupancy's cells.
    static_assert(kOccupancyCell == 8, "a chunk is a cell's row");
    unsigned count = 0;
    const int chunks = n >= 8 ? n / 8 : 1, chunk_shift = __ffs(chunks) - 1;  // n: a power of two
    for (int q = tid; q < n * chunks; q += kThreads) {
      const int j = q >> chunk_shift, c = q & (chunks - 1);
      if (j >= rows || 8 * c >= cols) continue;
      const unsigned byte = (word_of(j, c >> 2) >> (8 * (c & 3))) & 0xFFu;
      count += __popc(byte);
      uint8_t* out = drow(v.mask[l][view], by + j) + bx + 8 * c;
      if (8 * c + 8 <= cols && (reinterpret_cast<uintptr_t>(out) & 7) == 0) {
        *reinterpret_cast<uint2*>(out) = make_uint2(mask_bytes(byte & 15u), mask_bytes(byte >> 4));
      } else {
        for (int k = 0; k < 8 && 8 * c + k < cols; ++k) out[k] = byte >> k & 1u ? 255 : 0;
      }
      if (l < kOccupancyLevels && byte) s_cells[l][(j / kOccupancyCell) * chunks + c] = 1;
    }
    if (view == 0 ? v.matched != nullptr : l == 0 && v.right_foreground != nullptr) {
      count = warp_sum(count);
      if ((tid & 31) == 0 && count) atomicAdd(&s_count[l], count);
    }
    __syncthreads();
  }
  // Occupancy: a byte a cell of the levels that have their own.
  for (int l = 0; l < v.levels && l < kOccupancyLevels; ++l) {
    const int n = kMaskRegion >> l, cells = n / kOccupancyCell;
    const int bx = x0 >> l, by = y0 >> l;
    const int cols = min(n, (width >> l) - bx), rows = min(n, (height >> l) - by);
    const int cell_shift = __ffs(cells) - 1;  // a power of two
    for (int q = tid; q < cells * cells; q += kThreads) {
      const int cj = q >> cell_shift, ci = q & (cells - 1);
      if (ci * kOccupancyCell >= cols || cj * kOccupancyCell >= rows) continue;
      drow(v.occupancy[l][view], by / kOccupancyCell + cj)[bx / kOccupancyCell + ci] = s_cells[l][q];
    }
  }
  if (view == 0 && v.matched && tid < v.levels && s_count[tid])
    atomicAdd(&v.matched[tid], static_cast<unsigned long long>(s_count[tid]));
  if (view == 1 && v.right_foreground && tid == 0 && s_count[0])
    atomicAdd(v.right_foreground, static_cast<unsigned long long>(s_count[0]));
  if (tid == 0) dirty = uniform != 0;
}

// The frame's SWITCH body (frame_switch.h) from the two views' counts, by
// the last block done: every block's counts are added before its ticket.
// Every thread calls it.
__device__ void choose_body(const MaskViews& v) {
  __shared__ bool s_last;
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  __threadfence();
  __syncthreads();
  if (tid == 0) s_last = atomicAdd(v.choice.done, 1u) == gridDim.x * gridDim.y - 1;
  __syncthreads();
  if (!s_last || tid != 0) return;
  __threadfence();
  const unsigned long long fg = *reinterpret_cast<const volatile unsigned long long*>(v.matched);
  const unsigned long long fg_right = *reinterpret_cast<const volatile unsigned long long*>(v.right_foreground);
  cudaGraphSetConditional(v.choice.condition, frame_body(fg, fg_right, v.choice.few_below, v.choice.whole_from));
}

__global__ void __launch_bounds__(kThreads) mask_kernel(const __grid_constant__ MaskViews v, int width, int height,
                                                        int radius) {
  mask_region(v, width, height, radius);
  if (v.choice.on) choose_body(v);
}

}  // namespace

int mask_regions_x(int width) { return (width + kMaskRegion - 1) / kMaskRegion; }
int mask_regions_y(int height) { return (height + kMaskRegion - 1) / kMaskRegion; }

cudaError_t prepare_masks(int radius) { return apron(radius) <= kMaxApron ? cudaSuccess : cudaErrorInvalidValue; }

cudaError_t enqueue_masks(const MaskViews& views, int width, int height, int radius, cudaStream_t stream) {
  if (views.levels < 1 || views.levels > kMaxLevels || radius < 0 || apron(radius) > kMaxApron || !views.dirty ||
      !views.frames_seen)
    return cudaErrorInvalidValue;
  if (views.choice.on && (!views.choice.done || !views.matched || !views.right_foreground))
    return cudaErrorInvalidValue;
  const dim3 grid(2 * mask_regions_x(width), mask_regions_y(height));
  mask_kernel<<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(views, width, height, radius);
  return cudaGetLastError();
}

}  // namespace cs::cuda
