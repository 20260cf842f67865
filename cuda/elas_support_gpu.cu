// ELAS's descriptors and support points on the GPU (elas_support_gpu.h;
// common/elas_support.h E1 and E2).
#include "elas_support_gpu.h"

#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- E1

// A block a tile of kTileW x kTileH pixels, each thread kTileH / kDescY of
// them down a column. The descriptor reads du and dv up to 2 pixels away,
// and they read the grey view 1 pixel further: the grey tile has an apron
// of 3, the gradient tiles one of 2.
constexpr int kDescX = 32, kDescY = 8;
constexpr int kTileW = 32, kTileH = 32;
constexpr int kGreyApron = 3, kGradApron = 2;
constexpr int kGreyW = kTileW + 2 * kGreyApron, kGreyH = kTileH + 2 * kGreyApron;
constexpr int kGradW = kTileW + 2 * kGradApron, kGradH = kTileH + 2 * kGradApron;
static_assert(kTileW == kDescX && kTileH % kDescY == 0, "a thread a column of the tile");

__global__ void __launch_bounds__(kDescX * kDescY)
    elas_descriptors_kernel(ImageView<const uint8_t> gray, ImageView<uint4> descriptors) {
  __shared__ uint8_t grey[kGreyH][kGreyW];
  __shared__ uint8_t du[kGradH][kGradW], dv[kGradH][kGradW];
  const int w = gray.width, h = gray.height;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int tid = threadIdx.y * kDescX + threadIdx.x;
  // Each tile position holds the grey value of its coordinates clamped into
  // the view (E1's border rule for the Sobel's reads).
  for (int k = tid; k < kGreyW * kGreyH; k += kDescX * kDescY) {
    const int tx = k % kGreyW, ty = k / kGreyW;
    const int x = clampi(x0 - kGreyApron + tx, 0, w - 1), y = clampi(y0 - kGreyApron + ty, 0, h - 1);
    grey[ty][tx] = drow(gray, y)[x];
  }
  __syncthreads();
  // Each gradient position p holds du and dv of p clamped into the view (the
  // descriptor's border rule), so the descriptor reads the tile at p as is.
  // That clamped point q lies in the tile (q = p inside the view; outside
  // it q is the view's first or last column or row, which this tile holds),
  // and its Sobel reads q's neighbours in the grey tile, where they stand
  // clamped as E1 clamps them.
  for (int k = tid; k < kGradW * kGradH; k += kDescX * kDescY) {
    const int tx = k % kGradW, ty = k / kGradW;
    const int qx = clampi(x0 - kGradApron + tx, 0, w - 1), qy = clampi(y0 - kGradApron + ty, 0, h - 1);
    const int gx = qx - x0 + kGreyApron, gy = qy - y0 + kGreyApron;
    const int up_left = grey[gy - 1][gx - 1], up = grey[gy - 1][gx], up_right = grey[gy - 1][gx + 1];
    const int left = grey[gy][gx - 1], right = grey[gy][gx + 1];
    const int down_left = grey[gy + 1][gx - 1], down = grey[gy + 1][gx], down_right = grey[gy + 1][gx + 1];
    const int sx = up_right + 2 * right + down_right - up_left - 2 * left - down_left;
    const int sy = down_left + 2 * down + down_right - up_left - 2 * up - up_right;
    // >> 2 on a negative int: the floor of a quarter (arithmetic shift), as
    // the reference's.
    du[ty][tx] = static_cast<uint8_t>(clampi(128 + (sx >> 2), 0, 255));
    dv[ty][tx] = static_cast<uint8_t>(clampi(128 + (sy >> 2), 0, 255));
  }
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (x >= w) return;
  const int cx = threadIdx.x + kGradApron;
  auto pack = [](uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
    return b0 | (b1 << 8) | (b2 << 16) | (b3 << 24);
  };
#pragma unroll
  for (int r = 0; r < kTileH / kDescY; ++r) {
    const int ty = threadIdx.y + kDescY * r, y = y0 + ty;
    if (y >= h) break;
    const int cy = ty + kGradApron;
    // du at the diamond's 12 points, then dv at the 4 nearest, in E1's order.
    uint4 d;
    d.x = pack(du[cy - 2][cx], du[cy - 1][cx - 1], du[cy - 1][cx], du[cy - 1][cx + 1]);
    d.y = pack(du[cy][cx - 2], du[cy][cx - 1], du[cy][cx + 1], du[cy][cx + 2]);
    d.z = pack(du[cy + 1][cx - 1], du[cy + 1][cx], du[cy + 1][cx + 1], du[cy + 2][cx]);
    d.w = pack(dv[cy - 1][cx], dv[cy][cx - 1], dv[cy][cx + 1], dv[cy + 1][cx]);
    drow(descriptors, y)[x] = d;
  }
}

// ---------------------------------------------------------------- E2 a .. c

constexpr int kCandidateWarps = 8;  // a warp a candidate, a block 8 cells of a grid row
constexpr int kNoCost = INT_MAX;
// The winner's warp-wide key: cost << kOffsetBits | (d - d_min). A cost is
// at most 4 x 16 x 255 = 16320 < 2^14, so the key stays below 2^31, and
// its minimum is the least cost at the least d (E2 b's tie rule). The
// offset is below the view's width (the host checks it fits).
constexpr int kOffsetBits = 17;
constexpr int kOffsetMask = (1 << kOffsetBits) - 1;

__device__ __forceinline__ int sad16(uint4 a, uint4 b) {
  return static_cast<int>(__vsadu4(a.x, b.x) + __vsadu4(a.y, b.y) + __vsadu4(a.z, b.z) + __vsadu4(a.w, b.w));
}

// E2 a's texture: the sum over the 16 bytes of |byte - 128|.
__device__ __forceinline__ int texture_of(uint4 a) {
  constexpr uint32_t k128 = 0x80808080u;
  return sad16(a, make_uint4(k128, k128, k128, k128));
}

// E2 b (toward = -1: the left view's pixel against the right view at
// x - d) or c (toward = +1: the right view's pixel against the left at
// x + d) for pixel (x, y) of `reference` over d in [d_min, d_max], by the
// whole warp (every lane calls; every lane gets the result): the winner
// d1, or -1 where there is no rival or the ratio test fails. The caller
// keeps every neighbour inside both views.
//
// Lane l takes the offsets k = d - d_min = l, l + 32, ...; the warp's
// least key gives the winner k1 (the least cost, ties to the smaller d, as
// min_element's first minimum). The rival is the least cost at a k with
// |k - k1| >= 2. A lane's offsets lie 32 apart, so at most one of the three
// excluded ones (k1 - 1 .. k1 + 1) is the lane's: its least cost over the
// allowed offsets is its best, or, where its best's offset is excluded, its
// second best (the least cost at its other offsets). The warp's minimum of
// these is the rival; none anywhere (kNoCost) is "no such d".
__device__ int support_match(const ImageView<const uint4>& reference, const ImageView<const uint4>& other, int x,
                             int y, int d_min, int d_max, int toward, int ratio_pct) {
  if (d_max < d_min) return -1;
  const int lane = threadIdx.x & 31;
  // The four neighbours (x, y - 2), (x - 2, y), (x + 2, y), (x, y + 2).
  const uint4 a0 = __ldg(drow(reference, y - 2) + x), a1 = __ldg(drow(reference, y) + x - 2),
              a2 = __ldg(drow(reference, y) + x + 2), a3 = __ldg(drow(reference, y + 2) + x);
  // The other view's neighbours at the lane's first offset (k = lane), each
  // stepped by 32 offsets a round: three pointers, (x + 2, y) being (x -
  // 2, y) + 4 (an immediate offset). Indexing by toward * (d_min + k) each
  // round took a dozen 64-bit address instructions a round, which with the
  // registers they held (70: three blocks an SM) left the kernel waiting on
  // L1 (Nsight Compute, 1080p x 256 Aloe, H200: 165 us, L1 59 % busy).
  const int first = toward * (d_min + lane);
  const uint4* o0 = drow(other, y - 2) + x + first;
  const uint4* o1 = drow(other, y) + x - 2 + first;
  const uint4* o3 = drow(other, y + 2) + x + first;
  const int step = toward * 32;
  const int n = d_max - d_min + 1;
  int best = kNoCost, best_k = 0, second = kNoCost;
  for (int k = lane; k < n; k += 32, o0 += step, o1 += step, o3 += step) {
    const int c = sad16(a0, __ldg(o0)) + sad16(a1, __ldg(o1)) + sad16(a2, __ldg(o1 + 4)) + sad16(a3, __ldg(o3));
    // Strictly less: a lane's offsets grow, so its best keeps the least
    // offset among equal costs, and `second` is the least cost at the
    // lane's other offsets.
    if (c < best) {
      second = best;
      best = c;
      best_k = k;
    } else if (c < second) {
      second = c;
    }
  }
  const int key = warp_min(best < kNoCost ? (best << kOffsetBits) | best_k : kNoCost);
  const int k1 = key & kOffsetMask, c1 = key >> kOffsetBits;
  const int c2 = warp_min(abs(best_k - k1) >= 2 ? best : second);
  if (c2 == kNoCost) return -1;
  return 100LL * c1 < static_cast<long long>(ratio_pct) * c2 ? d_min + k1 : -1;
}

// A warp a grid cell (i, j); every cell is written, -1 where there is no
// candidate or it fails a .. c. Every condition before a match is the same
// for the whole warp (one cell, one descriptor), so the warp stays whole for
// the reductions.
// Four blocks an SM (64 registers; 68 unbounded held three): the search
// waits on L1, so it wants the warps. H200, 1080p x 256 Aloe, E2 in all:
// 0.190 ms before the pointers were stepped, 0.160 now; unrolled once (58
// registers, four blocks) 0.177, five blocks (48) 0.172.
__global__ void __launch_bounds__(kCandidateWarps * 32, 4)
    elas_candidates_kernel(ImageView<const uint4> left, ImageView<const uint4> right,
                           ImageView<const uint8_t> mask_left, ElasSupportParams p, int s,
                           ImageView<int16_t> candidates) {
  const int i = blockIdx.x * kCandidateWarps + threadIdx.x / 32, j = blockIdx.y;
  if (i >= candidates.width) return;
  const int w = left.width, h = left.height;
  const int x = s * i, y = s * j;
  int d = -1;
  // Candidates (i, j >= 1, the four neighbours inside the view) on the
  // foreground (a), with texture (a).
  if (i >= 1 && j >= 1 && x >= 2 && y >= 2 && x + 2 < w && y + 2 < h && (!mask_left.data || drow(mask_left, y)[x]) &&
      texture_of(__ldg(drow(left, y) + x)) >= p.support_texture) {
    const int d1 = support_match(left, right, x, y, p.min_disparity, min(p.max_disparity - 1, x - 2), -1,
                                 p.support_ratio_pct);
    if (d1 >= 0) {
      const int xr = x - d1;
      const int d1r = support_match(right, left, xr, y, p.min_disparity, min(p.max_disparity - 1, w - 3 - xr), 1,
                                    p.support_ratio_pct);
      if (d1r >= 0 && abs(d1 - d1r) <= p.lr_threshold) d = d1;
    }
  }
  if ((threadIdx.x & 31) == 0) drow(candidates, j)[i] = static_cast<int16_t>(d);
}

// ---------------------------------------------------------------- E2 d

constexpr int kCellX = 32, kCellY = 8;

__global__ void __launch_bounds__(kCellX * kCellY)
    elas_inconsistent_kernel(ImageView<const int16_t> candidates, ElasSupportParams p, ImageView<int16_t> grid) {
  const int i = blockIdx.x * kCellX + threadIdx.x, j = blockIdx.y * kCellY + threadIdx.y;
  const int gw = candidates.width, gh = candidates.height;
  if (i >= gw || j >= gh) return;
  const int d = drow(candidates, j)[i];
  int out = d;
  if (d >= 0) {
    const int r = p.incon_window / 2;
    int support = 0;
    for (int v = max(0, j - r); v <= min(gh - 1, j + r); ++v) {
      const int16_t* row = drow(candidates, v);
      for (int u = max(0, i - r); u <= min(gw - 1, i + r); ++u) {
        const int e = row[u];
        if ((u != i || v != j) && e >= 0 && abs(e - d) <= p.incon_threshold) ++support;
      }
    }
    if (support < p.incon_min_support) out = -1;
  }
  drow(grid, j)[i] = static_cast<int16_t>(out);
}

// ---------------------------------------------------------------- E2 e

// One line of cells (a grid row or column) scanned forwards, in place: a
// removal is seen by the cells after it, as E2 e states. at(k) is the
// line's k-th cell. By one thread, for any redun_max_dist (the warp's scan
// below takes those up to kWarpReach).
template <typename Cell>
__device__ __forceinline__ void remove_redundant_along(int length, Cell&& at, int max_dist, int threshold) {
  for (int k = 0; k < length; ++k) {
    const int d = at(k);
    if (d < 0) continue;
    bool before = false, after = false;
    for (int m = 1; m <= max_dist && k - m >= 0 && !before; ++m) {
      const int e = at(k - m);
      before = e >= 0 && abs(e - d) <= threshold;
    }
    for (int m = 1; before && m <= max_dist && k + m < length && !after; ++m) {
      const int e = at(k + m);
      after = e >= 0 && abs(e - d) <= threshold;
    }
    if (before && after) at(k) = -1;
  }
}

constexpr unsigned kFullWarp = 0xFFFFFFFFu;
constexpr int kWarpReach = 32;

// The same scan by a warp, 32 cells (a chunk) at a time, lane l on cell
// base + l; redun_max_dist up to kWarpReach, so that every neighbour lies in
// this chunk or one beside it and comes by a shuffle. (A thread a line
// spent some hundred dependent instructions a cell: 0.11 ms for a 1080p
// grid of step 5 on an H200.) Within a chunk:
//  - the cells after a cell are not yet scanned: "a similar candidate
//    within max_dist after it" is known at once, from the cells as they
//    were (this chunk and the next);
//  - so are the cells of the chunk before (scanned, as the scan left
//    them), for "a similar remaining candidate before it";
//  - what remains is the chain inside the chunk: cell l is removed iff it
//    is a candidate (d >= 0, similar after) and a similar cell before it
//    in the chunk remains (or one in the chunk before does). The removals
//    follow from the lanes' bits by iterating removed = f(removed) with
//    ballots: f's bit l depends on bits below l only, so after t rounds the
//    lowest t bits are right, and a round that changes nothing has reached
//    f's only fixed point, the sequential scan's result (at most 33
//    rounds; few, where removals rarely chain).
template <typename Cell>
__device__ __forceinline__ void remove_redundant_by_warp(int length, Cell&& at, int max_dist, int threshold) {
  const int lane = threadIdx.x & 31;
  int before_chunk = -1;                  // cell base - 32 + lane, as the scan left it (-1 outside)
  int cell = lane < length ? at(lane) : -1;  // cell base + lane, as it was
  for (int base = 0; base < length; base += 32) {
    const int k = base + lane;
    const int after_chunk = k + 32 < length ? at(k + 32) : -1;
    const int d = cell;
    bool similar_before_chunk = false, similar_after = false;
    uint32_t similar_before = 0;  // bit q: cell base + q (q < lane) is a similar candidate
    for (int m = 1; m <= max_dist; ++m) {
      const int b = lane - m, a = lane + m;  // -32 <= b, a <= 63: lanes b & 31 and a & 31
      const int b_here = __shfl_sync(kFullWarp, cell, b & 31), b_there = __shfl_sync(kFullWarp, before_chunk, b & 31);
      const int a_here = __shfl_sync(kFullWarp, cell, a & 31), a_there = __shfl_sync(kFullWarp, after_chunk, a & 31);
      const int eb = b >= 0 ? b_here : b_there, ea = a < 32 ? a_here : a_there;
      const bool sb = eb >= 0 && abs(eb - d) <= threshold;
      if (b >= 0)
        similar_before |= static_cast<uint32_t>(sb) << b;
      else
        similar_before_chunk |= sb;
      similar_after |= ea >= 0 && abs(ea - d) <= threshold;
    }
    const bool candidate = d >= 0 && similar_after;
    uint32_t removed = 0, last;
    do {
      last = removed;
      removed = __ballot_sync(kFullWarp, candidate && (similar_before_chunk || (similar_before & ~last) != 0));
    } while (removed != last);
    const bool gone = (removed >> lane) & 1;
    if (gone) at(k) = -1;  // (a candidate: k < length)
    before_chunk = gone ? -1 : d;
    cell = after_chunk;
  }
}

// A warp a line; lines longer in reach than a warp's scan take one lane.
constexpr int kLineWarps = 4;

template <typename Cell>
__device__ __forceinline__ void remove_redundant_line(int length, Cell&& at, const ElasSupportParams& p) {
  if (p.redun_max_dist <= kWarpReach)
    remove_redundant_by_warp(length, at, p.redun_max_dist, p.redun_threshold);
  else if ((threadIdx.x & 31) == 0)
    remove_redundant_along(length, at, p.redun_max_dist, p.redun_threshold);
}

__global__ void __launch_bounds__(kLineWarps * 32)
    elas_redundant_rows_kernel(ElasSupportParams p, ImageView<int16_t> grid) {
  const int j = blockIdx.x * kLineWarps + threadIdx.x / 32;
  if (j >= grid.height) return;
  int16_t* row = drow(grid, j);
  remove_redundant_line(grid.width, [&](int k) -> int16_t& { return row[k]; }, p);
}

// After every row (a kernel of its own): the columns see the rows' removals.
__global__ void __launch_bounds__(kLineWarps * 32)
    elas_redundant_columns_kernel(ElasSupportParams p, ImageView<int16_t> grid) {
  const int i = blockIdx.x * kLineWarps + threadIdx.x / 32;
  if (i >= grid.width) return;
  remove_redundant_line(grid.height, [&](int k) -> int16_t& { return drow(grid, k)[i]; }, p);
}

// ---------------------------------------------------------------- host

bool empty(int w, int h) { return w <= 0 || h <= 0; }

// The views E2 a .. c reads, and the grid size they give.
bool candidate_views_agree(const ImageView<const uint4>& left, const ImageView<const uint4>& right,
                           const ImageView<const uint8_t>& mask_left, const ElasSupportParams& p) {
  const int w = left.width, h = left.height;
  return left.data && right.data && right.width == w && right.height == h && rows_aligned(left.data, left.pitch, 16) &&
         rows_aligned(right.data, right.pitch, 16) &&
         (!mask_left.data || (mask_left.width == w && mask_left.height == h)) && p.min_disparity >= 0 &&
         w <= kOffsetMask && elas_grid_cells(h, p.candidate_step) <= 65535;  // a block row a grid row
}

}  // namespace

cudaError_t enqueue_elas_descriptors(ImageView<const uint8_t> gray, ImageView<uint4> descriptors,
                                     cudaStream_t stream) {
  if (descriptors.width != gray.width || descriptors.height != gray.height) return cudaErrorInvalidValue;
  if (empty(gray.width, gray.height)) return cudaSuccess;
  if (!gray.data || !descriptors.data || !rows_aligned(descriptors.data, descriptors.pitch, 16))
    return cudaErrorInvalidValue;
  const dim3 block(kDescX, kDescY);
  const dim3 grid((gray.width + kTileW - 1) / kTileW, (gray.height + kTileH - 1) / kTileH);
  elas_descriptors_kernel<<<grid, block, 0, stream>>>(gray, descriptors);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_candidates(ImageView<const uint4> left, ImageView<const uint4> right,
                                    ImageView<const uint8_t> mask_left, const ElasSupportParams& p,
                                    ImageView<int16_t> candidates, cudaStream_t stream) {
  const int gw = elas_grid_cells(left.width, p.candidate_step), gh = elas_grid_cells(left.height, p.candidate_step);
  if (candidates.width != gw || candidates.height != gh) return cudaErrorInvalidValue;
  if (empty(gw, gh)) return cudaSuccess;
  if (!candidate_views_agree(left, right, mask_left, p) || !candidates.data) return cudaErrorInvalidValue;
  const int s = p.candidate_step < 1 ? 1 : p.candidate_step;
  const dim3 grid((gw + kCandidateWarps - 1) / kCandidateWarps, gh);
  elas_candidates_kernel<<<grid, kCandidateWarps * 32, 0, stream>>>(left, right, mask_left, p, s, candidates);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_remove_inconsistent(ImageView<const int16_t> candidates, const ElasSupportParams& p,
                                             ImageView<int16_t> grid, cudaStream_t stream) {
  if (grid.width != candidates.width || grid.height != candidates.height) return cudaErrorInvalidValue;
  if (empty(grid.width, grid.height)) return cudaSuccess;
  if (!candidates.data || !grid.data || static_cast<const void*>(candidates.data) == grid.data)
    return cudaErrorInvalidValue;
  const dim3 block(kCellX, kCellY);
  elas_inconsistent_kernel<<<grid_for(grid.width, grid.height, block), block, 0, stream>>>(candidates, p, grid);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_remove_redundant(const ElasSupportParams& p, ImageView<int16_t> grid, cudaStream_t stream) {
  if (empty(grid.width, grid.height)) return cudaSuccess;
  if (!grid.data) return cudaErrorInvalidValue;
  elas_redundant_rows_kernel<<<(grid.height + kLineWarps - 1) / kLineWarps, kLineWarps * 32, 0, stream>>>(p, grid);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  elas_redundant_columns_kernel<<<(grid.width + kLineWarps - 1) / kLineWarps, kLineWarps * 32, 0, stream>>>(p, grid);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_support(ImageView<const uint4> left, ImageView<const uint4> right,
                                 ImageView<const uint8_t> mask_left, const ElasSupportParams& p,
                                 ImageView<int16_t> grid, ImageView<int16_t> scratch, cudaStream_t stream) {
  // Every view checked before the first launch: a refusal leaves nothing
  // half done on the stream.
  const int gw = elas_grid_cells(left.width, p.candidate_step), gh = elas_grid_cells(left.height, p.candidate_step);
  if (grid.width != gw || grid.height != gh || scratch.width != gw || scratch.height != gh)
    return cudaErrorInvalidValue;
  if (!empty(gw, gh) &&
      (!candidate_views_agree(left, right, mask_left, p) || !grid.data || !scratch.data || grid.data == scratch.data))
    return cudaErrorInvalidValue;
  cudaError_t e = enqueue_elas_candidates(left, right, mask_left, p, scratch, stream);
  if (e != cudaSuccess) return e;
  if ((e = enqueue_elas_remove_inconsistent(as_const(scratch), p, grid, stream)) != cudaSuccess) return e;
  return enqueue_elas_remove_redundant(p, grid, stream);
}

}  // namespace cs::cuda
