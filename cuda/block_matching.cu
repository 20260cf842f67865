// Method block on the GPU: the kernels around block_tile.h's per-thread
// code (which says how they work), their configuration and launches.
#include "block_matching.h"

#include <algorithm>
#include <climits>
#include <string>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {

BlockCostViews as_const(const BlockWinnerViews& w) { return const_views(w); }

namespace {

// The phases of BlockTile between the block's barriers (the host emulation
// in tests/cuda/test_block_emulation.cpp calls them in the same order).
template <int kTileW>
__global__ void __launch_bounds__(kTileW) block_match_kernel(const __grid_constant__ BlockTileArgs a) {
  __shared__ BlockTileShared<kTileW> sh;
  BlockTile<kTileW> t(a, sh, blockIdx.x, blockIdx.y);
  const int tid = threadIdx.x;
  if (t.slabs == 0) {  // uniform: the whole block returns
    t.write_empty(tid);
    return;
  }
  t.clear_keys(tid);
  for (int s = 0; s < t.slabs; ++s) {
    t.begin_slab(s);
    t.init_box(tid);
    __syncthreads();  // box at y0 (and the cleared keys)
    for (int y = t.y0; y < t.y1; ++y) {
      if (y > t.y0) {
        t.update_box(tid, y);
        __syncthreads();  // box at y
      }
      t.sweep(tid, y);
      if (y > t.y0) t.fold_keys(tid, y - 1);
      if (y + 1 < t.y1) t.stage_rows(tid, y);
      __syncthreads();  // sweeps done with box, row y's keys complete, rows for y + 1 staged
    }
    t.fold_keys(tid, t.y1 - 1);
    __syncthreads();  // keys clear before the next slab's sweeps, box free for its init
  }
}

constexpr int kResolveX = 64, kResolveY = 4;
__global__ void __launch_bounds__(kResolveX * kResolveY)
    block_resolve_kernel(ImageView<unsigned long long> keys, ImageView<int16_t> right) {
  const int x = blockIdx.x * kResolveX + threadIdx.x;
  const int y = blockIdx.y * kResolveY + threadIdx.y;
  if (x >= keys.width || y >= keys.height) return;
  block_resolve_pixel(keys, right, x, y);
}

constexpr int kFinishX = 32, kFinishY = 8;

// The frame's counts are summed per block and added with one atomic per
// block and counter (add_frame_counts in finish.h).
__global__ void __launch_bounds__(kFinishX * kFinishY)
    block_finish_kernel(const __grid_constant__ BlockFinishViews v, const BlockFinishParams p) {
  __shared__ unsigned block_valid, block_foreground;
  if (threadIdx.x == 0 && threadIdx.y == 0) block_valid = block_foreground = 0;
  __syncthreads();
  const int x = blockIdx.x * kFinishX + threadIdx.x;
  const int y = blockIdx.y * kFinishY + threadIdx.y;
  unsigned valid = 0, foreground = 0;
  if (x < v.winners.disparity.width && y < v.winners.disparity.height) {
    bool fg = false;
    int q4 = 0;
    valid = block_finish_pixel(v, p, x, y, &fg, v.encode.dst ? &q4 : nullptr) ? 1u : 0u;
    foreground = fg ? 1u : 0u;
    if (v.encode.dst) store_encoded(v.encode, x, y, q4, fg);
  }
  if (!v.counters) return;  // uniform: no barrier follows
  add_frame_counts(valid, foreground, block_valid, block_foreground, v.counters);
}

const void* match_kernel_of(int tile_width) {
  return tile_width == 64 ? reinterpret_cast<const void*>(block_match_kernel<64>)
                          : reinterpret_cast<const void*>(block_match_kernel<128>);
}

int clip_lo(Range r) { return std::max(r.lo, 0); }
int clip_hi(Range r, int width) { return std::min(r.hi, width); }

}  // namespace

size_t block_sweep_state_bytes(int width, int height, Range range) {
  const int span = clip_hi(range, width) - clip_lo(range);
  if (span <= kBlockSlab) return 0;
  return static_cast<size_t>(width) * height * sizeof(SweepWinner);
}

// Of the tile widths and heights (or the forced ones), the one with the
// least estimated time: the work of its blocks (each row step: a V task's
// 2r + 63 column differences and a pixel's sweep of the slab; each slab:
// the window's first rows again) over the rate the resident warps reach. A
// block's warps wait on shared memory and on each other at every row step,
// so one warp issues about every third cycle: an SM needs 12 or more
// resident warps for its 4 schedulers, which small grids (641x555) get
// only from short tiles, large ones (1920x1080) from any.
cudaError_t choose_block_config(int width, int height, const BlockParams& p, BlockConfig* out) {
  DeviceLimits own;
  const DeviceLimits* limits = nullptr;
  cudaError_t e = limits_or_current(p.limits, &own, &limits);
  if (e != cudaSuccess) return e;
  const int r = p.block_size / 2;
  const int span = std::max(clip_hi(p.range, width) - clip_lo(p.range), 1);
  const int slabs = (span + kBlockSlab - 1) / kBlockSlab;
  const int sms = std::max(limits->sm_count, 1);
  bool found = false;
  double best_time = 0;
  for (int tile_width : {128, 64}) {
    if (p.tile_width != 0 && tile_width != p.tile_width) continue;
    cudaFuncAttributes attr{};
    const int per_sm = blocks_per_sm(*limits, match_kernel_of(tile_width), tile_width, 0, &attr, &e);
    if (e != cudaSuccess) return e;
    if (per_sm <= 0) continue;
    for (int rows : {64, 32, 16, 8}) {
      if (p.tile_rows != 0 && rows != p.tile_rows) continue;
      const long long blocks =
          static_cast<long long>((width + tile_width - 1) / tile_width) * ((height + rows - 1) / rows);
      const double row_step = 10.0 * (2 * r + 63) + 18.0 * kBlockSlab;  // instructions a thread
      const double block_work = slabs * (rows * row_step + (2 * r + 1) * 6.0 * (2 * r + 63));
      const double warps = tile_width / 32.0;
      const double resident = std::min<double>(per_sm, static_cast<double>(blocks + sms - 1) / sms) * warps;
      const double rate = std::min(4.0, resident / 3.0);  // warp instructions an SM a cycle
      const double time = static_cast<double>(blocks) * block_work * warps / (sms * rate);
      if (!found || time < best_time * 0.98) {  // ties to the earlier: wider, taller
        found = true;
        best_time = time;
        out->tile_width = tile_width;
        out->tile_rows = rows;
        out->threads = tile_width;
        out->grid = static_cast<int>(std::min<long long>(blocks, INT_MAX));
        out->registers = attr.numRegs;
        out->static_shared = attr.sharedSizeBytes;
        out->blocks_per_sm = per_sm;
      }
    }
  }
  return found ? cudaSuccess : cudaErrorInvalidConfiguration;
}

cudaError_t enqueue_block_match(const BlockMatchViews& v, const BlockParams& p, cudaStream_t stream) {
  const int w = v.gray_left.width, h = v.gray_left.height;
  if (p.block_size < 3 || p.block_size > kMaxMatchBlockSize || p.block_size % 2 == 0) return cudaErrorInvalidValue;
  if ((v.mask_left.data == nullptr) != (v.mask_right.data == nullptr)) return cudaErrorInvalidValue;
  const int lo = clip_lo(p.range), hi = clip_hi(p.range, w);
  if (hi > (1 << kRightKeyShift)) return cudaErrorInvalidValue;
  const size_t state = block_sweep_state_bytes(w, h, p.range);
  if (state > 0 && (v.scratch.sweep_state == nullptr || v.scratch.sweep_state_bytes < state))
    return cudaErrorInvalidValue;
  BlockConfig c;
  cudaError_t e = choose_block_config(w, h, p, &c);
  if (e != cudaSuccess) return e;
  BlockTileArgs a;
  a.gray_left = v.gray_left;
  a.gray_right = v.gray_right;
  a.mask_left = v.mask_left;
  a.mask_right = v.mask_right;
  a.left = v.left;
  a.right_keys = v.scratch.right_keys;
  a.state = static_cast<SweepWinner*>(v.scratch.sweep_state);
  a.lo = lo;
  a.hi = hi;
  a.radius = p.block_size / 2;
  a.rows = c.tile_rows;
  const dim3 grid((w + c.tile_width - 1) / c.tile_width, (h + c.tile_rows - 1) / c.tile_rows);
  if (c.tile_width == 64)
    block_match_kernel<64><<<grid, 64, 0, stream>>>(a);
  else
    block_match_kernel<128><<<grid, 128, 0, stream>>>(a);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  const dim3 block(kResolveX, kResolveY);
  block_resolve_kernel<<<grid_for(w, h, block), block, 0, stream>>>(v.scratch.right_keys, v.right);
  return cudaGetLastError();
}

cudaError_t block_finish_call(const BlockFinishViews& views, const BlockFinishParams& params, KernelCall* call) {
  const dim3 block(kFinishX, kFinishY);
  call->set(block_finish_kernel, grid_for(views.winners.disparity.width, views.winners.disparity.height, block), block,
            0, views, params);
  return cudaSuccess;
}

cudaError_t enqueue_block_finish(const BlockFinishViews& views, const BlockFinishParams& params,
                                 cudaStream_t stream) {
  KernelCall call;
  const cudaError_t e = block_finish_call(views, params, &call);
  return e != cudaSuccess ? e : call.launch(stream);
}

std::vector<KernelLaunch> block_kernel_launches() {
  return {
      {"block_match_kernel<64>", 64, 0, 0, true, "block, 64-column tiles"},
      {"block_match_kernel<128>", 128, 0, 0, true, "block, 128-column tiles"},
      {"block_resolve_kernel", kResolveX * kResolveY, 0, 0, true, "block, right keys"},
      {"block_finish_kernel", kFinishX * kFinishY, 0, 0, true, "block, finish"},
  };
}

}  // namespace cs::cuda
