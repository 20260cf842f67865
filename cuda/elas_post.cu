// ELAS's post-processing on the GPU (elas_matching.h): the left-right check
// (E6), speckle removal and gap filling (E7) and the confidence (E8).
#include <climits>

#include "cuda_util.h"
#include "elas_matching.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- E6

// Both maps against the other's before the check: a left d at x stays iff
// the right map at x - d holds d' within lr_threshold, the right d at x iff
// the left map at x + d does; a column outside the image holds none.
__global__ void __launch_bounds__(256) elas_lr_check_kernel(ImageView<const int16_t> raw_left,
                                                            ImageView<const int16_t> raw_right,
                                                            ImageView<int16_t> checked_left,
                                                            ImageView<int16_t> checked_right, int lr_threshold) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int w = raw_left.width;
  if (x >= w || y >= raw_left.height) return;
  const int16_t* left = drow(raw_left, y);
  const int16_t* right = drow(raw_right, y);
  int dl = left[x];
  if (dl >= 0) {
    const int xr = x - dl;
    const int dr = xr >= 0 && xr < w ? right[xr] : -1;
    if (dr < 0 || abs(dl - dr) > lr_threshold) dl = -1;
  }
  int dr = right[x];
  if (dr >= 0) {
    const int xl = x + dr;
    const int d = xl < w ? left[xl] : -1;
    if (d < 0 || abs(dr - d) > lr_threshold) dr = -1;
  }
  drow(checked_left, y)[x] = static_cast<int16_t>(dl);
  drow(checked_right, y)[x] = static_cast<int16_t>(dr);
}

// ---------------------------------------------------------------- E7 speckles

// The components (valid pixels joined to 4-neighbours within similarity)
// by union-find over pixel indices y w + x, every link from a larger index
// to a smaller one, so that a component's root is its smallest index:
//  1. each kTile x kTile tile alone in shared memory (a warp a tile row):
//     the rows' runs of joined pixels from ballots, each pixel labelled with
//     its run's first pixel; runs joined across rows united; each pixel's
//     parent set to the root of its piece of a component, each piece's
//     root given the piece's count;
//  2. the pairs across tile seams united in global memory;
//  3. the pieces' roots find their component's root (and take it as their
//     parent), adding their counts to its count;
//  4. components of fewer than speckle_size pixels become -1 (a pixel's
//     component root: its parent's parent).
// Union: the roots of both, the larger linked under the smaller by
// atomicMin; where the atomic finds the larger no longer a root (another
// thread linked it first) the smaller is united with what it found
// instead, so no link is lost whatever the order. Every parent is an
// ancestor, hence in the same component, at all times, so the finds may
// shorten paths meanwhile (pointer jumping, as ECL-CC, Jaiganesh and
// Burtscher 2018, does), each shortcut a compare-and-swap that gives way to
// a link made since it read the parent. The components, hence the result,
// do not depend on the order.
constexpr int kTile = 32, kTileRows = 8, kTilePass = kTile / kTileRows;

__device__ __forceinline__ bool joined(int d, int e, int similarity) {
  return d >= 0 && e >= 0 && abs(d - e) <= similarity;
}

// The root of i, halving its path (during unions). The shortcut is a
// compare-and-swap: it lands only where i's parent is still p, so it never
// overwrites a link another thread made meanwhile (compute-sanitizer's
// racecheck flagged the plain store against the other threads' reads).
template <typename Index>
__device__ __forceinline__ Index find_halving(volatile Index* parent, Index i) {
  for (;;) {
    const Index p = parent[i];
    if (p == i) return i;
    const Index g = parent[p];
    if (g == p) return p;
    atomicCAS(const_cast<Index*>(parent) + i, p, g);
    i = g;
  }
}

// The root of i without a store (where a store could undo another thread's
// final one).
template <typename Index>
__device__ __forceinline__ Index find_root(const volatile Index* parent, Index i) {
  for (Index p = parent[i]; p != i; p = parent[i]) i = p;
  return i;
}

template <typename Index>
__device__ __forceinline__ void unite(Index* parent, Index a, Index b) {
  for (;;) {
    a = find_halving<Index>(parent, a);
    b = find_halving<Index>(parent, b);
    if (a == b) return;
    if (a > b) {
      const Index t = a;
      a = b;
      b = t;
    }
    const Index old = atomicMin(parent + b, a);
    if (old == b) return;
    b = old;
  }
}

__global__ void __launch_bounds__(kTile * kTileRows) elas_speckle_tiles_kernel(ImageView<const int16_t> in,
                                                                             int similarity, int32_t* parent,
                                                                             int32_t* members) {
  __shared__ int label[kTile * kTile];
  __shared__ int count[kTile * kTile];
  __shared__ int16_t disparity[kTile * kTile];
  __shared__ uint32_t joined_left[kTile];  // per tile row: bit j = pixel j joined to pixel j - 1
  const int w = in.width, h = in.height;
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile, lane = threadIdx.x;
  const int x = x0 + lane;
  // Rows: a pixel's run starts at the last pixel at or before it that is
  // not joined to its left neighbour (an invalid pixel is a run of its own).
#pragma unroll
  for (int k = 0; k < kTilePass; ++k) {
    const int ty = threadIdx.y + kTileRows * k, i = ty * kTile + lane, y = y0 + ty;
    const int d = x < w && y < h ? drow(in, y)[x] : -1;
    disparity[i] = static_cast<int16_t>(d);
    count[i] = 0;
    const int before = __shfl_up_sync(0xFFFFFFFFu, d, 1);
    const uint32_t bits = __ballot_sync(0xFFFFFFFFu, lane > 0 && joined(d, before, similarity));
    if (lane == 0) joined_left[ty] = bits;
    const uint32_t starts = ~bits & (0xFFFFFFFFu >> (31 - lane));  // bit 0 is always a start
    label[i] = ty * kTile + 31 - __clz(starts);
  }
  __syncthreads();
  // Columns: a pixel joined to the one above unites their runs, unless its
  // left neighbour, in its run, did so already for the run above (joined
  // above too, with the pixel above joined to the one above it).
#pragma unroll
  for (int k = 0; k < kTilePass; ++k) {
    const int ty = threadIdx.y + kTileRows * k, i = ty * kTile + lane;
    if (ty == 0) continue;  // the whole warp
    const bool up = joined(disparity[i], disparity[i - kTile], similarity);
    const bool left_up = __shfl_up_sync(0xFFFFFFFFu, up, 1);
    const bool same_pair = lane > 0 && left_up && (joined_left[ty] >> lane & 1) && (joined_left[ty - 1] >> lane & 1);
    if (up && !same_pair) unite(label, i, i - kTile);
  }
  __syncthreads();
  int root[kTilePass];
#pragma unroll
  for (int k = 0; k < kTilePass; ++k) {
    const int i = (threadIdx.y + kTileRows * k) * kTile + lane;
    const bool valid = disparity[i] >= 0;
    root[k] = find_root<int>(label, i);
    // One add a warp and piece (a row's pixels mostly share their piece).
    const uint32_t peers = __match_any_sync(0xFFFFFFFFu, root[k]) & __ballot_sync(0xFFFFFFFFu, valid);
    if (valid && lane == __ffs(peers) - 1) atomicAdd(&count[root[k]], __popc(peers));
  }
  __syncthreads();
  if (x >= w) return;
#pragma unroll
  for (int k = 0; k < kTilePass; ++k) {
    const int ty = threadIdx.y + kTileRows * k, i = ty * kTile + lane, y = y0 + ty;
    if (y >= h) break;
    const int p = y * w + x;
    // Tile and image order agree (both row-major): the piece's root is its
    // smallest image index too.
    const int r = root[k];
    const bool valid = disparity[i] >= 0;
    parent[p] = valid ? (y0 + r / kTile) * w + x0 + r % kTile : p;
    members[p] = valid && r == i ? count[i] : 0;
  }
}

// A thread a pair of pixels across a seam: first those across the
// vertical seams (x = kTile bx - 1 and kTile bx), then the horizontal ones.
__global__ void __launch_bounds__(256) elas_speckle_seams_kernel(ImageView<const int16_t> in, int similarity,
                                                                 int32_t* parent) {
  const int w = in.width, h = in.height;
  const int tiles_x = (w + kTile - 1) / kTile, tiles_y = (h + kTile - 1) / kTile;
  const long long vertical = static_cast<long long>(tiles_x - 1) * h;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  int xa, ya, xb, yb;
  if (t < vertical) {
    xa = static_cast<int>(t / h + 1) * kTile - 1;
    ya = yb = static_cast<int>(t % h);
    xb = xa + 1;
  } else {
    const long long u = t - vertical;
    if (u >= static_cast<long long>(tiles_y - 1) * w) return;
    xa = xb = static_cast<int>(u % w);
    ya = static_cast<int>(u / w + 1) * kTile - 1;
    yb = ya + 1;
  }
  if (joined(drow(in, ya)[xa], drow(in, yb)[xb], similarity)) unite(parent, ya * w + xa, yb * w + xb);
}

// Every parent is a piece's root (step 1 sets them so, unions and path
// halving only store roots found); each piece's root here takes its
// component's root as its parent, so a pixel's parent's parent is its
// component's root.
__global__ void __launch_bounds__(256) elas_speckle_roots_kernel(int width, int height, int32_t* parent,
                                                                 int32_t* members) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int p = y * width + x;
  const int m = members[p];  // > 0: the root of a piece
  if (m == 0) return;
  const int r = find_root<int>(parent, p);
  if (r == p) return;
  parent[p] = r;
  atomicAdd(members + r, m);  // only a component's root receives
}

__global__ void __launch_bounds__(256) elas_speckle_remove_kernel(ImageView<const int16_t> in, ImageView<int16_t> out,
                                                                  const int32_t* parent, const int32_t* members,
                                                                  int speckle_size) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int w = in.width;
  if (x >= w || y >= in.height) return;
  int d = drow(in, y)[x];
  if (d >= 0 && members[parent[parent[y * w + x]]] < speckle_size) d = -1;
  drow(out, y)[x] = static_cast<int16_t>(d);
}

// ---------------------------------------------------------------- E7 gaps, E8

// The rule of one line (a row, or a column of the rows' result), pixel by
// pixel: a pixel ends runs (a "stop") where it holds a valid disparity or,
// with the mask, is background; the others (-1 on the foreground) are the
// holes. A hole at k with L the nearest stop before it (-1: none) and R
// the nearest after it (n: none) lies in the run L + 1 .. R - 1 of R - L -
// 1 pixels between a = the disparity at L and b = the one at R (-1 where
// L or R is outside the line; a background stop gives what it holds, -1
// after E5 with the mask: it ends a run as the line's end does). It becomes
//   min(a, b)  where a >= 0, b >= 0 and (fill_all or R - L - 1 <= gap_width),
//   max(a, b)  else where fill_all and one of a, b is >= 0,
// and stays as it is otherwise (elas_fill_gaps's runs, each decided alone).
// Stops are never written, so a thread reads its L and R in place while
// others fill their holes.
//
// A block holds kLines lines (threadIdx.x) cut into kSegments segments
// (threadIdx.y) of consecutive pixels: each thread finds its segment's
// first and last stop, a scan over the segments gives each the last stop
// before it and the first after it, then each thread walks its segment.
// Rows take one line a block (kSegments 256); columns 8 neighbouring
// lines (8 adjacent pixels read together) of 128 segments.
//
// The column pass ends E7: it writes E8's confidence of every pixel it
// walks (where asked): confidence_from_costs(best, rival) where the final d
// >= 0 equals E5's left winner, else 0.
template <int kLines, int kSegments, bool kColumns>
__global__ void __launch_bounds__(kLines * kSegments) elas_gaps_kernel(const __grid_constant__ ElasFinishViews v,
                                                                      int gap_width, bool fill_all) {
  __shared__ int first_stop[kSegments][kLines], last_stop[kSegments][kLines];
  const int w = v.disparity.width, h = v.disparity.height;
  const int line = blockIdx.x * kLines + threadIdx.x, seg = threadIdx.y;
  const int lines = kColumns ? w : h, n = kColumns ? h : w;
  const bool active = line < lines;
  const bool masked = v.mask.data != nullptr;
  auto at = [&](int k) -> int16_t& { return kColumns ? drow(v.disparity, k)[line] : drow(v.disparity, line)[k]; };
  auto stops = [&](int k) {
    return at(k) >= 0 || (masked && !(kColumns ? drow(v.mask, k)[line] : drow(v.mask, line)[k]));
  };
  const int span = (n + kSegments - 1) / kSegments;
  const int begin = min(n, seg * span), end = min(n, begin + span);
  int first = n, last = -1;
  if (active) {
    for (int k = begin; k < end; ++k)
      if (stops(k)) {
        first = k;
        break;
      }
    for (int k = end - 1; k >= first; --k)
      if (stops(k)) {
        last = k;
        break;
      }
  }
  // Inclusive scans over the segments: the last stop up to each, the first
  // stop from each on.
  first_stop[seg][threadIdx.x] = first;
  last_stop[seg][threadIdx.x] = last;
  __syncthreads();
#pragma unroll
  for (int o = 1; o < kSegments; o <<= 1) {
    const int before = seg >= o ? last_stop[seg - o][threadIdx.x] : -1;
    const int after = seg + o < kSegments ? first_stop[seg + o][threadIdx.x] : n;
    __syncthreads();
    last = max(last, before);
    first = min(first, after);
    last_stop[seg][threadIdx.x] = last;
    first_stop[seg][threadIdx.x] = first;
    __syncthreads();
  }
  if (!active) return;
  int left = seg > 0 ? last_stop[seg - 1][threadIdx.x] : -1;
  const int right_of_segment = seg + 1 < kSegments ? first_stop[seg + 1][threadIdx.x] : n;
  const bool score = kColumns && v.confidence.data != nullptr;
  auto finish = [&](int k, int d) {
    if (!score) return;
    const int x = kColumns ? line : k, y = kColumns ? k : line;
    uint8_t c = 0;
    if (d >= 0 && d == drow(v.raw, y)[x]) c = confidence_from_costs(drow(v.best, y)[x], drow(v.rival, y)[x]);
    drow(v.confidence, y)[x] = c;
  };
  for (int k = begin; k < end;) {
    if (stops(k)) {
      finish(k, at(k));
      left = k++;
      continue;
    }
    int e = k + 1;
    while (e < end && !stops(e)) ++e;
    const int right = e < end ? e : right_of_segment;
    const int a = left >= 0 ? at(left) : -1, b = right < n ? at(right) : -1;
    int value = -1;
    if (a >= 0 && b >= 0 && (fill_all || right - left - 1 <= gap_width))
      value = min(a, b);
    else if (fill_all && (a >= 0 || b >= 0))
      value = max(a, b);
    for (; k < e; ++k) {
      if (value >= 0) at(k) = static_cast<int16_t>(value);
      finish(k, value >= 0 ? value : at(k));
    }
  }
}

constexpr int kRowSegments = 256;
// 8 lines of 128 segments: 240 blocks at 1080p (16 of 64 made 120 for 132
// SMs and walks of 17 pixels): the column pass 37.4 -> 24.5 us, 4 of 256
// 32.5, 32 of 32 slower (H200, 1080p x 256 Aloe).
constexpr int kColumnLines = 8, kColumnSegments = 128;

template <typename A, typename B>
bool same_size(const ImageView<A>& a, const ImageView<B>& b) {
  return a.width == b.width && a.height == b.height;
}

}  // namespace

cudaError_t enqueue_elas_lr_check(ImageView<const int16_t> raw_left, ImageView<const int16_t> raw_right,
                                  ImageView<int16_t> checked_left, ImageView<int16_t> checked_right, int lr_threshold,
                                  cudaStream_t stream) {
  if (!same_size(raw_left, raw_right) || !same_size(raw_left, checked_left) || !same_size(raw_left, checked_right))
    return cudaErrorInvalidValue;
  if (raw_left.width <= 0 || raw_left.height <= 0) return cudaSuccess;
  const dim3 block(32, 8);
  elas_lr_check_kernel<<<grid_for(raw_left.width, raw_left.height, block), block, 0, stream>>>(
      raw_left, raw_right, checked_left, checked_right, lr_threshold);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_speckles(ImageView<const int16_t> in, ImageView<int16_t> out, int speckle_size,
                                  int similarity, const ElasDenseScratch& s, cudaStream_t stream) {
  const int w = in.width, h = in.height;
  if (!same_size(in, out) || static_cast<long long>(w) * h > INT_MAX ||
      static_cast<size_t>(w) * h > s.layout.pixels() || !s.parent || !s.members)
    return cudaErrorInvalidValue;
  if (w <= 0 || h <= 0) return cudaSuccess;
  const dim3 tiles((w + kTile - 1) / kTile, (h + kTile - 1) / kTile);
  elas_speckle_tiles_kernel<<<tiles, dim3(kTile, kTileRows), 0, stream>>>(in, similarity, s.parent, s.members);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  const long long pairs = static_cast<long long>(tiles.x - 1) * h + static_cast<long long>(tiles.y - 1) * w;
  if (pairs > 0) {
    elas_speckle_seams_kernel<<<static_cast<unsigned>((pairs + 255) / 256), 256, 0, stream>>>(in, similarity,
                                                                                              s.parent);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  const dim3 block(32, 8);
  elas_speckle_roots_kernel<<<grid_for(w, h, block), block, 0, stream>>>(w, h, s.parent, s.members);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  elas_speckle_remove_kernel<<<grid_for(w, h, block), block, 0, stream>>>(in, out, s.parent, s.members,
                                                                           speckle_size);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_gaps(const ElasFinishViews& v, int gap_width, bool fill_all, cudaStream_t stream) {
  const int w = v.disparity.width, h = v.disparity.height;
  if ((v.mask.data && !same_size(v.disparity, v.mask)) ||
      (v.confidence.data && (!same_size(v.disparity, v.confidence) || !same_size(v.disparity, v.raw) ||
                             !same_size(v.disparity, v.best) || !same_size(v.disparity, v.rival))))
    return cudaErrorInvalidValue;
  if (w <= 0 || h <= 0) return cudaSuccess;
  elas_gaps_kernel<1, kRowSegments, false><<<h, dim3(1, kRowSegments), 0, stream>>>(v, gap_width, fill_all);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  elas_gaps_kernel<kColumnLines, kColumnSegments, true>
      <<<(w + kColumnLines - 1) / kColumnLines, dim3(kColumnLines, kColumnSegments), 0, stream>>>(v, gap_width,
                                                                                                  fill_all);
  return cudaGetLastError();
}

}  // namespace cs::cuda
