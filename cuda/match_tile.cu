// The tile kernel of any sub-window radius and window (stages.h stages 6 and
// 7): the engine's matcher where no radius-2 kernel applies (match_stream.cu,
// match_refine.cu) or fits the GPU, and the tests' second opinion on them.
#include <climits>

#include "match_device.cuh"
#include "match_kernels.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- tile kernel (any radius and window)
//
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
static_assert(kThreads == kTileKernelThreads, "match_kernels.h kTileKernelThreads");

template <int kBest, bool kLeft, bool kRival>
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
  // The reference census of the cost region: columns clamped to the image,
  // zero in rows outside it.
  for (int i = tid; i < g.cw * g.ch; i += kThreads) {
    const int gx = x0 - g.halo + i % g.cw, gy = y0 - g.halo + i / g.cw;
    census_tile[i] = (gy >= 0 && gy < height) ? drow(v.census_ref, gy)[clampi(gx, 0, width - 1)] : 0u;
  }
  __syncthreads();

  // Each pixel's candidate interval [lo, hi) and, with sub-pixel, the wider
  // interval [lo - 1, hi + 1) whose costs are evaluated.
  int lo[kRowsPerThread], hi[kRowsPerThread];
  int best_cost[kRowsPerThread], best_d[kRowsPerThread];
  int prev_cost[kRowsPerThread], cm[kRowsPerThread], c0[kRowsPerThread], cp[kRowsPerThread];
  int rival[kRowsPerThread], before[kRowsPerThread];  // kRival
  bool prev_admissible[kRowsPerThread];
  const int eval_pad = want_subpixel ? 1 : 0;
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    lo[k] = 0;
    hi[k] = 0;
    best_cost[k] = INT_MAX;
    best_d[k] = -1;
    prev_cost[k] = cm[k] = c0[k] = cp[k] = 0;
    rival[k] = before[k] = kNoCost;
    prev_admissible[k] = false;
    if (x >= width || y >= height) continue;
    int a, b;
    if (!candidates(v, kLeft, p.range, p.hole_radius, p.hole_span, x, y, &a, &b)) continue;
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
      if (gy >= 0 && gy < height) {  // columns repeat the edge, rows outside add 0 (stages.h)
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
        if (kRival) rival[k] = before[k];
      } else if (best_d[k] >= 0 && best_d[k] == d - 1) {
        cp[k] = c;
      } else if (kRival && admissible && c < rival[k]) {
        rival[k] = c;
      }
      if (kRival) {
        if (prev_admissible[k] && prev_cost[k] < before[k]) before[k] = prev_cost[k];
        prev_admissible[k] = admissible;
      }
      prev_cost[k] = c;
    }
  }

#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = y0 + threadIdx.y + k * kThreadsY;
    if (x >= width || y >= height) continue;
    int d = best_d[k];
    if (d >= 0 && v.offered_keys.data)
      atomicMin(drow(v.offered_keys, y) + (kLeft ? x - d : x + d),
                static_cast<uint32_t>(best_cost[k]) << 16 | static_cast<uint32_t>(d));
    if (kRival) d = finish_sweep(v, x, y, d, best_cost[k], rival[k], p.uniqueness_ratio);
    drow(v.disparity, y)[x] = static_cast<int16_t>(d);
    if (want_subpixel) {
      int offset = 0;
      if (subpixel_neighbours_in_range(d, x, p.range.lo, p.range.hi))
        offset = subpixel_offset_q4(cm[k], c0[k], cp[k]);
      // d = 0 cannot take an offset (d - 1 >= range.lo >= 0 fails), so
      // d * 16 + offset >= 16 - 8 > 0 for every valid pixel with one.
      drow(v.subpixel_offset, y)[x] = static_cast<int8_t>(offset);
    }
  }
}

template <int kBest, bool kRival>
void launch_generic(const MatchViews& v, const MatchParams& p, cudaStream_t stream) {
  const dim3 block(kTileX, kThreadsY);
  const dim3 grid((v.census_ref.width + kTileX - 1) / kTileX, (v.census_ref.height + kTileY - 1) / kTileY);
  const size_t shared = match_shared_bytes(p.radius);
  if (p.reference == Reference::Left)
    match_kernel<kBest, true, kRival><<<grid, block, shared, stream>>>(v, p);
  else
    match_kernel<kBest, false, kRival><<<grid, block, shared, stream>>>(v, p);
}

template <int kBest>
cudaError_t launch(const MatchViews& v, const MatchParams& p, cudaStream_t stream) {
  if (tracks_rival(v, p))
    launch_generic<kBest, true>(v, p, stream);
  else
    launch_generic<kBest, false>(v, p, stream);
  return cudaGetLastError();
}

template <int kBest>
cudaError_t raise_limit(int optin) {
  for (cudaError_t e : {raise_one(match_kernel<kBest, true, false>, optin),
                        raise_one(match_kernel<kBest, false, false>, optin),
                        raise_one(match_kernel<kBest, true, true>, optin),
                        raise_one(match_kernel<kBest, false, true>, optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

template <int kBest, bool kRival>
const void* generic_kernel(bool left) {
  return left ? reinterpret_cast<const void*>(match_kernel<kBest, true, kRival>)
              : reinterpret_cast<const void*>(match_kernel<kBest, false, kRival>);
}

template <int kBest>
const void* generic_kernel(bool left, bool rival) {
  return rival ? generic_kernel<kBest, true>(left) : generic_kernel<kBest, false>(left);
}

}  // namespace

size_t match_shared_bytes(int radius) { return shared_ints(radius) * sizeof(int); }

cudaError_t choose_generic(const MatchViews* views, const bool* left, int count, const MatchParams& p,
                           const DeviceLimits& limits, MatchConfig* out) {
  *out = MatchConfig{};
  const size_t dynamic = match_shared_bytes(p.radius);
  for (int i = 0; i < count; ++i) {
    const void* kernel = nullptr;
    const bool rival = tracks_rival(views[i], p);
    out->rival = out->rival || rival;
    switch (p.best) {
      case 0: kernel = generic_kernel<0>(left[i], rival); break;
      case 1: kernel = generic_kernel<1>(left[i], rival); break;
      case 2: kernel = generic_kernel<2>(left[i], rival); break;
      case 4: kernel = generic_kernel<4>(left[i], rival); break;
      default: return cudaErrorInvalidValue;
    }
    cudaFuncAttributes attr{};
    cudaError_t e = cudaSuccess;
    const int per_sm = blocks_per_sm(limits, kernel, kThreads, dynamic, &attr, &e);
    if (e != cudaSuccess) return e;
    if (per_sm <= 0) return cudaErrorInvalidConfiguration;
    if (i == 0 || per_sm < out->blocks_per_sm) {
      out->kernel = MatchConfig::Generic;
      out->threads = kThreads;
      out->static_shared = attr.sharedSizeBytes;
      out->dynamic_shared = dynamic;
      out->registers = attr.numRegs;
      out->blocks_per_sm = per_sm;
    }
  }
  return cudaSuccess;
}

cudaError_t enqueue_generic_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream) {
  switch (params.best) {
    case 0: return launch<0>(views, params, stream);
    case 1: return launch<1>(views, params, stream);
    case 2: return launch<2>(views, params, stream);
    case 4: return launch<4>(views, params, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t raise_generic_limits(int optin) {
  for (cudaError_t e : {raise_limit<0>(optin), raise_limit<1>(optin), raise_limit<2>(optin), raise_limit<4>(optin)})
    if (e != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace cs::cuda
