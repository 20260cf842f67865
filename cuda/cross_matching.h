// Method cross (stages.h C1 .. C8) on the GPU, bit-identical to the CPU
// reference (common/cross_matching.cpp): the arms of both views, the
// aggregation over the overlap of both views' regions with the winners of
// each sample, the offered right map, the reliability check, the bitwise
// fast voting in two passes and the median with the confidence. The
// finish (stage 9's kernel: the Q4 map or its encoding, the counters)
// follows as for every method.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cross_rules.h"
#include "device_limits.h"
#include "matching.h"
#include "stages.h"

namespace cs::cuda {

// A sample's cost packed as common/cross_rules.h packs it, as a CrossCost
// (the CPU reference's debug form).
inline CrossCost unpack_cross_cost(uint32_t c) {
  CrossCost r;
  r.sum = cross_cost_sum(c);
  r.pixels = cross_cost_pixels(c);
  return r;
}

// Ws x Hs maps are of the samples (stages.h C2), full-size ones of the
// views; the right map's keys are the views' width x Hs.
struct CrossViews {
  ImageView<const uint32_t> colour[2];            // stage 1's colour, full size (left, right)
  ImageView<const uint8_t> mask[2];               // both or neither (data == nullptr: all foreground)
  ImageView<uint32_t> arms[2];                    // C1, full size
  ImageView<uint32_t> words[2];                   // C1b, full size
  ImageView<int16_t> raw, disparity;              // C4: Ws x Hs, before and after uniqueness
  ImageView<uint32_t> best, rival;                // C4: Ws x Hs, packed costs
  ImageView<uint4> parts;                         // C4 by parts of the range: Ws x (Hs x d_parts) sweeps
  ImageView<unsigned long long> right_keys;       // C4's offers: w x Hs (cost << 32 | d), ~0 none
  ImageView<int16_t> reliable;                    // C5: Ws x Hs
  ImageView<uint4> votes;                         // C6's horizontal pass, full size
  ImageView<int16_t> voted;                       // C6, full size
  ImageView<int16_t> final_map;                   // C7, full size
  ImageView<uint8_t> confidence;                  // C8 (data == nullptr: none), full size
};

struct CrossParams {
  Range range{0, 0};  // level 0's (level_range)
  int tau = 20, arm_length = 16, truncation = 60, census_weight = 15, sample = 1;
  int vote_arm_length = kMaxCrossArm;  // C6's Lv
  int uniqueness_ratio = 0;
  bool lr_check = true;
  int tolerance = 1;
  int tile_rows = 64;  // the aggregation's tile, rows of samples: 64 or 32; with sample > 1 48 or 16 (cross_layout)
  int d_parts = 1;     // the range swept in this many parts, then joined (cross_layout)
};

// The most parts cross_layout splits the range into.
constexpr int kMaxCrossParts = 4;

// Samples of a view of `size` pixels (stages.h C2: ceil(size / S)).
inline int cross_samples(int size, int sample) { return (size + sample - 1) / sample; }

// C1 .. C8 on the stream, in order (the arms' kernel also writes C1b's
// words and resets the right map's keys). mark (may be null) is called after each kernel with its
// stage's name.
template <typename Mark>
cudaError_t enqueue_cross(const CrossViews& v, const CrossParams& p, cudaStream_t stream, Mark&& mark);

// Per process and device, before the first enqueue_cross_match: the
// aggregation kernel's shared memory (more than the default 48 KiB).
cudaError_t prepare_cross_match();
// The aggregation's tallest tile for a GPU, rows of samples: at
// sample-restore 1 64 where its shared memory holds that tile, else 32; with
// sample-restore 48 (a sample's region reaches fewer samples: its tile's
// apron is 8 rows, not 16, so 48 rows take 32's memory).
int cross_tile_rows(const DeviceLimits& limits, int sample);
// The aggregation's blocks for views of width x height on a GPU: tiles of
// tile_rows (at most cross_tile_rows; the short tile is 32 rows, 16 with
// sample-restore) and the parts the range is swept in (a block a tile and a
// part: where tall tiles leave SMs idle, parts or short tiles make more
// blocks of less work; tall tiles and 1 part where they fill the GPU).
// CrossViews::parts then needs Ws x (Hs x parts) entries.
struct CrossLayout {
  int tile_rows = 64;
  int parts = 1;
};
CrossLayout cross_layout(int width, int height, int sample, Range range, const DeviceLimits& limits);
// The aggregation kernel's launch configurations (tests/cuda/kernel_configs).
std::vector<KernelLaunch> cross_kernel_launches();

cudaError_t enqueue_cross_arms(const CrossViews& v, const CrossParams& p, cudaStream_t stream);
cudaError_t enqueue_cross_match(const CrossViews& v, const CrossParams& p, cudaStream_t stream);
cudaError_t enqueue_cross_offers(const CrossViews& v, const CrossParams& p, cudaStream_t stream);
cudaError_t enqueue_cross_reliable(const CrossViews& v, const CrossParams& p, cudaStream_t stream);
cudaError_t enqueue_cross_vote(const CrossViews& v, const CrossParams& p, cudaStream_t stream);
cudaError_t enqueue_cross_median(const CrossViews& v, const CrossParams& p, cudaStream_t stream);

template <typename Mark>
cudaError_t enqueue_cross(const CrossViews& v, const CrossParams& p, cudaStream_t stream, Mark&& mark) {
  cudaError_t e = enqueue_cross_arms(v, p, stream);
  if (e != cudaSuccess) return e;
  mark("cross arms");
  if ((e = enqueue_cross_match(v, p, stream)) != cudaSuccess) return e;
  mark("cross aggregation");
  if ((e = enqueue_cross_offers(v, p, stream)) != cudaSuccess) return e;
  if ((e = enqueue_cross_reliable(v, p, stream)) != cudaSuccess) return e;
  mark("cross check");
  if ((e = enqueue_cross_vote(v, p, stream)) != cudaSuccess) return e;
  mark("cross voting");
  if ((e = enqueue_cross_median(v, p, stream)) != cudaSuccess) return e;
  mark("cross median");
  return cudaSuccess;
}

}  // namespace cs::cuda
