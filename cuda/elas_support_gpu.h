// ELAS's descriptors and support points on the GPU (common/elas_support.h,
// E1 and E2), bit for bit the CPU reference (common/elas_support.cpp).
// (Not cuda/elas_support.h: that name would hide common/elas_support.h,
// which this header and its users include, behind the include path's order.)
//
// Every enqueue function launches a fixed sequence of kernels on `stream`
// and nothing else: no allocation, no synchronisation, so that the engine
// can capture them into its frame graph. A view of the wrong size (or
// descriptor rows not 16-byte aligned, a negative min_disparity) gives
// cudaErrorInvalidValue before anything is launched; empty views launch
// nothing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "elas_support.h"
#include "stereo.h"

namespace cs::cuda {

// E1: the descriptors of one grey view, of its size. Byte k of pixel
// (x, y)'s descriptor (ElasDescriptor element k) is byte k of its uint4 in
// memory: .x holds bytes 0 .. 3 with byte 0 in its low bits, .w bytes 12 ..
// 15 (the dv bytes). Rows of `descriptors` must be 16-byte aligned (a
// pitched allocation is).
cudaError_t enqueue_elas_descriptors(ImageView<const uint8_t> gray, ImageView<uint4> descriptors,
                                     cudaStream_t stream);

// The support grid's cells along a side of `size` pixels: ceil(size / s),
// s = candidate_step (at least 1, as the reference takes it).
inline int elas_grid_cells(int size, int candidate_step) {
  const int s = candidate_step < 1 ? 1 : candidate_step;
  return (size + s - 1) / s;
}

// E2 a .. c: every cell of `candidates` (elas_grid_cells of the views'
// size) gets its candidate's disparity d1 or -1. left and right: the views'
// descriptors (enqueue_elas_descriptors), the same size; mask_left: the
// left view's foreground (its size), data == nullptr for no background model.
cudaError_t enqueue_elas_candidates(ImageView<const uint4> left, ImageView<const uint4> right,
                                    ImageView<const uint8_t> mask_left, const ElasSupportParams& p,
                                    ImageView<int16_t> candidates, cudaStream_t stream);
// E2 d: `grid` (another buffer of the same size) from the candidates, which
// stay unchanged (one pass: no removal is seen by another cell).
cudaError_t enqueue_elas_remove_inconsistent(ImageView<const int16_t> candidates, const ElasSupportParams& p,
                                             ImageView<int16_t> grid, cudaStream_t stream);
// E2 e, in place: every grid row, then every grid column.
cudaError_t enqueue_elas_remove_redundant(const ElasSupportParams& p, ImageView<int16_t> grid, cudaStream_t stream);

// E2 a .. e: the support grid (elas_grid_cells of the views' size; -1
// where there is no support point). scratch: a buffer of the grid's size
// that holds the candidates after c when this returns.
cudaError_t enqueue_elas_support(ImageView<const uint4> left, ImageView<const uint4> right,
                                 ImageView<const uint8_t> mask_left, const ElasSupportParams& p,
                                 ImageView<int16_t> grid, ImageView<int16_t> scratch, cudaStream_t stream);

}  // namespace cs::cuda
