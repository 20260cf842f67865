#include "matching.h"

#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// A block matches a kTileX x kTileY tile; each thread owns kRowsPerThread
// pixels of one column. Window costs depend only on (x, y, d), so the block
// evaluates every d of its pixels' candidate union in ascending order: each
// pixel then sees its own candidates in ascending order and keeps the first
// strict minimum, which is the specification's tie rule.
constexpr int kTileX = 32;
constexpr int kTileY = 16;
constexpr int kThreadsY = 8;
constexpr int kRowsPerThread = kTileY / kThreadsY;
constexpr int kThreads = kTileX * kThreadsY;

struct Geometry {
  int s;      // sub-window side 2r + 1 = distance between sub-window centres
  int halo;   // s + r: cost pixels needed around the tile
  int cw, ch; // cost region
  int sw, sh; // sub-window-sum region (tile grown by s)
};

__host__ __device__ inline Geometry geometry(int r) {
  Geometry g;
  g.s = 2 * r + 1;
  g.halo = g.s + r;
  g.cw = kTileX + 2 * g.halo;
  g.ch = kTileY + 2 * g.halo;
  g.sw = kTileX + 2 * g.s;
  g.sh = kTileY + 2 * g.s;
  return g;
}

__host__ __device__ inline size_t shared_ints(int r) {
  const Geometry g = geometry(r);
  return static_cast<size_t>(g.cw) * g.ch * 2 + static_cast<size_t>(g.cw) * g.sh + static_cast<size_t>(g.sw) * g.sh;
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

template <int kBest, bool kLeft>
__global__ void __launch_bounds__(kThreads) match_kernel(MatchViews v, MatchParams p) {
  extern __shared__ int smem[];
  __shared__ int union_lo, union_hi;
  const Geometry g = geometry(p.radius);
  uint32_t* census_tile = reinterpret_cast<uint32_t*>(smem);
  int* cost = smem + g.cw * g.ch;
  int* vsum = cost + g.cw * g.ch;
  int* wsum = vsum + g.cw * g.sh;

  const int width = v.census_ref.width, height = v.census_ref.height;
  const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  const int x = x0 + threadIdx.x;
  const bool with_masks = v.mask_ref.data != nullptr;
  const bool want_subpixel = v.subpixel_offset.data != nullptr;

  if (tid == 0) {
    union_lo = INT_MAX;
    union_hi = INT_MIN;
  }
  // The reference census of the cost region, zero outside the image.
  for (int i = tid; i < g.cw * g.ch; i += kThreads) {
    const int gx = x0 - g.halo + i % g.cw, gy = y0 - g.halo + i / g.cw;
    census_tile[i] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? drow(v.census_ref, gy)[gx] : 0u;
  }
  __syncthreads();

  // Each pixel's candidate interval [lo, hi) and, with sub-pixel, the wider
  // interval [lo - 1, hi + 1) whose costs are evaluated.
  int lo[kRowsPerThread], hi[kRowsPerThread];
  int best_cost[kRowsPerThread], best_d[kRowsPerThread];
  int prev_cost[kRowsPerThread], cm[kRowsPerThread], c0[kRowsPerThread], cp[kRowsPerThread];
  const int eval_pad = want_subpixel ? 1 : 0;
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    lo[k] = 0;
    hi[k] = 0;
    best_cost[k] = INT_MAX;
    best_d[k] = -1;
    prev_cost[k] = cm[k] = c0[k] = cp[k] = 0;
    if (x >= width || y >= height) continue;
    if (with_masks && drow(v.mask_ref, y)[x] == 0) continue;
    int a = p.range.lo, b = p.range.hi;
    if (v.coarser.data) {
      const int wc = v.coarser.width, hc = v.coarser.height;
      const int px = mini(x / 2, wc - 1), py = mini(y / 2, hc - 1);
      const int dc = drow(v.coarser, py)[px];
      int dmin = dc, dmax = dc;
      if (dc < 0) {
        dmin = INT_MAX;
        dmax = -1;
        for (int yy = maxi(py - p.hole_radius, 0); yy <= mini(py + p.hole_radius, hc - 1); ++yy) {
          const int16_t* row = drow(v.coarser, yy);
          for (int xx = maxi(px - p.hole_radius, 0); xx <= mini(px + p.hole_radius, wc - 1); ++xx) {
            const int dd = row[xx];
            if (dd >= 0) {
              dmin = mini(dmin, dd);
              dmax = maxi(dmax, dd);
            }
          }
        }
      }
      if (dmax < 0) continue;
      a = maxi(a, 2 * dmin - 2);
      b = mini(b, 2 * dmax + 3);
    }
    // Only disparities whose matched pixel lies in the image (as the CPU
    // reference's clip_to_image): d >= 0 and x - d >= 0 (left), x + d < w (right).
    a = maxi(a, 0);
    b = mini(b, kLeft ? x + 1 : width - x);
    if (a >= b) continue;
    lo[k] = a;
    hi[k] = b;
    atomicMin(&union_lo, a - eval_pad);
    atomicMax(&union_hi, b + eval_pad);
  }
  __syncthreads();
  const int d_first = union_lo, d_end = union_hi;

  int around[8];
  for (int d = d_first; d < d_end; ++d) {
    // Pixel costs of the region; outside pixels add 0.
    for (int i = tid; i < g.cw * g.ch; i += kThreads) {
      const int cx = i % g.cw, cy = i / g.cw;
      const int gx = x0 - g.halo + cx, gy = y0 - g.halo + cy;
      int c = 0;
      if (gx >= 0 && gx < width && gy >= 0 && gy < height) {
        const int ox = clampi(kLeft ? gx - d : gx + d, 0, width - 1);
        c = census_cost(census_tile[i], __ldg(drow(v.census_other, gy) + ox));
      }
      cost[i] = c;
    }
    __syncthreads();
    // Vertical sums over 2r + 1 rows, then horizontal: sub-window sums S.
    for (int i = tid; i < g.cw * g.sh; i += kThreads) {
      const int cx = i % g.cw, sy = i / g.cw;
      const int* col = cost + sy * g.cw + cx;
      int sum = 0;
      for (int j = 0; j < g.s; ++j) sum += col[j * g.cw];
      vsum[i] = sum;
    }
    __syncthreads();
    for (int i = tid; i < g.sw * g.sh; i += kThreads) {
      const int sx = i % g.sw, sy = i / g.sw;
      const int* row = vsum + sy * g.cw + sx;
      int sum = 0;
      for (int j = 0; j < g.s; ++j) sum += row[j];
      wsum[i] = sum;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      if (d < lo[k] - eval_pad || d >= hi[k] + eval_pad) continue;
      const int ty = threadIdx.y + k * kThreadsY;
      const int* centre = wsum + (ty + g.s) * g.sw + threadIdx.x + g.s;
      around[0] = centre[-g.s * g.sw - g.s];
      around[1] = centre[-g.s * g.sw];
      around[2] = centre[-g.s * g.sw + g.s];
      around[3] = centre[-g.s];
      around[4] = centre[g.s];
      around[5] = centre[g.s * g.sw - g.s];
      around[6] = centre[g.s * g.sw];
      around[7] = centre[g.s * g.sw + g.s];
      const int c = window_cost_in_registers<kBest>(centre[0], around);
      bool admissible = d >= lo[k] && d < hi[k];
      if (admissible && with_masks) admissible = drow(v.mask_other, y0 + ty)[kLeft ? x - d : x + d] != 0;
      if (admissible && c < best_cost[k]) {
        best_cost[k] = c;
        best_d[k] = d;
        cm[k] = prev_cost[k];
        c0[k] = c;
      } else if (best_d[k] >= 0 && best_d[k] == d - 1) {
        cp[k] = c;
      }
      prev_cost[k] = c;
    }
  }

#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    if (x >= width || y >= height) continue;
    const int d = best_d[k];
    drow(v.disparity, y)[x] = static_cast<int16_t>(d);
    if (want_subpixel) {
      int offset = 0;
      if (d >= 0 && d - 1 >= p.range.lo && d + 1 < p.range.hi && x - (d + 1) >= 0)
        offset = subpixel_offset_q4(cm[k], c0[k], cp[k]);
      // d = 0 cannot take an offset (d - 1 >= range.lo >= 0 fails), so
      // d * 16 + offset >= 16 - 8 > 0 for every valid pixel with one.
      drow(v.subpixel_offset, y)[x] = static_cast<int8_t>(offset);
    }
  }
}

template <int kBest>
cudaError_t launch(const MatchViews& v, const MatchParams& p, cudaStream_t stream) {
  const dim3 block(kTileX, kThreadsY);
  const dim3 grid((v.census_ref.width + kTileX - 1) / kTileX, (v.census_ref.height + kTileY - 1) / kTileY);
  const size_t shared = match_shared_bytes(p.radius);
  if (p.reference == Reference::Left)
    match_kernel<kBest, true><<<grid, block, shared, stream>>>(v, p);
  else
    match_kernel<kBest, false><<<grid, block, shared, stream>>>(v, p);
  return cudaGetLastError();
}

// The dynamic limit is the opt-in maximum less the kernel's static shared memory.
template <typename Kernel>
cudaError_t raise_one(Kernel kernel, int optin) {
  cudaFuncAttributes attr{};
  cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              optin - static_cast<int>(attr.sharedSizeBytes));
}

template <int kBest>
cudaError_t raise_limit(int optin) {
  cudaError_t e = raise_one(match_kernel<kBest, true>, optin);
  if (e != cudaSuccess) return e;
  return raise_one(match_kernel<kBest, false>, optin);
}

}  // namespace

size_t match_shared_bytes(int radius) { return shared_ints(radius) * sizeof(int); }

cudaError_t prepare_match(int radius) {
  int device = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return e;
  const size_t need = match_shared_bytes(radius);
  if (need + 64 > static_cast<size_t>(optin)) return cudaErrorInvalidConfiguration;
  // Every engine sets the same value (the device's maximum), so engines with
  // different radii never lower each other's limit.
  for (cudaError_t r : {raise_limit<0>(optin), raise_limit<1>(optin), raise_limit<2>(optin), raise_limit<4>(optin)})
    if (r != cudaSuccess) return r;
  return cudaSuccess;
}

cudaError_t enqueue_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream) {
  switch (params.best) {
    case 0: return launch<0>(views, params, stream);
    case 1: return launch<1>(views, params, stream);
    case 2: return launch<2>(views, params, stream);
    case 4: return launch<4>(views, params, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace cs::cuda
