// Accuracy of a disparity map against ground truth, in the Middlebury way:
// bad-t is the share of evaluated pixels whose estimate is missing or off by
// more than t pixels. No I/O, no GStreamer: cs-score and the tests call it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stereo.h"

namespace cs::tools {

struct ScoreOptions {
  // Stored value = disparity * scale; a stored 0 means "no estimate".
  double disparity_scale = 16.0;  // Q4 by default
  double gt_scale = 1.0;
  // Ground-truth value meaning "unknown" (not evaluated).
  int gt_invalid = 0;
  // Error thresholds in pixels (strictly greater counts as bad).
  std::vector<double> thresholds = {1.0, 2.0, 4.0};
};

struct ScoreResult {
  uint64_t pixels = 0;            // all pixels of the map
  uint64_t evaluated = 0;         // inside the mask with known ground truth
  uint64_t valid_estimates = 0;   // evaluated pixels with an estimate
  uint64_t valid_anywhere = 0;    // pixels with an estimate, mask or not
  std::vector<uint64_t> bad;      // per threshold: evaluated pixels missing or off by > t
  std::vector<double> bad_percent;
  double average_abs_error = 0.0;  // pixels, over valid_estimates
  double density = 0.0;            // valid_estimates / evaluated
  double image_density = 0.0;      // valid_anywhere / pixels
};

// `mask`: null for all pixels, else evaluated where nonzero. All maps must
// have the same size. Empty string on success, else what is wrong.
std::string score_disparity(const Image<uint16_t>& disparity, const Image<uint16_t>& ground_truth,
                            const Image<uint16_t>* mask, const ScoreOptions& options, ScoreResult& result);

// Every `factor`-th pixel in each direction, starting at (0, 0): ground
// truth for a map computed at 1/factor size (the size is width / factor,
// matching the pyramid's integer halving when factor is 2).
Image<uint16_t> subsample(const Image<uint16_t>& image, int factor);

}  // namespace cs::tools
