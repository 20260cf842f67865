// ELAS's dense matching and post-processing on the GPU (common/elas_dense.h,
// E3, E5 with uniqueness, E6, E7 and E8's confidence), bit-identical to the
// CPU reference (common/elas_dense.cpp) from the same descriptors (E1),
// support grid (E2) and priors (E4):
//   E3  each cell's disparities as a bitmask, then the 3 x 3 diffusion with a
//       summary of the mask's non-zero words (elas_matching.cu);
//   E5  a thread a pixel of either view over its candidates, the left view's
//       rival and uniqueness (elas_matching.cu);
//   E6  both maps checked against each other (elas_post.cu);
//   E7  speckles by union-find over tiles, gaps by rows then columns with the
//       confidence (E8) written by the column pass (elas_post.cu).
// Nothing here allocates or waits for the GPU except ElasDenseBuffers:
// enqueue_elas_dense is a fixed sequence of kernels and one memset, fit for
// stream capture into a CUDA graph.
// (Not cuda/elas_dense.h: a file needing the reference's elas_dense.h and
// this one would get whichever of the two include paths comes first.)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "elas_dense.h"
#include "stereo.h"

namespace cs::cuda {

// E4's table holds the energies of Q4 distances 0 .. 16 * 64
// (elas_prior_table's length); the matching keeps it in shared memory.
constexpr int kElasPriorEntries = 16 * 64 + 1;

struct ElasDenseParams {
  int min_disparity = 0;     // candidates min_disparity .. max_disparity - 1 (0 <= min, max <= kMaxDisparity)
  int max_disparity = 256;
  int support_step = 5;      // E2's candidate_step: support cell (i, j) is the left pixel (s i, s j)
  int grid_size = 20;        // E3
  int sradius = 2;           // E5
  int uniqueness_ratio = 0;  // E5's (0: off)
  bool lr_check = true;      // E6 (false: checked = raw)
  int lr_threshold = 2;
  int speckle_size = 200;    // E7
  int speckle_similarity = 1;
  int gap_width = 3;
  bool fill_all = true;
};

inline ElasDenseParams elas_dense_params(const ElasParams& p) {
  ElasDenseParams d;
  d.min_disparity = p.support.min_disparity;
  d.max_disparity = p.support.max_disparity;
  d.support_step = p.support.candidate_step;
  d.grid_size = p.grid_size;
  d.sradius = p.sradius;
  d.uniqueness_ratio = p.uniqueness_ratio;
  d.lr_check = p.lr_check;
  d.lr_threshold = p.lr_threshold;
  d.speckle_size = p.speckle_size;
  d.speckle_similarity = p.speckle_similarity;
  d.gap_width = p.gap_width;
  d.fill_all = p.fill_all;
  return d;
}

// One frame's images, all width x height of the left view except the
// support grid. Descriptors: byte k of E1's descriptor is byte k of the
// uint4 in memory (.x holds bytes 0 .. 3).
struct ElasDenseViews {
  ImageView<const uint4> descriptors[2];  // E1: left, right
  ImageView<const int16_t> support;       // E2: ceil(w / s) x ceil(h / s), d of the point at (s i, s j), -1 none
  ImageView<const int32_t> mu_q4[2];      // E4: left, right (kNoPrior where none)
  ImageView<const uint8_t> mask[2];       // the views' foreground: both or neither (data == nullptr)
  ImageView<int16_t> raw[2];              // E5: left (after uniqueness), right
  ImageView<int32_t> best, rival;         // E5, left view (kNoCost where none)
  ImageView<int16_t> checked[2];          // E6
  ImageView<int16_t> disparity;           // E7: the final left map
  ImageView<uint8_t> confidence;          // E8 (data == nullptr: not made)
};

// The scratch of one frame size and parameter set: E3's cells, both views'
// (a cell's mask: bit d - min_disparity of word (d - min_disparity) / 32),
// and E7's union-find, a word a pixel each.
struct ElasDenseLayout {
  int width = 0, height = 0;
  int cells_x = 0, cells_y = 0;  // ceil(width / grid_size) x ceil(height / grid_size)
  int words = 1;                 // a cell's mask: ceil((max - min) / 32), at least 1
  int summary = 1;               // the diffused mask's leading words: bit k of word j set iff mask word 32 j + k != 0
  size_t cell_words() const { return size_t{2} * cells_x * cells_y * words; }
  size_t diffused_words() const { return size_t{2} * cells_x * cells_y * (summary + words); }
  size_t pixels() const { return static_cast<size_t>(width) * height; }
};
ElasDenseLayout elas_dense_layout(int width, int height, const ElasDenseParams& p);

struct ElasDenseScratch {
  ElasDenseLayout layout;          // what it holds room for
  uint32_t* cells = nullptr;       // E3: each view's own masks, cell_words()
  uint32_t* diffused = nullptr;    // E3: diffused_words()
  int32_t* parent = nullptr;       // E7: pixels()
  int32_t* members = nullptr;      // E7: pixels()
  const uint16_t* prior = nullptr; // E4's table, kElasPriorEntries
};

// Owns the scratch and the prior table (uploaded once here: blocking).
class ElasDenseBuffers {
 public:
  ElasDenseBuffers() = default;
  ElasDenseBuffers(const ElasDenseBuffers&) = delete;
  ElasDenseBuffers& operator=(const ElasDenseBuffers&) = delete;
  ~ElasDenseBuffers() { release(); }
  // prior: elas_prior_table(beta, gamma, sigma), kElasPriorEntries long.
  cudaError_t allocate(int width, int height, const ElasDenseParams& p, const std::vector<uint16_t>& prior);
  void release();
  const ElasDenseScratch& scratch() const { return scratch_; }
  size_t bytes() const { return bytes_; }

 private:
  void* memory_ = nullptr;
  size_t bytes_ = 0;
  ElasDenseScratch scratch_;
};

// E3 .. E8 on the stream (with_grid false: E5 .. E8, the caller having
// enqueued E3, enqueue_elas_grid, before them on this stream or one it
// waits for). cudaErrorInvalidValue (nothing enqueued) where the sizes
// disagree, the range is outside 0 .. kMaxDisparity or the scratch is too
// small for this size and range.
cudaError_t enqueue_elas_dense(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                               cudaStream_t stream, bool with_grid = true);

// The steps, in enqueue_elas_dense's order (each checks only what it uses).
// E3 and E5 with uniqueness: raw, best, rival.
cudaError_t enqueue_elas_grid(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                              cudaStream_t stream);
cudaError_t enqueue_elas_match(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                               cudaStream_t stream);
// E6: checked from raw (left, right), not in place.
cudaError_t enqueue_elas_lr_check(ImageView<const int16_t> raw_left, ImageView<const int16_t> raw_right,
                                  ImageView<int16_t> checked_left, ImageView<int16_t> checked_right, int lr_threshold,
                                  cudaStream_t stream);
// E7's speckles: out = in without the small components (out may not be in);
// the scratch's parent and members of at least in's pixels.
cudaError_t enqueue_elas_speckles(ImageView<const int16_t> in, ImageView<int16_t> out, int speckle_size,
                                  int similarity, const ElasDenseScratch& s, cudaStream_t stream);
// E7's gaps in place on disparity, cut at the mask's background (data ==
// nullptr: none), then E8: where confidence.data is set, the confidence of
// the final map from E5's left winners (raw, after uniqueness), best and
// rival.
struct ElasFinishViews {
  ImageView<int16_t> disparity;
  ImageView<const uint8_t> mask;
  ImageView<const int16_t> raw;
  ImageView<const int32_t> best, rival;
  ImageView<uint8_t> confidence;
};
cudaError_t enqueue_elas_gaps(const ElasFinishViews& v, int gap_width, bool fill_all, cudaStream_t stream);

}  // namespace cs::cuda
