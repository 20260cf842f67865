// ELAS's prior on the GPU (elas_prior.h): the kernels over
// elas_prior_steps.h's steps, and their launcher. In launch order:
//   clear              mu_q4 = kNoPrior (a thread a pixel)
//   compact_rows       a block a grid row: its points, their vertices sorted by x
//   plan               one block: the non-empty rows and strips (block scans),
//                      then rounds of clips fill the pockets (a thread a row and side)
//   strips             a thread a vertex: its two strip triangles
//   rungs              a thread a strip triangle: the twins across its rungs
//   first_candidates   a thread a half-edge: the first round's illegal edges
//   spread_flip,       the first rounds of flips over the whole GPU, two
//   spread_mend        launches a round (a fixed number of rounds for the
//                      grid's size: default_spread_rounds)
//   flips              one block: the rounds after those until none is illegal
//   raster             a warp a triangle: its plane over the pixels it covers
//                      (a big triangle: the big list)
//   big_raster         a warp a row of a big triangle
// The flips need the whole mesh between rounds. The first rounds hold
// thousands of flips (on Aloe at 1080p 5352, 3198, 2638, ... halving about
// every three rounds), more than one block can take at once, so they are
// spread over the GPU (until a round holds a few hundred); the rounds after
// them hold fewer, and one block runs them all with barriers between the
// phases: no launch a round, no trip to the host, and the same launches
// every frame whatever the number of rounds.
#include "elas_prior.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kClearThreadsX = 32, kClearThreadsY = 8;
constexpr int kRowThreads = 1024;  // at most: a row's cells rounded up to whole warps
constexpr int kPlanThreads = 512;
constexpr int kFlipThreads = 1024;
constexpr int kStepThreads = 256;
constexpr int kRasterThreads = 256;
// A warp a triangle, grid-stride: enough warps to fill the GPU.
constexpr int kRasterMaxBlocks = 2048;
// The big triangles' rows: a warp a row, grid-stride.
constexpr int kBigRasterBlocks = 1024;
// The spread rounds' launches: at most this many blocks a multiprocessor.
constexpr int kSpreadBlocksPerSm = 4;
// The rounds are spread over the GPU while a round holds more candidates
// than about this (default_spread_rounds). A spread round costs two
// launches, an empty one too; a round in flips_kernel's block a chain of
// dependent loads and two barriers whatever its size, and a pass of the
// block for every kFlipThreads candidates. On the H200 (Aloe, 640x480 to
// 1080p x 256) spreading until about 1024 were left was 2 to 3 % slower a
// frame than until about 400; 256, 512 or 640 were up to 1 % slower at
// 1080p (640 0.5 % faster at 640x480).
constexpr double kSpreadUntilCandidates = 400;

// The current device's multiprocessors.
cudaError_t device_multiprocessors(int* sms) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}
// Dynamic shared memory a block gets without asking.
constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

// compact_rows' x table: two entries an x of a row's points.
std::size_t compact_shared_bytes(int cells_x, int step) {
  return 2 * sizeof(int32_t) * static_cast<std::size_t>(step) * static_cast<std::size_t>(cells_x);
}
// compact_wide_rows': the row's x and its vertices' x.
std::size_t compact_wide_shared_bytes(int cells_x) { return 2 * sizeof(int32_t) * static_cast<std::size_t>(cells_x); }
std::size_t plan_shared_bytes(int cells_y) {
  return kChainRowArrays * sizeof(int32_t) * (static_cast<std::size_t>(cells_y) + 1);
}

__global__ void __launch_bounds__(kClearThreadsX * kClearThreadsY) clear_kernel(ImageView<int32_t> mu_q4) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < mu_q4.width && y < mu_q4.height) drow(mu_q4, y)[x] = kNoPrior;
}

// Exclusive prefix sum of value over the block in thread order; *total gets
// the block's sum. Every thread of the block calls it.
__device__ int block_exclusive_sum(int value, int* total) {
  __shared__ int warp_offset[32];
  __shared__ int block_total;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int inclusive = static_cast<int>(warp_inclusive_sum(static_cast<unsigned>(value)));
  if (lane == 31) warp_offset[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const int w = lane < warps ? warp_offset[lane] : 0;
    const int wi = static_cast<int>(warp_inclusive_sum(static_cast<unsigned>(w)));
    if (lane < warps) warp_offset[lane] = wi - w;
    if (lane == 31) block_total = wi;
  }
  __syncthreads();
  const int result = warp_offset[warp] + inclusive - value;
  *total = block_total;
  __syncthreads();  // the next call rewrites warp_offset and block_total
  return result;
}

// A block a grid row: its vertices (row_keeps: the first cell of each x)
// sorted by x (row_position), through a table indexed by x (the row's
// points lie in [0, step cells_x)): each x's first cell by an atomic
// minimum, then the vertices' ranks by a block scan over the table.
__global__ void __launch_bounds__(kRowThreads)
    compact_rows_kernel(ImageView<const int16_t> grid, int step, bool right_view, PriorMesh m) {
  extern __shared__ int32_t row_shared[];
  const int cx = m.cells_x, j = blockIdx.x, xs = step * cx;
  int32_t* first = row_shared;      // the first cell whose point has this x, INT32_MAX none
  int32_t* rank = row_shared + xs;  // the vertices of smaller x
  const int16_t* d = drow(grid, j);
  for (int x = threadIdx.x; x < xs; x += blockDim.x) first[x] = INT32_MAX;
  __syncthreads();
  for (int i = threadIdx.x; i < cx; i += blockDim.x) {
    const GridPoint p = grid_point(d[i], i, j, step, right_view);
    if (p.valid) atomicMin(&first[p.x], i);
  }
  __syncthreads();
  int kept = 0;
  for (int base = 0; base < xs; base += blockDim.x) {
    const int x = base + threadIdx.x;
    int tile;
    const int r = kept + block_exclusive_sum(x < xs && first[x] != INT32_MAX ? 1 : 0, &tile);
    if (x < xs) rank[x] = r;
    kept += tile;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < cx; i += blockDim.x) {
    const GridPoint p = grid_point(d[i], i, j, step, right_view);
    if (p.valid && first[p.x] == i) m.vertex[j * cx + rank[p.x]] = {p.x, p.y, d[i], j * cx + i};
  }
  if (threadIdx.x == 0) m.row_count[j] = kept;
}

// compact_rows_kernel's steps as elas_prior_steps.h states them, a search a
// cell, in 2 cells_x ints of shared memory: for rows whose x table would
// outgrow the default shared memory (views over 6144 pixels wide).
__global__ void __launch_bounds__(kRowThreads)
    compact_wide_rows_kernel(ImageView<const int16_t> grid, int step, bool right_view, PriorMesh m) {
  extern __shared__ int32_t row_shared[];
  const int cx = m.cells_x, j = blockIdx.x;
  int32_t* x = row_shared;
  int32_t* kept_x = row_shared + cx;
  __shared__ int kept;
  const int16_t* d = drow(grid, j);
  if (threadIdx.x == 0) kept = 0;
  for (int i = threadIdx.x; i < cx; i += blockDim.x) x[i] = grid_point(d[i], i, j, step, right_view).x;
  __syncthreads();
  for (int i = threadIdx.x; i < cx; i += blockDim.x) kept_x[i] = row_keeps(x, i) ? x[i] : kNoVertexX;
  __syncthreads();
  for (int i = threadIdx.x; i < cx; i += blockDim.x) {
    if (kept_x[i] == kNoVertexX) continue;
    const GridPoint p = grid_point(d[i], i, j, step, right_view);
    m.vertex[j * cx + row_position(kept_x, cx, kept_x[i])] = {p.x, p.y, d[i], j * cx + i};
    atomicAdd(&kept, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) m.row_count[j] = kept;
}

// One block: the non-empty rows' ranks and boundary vertices, the strips'
// first triangles (block scans), the pockets (one thread), the strips'
// outer sides, the counters.
__global__ void __launch_bounds__(kPlanThreads) plan_kernel(PriorMesh m) {
  extern __shared__ int32_t plan_shared[];
  const int cy = m.cells_y, n = cy + 1, tid = threadIdx.x;
  ChainRows c;
  int32_t* next_array = plan_shared;
  auto take = [&]() {
    int32_t* a = next_array;
    next_array += n;
    return a;
  };
  c.grid_row = take();
  c.count = take();
  c.second_x = take();
  c.y = take();
  c.strip_first = take();
  for (int side = 0; side < 2; ++side) {
    c.x[side] = take();
    c.vertex[side] = take();
    c.inner[side] = take();
    c.outer[side] = take();
  }
  for (int side = 0; side < 2; ++side) {
    c.prev[side] = take();
    c.next[side] = take();
    c.inside[side] = take();
    c.inside_strip[side] = take();
    c.clip[side] = take();
  }
  int rows = 0;
  for (int base = 0; base < cy; base += blockDim.x) {
    const int j = base + tid;
    const int count = j < cy ? m.row_count[j] : 0;
    int tile;
    const int rank = rows + block_exclusive_sum(count > 0 ? 1 : 0, &tile);
    if (j < cy) {
      m.row_rank[j] = count > 0 ? rank : -1;
      if (count > 0) {
        m.nonempty_row[rank] = j;
        c.grid_row[rank] = j;
        c.count[rank] = count;
      }
    }
    rows += tile;
  }
  c.rows = rows;
  __syncthreads();
  for (int k = tid; k < rows; k += blockDim.x) chain_row_step(m, c, k);
  __syncthreads();
  int strip_triangles = 0;
  for (int base = 0; base + 1 < rows; base += blockDim.x) {
    const int k = base + tid;
    const bool strip = k + 1 < rows;
    int tile;
    const int first =
        strip_triangles + block_exclusive_sum(strip ? strip_triangle_count(c.count[k], c.count[k + 1]) : 0, &tile);
    if (strip) c.strip_first[k] = m.strip_first[k] = first;
    strip_triangles += tile;
  }
  __syncthreads();
  for (int k = tid; k + 1 < rows; k += blockDim.x) chain_strip_step(c, k);
  __syncthreads();
  // The two sides' pockets at once, a thread a row and side, a round of
  // clips at a time, then the tail a thread a side (pocket_walk); the right
  // side's built apart, then moved behind the left side's. A round's ids
  // come from one scan of both sides' clips packed in one word (the left
  // side's count in the low 16 bits: a side clips fewer than rows <= 2^15
  // rows, the vertices' y being below 2^15, so the word stays below 2^31).
  const int chain = 2 * rows;
  for (int i = tid; i < chain; i += blockDim.x) {
    const int side = i >= rows ? 1 : 0;
    pocket_chain_init(c, side, i - side * rows);
  }
  __syncthreads();
  int pocket_next[2] = {strip_triangles, pocket_scratch_first(strip_triangles, rows)};
  const int right_built = pocket_next[1];
  int on_chains = chain;
  for (int round = 0;; ++round) {
    // Every row's decision (reads only) ...
    unsigned clipped = 0;
    for (int base = 0; base < chain; base += blockDim.x) {
      const int i = base + tid, side = i >= rows ? 1 : 0, k = i - side * rows;
      const bool clip = i < chain && pocket_clips(c, side, k, round);
      int tile;
      const int packed = clip ? (side ? 0x10000 : 1) : 0;
      const unsigned before = clipped + static_cast<unsigned>(block_exclusive_sum(packed, &tile));
      const int rank = static_cast<int>(side ? before >> 16 : before & 0xFFFFu);
      if (i < chain) c.clip[side][k] = clip ? pocket_next[side] + rank : -1;
      clipped += static_cast<unsigned>(tile);
    }
    if (clipped == 0) break;
    // ... then the clips (block_exclusive_sum's last barrier is between);
    // each thread reads the decision it wrote.
    for (int i = tid; i < chain; i += blockDim.x) {
      const int side = i >= rows ? 1 : 0, k = i - side * rows;
      const int t = c.clip[side][k];
      if (t >= 0) pocket_clip_step(m, c, side, k, t);
    }
    pocket_next[0] += static_cast<int>(clipped & 0xFFFFu);
    pocket_next[1] += static_cast<int>(clipped >> 16);
    const int clips = static_cast<int>((clipped & 0xFFFFu) + (clipped >> 16));
    on_chains -= clips;
    __syncthreads();
    if (pocket_walk_now(clips, on_chains)) {
      // The tail: a thread a side, in two warps.
      __shared__ int walked[2];
      if (tid == 0) walked[0] = pocket_walk(m, c, 0, pocket_next[0]);
      if (tid == 32) walked[1] = pocket_walk(m, c, 1, pocket_next[1]);
      __syncthreads();
      pocket_next[0] = walked[0];
      pocket_next[1] = walked[1];
      break;
    }
  }
  const PocketMove mv{right_built, pocket_next[0], pocket_next[1] - right_built};
  for (int i = tid; i < mv.count; i += blockDim.x) move_right_pocket(m, mv, i);
  if (tid == 0) {
    m.counts[kPriorRows] = rows;
    m.counts[kPriorStripTriangles] = strip_triangles;
    m.counts[kPriorTriangles] = mv.to + mv.count;
    for (int slot = kPriorTriangles + 1; slot < kPriorCountSlots; ++slot) m.counts[slot] = 0;
  }
  __syncthreads();
  for (int k = tid; k + 1 < rows; k += blockDim.x) link_strip_sides(m, c, mv, k);
}

__global__ void __launch_bounds__(kStepThreads) strips_kernel(PriorMesh m) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < m.cells_x * m.cells_y) strip_vertex_step(m, v);
}

__global__ void __launch_bounds__(kStepThreads) rungs_kernel(PriorMesh m, int max_triangles) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < max_triangles) strip_rung_step(m, t);
}

// Reserves `want` (may be 0) consecutive slots of a list whose length is
// *count for each lane of a whole warp (every lane calls): one atomic a warp
// instead of one a thread on the same counter.
__device__ int warp_reserve(int* count, int want) {
  const int inclusive = static_cast<int>(warp_inclusive_sum(static_cast<unsigned>(want)));
  int base = 0;
  if ((threadIdx.x & 31) == 31 && inclusive > 0) base = atomicAdd(count, inclusive);
  base = __shfl_sync(0xFFFFFFFFu, base, 31);
  return base + inclusive - want;
}

// The flip loop's lists (candidate pairs, flipped triangles) are written in
// one phase of a round and read in the next by other threads of its block:
// their first entries live in shared memory, so that each round's two
// hand-overs cost no trip to L2 (a round is a chain of dependent loads, and
// these two were links of it); entries past the shared part, rare after the
// first round, go to the global buffer at the same index. kFlipSharedPairs
// and kFlipSharedWork hold several times the flips of a round on 1080p
// support grids (a few hundred) in 32 KiB of static shared memory.
constexpr int kFlipSharedPairs = 2048;
constexpr int kFlipSharedWork = 4096;

// Entry i of a list whose first `cap` entries are in shared memory (near)
// and the others in global memory (far, indexed as if it held them all).
// (Two functions, not one reference: a reference to either would make the
// compiler address shared memory through generic pointers.)
__device__ __forceinline__ int32_t split_load(const int32_t* near, int cap, const int32_t* far, int i) {
  if (i < cap) return near[i];
  return far[i];
}
__device__ __forceinline__ void split_store(int32_t* near, int cap, int32_t* far, int i, int32_t value) {
  if (i < cap) near[i] = value;
  else far[i] = value;
}

// The edges of half-edges e[0 .. N - 1] (as k holds them) that are
// candidates of `round` (e < 0: none; every lane takes part), in that
// order, into the candidate list (pairs: entries 2 i, 2 i + 1; the first
// near_cap entries at near), each offered to both its triangles.
template <int N>
__device__ void offer_candidates(const PriorMesh& m, const int (&e)[N], const EdgeQuad (&k)[N], int round, int* count,
                                 int32_t* near, int near_cap) {
  bool offer[N];
  int want = 0;
  for (int n = 0; n < N; ++n) {
    offer[n] = e[n] >= 0 && illegal_edge(m, e[n], k[n]);
    want += offer[n] ? 1 : 0;
  }
  int slot = warp_reserve(count, want);
  for (int n = 0; n < N; ++n) {
    if (!offer[n]) continue;
    const int f = k[n].twin;
    split_store(near, near_cap, m.candidate, 2 * slot, e[n]);
    split_store(near, near_cap, m.candidate, 2 * slot + 1, f);
    ++slot;
    const unsigned long long key = claim_key(round, min(e[n], f));
    atomicMax(m.claim + e[n] / 3, key);
    atomicMax(m.claim + f / 3, key);
  }
}

// Phase 1 of a round for candidate (e, f) (e = -1: none; every lane of the
// warp calls): when it won both its triangles it flips (flip_if_won), and
// its two half-edges go to the work list (its length *count, its first
// near_cap entries at near).
__device__ __forceinline__ void flip_and_list(const PriorMesh& m, int e, int f, int round, int* count, int32_t* near,
                                              int near_cap) {
  const bool won = e >= 0 && flip_if_won(m, e, f, round);
  const int slot = warp_reserve(count, won ? 2 : 0);
  if (won) {
    split_store(near, near_cap, m.work, slot, e);
    split_store(near, near_cap, m.work, slot + 1, f);
  }
}

// Phase 2 of a round for the triangle flipped on half-edge e (-1: none;
// every lane of the warp calls): its two outer half-edges (flipped_outer_half),
// both read before either is mended, mend their twins and are offered to
// round + 1 if illegal (offer_candidates' list and count).
__device__ __forceinline__ void mend_and_offer(const PriorMesh& m, int e, int round, int* count, int32_t* near,
                                               int near_cap) {
  int half[2] = {-1, -1};
  EdgeQuad k[2] = {{-1, 0, 0, 0, 0, false}, {-1, 0, 0, 0, 0, false}};
  if (e >= 0) {
    half[0] = flipped_outer_half(e, 0);
    half[1] = flipped_outer_half(e, 1);
    const MendRead d0 = mend_read(m, half[0]), d1 = mend_read(m, half[1]);
    k[0] = mend_write(m, half[0], d0, round);
    k[1] = mend_write(m, half[1], d1, round);
  }
  offer_candidates(m, half, k, round + 1, count, near, near_cap);
}

// A thread a half-edge.
__global__ void __launch_bounds__(kStepThreads) first_candidates_kernel(PriorMesh m) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x, halves = 3 * m.counts[kPriorTriangles];
  if ((e & ~31) >= halves) return;  // a whole warp past the half-edges
  const bool edge = e < halves;
  const int half[1] = {edge ? e : -1};
  const EdgeQuad k[1] = {edge ? edge_quad(m, e, 1) : EdgeQuad{-1, 0, 0, 0, 0, false}};
  offer_candidates(m, half, k, 1, m.counts + kPriorRoundCandidates + 1, nullptr, 0);
}

// The first rounds, while they hold thousands of candidates, over the whole
// GPU: two launches a round, the same two phases as flips_kernel's (below),
// the lists and counters in global memory (the slots of the round's
// parity). A launch whose round has nothing to do returns at once.
//
// Phase 1 of round r: each candidate that won both its triangles flips; its
// two half-edges go to the work list. It also clears the counters of round
// r + 1, which no one reads or counts before this launch ends.
__global__ void __launch_bounds__(kStepThreads) spread_flip_kernel(PriorMesh m, int round) {
  int* const candidates_slot = m.counts + kPriorRoundCandidates;
  int* const work_slot = m.counts + kPriorRoundWork;
  const int candidates = candidates_slot[round & 1];
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    candidates_slot[(round + 1) & 1] = 0;
    work_slot[(round + 1) & 1] = 0;
  }
  const int stride = gridDim.x * blockDim.x, warp_first = threadIdx.x & ~31;
  for (int base = blockIdx.x * blockDim.x; base + warp_first < candidates; base += stride) {
    const int i = base + threadIdx.x;
    const bool in = i < candidates;
    flip_and_list(m, in ? m.candidate[2 * i] : -1, in ? m.candidate[2 * i + 1] : -1, round, work_slot + (round & 1),
                  nullptr, 0);
  }
}

// Phase 2 of round r: a thread a work list entry mends its triangle's
// outer half-edges and offers the illegal ones to round r + 1.
__global__ void __launch_bounds__(kStepThreads) spread_mend_kernel(PriorMesh m, int round) {
  const int flipped = m.counts[kPriorRoundWork + (round & 1)];
  if (flipped == 0) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    m.counts[kPriorFlips] += flipped / 2;
    m.counts[kPriorLastFlipRound] = round;
  }
  const int stride = gridDim.x * blockDim.x, warp_first = threadIdx.x & ~31;
  for (int base = blockIdx.x * blockDim.x; base + warp_first < flipped; base += stride) {
    const int i = base + threadIdx.x;
    mend_and_offer(m, i < flipped ? m.work[i] : -1, round, m.counts + kPriorRoundCandidates + ((round + 1) & 1),
                   nullptr, 0);
  }
}

// One block, from round first_round on (the rounds before it were
// spread_flip_kernel's and spread_mend_kernel's); two phases a round, a
// barrier after each:
//  1. each candidate that won both its triangles flips; its two half-edges
//     go to the work list (the first round's candidates are the global list
//     spread kernels or first_candidates_kernel left in global memory,
//     later rounds' the split list);
//  2. a thread a work list entry: its triangle's two outer half-edges
//     (flipped_outer_half), both read before either is mended, mend their
//     twins and offer their edges (as the mending read them) for the next
//     round if illegal (a half-edge's twin is its own to write, and what it
//     reads of other triangles phase 1 wrote, so no barrier between the
//     two).
// The counters alternate by round: one is counted while the other, read
// before the last barrier, is cleared for the round after. Ends after a
// round without a flip.
__global__ void __launch_bounds__(kFlipThreads) flips_kernel(PriorMesh m, int first_round) {
  __shared__ int flip_count[2], offer_count[2];
  __shared__ int32_t near_pairs[2 * kFlipSharedPairs], near_work[kFlipSharedWork];
  const int tid = threadIdx.x, warp_first = tid & ~31;
  if (tid == 0) flip_count[0] = flip_count[1] = offer_count[0] = offer_count[1] = 0;
  __syncthreads();
  int candidates = m.counts[kPriorRoundCandidates + (first_round & 1)];
  int round = first_round, flips = 0, status = 0;
  for (;;) {
    const int now = round & 1, later = now ^ 1;
    if (tid == 0) flip_count[later] = offer_count[later] = 0;
    const int pairs_cap = round == first_round ? 0 : 2 * kFlipSharedPairs;
    // (A warp past the list goes straight to the barrier: the late rounds
    // hold a few warps' worth, and idle warps' bookkeeping would take the
    // issue slots of those on the round's chain.)
    for (int base = 0; base + warp_first < candidates; base += blockDim.x) {
      const int i = base + tid;
      const bool in = i < candidates;
      flip_and_list(m, in ? split_load(near_pairs, pairs_cap, m.candidate, 2 * i) : -1,
                    in ? split_load(near_pairs, pairs_cap, m.candidate, 2 * i + 1) : -1, round, &flip_count[now],
                    near_work, kFlipSharedWork);
    }
    __syncthreads();
    const int flipped = flip_count[now];
    if (flipped == 0) break;
    flips += flipped / 2;
    for (int base = 0; base + warp_first < flipped; base += blockDim.x) {
      const int i = base + tid;
      mend_and_offer(m, i < flipped ? split_load(near_work, kFlipSharedWork, m.work, i) : -1, round,
                     &offer_count[later], near_pairs, 2 * kFlipSharedPairs);
    }
    __syncthreads();
    if (round >= kMaxFlipRounds) {
      status = 1;
      break;
    }
    candidates = offer_count[later];
    ++round;
  }
  if (tid == 0) {
    // The round that flipped nothing, here or before first_round.
    m.counts[kPriorRounds] = round > first_round ? round : m.counts[kPriorLastFlipRound] + 1;
    m.counts[kPriorFlips] += flips;
    m.counts[kPriorStatus] = status;
  }
}

// A warp a triangle: a small one's box; a big one (raster_is_big) goes to
// the big list with its rows' range (one 64-bit atomic: the list's order
// is that of the ranges) for big_raster_kernel.
__global__ void __launch_bounds__(kRasterThreads) raster_kernel(PriorMesh m, ImageView<int32_t> mu_q4) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
  const int triangles = m.counts[kPriorTriangles];
  for (int t = warp; t < triangles; t += warps) {
    const RasterTriangle r = raster_triangle(m, t, mu_q4.width, mu_q4.height);
    if (!raster_is_big(r)) {
      rasterise_box(r, lane, 32, mu_q4);
    } else if (lane == 0) {
      static_assert(kPriorBigTriangles == kPriorBigRows + 1 && kPriorBigRows % 2 == 0, "one aligned 64-bit word");
      const unsigned long long old = atomicAdd(reinterpret_cast<unsigned long long*>(m.counts + kPriorBigRows),
                                               (1ull << 32) | static_cast<unsigned>(r.y1 - r.y0 + 1));
      const int entry = static_cast<int>(old >> 32);
      m.big[2 * entry] = t;
      m.big[2 * entry + 1] = static_cast<int>(old & 0xFFFFFFFFu);
    }
  }
}

// A warp a row of a big triangle (grid-stride over the rows of all of them).
__global__ void __launch_bounds__(kRasterThreads) big_raster_kernel(PriorMesh m, ImageView<int32_t> mu_q4) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
  const int rows = m.counts[kPriorBigRows], count = m.counts[kPriorBigTriangles];
  for (int row = warp; row < rows; row += warps) {
    const int entry = big_entry_of_row(m.big, count, row);
    const RasterTriangle r = raster_triangle(m, m.big[2 * entry], mu_q4.width, mu_q4.height);
    rasterise_row(r, r.y0 + row - m.big[2 * entry + 1], lane, 32, mu_q4);
  }
}

int blocks_for(std::size_t items, int threads) { return static_cast<int>((items + threads - 1) / threads); }

// Raises a kernel's dynamic shared memory limit to `bytes` where the default
// is too small (never lowers it: another scratch may need more).
template <typename Kernel>
cudaError_t allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes <= kDefaultSharedBytes) return cudaSuccess;
  cudaFuncAttributes a{};
  cudaError_t e = cudaFuncGetAttributes(&a, kernel);
  if (e != cudaSuccess) return e;
  if (static_cast<std::size_t>(a.maxDynamicSharedSizeBytes) >= bytes) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) & ~std::size_t{255}; }

}  // namespace

ElasPriorScratch& ElasPriorScratch::operator=(ElasPriorScratch&& o) noexcept {
  if (this != &o) {
    release();
    block_ = o.block_;
    bytes_ = o.bytes_;
    mesh_ = o.mesh_;
    multiprocessors_ = o.multiprocessors_;
    o.block_ = nullptr;
    o.bytes_ = 0;
    o.mesh_ = PriorMesh{};
    o.multiprocessors_ = 0;
  }
  return *this;
}

void ElasPriorScratch::release() {
  if (block_) cudaFree(block_);
  block_ = nullptr;
  bytes_ = 0;
  mesh_ = PriorMesh{};
}

cudaError_t ElasPriorScratch::allocate(int cells_x, int cells_y) {
  release();
  if (cells_x < 0 || cells_y < 0) return cudaErrorInvalidValue;
  const std::size_t cells = static_cast<std::size_t>(cells_x) * static_cast<std::size_t>(cells_y);
  if (cells == 0) return cudaSuccess;
  if (cells > kTriMaxPoints) return cudaErrorInvalidValue;
  cudaError_t e = allow_shared(plan_kernel, plan_shared_bytes(cells_y));
  // (Only rows too wide for compact_rows' x table take this kernel.)
  if (e == cudaSuccess) e = allow_shared(compact_wide_rows_kernel, compact_wide_shared_bytes(cells_x));
  if (e == cudaSuccess) e = device_multiprocessors(&multiprocessors_);
  if (e != cudaSuccess) return e;
  const std::size_t rows = static_cast<std::size_t>(cells_y) + 1, tri = prior_triangle_slots(cells_x, cells_y);
  // Each candidate edge is an inner edge, tested once a round: fewer than
  // 3 / 2 a triangle.
  const std::size_t sizes[] = {
      sizeof(PriorVertex) * cells,              // vertex
      sizeof(int32_t) * rows * 6,               // row_count .. right_outer
      sizeof(int32_t) * tri * 3 * 2,            // corner, twin
      sizeof(int32_t) * tri * 3,                // flipped, flip_with, work
      sizeof(unsigned long long) * tri,         // claim
      sizeof(int32_t) * 2 * (3 * tri / 2 + 1),  // candidate pairs
      sizeof(int32_t) * 2 * tri,                // big triangles
      sizeof(int32_t) * kPriorCountSlots,       // counts
  };
  std::size_t total = 0;
  for (std::size_t s : sizes) total += aligned(s);
  void* p = nullptr;
  if ((e = cudaMalloc(&p, total)) != cudaSuccess) return e;
  block_ = p;
  bytes_ = total;
  char* at = static_cast<char*>(p);
  auto take = [&](std::size_t bytes) {
    char* r = at;
    at += aligned(bytes);
    return r;
  };
  PriorMesh& m = mesh_;
  m.cells_x = cells_x;
  m.cells_y = cells_y;
  m.vertex = reinterpret_cast<PriorVertex*>(take(sizes[0]));
  int32_t* row_arrays = reinterpret_cast<int32_t*>(take(sizes[1]));
  m.row_count = row_arrays;
  m.row_rank = row_arrays + rows;
  m.nonempty_row = row_arrays + 2 * rows;
  m.strip_first = row_arrays + 3 * rows;
  m.left_outer = row_arrays + 4 * rows;
  m.right_outer = row_arrays + 5 * rows;
  int32_t* half_edges = reinterpret_cast<int32_t*>(take(sizes[2]));
  m.corner = half_edges;
  m.twin = half_edges + 3 * tri;
  int32_t* per_triangle = reinterpret_cast<int32_t*>(take(sizes[3]));
  m.flipped = per_triangle;
  m.flip_with = per_triangle + tri;
  m.work = per_triangle + 2 * tri;
  m.claim = reinterpret_cast<unsigned long long*>(take(sizes[4]));
  m.candidate = reinterpret_cast<int32_t*>(take(sizes[5]));
  m.big = reinterpret_cast<int32_t*>(take(sizes[6]));
  m.counts = reinterpret_cast<int32_t*>(take(sizes[7]));
  return cudaSuccess;
}

int default_spread_rounds(int cells_x, int cells_y) {
  // About 3 / 4 of a round's candidates are offered again the next round
  // (Aloe's support grids at 640x480 to 1920x1080: 0.76 to 0.80 a round
  // over the first ten), and the first round has about 0.1 a cell (0.08 to
  // 0.10): spread the rounds until about kSpreadUntilCandidates would be
  // left.
  const double first = 0.1 * static_cast<double>(cells_x) * static_cast<double>(cells_y);
  if (first <= kSpreadUntilCandidates) return 0;
  return static_cast<int>(std::ceil(std::log(first / kSpreadUntilCandidates) / std::log(4.0 / 3.0)));
}

cudaError_t enqueue_elas_prior(ImageView<const int16_t> grid, int step, bool right_view, ElasPriorScratch& scratch,
                               ImageView<int32_t> mu_q4, cudaStream_t stream, int spread_rounds) {
  const PriorMesh& allocated = scratch.mesh();
  if (step < 1 || grid.width < 0 || grid.height < 0 || grid.width > allocated.cells_x ||
      grid.height > allocated.cells_y)
    return cudaErrorInvalidValue;
  if (mu_q4.width > 0 && mu_q4.height > 0) {
    const dim3 block(kClearThreadsX, kClearThreadsY);
    clear_kernel<<<grid_for(mu_q4.width, mu_q4.height, block), block, 0, stream>>>(mu_q4);
  }
  if (grid.width == 0 || grid.height == 0) return cudaGetLastError();
  // The vertices are slotted by this grid's rows; the triangle buffers hold
  // the allocation's most.
  PriorMesh m = allocated;
  m.cells_x = grid.width;
  m.cells_y = grid.height;
  const std::size_t cells = static_cast<std::size_t>(grid.width) * grid.height;
  const std::size_t max_triangles = prior_max_triangles(grid.width, grid.height);
  const std::size_t table_bytes = compact_shared_bytes(grid.width, step);
  if (table_bytes <= kDefaultSharedBytes) {
    const int row_threads = static_cast<int>(std::min<std::size_t>(kRowThreads, (step * grid.width + 31) / 32 * 32));
    compact_rows_kernel<<<grid.height, row_threads, table_bytes, stream>>>(grid, step, right_view, m);
  } else {
    const int row_threads = std::min(kRowThreads, (grid.width + 31) / 32 * 32);
    compact_wide_rows_kernel<<<grid.height, row_threads, compact_wide_shared_bytes(grid.width), stream>>>(
        grid, step, right_view, m);
  }
  plan_kernel<<<1, kPlanThreads, plan_shared_bytes(grid.height), stream>>>(m);
  strips_kernel<<<blocks_for(cells, kStepThreads), kStepThreads, 0, stream>>>(m);
  rungs_kernel<<<blocks_for(max_triangles, kStepThreads), kStepThreads, 0, stream>>>(
      m, static_cast<int>(max_triangles));
  first_candidates_kernel<<<blocks_for(3 * max_triangles, kStepThreads), kStepThreads, 0, stream>>>(m);
  const int spread = spread_rounds >= 0 ? spread_rounds : default_spread_rounds(grid.width, grid.height);
  if (spread > 0) {
    // A round's candidates are at most about a tenth of the cells (the
    // first round's: 0.08 to 0.10 on Aloe's grids) and its flips fewer:
    // blocks for 0.15 a cell in one pass, no more than a few a
    // multiprocessor (blocks that return at once still cost their launch).
    const int blocks = std::max(1, std::min(kSpreadBlocksPerSm * scratch.multiprocessors(),
                                            blocks_for(cells * 3 / 20 + 1, kStepThreads)));
    for (int round = 1; round <= spread; ++round) {
      spread_flip_kernel<<<blocks, kStepThreads, 0, stream>>>(m, round);
      spread_mend_kernel<<<blocks, kStepThreads, 0, stream>>>(m, round);
    }
  }
  flips_kernel<<<1, kFlipThreads, 0, stream>>>(m, spread + 1);
  if (mu_q4.width > 0 && mu_q4.height > 0) {
    const int blocks = std::min(kRasterMaxBlocks, blocks_for(max_triangles * 32, kRasterThreads));
    raster_kernel<<<blocks, kRasterThreads, 0, stream>>>(m, mu_q4);
    big_raster_kernel<<<kBigRasterBlocks, kRasterThreads, 0, stream>>>(m, mu_q4);
  }
  return cudaGetLastError();
}

}  // namespace cs::cuda
