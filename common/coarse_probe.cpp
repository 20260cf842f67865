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

int coarse_factor_from_probe(const Image<int16_t>& probe_left, int level, int max_disparity) {
  std::vector<int16_t> valid;
  valid.reserve(probe_left.pixels.size());
  for (int16_t d : probe_left.pixels)
    if (d >= 0) valid.push_back(d);
  if (valid.empty()) return 1;
  const size_t k = valid.size() * 99 / 100;
  std::nth_element(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(k), valid.end());
  const int64_t content = static_cast<int64_t>(valid[k] + 1) << level;
  int f = 1;
  while (f < kMaxCoarseRangeFactor && static_cast<int64_t>(f) * max_disparity < content) f *= 2;
  return f;
}

int probe_coarse_factor(const Image<uint32_t>& census_left, const Image<uint32_t>& census_right,
                        const Image<uint8_t>* mask_left, const Image<uint8_t>* mask_right, const Params& p,
                        int level) {
  const Range r = probe_range(p, level, census_left.width);
  const int best = static_cast<int>(p.window);
  Image<int16_t> left, right;
  match_full_range(census_left, census_right, Reference::Left, mask_left, mask_right, r, p.subwindow_radius, best,
                   left);
  match_full_range(census_right, census_left, Reference::Right, mask_right, mask_left, r, p.subwindow_radius, best,
                   right);
  cross_check(left, right, p.lr_tolerance);
  return coarse_factor_from_probe(left, level, p.max_disparity);
}

}  // namespace cs
