// Method cross's device helpers shared by its kernel files (cross_arms.cu,
// cross_aggregation.cu, cross_refine.cu): arm bytes and the views' sizes.
#pragma once

#include "cross_matching.h"
#include "cuda_util.h"

namespace cs::cuda {

// Byte k of a packed word (an arm of cross_arm's packing).
template <int k>
__device__ __forceinline__ int byte_at(uint32_t word) {
  return static_cast<int>(__byte_perm(word, 0u, 0x4440u + k));
}

// Arm `which` of a packed cross (stages.h cross_arm: 0 left, 1 right, 2 up,
// 3 down).
__device__ __forceinline__ int arm_of(uint32_t arms, int which) { return (arms >> (8 * which)) & 255; }

// Whether the views' sizes agree with each other and with p (sample, arm
// length): the arms' and the aggregation's enqueues check before they launch.
inline bool cross_sizes_agree(const CrossViews& v, const CrossParams& p) {
  const int w = v.colour[0].width, h = v.colour[0].height;
  const int ws = cross_samples(w, p.sample), hs = cross_samples(h, p.sample);
  auto full = [&](int vw, int vh) { return vw == w && vh == h; };
  auto samples = [&](int vw, int vh) { return vw == ws && vh == hs; };
  return p.sample >= 1 && p.sample <= kMaxSampleRestore && p.arm_length >= 1 && p.arm_length <= kMaxCrossArm &&
         p.truncation >= 1 && p.truncation <= kMaxCrossTruncation && p.census_weight >= 0 &&
         p.census_weight <= kMaxCrossCensusWeight &&
         full(v.colour[1].width, v.colour[1].height) && full(v.arms[0].width, v.arms[0].height) &&
         full(v.arms[1].width, v.arms[1].height) && full(v.words[0].width, v.words[0].height) &&
         full(v.words[1].width, v.words[1].height) && samples(v.raw.width, v.raw.height) &&
         samples(v.disparity.width, v.disparity.height) && samples(v.best.width, v.best.height) &&
         samples(v.rival.width, v.rival.height) && samples(v.reliable.width, v.reliable.height) &&
         v.right_keys.width == w && v.right_keys.height == hs && full(v.votes.width, v.votes.height) &&
         full(v.voted.width, v.voted.height) && full(v.final_map.width, v.final_map.height) &&
         (!v.confidence.data || full(v.confidence.width, v.confidence.height)) &&
         (!v.mask[0].data || (full(v.mask[0].width, v.mask[0].height) && v.mask[1].data));
}


}  // namespace cs::cuda
