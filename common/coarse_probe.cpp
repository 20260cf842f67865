// The automatic coarse range (stages.h 6b): the probe and the factor it gives.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "stages.h"

namespace cs {

Range probe_range(const Params& p, int level, int level_width) {
  Range r;
  r.lo = p.min_disparity >> level;
  const int64_t hi = (static_cast<int64_t>(p.max_disparity) * kMaxCoarseRangeFactor + (1 << level) - 1) >> level;
  r.hi = static_cast<int>(std::min<int64_t>(hi, level_width));
  return r;
}

int coarse_factor_from_histogram(const uint32_t* counts, int bins, int level, int max_disparity) {
  uint64_t n = 0;
  for (int d = 0; d < bins; ++d) n += counts[d];
  if (n == 0) return 1;
  // The value at index k of the sorted valid disparities: the smallest d
  // with more than k of them at or below it.
  const uint64_t k = n * 99 / 100;
  uint64_t below = 0;
  int d = 0;
  for (; d < bins; ++d) {
    below += counts[d];
    if (below > k) break;
  }
  const int64_t content = static_cast<int64_t>(d) << level;
  int f = 1;
  while (f < kMaxCoarseRangeFactor && static_cast<int64_t>(f) * max_disparity < content) f *= 2;
  return f;
}

int coarse_factor_from_probe(const Image<int16_t>& probe_left, int level, int max_disparity) {
  int bins = 0;
  for (int16_t d : probe_left.pixels) bins = std::max(bins, d + 1);
  std::vector<uint32_t> counts(static_cast<size_t>(bins), 0);
  for (int16_t d : probe_left.pixels)
    if (d >= 0) ++counts[static_cast<size_t>(d)];
  return coarse_factor_from_histogram(counts.data(), bins, level, max_disparity);
}

int probe_coarse_factor(const Image<uint32_t>& census_left, const Image<uint32_t>& census_right,
                        const Image<uint8_t>* mask_left, const Image<uint8_t>* mask_right, const Params& p,
                        int level) {
  const Range r = probe_range(p, level, census_left.width);
  const int best = static_cast<int>(p.window);
  Image<int16_t> left, right;
  match_full_range(census_left, census_right, Reference::Left, mask_left, mask_right, r, p.subwindow_radius, best,
                   left, kProbeUniquenessRatio);
  match_full_range(census_right, census_left, Reference::Right, mask_right, mask_left, r, p.subwindow_radius, best,
                   right, kProbeUniquenessRatio);
  cross_check(left, right, resolve_lr_tolerance(p));
  support_filter(left, kProbeMinSupport);
  return coarse_factor_from_probe(left, level, p.max_disparity);
}

bool CoarseProbeSchedule::changed(int width, int height, int levels, const Params& p) const {
  return width_ != width || height_ != height || levels_ != levels || min_ != p.min_disparity ||
         max_ != p.max_disparity;
}

int CoarseProbeSchedule::begin_frame(int width, int height, int levels, const Params& p) {
  if (changed(width, height, levels, p)) {
    factor_ = 1;  // the first frame of a configuration, until its probe
    frames_since_probe_ = 0;
  }
  return factor_;
}

bool CoarseProbeSchedule::probe_due(int width, int height, int levels, const Params& p) const {
  return changed(width, height, levels, p) || frames_since_probe_ >= static_cast<uint64_t>(kCoarseProbeInterval);
}

void CoarseProbeSchedule::probe_made(int width, int height, int levels, const Params& p) {
  frames_since_probe_ = 0;
  width_ = width;
  height_ = height;
  levels_ = levels;
  min_ = p.min_disparity;
  max_ = p.max_disparity;
}

}  // namespace cs
