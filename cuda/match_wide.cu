// wide_kernel: the refined pixels whose candidate interval is wide, one
// block each over the whole GPU (match_args.h), and resolve_keys_kernel: a
// view's map from match keys; with their launchers and attributes.
#include "match_device.cuh"
#include "match_kernels.h"

namespace cs::cuda::streaming {

// The wide pixels the matching blocks listed, one block an entry, all over
// the GPU. The block stages the pixel's 15 x 15 reference census and the
// other view's columns for kWideThreads consecutive disparities in shared
// memory (coalesced loads, all in flight together), then each thread sums
// the window of one disparity from shared memory. The block's smallest key (cost << 16 | d) is the
// result; with sub-pixel the costs of its neighbours come from the block's
// cost array, which holds the whole evaluation interval.
// kRival: the costs of the whole interval are kept, and once the winner is
// known the block takes the least admissible one two or more disparities
// from it (the rival; the same value SweepWinner's ascending sweep gives).
template <int kBest, bool kRival>
__global__ void __launch_bounds__(kWideThreads) wide_kernel(const __grid_constant__ Args a) {
  __shared__ uint32_t s_ref[kWideSpan * kWideSpan];
  __shared__ uint32_t s_other[kWideSpan * kWideColumns];
  __shared__ uint32_t s_key;
  __shared__ uint32_t s_rival;          // kRival
  extern __shared__ uint16_t s_cost[];  // window costs of the evaluation interval (sub-pixel, rival)
  const unsigned count = min(*reinterpret_cast<volatile unsigned*>(a.wide_count), a.wide_capacity);
  const int tid = threadIdx.x;
  for (unsigned j = blockIdx.x; j < count; j += gridDim.x) {
    const uint32_t e = a.wide_list[2 * j], span = a.wide_list[2 * j + 1];
    const int view = static_cast<int>(e >> 31);
    const int gx = static_cast<int>(e & 0xFFFFu), gy = static_cast<int>((e >> 16) & 0x7FFFu);
    const int lo = static_cast<int>(span & 0xFFFFu), hi = static_cast<int>(span >> 16);
    const MatchViews& v = a.v[view];
    const bool left = a.left[view], subpixel = a.subpixel[view];
    const int width = v.census_ref.width, height = v.census_ref.height;
    int first, end;
    evaluation_interval(lo, hi, gx, a.range, subpixel, &first, &end);
    // Which window rows lie in the image: rows outside are staged as zero in
    // both views, so they add 0 (columns repeat the edge).
    unsigned row_in = 0;
#pragma unroll
    for (int i = 0; i < kWideSpan; ++i) row_in |= (gy + i - 7 >= 0 && gy + i - 7 < height) ? 1u << i : 0u;
    if (tid == 0) {
      s_key = kNoKey;
      if (kRival) s_rival = kNoKey;
    }
    for (int i = tid; i < kWideSpan * kWideSpan; i += kWideThreads) {
      const int r = i / kWideSpan, c = i - r * kWideSpan;
      s_ref[i] = (row_in >> r & 1u) ? drow(v.census_ref, gy + r - 7)[clampi(gx + c - 7, 0, width - 1)] : 0u;
    }
    for (int d0 = first; d0 < end; d0 += kWideThreads) {
      // Staged column k is image column base + k, clamped: thread t's window
      // column c at disparity d0 + t reads column c - t + kWideThreads - 1
      // (left reference, x - d) or c + t (right, x + d).
      const int base = left ? gx - 7 - d0 - (kWideThreads - 1) : gx - 7 + d0;
      __syncthreads();  // the previous pass has read s_other
      for (int i = tid; i < kWideSpan * kWideColumns; i += kWideThreads) {
        const int r = i / kWideColumns, k = i - r * kWideColumns;
        s_other[i] = (row_in >> r & 1u) ? __ldg(drow(v.census_other, gy + r - 7) + clampi(base + k, 0, width - 1)) : 0u;
      }
      __syncthreads();
      const int d = d0 + tid;
      const int k0 = left ? kWideThreads - 1 - tid : tid;
      int sums[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
      for (int r = 0; r < kWideSpan; ++r) {
#pragma unroll
        for (int c = 0; c < kWideSpan; ++c) {
          const int cost = census_cost(s_ref[r * kWideSpan + c], s_other[r * kWideColumns + k0 + c]);
          sums[(r / 5) * 3 + c / 5] += cost;  // rows outside: both staged words are 0
        }
      }
      if (d < end) {
        const int around[8] = {sums[0], sums[1], sums[2], sums[3], sums[5], sums[6], sums[7], sums[8]};
        const int cost = window_cost_in_registers<kBest>(sums[4], around);
        if (subpixel || kRival) s_cost[d - first] = static_cast<uint16_t>(cost);
        const bool ok = d >= lo && d < hi && !(v.mask_other.data && drow(v.mask_other, gy)[gx + (left ? -d : d)] == 0);
        if (ok) atomicMin(&s_key, static_cast<uint32_t>(cost) << 16 | static_cast<uint32_t>(d));
      }
    }
    __syncthreads();
    if (kRival) {
      const uint32_t key = s_key;
      if (key != kNoKey) {
        const int winner = static_cast<int>(key & 0xFFFFu);
        for (int d = lo + tid; d < hi; d += kWideThreads) {
          const bool ok = (d < winner - 1 || d > winner + 1) &&
                          !(v.mask_other.data && drow(v.mask_other, gy)[gx + (left ? -d : d)] == 0);
          if (ok) atomicMin(&s_rival, static_cast<uint32_t>(s_cost[d - first]));
        }
      }
      __syncthreads();
    }
    if (tid == 0) {
      const uint32_t key = s_key;
      offer_winner(v, gx, gy, left ? -1 : 1, key);
      int best = key_disparity(key);
      if (kRival)
        best = finish_sweep(v, gx, gy, best, static_cast<int32_t>(key >> 16),
                            s_rival == kNoKey ? kNoCost : static_cast<int32_t>(s_rival), a.uniqueness_ratio);
      drow(v.disparity, gy)[gx] = static_cast<int16_t>(best);
      if (subpixel) {
        int offset = 0;
        if (subpixel_neighbours_in_range(best, gx, a.range.lo, a.range.hi))
          offset = subpixel_offset_q4(s_cost[best - 1 - first], static_cast<int>(key >> 16), s_cost[best + 1 - first]);
        drow(v.subpixel_offset, gy)[gx] = static_cast<int8_t>(offset);
      }
    }
    __syncthreads();  // s_key and s_cost are free again
  }
  // The last block out empties the list for the next launch (every block
  // has read the count by then).
  if (tid == 0) {
    __threadfence();
    if (atomicAdd(&a.wide_count[1], 1u) == gridDim.x - 1) {
      a.wide_count[0] = 0u;
      a.wide_count[1] = 0u;
    }
  }
}

// The right view's map from the keys a shared-cost launch left (-1 where
// none was admissible); the keys are reset for the next launch.
__global__ void __launch_bounds__(kResolveX * kResolveY) resolve_keys_kernel(ImageView<uint32_t> keys,
                                                                             ImageView<int16_t> disparity) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= keys.width || y >= keys.height) return;
  uint32_t* key = drow(keys, y) + x;
  const uint32_t k = *key;
  *key = kNoKey;
  drow(disparity, y)[x] = static_cast<int16_t>(key_disparity(k));
}

cudaError_t resolve_keys(const ImageView<uint32_t>& keys, const ImageView<int16_t>& disparity, cudaStream_t stream) {
  const dim3 block(kResolveX, kResolveY);
  resolve_keys_kernel<<<grid_for(keys.width, keys.height, block), block, 0, stream>>>(keys, disparity);
  return cudaGetLastError();
}

namespace {

template <int kBest, bool kRival>
void launch_wide(const Args& a, int grid, cudaStream_t stream) {
  if (grid > 0) wide_kernel<kBest, kRival><<<grid, kWideThreads, wide_dynamic_bytes(a.list_cap), stream>>>(a);
}

template <int kBest>
const void* wide_kernel_of(bool rival) {
  return rival ? reinterpret_cast<const void*>(wide_kernel<kBest, true>)
               : reinterpret_cast<const void*>(wide_kernel<kBest, false>);
}

const void* wide_kernel_of(int best, bool rival) {
  switch (best) {
    case 0: return wide_kernel_of<0>(rival);
    case 1: return wide_kernel_of<1>(rival);
    default: return wide_kernel_of<2>(rival);
  }
}

}  // namespace

cudaError_t enqueue_wide(const Args& a, int best, bool rival, int grid, cudaStream_t stream) {
  switch (best) {
    case 0: rival ? launch_wide<0, true>(a, grid, stream) : launch_wide<0, false>(a, grid, stream); break;
    case 1: rival ? launch_wide<1, true>(a, grid, stream) : launch_wide<1, false>(a, grid, stream); break;
    case 2: rival ? launch_wide<2, true>(a, grid, stream) : launch_wide<2, false>(a, grid, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

bool wide_attributes(int best, bool rival, cudaFuncAttributes* out) {
  return kernel_attributes(wide_kernel_of(best, rival), out);
}

}  // namespace cs::cuda::streaming
