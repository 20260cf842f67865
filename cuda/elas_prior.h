// ELAS's prior (E4 of common/elas_dense.h) on the GPU: one view's support
// grid made into the perturbed Delaunay triangulation of its points
// (common/triangulation.h) and each triangle's plane rasterised into mu_q4
// (common/triangle_prior.h), bit for bit what the CPU reference's prior_of
// makes of the same points. The steps are elas_prior_steps.h's.
//
// Nothing here allocates or waits for the GPU except ElasPriorScratch's
// allocate: enqueue_elas_prior is a fixed sequence of kernel launches whose
// sizes depend only on the grid's and the image's sizes, fit for stream
// capture into a CUDA graph. Two views run at once on two scratches (on two
// streams); a scratch serves one run at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "elas_prior_steps.h"
#include "stereo.h"

namespace cs::cuda {

// The buffers of one view's triangulation for grids of up to cells_x x
// cells_y cells (vertices, at most 2 cells_x cells_y triangles, flip lists,
// the big triangles' list, counters). Moves only.
class ElasPriorScratch {
 public:
  ElasPriorScratch() = default;
  ElasPriorScratch(const ElasPriorScratch&) = delete;
  ElasPriorScratch& operator=(const ElasPriorScratch&) = delete;
  ElasPriorScratch(ElasPriorScratch&& o) noexcept { *this = static_cast<ElasPriorScratch&&>(o); }
  ElasPriorScratch& operator=(ElasPriorScratch&& o) noexcept;
  ~ElasPriorScratch() { release(); }

  // Blocking (cudaMalloc). More than kTriMaxPoints cells: cudaErrorInvalidValue
  // (the reference triangulates no more points).
  cudaError_t allocate(int cells_x, int cells_y);
  void release();
  bool empty() const { return block_ == nullptr; }
  int cells_x() const { return mesh_.cells_x; }
  int cells_y() const { return mesh_.cells_y; }
  std::size_t bytes() const { return bytes_; }
  // The last run's counters on the device (kPriorCountSlots int32, PriorCount
  // order: triangles, flip rounds, ...), for tests and benchmarks.
  const int32_t* device_counts() const { return mesh_.counts; }
  // Where the run's buffers are (cells_x, cells_y: the allocation's).
  const PriorMesh& mesh() const { return mesh_; }
  // The multiprocessors of the device it was allocated on (the spread
  // rounds' launches are sized by them).
  int multiprocessors() const { return multiprocessors_; }

 private:
  void* block_ = nullptr;
  std::size_t bytes_ = 0;
  PriorMesh mesh_{};
  int multiprocessors_ = 0;
};

// One view's prior on `stream`. grid: cells_x x cells_y disparities of the
// support points (cell (i, j) is candidate (i, j), -1 where none), at most
// the scratch's size; step: the candidate step s >= 1; right_view: the
// point of cell (i, j) with disparity d is at (s i - d, s j), else (s i,
// s j). mu_q4 (any size): kNoPrior outside the triangles, plane_q4 of the
// covering triangle inside. spread_rounds: how many of the first flip rounds
// run over the whole GPU before one block runs the rest (-1:
// default_spread_rounds of the grid's size); the result is the same for
// any. cudaErrorInvalidValue for a grid larger than the scratch or a step
// below 1.
cudaError_t enqueue_elas_prior(ImageView<const int16_t> grid, int step, bool right_view, ElasPriorScratch& scratch,
                               ImageView<int32_t> mu_q4, cudaStream_t stream, int spread_rounds = -1);

// The flip rounds spread over the GPU for a grid of cells_x x cells_y cells:
// about those that hold more than a few hundred candidates (0 for small
// grids).
int default_spread_rounds(int cells_x, int cells_y);

}  // namespace cs::cuda
