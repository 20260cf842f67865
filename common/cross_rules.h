// Method cross's per-sample rules (stages.h C3, C4, C8) in one place for
// both engines: a cost (C, N) packed in 32 bits, its order, the uniqueness
// test and the confidence. GStreamer-free; host and device (CS_HD).
#pragma once

#include <cstdint>

#include "stereo_math.h"

namespace cs {

// C | N << 20 (stages.h C3: C < 2^20, N <= 33 * 33 < 2^11); kNoCrossCost:
// none, above every cost.
constexpr uint32_t kNoCrossCost = 0xFFFFFFFFu;
CS_HD uint32_t pack_cross_cost(int sum, int pixels) {
  return static_cast<uint32_t>(sum) | static_cast<uint32_t>(pixels) << 20;
}
CS_HD int cross_cost_sum(uint32_t c) { return c == kNoCrossCost ? -1 : static_cast<int>(c & 0xFFFFF); }
CS_HD int cross_cost_pixels(uint32_t c) { return c == kNoCrossCost ? 0 : static_cast<int>(c >> 20); }

// a's normalised cost below b's (C1 * N2 < C2 * N1, 64-bit); none is never
// below, and every cost is below none.
CS_HD bool cross_cost_below(uint32_t a, uint32_t b) {
  if (a == kNoCrossCost) return false;
  if (b == kNoCrossCost) return true;
  return static_cast<uint64_t>(a & 0xFFFFF) * (b >> 20) < static_cast<uint64_t>(b & 0xFFFFF) * (a >> 20);
}

// C4's uniqueness with ratio r > 0: the winner of cost best stays unless
// a rival exists and rival.sum * best.pixels * 100 <= best.sum *
// rival.pixels * (100 + r).
CS_HD bool cross_unique(uint32_t best, uint32_t rival, int ratio) {
  if (ratio <= 0 || rival == kNoCrossCost) return true;
  return static_cast<int64_t>(cross_cost_sum(rival)) * cross_cost_pixels(best) * 100 >
         static_cast<int64_t>(cross_cost_sum(best)) * cross_cost_pixels(rival) * (100 + ratio);
}

// C8's confidence of a winner's best and rival: floor(255 * (r.sum *
// b.pixels - b.sum * r.pixels) / (r.sum * b.pixels)); 0 without a rival or
// with a rival of cost 0.
CS_HD uint8_t cross_confidence_of(uint32_t best, uint32_t rival) {
  if (rival == kNoCrossCost || cross_cost_sum(rival) <= 0) return 0;
  const int64_t rb = static_cast<int64_t>(cross_cost_sum(rival)) * cross_cost_pixels(best);
  const int64_t br = static_cast<int64_t>(cross_cost_sum(best)) * cross_cost_pixels(rival);
  return static_cast<uint8_t>(255 * (rb - br) / rb);
}

}  // namespace cs
