// Method cross's per-sample rules (stages.h C3, C4, C6, C8) in one place for
// both engines: a pixel's cost, a region's cost by C3's definition, a cost
// (C, N) packed in 32 bits, its order, the uniqueness test, the voting's
// code of a disparity and the confidence. GStreamer-free; host and device
// (CS_HD).
#pragma once

#include <cstdint>

#include "stereo_math.h"

namespace cs {

// C | N << 20 (stages.h C3: C < 2^20 - 1, N <= 33 * 33 < 2^11); kNoCrossCost:
// none, above every cost.
constexpr uint32_t kNoCrossCost = 0xFFFFFFFFu;
CS_HD uint32_t pack_cross_cost(int sum, int pixels) {
  return static_cast<uint32_t>(sum) | static_cast<uint32_t>(pixels) << 20;
}
CS_HD int cross_cost_sum(uint32_t c) { return c == kNoCrossCost ? -1 : static_cast<int>(c & 0xFFFFF); }
CS_HD int cross_cost_pixels(uint32_t c) { return c == kNoCrossCost ? 0 : static_cast<int>(c >> 20); }

// C6: the code whose bits an estimate votes with (the reflected Gray code
// of d >= 0: neighbouring disparities differ in one bit), and the
// disparity a code of voted bits stands for (its inverse, for codes below
// 2^16).
CS_HD int cross_vote_code(int d) { return d ^ (d >> 1); }
CS_HD int cross_vote_value(int code) {
  code ^= code >> 1;
  code ^= code >> 2;
  code ^= code >> 4;
  code ^= code >> 8;
  return code;
}

// C6: arm `which` (0 left .. 3 down) of a packed cross (C1) as the voting
// reads it, cut to its longest arm Lv.
CS_HD int cross_vote_arm(uint32_t arms, int which, int vote_arm_length) {
  const int arm = static_cast<int>(arms >> (8 * which) & 255u);
  return arm < vote_arm_length ? arm : vote_arm_length;
}

// C1b: a colour's luma R + 2 G + B.
CS_HD int cross_luma(uint32_t rgb) {
  return static_cast<int>(rgb & 255u) + 2 * static_cast<int>(rgb >> 8 & 255u) + static_cast<int>(rgb >> 16 & 255u);
}

// C1b's colour of the S-downsampled view at pixel (x, y) of a w x h view
// whose colours colour_at(u, v) gives: the pixel's own for S = 1, else each
// channel's rounded mean over the pixels (x + a, y + b), a, b in 0 .. S -
// 1, inside the view (n of them: (sum + n / 2) / n).
template <typename ColourAt>
CS_HD uint32_t cross_sample_colour(const ColourAt& colour_at, int x, int y, int w, int h, int sample) {
  if (sample == 1) return colour_at(x, y) & 0xFFFFFFu;
  int sum[3] = {0, 0, 0}, n = 0;
  for (int b = 0; b < sample && y + b < h; ++b)
    for (int a = 0; a < sample && x + a < w; ++a) {
      const uint32_t c = colour_at(x + a, y + b);
      for (int ch = 0; ch < 3; ++ch) sum[ch] += static_cast<int>(c >> (8 * ch) & 255u);
      ++n;
    }
  const int full = sample * sample;  // a constant where S is: the usual case divides by it
  uint32_t mean = 0;
  for (int ch = 0; ch < 3; ++ch)
    mean |= static_cast<uint32_t>(n == full ? (sum[ch] + full / 2) / full : (sum[ch] + n / 2) / n) << (8 * ch);
  return mean;
}

// C1b's word of pixel (x, y) from the sample colours (above) that
// sample_colour_at(u, v) gives: the pixel's and its census K: bit n (0 ..
// 7) set when the luma of the sample colour at neighbour n is below the
// pixel's, the neighbours at (x + r dx, y + r dy), (dx, dy) the 3 x 3
// square's offsets but its centre, row by row, clamped to the view; the
// reach r is cross_census_reach(S).
CS_HD int cross_census_reach(int sample) { return sample == 1 ? 2 : 1; }
template <typename SampleColourAt>
CS_HD uint32_t cross_word_of(const SampleColourAt& sample_colour_at, int x, int y, int w, int h, int reach) {
  const uint32_t centre = sample_colour_at(x, y);
  const int luma = cross_luma(centre);
  uint32_t k = 0;
  for (int n = 0; n < 8; ++n) {
    const int m = n + (n >= 4);  // the square's cells 0 .. 8 but 4
    const int u = clampi(x + reach * (m % 3 - 1), 0, w - 1), v = clampi(y + reach * (m / 3 - 1), 0, h - 1);
    k |= static_cast<uint32_t>(cross_luma(sample_colour_at(u, v)) < luma) << n;
  }
  return centre | k << 24;
}

// C1b's word of pixel (x, y) of a w x h view whose colours colour_at gives.
template <typename ColourAt>
CS_HD uint32_t cross_word(const ColourAt& colour_at, int x, int y, int w, int h, int sample) {
  return cross_word_of([&](int u, int v) { return cross_sample_colour(colour_at, u, v, w, h, sample); }, x, y, w, h,
                       cross_census_reach(sample));
}

// e of C3 from two words (C1b: R | G << 8 | B << 16 | K << 24): min(T, sum
// over R, G, B of the absolute differences) + W * popcount(K_a ^ K_b).
CS_HD int cross_pixel_cost(uint32_t a, uint32_t b, int truncation, int census_weight) {
  int s = 0;
  for (int c = 0; c < 24; c += 8) {
    const int d = static_cast<int>(a >> c & 255u) - static_cast<int>(b >> c & 255u);
    s += d < 0 ? -d : d;
  }
  return (s < truncation ? s : truncation) + census_weight * popcount32((a ^ b) >> 24);
}

// C3's cost (C, N) of left sample (i, j) at d by its definition, packed;
// kNoCrossCost where S i - d < 0 (range and masks are the caller's). The
// views are read through colour(view, x, y) and arms(view, x, y), view 0
// left and 1 right, at full-size pixels (colour: C1b's words): the CPU
// reference's cross_cost and the GPU's join of the range's parts
// (cross_aggregation.cu) both call it.
template <typename Colour, typename Arms>
CS_HD uint32_t cross_region_cost(const Colour& colour, const Arms& arms, int i, int j, int d, int truncation,
                                 int census_weight, int sample) {
  const int S = sample, x = S * i, xr = x - d;
  if (xr < 0) return kNoCrossCost;
  // The overlap of the two views' arm `which` (0 left .. 3 down) on row y.
  auto overlap = [&](int y, int which) {
    const int l = static_cast<int>(arms(0, x, y) >> (8 * which) & 255u);
    const int r = static_cast<int>(arms(1, xr, y) >> (8 * which) & 255u);
    return (l < r ? l : r) / S;
  };
  const int vm = overlap(S * j, 2), vp = overlap(S * j, 3);
  int sum = 0, pixels = 0;
  for (int k = j - vm; k <= j + vp; ++k) {
    const int hm = overlap(S * k, 0), hp = overlap(S * k, 1);
    for (int m = i - hm; m <= i + hp; ++m)
      sum += cross_pixel_cost(colour(0, S * m, S * k), colour(1, S * m - d, S * k), truncation, census_weight);
    pixels += hm + hp + 1;
  }
  return pack_cross_cost(sum, pixels);
}

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
