// The per-thread code of method block's kernels (block_matching.cu), as
// host-and-device functions over plain views: the kernels call them between
// their barriers, and a host emulation (tests/cuda/test_block_emulation.cpp)
// runs the very same code phase by phase, thread by thread, without a GPU.
// No CUDA header: under nvcc CS_HD makes these __host__ __device__.
//
// Built as NVIDIA's stereo sample describes it (Stam 2008, "Stereo Imaging
// with CUDA"): a block of threads owns a tile of columns and walks down its
// rows with a rolling window, one thread a column, the partial sums in
// shared memory so that neighbouring threads reuse them, and per row only
// the squared differences of the row entering the window and of the row
// leaving it are computed. Unlike the sample, which keeps the running
// minimum in global memory and walks the rows once per disparity, a block
// walks its rows once per slab of kBlockSlab disparities and keeps the block
// cost of every disparity of the slab in shared memory (`box`, one row of
// the tile per disparity). Per row step:
//  - V (update_box): each (disparity, run of 32 columns) task adds to its
//    box costs the column differences of the entering and leaving rows,
//    summed over the window's columns by a running sum along the run, so a
//    pixel costs a few additions whatever the block size;
//  - S (sweep): each thread sweeps its pixel's disparities of the slab in
//    ascending order with SweepWinner (stereo_math.h), as the CPU reference
//    does, and offers each admissible cost to the right-view pixel it
//    matches (x - d) through a shared key; fold_keys takes a row's keys into
//    the global 64-bit keys where every block's offers for a right pixel
//    meet (stages.h B1: the right view's costs are the left view's).
// A pixel's sweep waits in global memory between slabs. The arithmetic is
// the reference's integers in the reference's order: equal bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "stages.h"
#include "stereo_math.h"

namespace cs::cuda {

// Disparities a block sweeps per pass over its rows.
constexpr int kBlockSlab = 32;
constexpr int kBlockMaxRadius = kMaxMatchBlockSize / 2;
// Columns of a V task; a warp's 32 lanes are the slab's 32 disparities.
constexpr int kBlockRun = 32;
static_assert(kBlockSlab == 32, "V tasks map a warp's lanes to the slab's disparities; slab keys keep d in 5 bits");
constexpr unsigned kNoSlabKey = 0xFFFFFFFFu;
// Right keys: cost << 12 | d (max-disparity <= 4096, so d < 2^12; costs < 2^26).
constexpr unsigned long long kNoRightKey = ~0ull;
constexpr int kRightKeyShift = 12;

template <typename T>
CS_HD T* row_of(const ImageView<T>& v, int y) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(const_cast<std::remove_const_t<T>*>(v.data)) +
                              static_cast<std::ptrdiff_t>(y) * v.pitch);
}

CS_HD void atomic_min_shared(unsigned* at, unsigned v) {
#if defined(__CUDA_ARCH__)
  atomicMin(at, v);
#else
  if (v < *at) *at = v;
#endif
}

CS_HD void atomic_min_global(unsigned long long* at, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  atomicMin(at, v);
#else
  if (v < *at) *at = v;
#endif
}

CS_HD int read_only(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// B2's left-view winners (stages.h BlockWinners) in device memory.
struct BlockWinnerViews {
  ImageView<int16_t> disparity;
  ImageView<int32_t> best, rival, below, above;
};
struct BlockCostViews {
  ImageView<const int16_t> disparity;
  ImageView<const int32_t> best, rival, below, above;
};
template <typename T>
CS_HD ImageView<const T> const_view(const ImageView<T>& v) {
  return {v.data, v.width, v.height, v.pitch};
}
CS_HD BlockCostViews const_views(const BlockWinnerViews& w) {
  return {const_view(w.disparity), const_view(w.best), const_view(w.rival), const_view(w.below),
          const_view(w.above)};
}

// What the match kernel reads and writes.
struct BlockTileArgs {
  ImageView<const uint8_t> gray_left, gray_right;
  ImageView<const uint8_t> mask_left, mask_right;  // both or neither
  BlockWinnerViews left;
  ImageView<unsigned long long> right_keys;
  SweepWinner* state;  // width * height, row-major; may be null with one slab
  int lo, hi;          // candidates [lo, hi), 0 <= lo < hi <= width
  int radius;
  int rows;            // a block's rows
};

template <int kTileW>
struct BlockTileShared {
  static constexpr int kCols = kTileW + 2 * kBlockMaxRadius;  // the window's columns at the largest radius
  // Block costs of the slab: box[dd][xl] = C(x0 + xl, y, c0 + dd). The odd
  // row length puts the 32 disparities of one column in 32 banks.
  int box[kBlockSlab][kTileW + 1];
  // Right-view keys (cost << 5 | dd) of the current row and the previous one
  // (folded while the next row is swept); index xr - (x0 - c0 - n + 1).
  unsigned right_key[2][kTileW + kBlockSlab];
  // The rows entering and leaving the window at the next row step: left
  // columns x0 - r + i, right columns x0 - r - (c0 + n - 1) + i.
  uint8_t left_in[kCols], left_out[kCols];
  uint8_t right_in[kCols + kBlockSlab], right_out[kCols + kBlockSlab];
};

// One block's tile: columns [x0, x0 + kTileW), rows [y0, y1), swept in
// slabs of disparities. Every thread keeps its own copy (a few registers);
// the phases are called by every thread between barriers, in the order of
// block_match_kernel.
template <int kTileW>
struct BlockTile {
  static constexpr int kThreads = kTileW;
  const BlockTileArgs& a;
  BlockTileShared<kTileW>& sh;
  int w, h, r, cols, x0, y0, y1, hi, slabs;
  bool masks;
  // The slab: disparities [c0, c0 + n).
  int c0 = 0, n = 0, right_base = 0;
  bool first = true, last = true;

  CS_HD BlockTile(const BlockTileArgs& args, BlockTileShared<kTileW>& shared, int block_x, int block_y)
      : a(args), sh(shared) {
    w = a.gray_left.width;
    h = a.gray_left.height;
    r = a.radius;
    cols = kTileW + 2 * r;
    x0 = block_x * kTileW;
    y0 = block_y * a.rows;
    y1 = mini(y0 + a.rows, h);
    masks = a.mask_left.data != nullptr;
    // Left pixels match only d <= x: no disparity beyond the tile's last column.
    hi = mini(a.hi, x0 + kTileW);
    slabs = hi > a.lo ? (hi - a.lo + kBlockSlab - 1) / kBlockSlab : 0;
  }

  CS_HD void begin_slab(int s) {
    c0 = a.lo + s * kBlockSlab;
    n = mini(kBlockSlab, hi - c0);
    first = s == 0;
    last = s == slabs - 1;
    right_base = x0 - r - (c0 + n - 1);
  }

  CS_HD void write_winner(int x, int y, const SweepWinner& s) const {
    row_of(a.left.disparity, y)[x] = s.disparity;
    row_of(a.left.best, y)[x] = s.best;
    row_of(a.left.rival, y)[x] = s.rival;
    row_of(a.left.below, y)[x] = s.below;
    row_of(a.left.above, y)[x] = s.above;
  }

  // No slab (the tile lies left of the range): no pixel has a candidate.
  CS_HD void write_empty(int tid) const {
    const int x = x0 + tid;
    if (x >= w) return;
    for (int y = y0; y < y1; ++y) write_winner(x, y, SweepWinner());
  }

  CS_HD void clear_keys(int tid) {
    for (int i = tid; i < 2 * (kTileW + kBlockSlab); i += kThreads) (&sh.right_key[0][0])[i] = kNoSlabKey;
  }

  // A V task: disparity dd of the slab (its lane) and the run of columns
  // [run0, run0 + kBlockRun) of the tile (its warp).
  CS_HD static int task_disparity(int tid) { return tid % kBlockRun; }
  CS_HD static int task_run(int tid) { return (tid / kBlockRun) * kBlockRun; }

  // Box costs at row y0: over the window's rows inside the image, each
  // row's window sums by a running sum along the task's run.
  CS_HD void init_box(int tid) {
    const int dd = task_disparity(tid), run0 = task_run(tid);
    if (dd >= n) return;
    const int d = c0 + dd;
    int* out = &sh.box[dd][0];
    for (int i = 0; i < kBlockRun; ++i) out[run0 + i] = 0;
    for (int v = maxi(y0 - r, 0); v <= mini(y0 + r, h - 1); ++v) {
      const uint8_t* lrow = row_of(a.gray_left, v);
      const uint8_t* rrow = row_of(a.gray_right, v);
      auto cost = [&](int i) {
        const int u = x0 - r + i;
        return squared_difference(read_only(lrow + clampi(u, 0, w - 1)), read_only(rrow + clampi(u - d, 0, w - 1)));
      };
      int sum = 0;
      for (int k = 0; k <= 2 * r; ++k) sum += cost(run0 + k);
      out[run0] += sum;
      for (int i = 1; i < kBlockRun; ++i) {
        const int xl = run0 + i;
        sum += cost(xl + 2 * r) - cost(xl - 1);
        out[xl] += sum;
      }
    }
  }

  // V: from row y - 1 to row y, row y + r enters the window and row
  // y - r - 1 leaves it (rows outside the image count 0), from the rows
  // stage_rows(y - 1) put in shared memory.
  CS_HD void update_box(int tid, int y) {
    const int dd = task_disparity(tid), run0 = task_run(tid);
    if (dd >= n) return;
    const bool enter = y + r < h, leave = y - r - 1 >= 0;
    const uint8_t* rin = sh.right_in + (n - 1 - dd);
    const uint8_t* rout = sh.right_out + (n - 1 - dd);
    auto change = [&](int i) {
      int v = 0;
      if (enter) v += squared_difference(sh.left_in[i], rin[i]);
      if (leave) v -= squared_difference(sh.left_out[i], rout[i]);
      return v;
    };
    int* out = &sh.box[dd][0];
    int sum = 0;
    for (int k = 0; k <= 2 * r; ++k) sum += change(run0 + k);
    out[run0] += sum;
    for (int i = 1; i < kBlockRun; ++i) {
      const int xl = run0 + i;
      sum += change(xl + 2 * r) - change(xl - 1);
      out[xl] += sum;
    }
  }

  // S: pixel (x0 + tid, y)'s sweep over the slab, d ascending, and its
  // offers to the right view into row y's keys.
  CS_HD void sweep(int tid, int y) {
    const int x = x0 + tid;
    if (x >= w) return;
    const size_t p = static_cast<size_t>(y) * w + x;
    const bool foreground = !masks || row_of(a.mask_left, y)[x] != 0;
    SweepWinner s;
    if (foreground) {
      if (!first) s = a.state[p];
      const uint8_t* mask_right = masks ? row_of(a.mask_right, y) : nullptr;
      unsigned* keys = sh.right_key[y & 1];
      const int end = mini(n, x - c0 + 1);  // d = c0 + dd <= x
      for (int dd = 0; dd < end; ++dd) {
        const int d = c0 + dd;
        const int32_t cost = sh.box[dd][tid];
        const bool admissible = !masks || mask_right[x - d] != 0;
        s.visit(d, cost, admissible);
        // cost < 2^26: the key fits 31 bits and never equals kNoSlabKey.
        if (admissible)
          atomic_min_shared(&keys[tid - dd + n - 1], static_cast<unsigned>(cost) << 5 | static_cast<unsigned>(dd));
      }
      if (!last) a.state[p] = s;
    }
    if (last) write_winner(x, y, s);
  }

  // Row y's keys into the global keys; the row's shared keys are cleared.
  CS_HD void fold_keys(int tid, int y) {
    unsigned* keys = sh.right_key[y & 1];
    unsigned long long* row = row_of(a.right_keys, y);
    for (int i = tid; i < kTileW + n - 1; i += kThreads) {
      const unsigned k = keys[i];
      if (k == kNoSlabKey) continue;
      const unsigned long long cost = k >> 5;
      const unsigned long long d = static_cast<unsigned long long>(c0) + (k & 31u);
      atomic_min_global(&row[right_base + r + i], cost << kRightKeyShift | d);  // right pixel x - d
      keys[i] = kNoSlabKey;
    }
  }

  // The rows update_box(y + 1) reads: y + 1 + r enters, y - r leaves.
  CS_HD void stage_rows(int tid, int y) {
    const int ve = y + 1 + r, vl = y - r;
    if (ve < h) stage(tid, ve, sh.left_in, sh.right_in);
    if (vl >= 0) stage(tid, vl, sh.left_out, sh.right_out);
  }

  CS_HD void stage(int tid, int v, uint8_t* left, uint8_t* right) const {
    const uint8_t* lrow = row_of(a.gray_left, v);
    const uint8_t* rrow = row_of(a.gray_right, v);
    for (int i = tid; i < cols; i += kThreads) left[i] = static_cast<uint8_t>(read_only(lrow + clampi(x0 - r + i, 0, w - 1)));
    for (int i = tid; i < cols + n - 1; i += kThreads)
      right[i] = static_cast<uint8_t>(read_only(rrow + clampi(right_base + i, 0, w - 1)));
  }
};

// The right view's winner from its key; the key back to kNoRightKey.
CS_HD void block_resolve_pixel(const ImageView<unsigned long long>& keys, const ImageView<int16_t>& right, int x,
                               int y) {
  unsigned long long* k = row_of(keys, y) + x;
  const unsigned long long key = *k;
  row_of(right, y)[x] =
      static_cast<int16_t>(key == kNoRightKey ? -1 : static_cast<int>(key & ((1ull << kRightKeyShift) - 1)));
  *k = kNoRightKey;
}

// B3, stage 8, B4 and the confidence of one left pixel (block_matching.h
// enqueue_block_finish); each output optional (data == nullptr).
struct BlockFinishMaps {
  BlockCostViews winners;
  ImageView<const int16_t> right;  // the right view's winners; data == nullptr: no check
  ImageView<const uint8_t> mask;   // foreground count; data == nullptr: every pixel
  ImageView<int16_t> unique;
  ImageView<int16_t> final_map;
  ImageView<uint16_t> disparity_q4;
  ImageView<uint8_t> confidence;
};
struct BlockFinishParams {
  Range range{0, 0};
  int uniqueness_ratio = 0;  // resolved (resolve_uniqueness_ratio)
  int tolerance = 0;
  bool subpixel = true;
};

// Returns whether the final disparity is valid; *foreground: the mask's say;
// *q4 (optional): the Q4 value (written to disparity_q4 where it has data).
CS_HD bool block_finish_pixel(const BlockFinishMaps& v, const BlockFinishParams& p, int x, int y,
                              bool* foreground, int* q4 = nullptr) {
  const int w = v.winners.disparity.width;
  int d = row_of(v.winners.disparity, y)[x];
  const int32_t best = row_of(v.winners.best, y)[x], rival = row_of(v.winners.rival, y)[x];
  if (d >= 0 && !passes_uniqueness(best, rival, p.uniqueness_ratio)) d = -1;
  if (v.unique.data) row_of(v.unique, y)[x] = static_cast<int16_t>(d);
  if (v.right.data && d >= 0 && !lr_consistent(d, x - d, w, row_of(v.right, y), p.tolerance)) d = -1;
  if (v.final_map.data) row_of(v.final_map, y)[x] = static_cast<int16_t>(d);
  if (v.disparity_q4.data || q4) {
    int q = 0;
    if (d >= 0) {
      q = d * 16;
      if (p.subpixel && subpixel_neighbours_in_range(d, x, p.range.lo, p.range.hi))
        q += subpixel_offset_q4(row_of(v.winners.below, y)[x], best, row_of(v.winners.above, y)[x]);
    }
    if (v.disparity_q4.data) row_of(v.disparity_q4, y)[x] = static_cast<uint16_t>(q < 0 ? 0 : q);
    if (q4) *q4 = q < 0 ? 0 : q;
  }
  if (v.confidence.data) row_of(v.confidence, y)[x] = d >= 0 ? confidence_from_costs(best, rival) : 0;
  *foreground = !v.mask.data || row_of(v.mask, y)[x] != 0;
  return d >= 0;
}

}  // namespace cs::cuda
