#include "score.h"

#include <cmath>

namespace cs::tools {

namespace {
std::string size_text(int w, int h) { return std::to_string(w) + " x " + std::to_string(h); }
}  // namespace

std::string score_disparity(const Image<uint16_t>& disparity, const Image<uint16_t>& ground_truth,
                            const Image<uint16_t>* mask, const ScoreOptions& options, ScoreResult& result) {
  result = ScoreResult();
  if (!(options.disparity_scale > 0.0) || !std::isfinite(options.disparity_scale))
    return "the disparity scale must be a positive number";
  if (!(options.gt_scale > 0.0) || !std::isfinite(options.gt_scale))
    return "the ground-truth scale must be a positive number";
  for (double t : options.thresholds)
    if (!(t >= 0.0) || !std::isfinite(t)) return "error thresholds must be non-negative numbers";
  if (disparity.width != ground_truth.width || disparity.height != ground_truth.height)
    return "the disparity map is " + size_text(disparity.width, disparity.height) + " but the ground truth is " +
           size_text(ground_truth.width, ground_truth.height);
  if (mask && (mask->width != ground_truth.width || mask->height != ground_truth.height))
    return "the mask is " + size_text(mask->width, mask->height) + " but the ground truth is " +
           size_text(ground_truth.width, ground_truth.height);

  const size_t nt = options.thresholds.size();
  result.bad.assign(nt, 0);
  result.bad_percent.assign(nt, 0.0);
  result.pixels = static_cast<uint64_t>(disparity.width) * disparity.height;
  double abs_error_sum = 0.0;
  for (size_t i = 0; i < disparity.pixels.size(); ++i) {
    const uint16_t estimate = disparity.pixels[i];
    const bool has_estimate = estimate != 0;
    if (has_estimate) ++result.valid_anywhere;
    const uint16_t truth = ground_truth.pixels[i];
    if (truth == options.gt_invalid) continue;
    if (mask && mask->pixels[i] == 0) continue;
    ++result.evaluated;
    if (!has_estimate) {
      for (size_t k = 0; k < nt; ++k) ++result.bad[k];
      continue;
    }
    ++result.valid_estimates;
    const double error = std::fabs(estimate / options.disparity_scale - truth / options.gt_scale);
    abs_error_sum += error;
    for (size_t k = 0; k < nt; ++k)
      if (error > options.thresholds[k]) ++result.bad[k];
  }
  if (result.evaluated > 0) {
    for (size_t k = 0; k < nt; ++k) result.bad_percent[k] = 100.0 * result.bad[k] / result.evaluated;
    result.density = static_cast<double>(result.valid_estimates) / result.evaluated;
  }
  if (result.valid_estimates > 0) result.average_abs_error = abs_error_sum / result.valid_estimates;
  if (result.pixels > 0) result.image_density = static_cast<double>(result.valid_anywhere) / result.pixels;
  return {};
}

Image<uint16_t> subsample(const Image<uint16_t>& image, int factor) {
  if (factor <= 1) return image;
  Image<uint16_t> out(image.width / factor, image.height / factor);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) out.at(x, y) = image.at(x * factor, y * factor);
  return out;
}

}  // namespace cs::tools
