#include "background.h"

#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kThreads = kThreadsX * kThreadsY;

// The apron a region's mask needs around it: one pixel for the majority,
// r + r for the closing's dilation and erosion.
__host__ __device__ constexpr int apron(int radius) { return 1 + 2 * radius; }
__host__ __device__ constexpr int side(int radius) { return kMaskRegion + 2 * apron(radius); }
size_t shared_bytes(int radius) { return 2 * static_cast<size_t>(side(radius)) * side(radius); }

// Offset of level l >= 1 in the pooled pyramid: levels 1, 2, ... of the
// region one after the other, (kMaskRegion >> l)^2 bytes each.
__device__ __forceinline__ int pool_offset(int l) {
  int o = 0;
  for (int k = 1; k < l; ++k) o += (kMaskRegion >> k) * (kMaskRegion >> k);
  return o;
}

// Whether the raw words around a region hold no foreground (0), foreground
// on every pixel of the image (1), or both (2). Every thread calls it.
__device__ int raw_uniformity(const ImageView<const uint16_t>& raw, int x0, int y0, int a, int width, int height) {
  __shared__ int s_any, s_all;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    s_any = 0;
    s_all = 1;
  }
  __syncthreads();
  const int wx0 = max(x0 - a, 0) / 4, wx1 = (min(x0 + kMaskRegion + a, width) + 3) / 4;
  const int wy0 = max(y0 - a, 0) / 4, wy1 = (min(y0 + kMaskRegion + a, height) + 3) / 4;
  const int nx = wx1 - wx0, n = nx * (wy1 - wy0);
  bool any = false, all = true;
  for (int i = threadIdx.x + threadIdx.y * kThreadsX; i < n; i += kThreads) {
    const int wy = wy0 + i / nx, wx = wx0 + i % nx;
    const unsigned word = drow(raw, wy)[wx];
    // The bits of the word's pixels that lie in the image.
    const int cols = min(4, width - 4 * wx), rows = min(4, height - 4 * wy);
    unsigned inside = 0;
    for (int r = 0; r < rows; ++r) inside |= ((1u << cols) - 1u) << (4 * r);
    any = any || word != 0;
    all = all && (word & inside) == inside;
  }
  if (__any_sync(0xFFFFFFFFu, any) && (threadIdx.x & 31) == 0) s_any = 1;
  if (!__all_sync(0xFFFFFFFFu, all) && (threadIdx.x & 31) == 0) s_all = 0;
  __syncthreads();
  return !s_any ? 0 : (s_all ? 1 : 2);
}

// The raw bit of full-size pixel (x, y) inside the image.
__device__ __forceinline__ int raw_bit(const ImageView<const uint16_t>& raw, int x, int y) {
  return (drow(raw, y >> 2)[x >> 2] >> (4 * (y & 3) + (x & 3))) & 1;
}

// The closed mask of the region (stages.h clean_mask) into a, 1 or 0 a
// byte, pixel (x0 + i, y0 + j) at a[(j + ap) * s + i + ap] (s = side,
// ap = apron); b is scratch of the same size.
__device__ void clean_region(const ImageView<const uint16_t>& raw, int x0, int y0, int width, int height, int radius,
                             uint8_t* a, uint8_t* b) {
  const int ap = apron(radius), s = side(radius);
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const int gx0 = x0 - ap, gy0 = y0 - ap;  // image position of a[0]
  auto inside = [&](int i, int j) {
    const int x = gx0 + i, y = gy0 + j;
    return x >= 0 && x < width && y >= 0 && y < height;
  };
  // The raw bits (0 outside the image) into b.
  for (int q = tid; q < s * s; q += kThreads) {
    const int j = q / s, i = q - j * s;
    b[q] = inside(i, j) ? static_cast<uint8_t>(raw_bit(raw, gx0 + i, gy0 + j)) : 0;
  }
  __syncthreads();
  // The 3 x 3 majority over the window's pixels inside the image, one pixel
  // in from the edge of the buffer; 0 outside the image (the dilation's
  // neutral value).
  for (int q = tid; q < s * s; q += kThreads) {
    const int j = q / s, i = q - j * s;
    uint8_t v = 0;
    if (i >= 1 && i < s - 1 && j >= 1 && j < s - 1 && inside(i, j)) {
      int fg = 0, n = 0;
#pragma unroll
      for (int dj = -1; dj <= 1; ++dj)
#pragma unroll
        for (int di = -1; di <= 1; ++di)
          if (inside(i + di, j + dj)) {
            ++n;
            fg += b[q + dj * s + di];
          }
      v = 2 * fg > n;
    }
    a[q] = v;
  }
  __syncthreads();
  if (radius <= 0) return;
  // The closing: dilation (max, outside counts 0), then erosion (min,
  // outside counts 1), rows then columns each; every pass stays within the
  // part of the buffer whose windows it fills, the rest is never read.
  const int r = radius;
  // A pass fills the buffer's part [mi, s - mi) x [mj, s - mj).
  auto pass = [&](const uint8_t* src, uint8_t* dst, bool rows, bool take_max, int mi, int mj) {
    for (int q = tid; q < s * s; q += kThreads) {
      const int j = q / s, i = q - j * s;
      if (i < mi || i >= s - mi || j < mj || j >= s - mj) continue;
      int v = take_max ? 0 : 1;
      for (int k = -r; k <= r; ++k) {
        const int ii = rows ? i + k : i, jj = rows ? j : j + k;
        const int value = inside(ii, jj) ? src[jj * s + ii] : (take_max ? 0 : 1);
        v = take_max ? max(v, value) : min(v, value);
      }
      dst[q] = static_cast<uint8_t>(v);
    }
    __syncthreads();
  };
  // The majority holds [1, s - 1)^2; each pass needs r more on its side.
  pass(a, b, true, true, 1 + r, 1);
  pass(b, a, false, true, 1 + r, 1 + r);
  pass(a, b, true, false, 1 + 2 * r, 1 + r);
  pass(b, a, false, false, 1 + 2 * r, 1 + 2 * r);
}

__global__ void __launch_bounds__(kThreads) mask_kernel(const __grid_constant__ MaskViews v, int width, int height,
                                                        int radius) {
  extern __shared__ __align__(16) uint8_t shared[];
  __shared__ unsigned s_count[kMaxLevels];
  const int view = blockIdx.z;
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const int x0 = blockIdx.x * kMaskRegion, y0 = blockIdx.y * kMaskRegion;
  if ((blockIdx.x | blockIdx.y | blockIdx.z) == 0 && tid == 0 && *v.frames_seen < INT_MAX) ++*v.frames_seen;
  uint8_t& dirty = v.dirty[(blockIdx.z * gridDim.y + blockIdx.y) * v.regions_x + blockIdx.x];
  const int uniform = raw_uniformity(v.raw[view], x0, y0, apron(radius), width, height);
  // A region that stays empty: its outputs are empty already.
  if (uniform == 0 && !dirty) return;
  const int ap = apron(radius), s = side(radius);
  uint8_t* a = shared;
  uint8_t* b = shared + s * s;
  if (uniform == 2) clean_region(v.raw[view], x0, y0, width, height, radius, a, b);
  if (tid < kMaxLevels) s_count[tid] = 0;
  __syncthreads();
  // The levels, each from the one before (b holds the pooled levels).
  for (int l = 0; l < v.levels; ++l) {
    const int n = kMaskRegion >> l;
    const int bx = x0 >> l, by = y0 >> l;
    const int cols = min(n, (width >> l) - bx), rows = min(n, (height >> l) - by);
    uint8_t* level = l == 0 ? nullptr : b + pool_offset(l);
    const uint8_t* finer = l == 1 ? nullptr : b + pool_offset(l - 1);
    unsigned count = 0;
    for (int q = tid; q < n * n; q += kThreads) {
      const int j = q / n, i = q - j * n;
      int value = uniform;
      if (uniform == 2) {
        if (l == 0) {
          value = a[(j + ap) * s + i + ap];
        } else if (l == 1) {
          const uint8_t* p = a + (2 * j + ap) * s + 2 * i + ap;
          value = p[0] | p[1] | p[s] | p[s + 1];
        } else {
          const uint8_t* p = finer + (2 * j) * (2 * n) + 2 * i;
          value = p[0] | p[1] | p[2 * n] | p[2 * n + 1];
        }
        if (level) level[q] = static_cast<uint8_t>(value);
      }
      if (j < rows && i < cols) {
        drow(v.mask[l][view], by + j)[bx + i] = value ? 255 : 0;
        count += value != 0;
      }
    }
    if (view == 0 && v.matched) {
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
    for (int q = tid; q < cells * cells; q += kThreads) {
      const int cj = q / cells, ci = q - cj * cells;
      const int i0 = ci * kOccupancyCell, j0 = cj * kOccupancyCell;
      if (i0 >= cols || j0 >= rows) continue;
      int any = uniform;
      if (uniform == 2) {
        any = 0;
        for (int j = j0; j < min(j0 + kOccupancyCell, rows); ++j)
          for (int i = i0; i < min(i0 + kOccupancyCell, cols); ++i)
            any |= l == 0 ? a[(j + ap) * s + i + ap] : b[pool_offset(l) + j * n + i];
      }
      drow(v.occupancy[l][view], by / kOccupancyCell + cj)[bx / kOccupancyCell + ci] = static_cast<uint8_t>(any);
    }
  }
  if (view == 0 && v.matched && tid < v.levels && s_count[tid])
    atomicAdd(&v.matched[tid], static_cast<unsigned long long>(s_count[tid]));
  if (tid == 0) dirty = uniform != 0;
}

}  // namespace

int mask_regions_x(int width) { return (width + kMaskRegion - 1) / kMaskRegion; }
int mask_regions_y(int height) { return (height + kMaskRegion - 1) / kMaskRegion; }

cudaError_t prepare_masks(int radius) {
  return cudaFuncSetAttribute(mask_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared_bytes(radius)));
}

cudaError_t enqueue_masks(const MaskViews& views, int width, int height, int radius, cudaStream_t stream) {
  if (views.levels < 1 || views.levels > kMaxLevels || radius < 0 || !views.dirty || !views.frames_seen)
    return cudaErrorInvalidValue;
  const dim3 grid(mask_regions_x(width), mask_regions_y(height), 2);
  mask_kernel<<<grid, dim3(kThreadsX, kThreadsY), shared_bytes(radius), stream>>>(views, width, height, radius);
  return cudaGetLastError();
}

}  // namespace cs::cuda
