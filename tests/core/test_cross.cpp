// Method cross (stages.h C1 .. C8): arms, costs, winners, check, voting,
// median and confidence against hand values and brute force, then the
// whole method on synthetic scenes with exact ground truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "cross_rules.h"
#include "matcher_debug.h"
#include "pipeline_run.h"
#include "stages.h"
#include "synthetic.h"

using namespace cs;

namespace {

uint32_t rgb(int r, int g, int b) {
  return static_cast<uint32_t>(r) | static_cast<uint32_t>(g) << 8 | static_cast<uint32_t>(b) << 16;
}
uint32_t grey(int v) { return rgb(v, v, v); }

Image<uint32_t> colour_image(int w, int h, std::initializer_list<uint32_t> values) {
  Image<uint32_t> im(w, h);
  auto it = values.begin();
  for (auto& v : im.pixels) v = *it++;
  return im;
}

Image<int16_t> map_of(int w, int h, std::initializer_list<int> values) {
  Image<int16_t> im(w, h);
  auto it = values.begin();
  for (auto& v : im.pixels) v = static_cast<int16_t>(*it++);
  return im;
}

uint32_t pack_arms(int left, int right, int up, int down) {
  return static_cast<uint32_t>(left) | static_cast<uint32_t>(right) << 8 | static_cast<uint32_t>(up) << 16 |
         static_cast<uint32_t>(down) << 24;
}

// Arms that reach every pixel of a w x h image (an image of one colour with
// a long enough L).
Image<uint32_t> whole_image_arms(int w, int h) {
  Image<uint32_t> a(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) a.at(x, y) = pack_arms(x, w - 1 - x, y, h - 1 - y);
  return a;
}

bool same_cost(CrossCost a, CrossCost b) { return a.sum == b.sum && a.pixels == b.pixels; }

Params cross_params(int max_disparity, int sample = 1) {
  Params p;
  p.method = Method::Cross;
  p.max_disparity = max_disparity;
  p.sample_restore = sample;
  return p;
}

using test::Result;
using test::run;

// Over ground-truth pixels at least `margin` from the image edges: the share
// off by more than 2 px or without an estimate (bad-2).
double bad2(const Image<uint16_t>& q4, const Image<float>& gt, int margin) {
  long n = 0, bad = 0;
  for (int y = margin; y < gt.height - margin; ++y)
    for (int x = margin; x < gt.width - margin; ++x) {
      if (gt.at(x, y) < 0) continue;
      ++n;
      const int q = q4.at(x, y);
      bad += q == 0 || std::fabs(q / 16.0 - gt.at(x, y)) > 2.0;
    }
  return n ? static_cast<double>(bad) / n : 1.0;
}

}  // namespace

// ---------------------------------------------------------------- C1

TEST(CrossArms, UniformImageReachesTheCapAndStopsAtTheBorders) {
  const int w = 23, h = 17;
  const Image<uint32_t> im(w, h, rgb(40, 90, 200));
  for (int L : {1, 5, 16}) {
    Image<uint32_t> arms;
    cross_arms(im, 0, L, arms);
    ASSERT_EQ(arms.width, w);
    ASSERT_EQ(arms.height, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const uint32_t a = arms.at(x, y);
        ASSERT_EQ(cross_arm(a, 0), std::min(x, L)) << x << "," << y << " L " << L;
        ASSERT_EQ(cross_arm(a, 1), std::min(w - 1 - x, L)) << x << "," << y << " L " << L;
        ASSERT_EQ(cross_arm(a, 2), std::min(y, L)) << x << "," << y << " L " << L;
        ASSERT_EQ(cross_arm(a, 3), std::min(h - 1 - y, L)) << x << "," << y << " L " << L;
      }
  }
}

TEST(CrossArms, OneNoisyPixelIsBridgedTwoStopTheArm) {
  // One row; pixel 7 differs from the rest.
  Image<uint32_t> row(16, 1, grey(100));
  row.at(7, 0) = grey(200);
  Image<uint32_t> arms;
  cross_arms(row, 20, 16, arms);
  EXPECT_EQ(cross_arm(arms.at(2, 0), 1), 13);  // over pixel 7 to the edge
  EXPECT_EQ(cross_arm(arms.at(12, 0), 0), 12);
  EXPECT_EQ(cross_arm(arms.at(6, 0), 1), 9);
  // The noisy pixel itself differs from both neighbours pairs: no arm.
  EXPECT_EQ(cross_arm(arms.at(7, 0), 0), 0);
  EXPECT_EQ(cross_arm(arms.at(7, 0), 1), 0);
  // A differing pixel at the cap is still inside the arm (capped, not stopped).
  cross_arms(row, 20, 5, arms);
  EXPECT_EQ(cross_arm(arms.at(2, 0), 1), 5);
  // Two differing pixels in a row stop the arm just before them.
  row.at(8, 0) = grey(200);
  cross_arms(row, 20, 16, arms);
  EXPECT_EQ(cross_arm(arms.at(2, 0), 1), 4);   // pixels 3 .. 6
  EXPECT_EQ(cross_arm(arms.at(12, 0), 0), 3);  // pixels 9 .. 11
  // Seen from the pair: each reaches over the other, then meets two differing.
  EXPECT_EQ(cross_arm(arms.at(7, 0), 1), 1);
  EXPECT_EQ(cross_arm(arms.at(8, 0), 0), 1);
  EXPECT_EQ(cross_arm(arms.at(7, 0), 0), 0);
  // The image edge counts as differing: one pixel from it, an arm of 1 at most.
  EXPECT_EQ(cross_arm(arms.at(14, 0), 1), 1);
  EXPECT_EQ(cross_arm(arms.at(15, 0), 1), 0);
  // Vertically alike: the transposed row.
  Image<uint32_t> column(1, 16);
  for (int y = 0; y < 16; ++y) column.at(0, y) = row.at(y, 0);
  cross_arms(column, 20, 16, arms);
  EXPECT_EQ(cross_arm(arms.at(0, 2), 3), 4);
  EXPECT_EQ(cross_arm(arms.at(0, 12), 2), 3);
  EXPECT_EQ(cross_arm(arms.at(0, 14), 3), 1);
  EXPECT_EQ(cross_arm(arms.at(0, 2), 0), 0);  // no columns beside it
  EXPECT_EQ(cross_arm(arms.at(0, 2), 1), 0);
}

TEST(CrossArms, TauIsTheLargestChannelDifferenceThatStillCountsAsSame) {
  const int tau = 20;
  // Row 0: every other pixel tau away in G; row 1: tau + 1 away in B; row 2:
  // 15 away in every channel (sum 45 > tau, max 15 <= tau).
  const Image<uint32_t> im = colour_image(6, 3, {rgb(100, 100, 100), rgb(100, 120, 100), rgb(100, 120, 100),
                                                 rgb(100, 80, 100), rgb(100, 120, 100), rgb(100, 80, 100),  //
                                                 rgb(100, 100, 100), rgb(100, 100, 121), rgb(100, 100, 121),
                                                 rgb(100, 100, 121), rgb(100, 100, 121), rgb(100, 100, 121),  //
                                                 rgb(100, 100, 100), rgb(115, 115, 115), rgb(85, 85, 85),
                                                 rgb(115, 85, 115), rgb(100, 100, 100), rgb(85, 115, 85)});
  Image<uint32_t> arms;
  cross_arms(im, tau, 16, arms);
  EXPECT_EQ(cross_arm(arms.at(0, 0), 1), 5);
  EXPECT_EQ(cross_arm(arms.at(0, 1), 1), 0);
  EXPECT_EQ(cross_arm(arms.at(0, 2), 1), 5);
  // From x = 1 of row 0 (G 120) the pixels at G 80 differ (by 40): x = 3
  // is bridged, x = 5 and the edge beyond it stop the arm.
  EXPECT_EQ(cross_arm(arms.at(1, 0), 1), 3);
  // Vertical: (0, 0) down: (0, 1) and (0, 2) are (100, 100, 100): the edge stops it.
  EXPECT_EQ(cross_arm(arms.at(0, 0), 3), 2);
  // (1, 0) = (100, 120, 100) down: (100, 100, 121) differs by 21 in B, (115,
  // 115, 115) by 15 at most: bridged.
  EXPECT_EQ(cross_arm(arms.at(1, 0), 3), 2);
  // tau = 21: row 1 is one colour up to its edge.
  cross_arms(im, 21, 16, arms);
  EXPECT_EQ(cross_arm(arms.at(0, 1), 1), 5);
  // tau = 255: everything is the same colour.
  cross_arms(im, 255, 3, arms);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 6; ++x) EXPECT_EQ(arms.at(x, y), pack_arms(std::min(x, 3), std::min(5 - x, 3), y, 2 - y));
}

// ---------------------------------------------------------------- C1b

TEST(CrossCensus, BitsByHandAtTheCentreAndClampedAtTheBorders) {
  // A 5 x 5 view: the centre's eight neighbours at distance 2 by hand.
  Image<uint32_t> im(5, 5, grey(255));
  im.at(2, 2) = grey(100);                       // luma 400
  im.at(0, 0) = grey(50);                        // bit 0: below
  im.at(2, 0) = grey(150);                       // bit 1: above
  im.at(4, 0) = grey(99);                        // bit 2: below
  im.at(0, 2) = grey(100);                       // bit 3: equal is not below
  im.at(4, 2) = rgb(100, 100, 101);              // bit 4: 401 is above
  im.at(0, 4) = grey(0);                         // bit 5: below
  im.at(2, 4) = grey(200);                       // bit 6: above
  im.at(4, 4) = rgb(100, 99, 100);               // bit 7: 398 is below (green weighs twice)
  im.at(1, 1) = im.at(3, 3) = im.at(2, 1) = grey(0);  // nearer pixels are not read
  Image<uint32_t> words;
  cross_census(im, 1, words);
  EXPECT_EQ(words.at(2, 2), grey(100) | 0xA5u << 24);  // bits 0, 2, 5, 7
  // The colour bytes are the view's.
  for (size_t i = 0; i < im.pixels.size(); ++i) EXPECT_EQ(words.pixels[i] & 0xFFFFFFu, im.pixels[i]) << i;

  // A view one pixel wide: every x offset reads the pixel's own column, and
  // rows beyond the edges read the edge rows.
  const Image<uint32_t> column = colour_image(1, 3, {grey(10), grey(21), grey(5)});
  cross_census(column, 1, words);
  EXPECT_EQ(words.at(0, 0) >> 24, 0xE0u);  // only the rows below (clamped to row 2, luma 20 < 40)
  EXPECT_EQ(words.at(0, 1) >> 24, 0xE7u);  // rows 0 and 2 both below 84; its own row is equal
  EXPECT_EQ(words.at(0, 2) >> 24, 0u);     // the lowest

  // S = 2: the samples' rows 0 and 2 only; each colour the rounded mean of
  // the 2 x 2 pixels from it that lie inside (here rows y and y + 1 of the
  // one column), the census at distance 1 of those means.
  cross_census(column, 2, words);
  // Row 0: (10 + 21 + 1) / 2 = 16, luma 64; the mean below it (row 1: (21
  // + 5 + 1) / 2 = 13, luma 52) is darker: bits 5 .. 7; above and beside
  // are clamped to itself.
  EXPECT_EQ(words.at(0, 0), grey(16) | 0xE0u << 24);
  EXPECT_EQ(words.at(0, 1), 0u);
  // Row 2: one pixel in its box, 5; row 1's mean 13 is not darker.
  EXPECT_EQ(words.at(0, 2), grey(5));
}

TEST(CrossCensus, SampledViewsEqualTheMeansAndTheirCensus) {
  // Against a direct reading of C1b on random colours, S = 2 and 3, views
  // whose sizes are not multiples of S (boxes cut by the edges).
  std::mt19937 rng(5);
  for (int S : {2, 3}) {
    const int w = 11, h = 8;
    Image<uint32_t> im(w, h);
    for (auto& v : im.pixels) v = rgb(rng() % 256, rng() % 256, rng() % 256);
    auto mean = [&](int x, int y) {
      double sum[3] = {0, 0, 0};
      int n = 0;
      for (int v = y; v < std::min(y + S, h); ++v)
        for (int u = x; u < std::min(x + S, w); ++u, ++n)
          for (int ch = 0; ch < 3; ++ch) sum[ch] += (im.at(u, v) >> (8 * ch)) & 255;
      return rgb(static_cast<int>(std::lround(sum[0] / n)), static_cast<int>(std::lround(sum[1] / n)),
                 static_cast<int>(std::lround(sum[2] / n)));
    };
    auto luma = [](uint32_t c) { return (c & 255) + 2 * ((c >> 8) & 255) + ((c >> 16) & 255); };
    Image<uint32_t> words;
    cross_census(im, S, words);
    int bits = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (y % S != 0) {
          ASSERT_EQ(words.at(x, y), 0u) << x << "," << y;
          continue;
        }
        uint32_t k = 0;
        int n = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if (dx == 0 && dy == 0) continue;
            const uint32_t c = mean(std::clamp(x + dx, 0, w - 1), std::clamp(y + dy, 0, h - 1));
            k |= static_cast<uint32_t>(luma(c) < luma(mean(x, y))) << n++;
          }
        bits += __builtin_popcount(k);
        ASSERT_EQ(words.at(x, y), mean(x, y) | k << 24) << x << "," << y << " S " << S;
      }
    EXPECT_GT(bits, 0);
  }
}

TEST(CrossCensus, PixelCostAddsTheWeightPerDifferingBit) {
  const uint32_t a = rgb(10, 20, 30) | 0x0Bu << 24, b = rgb(15, 20, 0) | 0x01u << 24;  // 35 apart, 2 bits
  EXPECT_EQ(cross_pixel_cost(a, b, 60, 15), 35 + 30);
  EXPECT_EQ(cross_pixel_cost(a, b, 20, 15), 20 + 30);  // the truncation cuts the colour only
  EXPECT_EQ(cross_pixel_cost(a, b, 60, 0), 35);
  EXPECT_EQ(cross_pixel_cost(rgb(255, 255, 255) | 0xFFu << 24, rgb(0, 0, 0), kMaxCrossTruncation,
                             kMaxCrossCensusWeight),
            kMaxCrossPixelCost);
}

// ---------------------------------------------------------------- C3

TEST(CrossCostTest, RegionIsTheOverlapOfBothViewsArms) {
  // With arms that reach the whole image in both views, the region of (x,
  // y, d) at S = 1 is columns d .. w - 1 of every row: the left arm is the
  // right view's (x - d), the right arm the left view's (w - 1 - x).
  const int w = 13, h = 7;
  std::mt19937 rng(3);
  Image<uint32_t> L(w, h), R(w, h);
  // Words (C1b) with every byte random: the census term counts the fourth
  // bytes' differing bits.
  for (auto& v : L.pixels) v = static_cast<uint32_t>(rng());
  for (auto& v : R.pixels) v = static_cast<uint32_t>(rng());
  const Image<uint32_t> arms = whole_image_arms(w, h);
  for (int T : {1, 60, 765})
    for (int W : {0, 15, kMaxCrossCensusWeight})
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int d = 0; d < w; ++d) {
          const CrossCost c = cross_cost(L, R, arms, arms, x, y, d, T, W, 1);
          if (x - d < 0) {
            EXPECT_EQ(c.sum, -1);
            continue;
          }
          int sum = 0;
          for (int v = 0; v < h; ++v)
            for (int u = d; u < w; ++u) {
              const uint32_t a = L.at(u, v), b = R.at(u - d, v);
              int e = 0;
              for (int ch = 0; ch < 3; ++ch) e += std::abs(static_cast<int>((a >> (8 * ch)) & 255) -
                                                           static_cast<int>((b >> (8 * ch)) & 255));
              int bits = 0;
              for (uint32_t k = (a ^ b) >> 24; k; k &= k - 1) ++bits;
              sum += std::min(e, T) + W * bits;
            }
          ASSERT_EQ(c.sum, sum) << x << "," << y << " d " << d << " T " << T << " W " << W;
          ASSERT_EQ(c.pixels, h * (w - d));
        }
}

TEST(CrossCostTest, ByHandWithSamplesAndUnevenArms) {
  // S = 2, a 7 x 5 view; sample (1, 1) is pixel (2, 2). d = 1: right pixel (1, 2).
  const int w = 7, h = 5;
  Image<uint32_t> L(w, h, grey(0)), R(w, h, grey(0));
  Image<uint32_t> al(w, h, 0), ar(w, h, 0);
  // Vertical: left up 3 / down 2, right up 2 / down 5 -> (2, 2) / 2 = 1, 1.
  al.at(2, 2) = pack_arms(2, 4, 3, 2);
  ar.at(1, 2) = pack_arms(1, 5, 2, 5);  // horizontal of row 2: min(2, 1) / 2 = 0, min(4, 5) / 2 = 2
  // Row 0 (sample row 0): left (2, 0), right (1, 0).
  al.at(2, 0) = pack_arms(2, 2, 0, 0);
  ar.at(1, 0) = pack_arms(1, 3, 0, 0);  // hm = min(2, 1) / 2 = 0, hp = min(2, 3) / 2 = 1
  // Row 4 (sample row 2): left (2, 4), right (1, 4).
  al.at(2, 4) = pack_arms(1, 3, 0, 0);
  ar.at(1, 4) = pack_arms(1, 3, 0, 0);  // hm 0, hp 1
  // Costs e at samples (m, k): L(2m, 2k) against R(2m - 1, 2k).
  L.at(2, 0) = grey(50);
  R.at(1, 0) = grey(20);                            // e = 3 * 30 = 90 -> T
  L.at(4, 0) = grey(7);                             // e(2, 0) = 3 * 7 = 21 against R(3, 0) = 0
  L.at(2, 2) = grey(5);                             // e(1, 1) = 15
  L.at(4, 2) = rgb(1, 2, 3), R.at(3, 2) = grey(0);  // e(2, 1) = 6
  L.at(6, 2) = grey(9), R.at(5, 2) = grey(10);      // e(3, 1) = 3
  L.at(2, 4) = rgb(0, 0, 40);                       // e(1, 2) = 40
  L.at(4, 4) = grey(1), R.at(3, 4) = grey(2);       // e(2, 2) = 3
  const int T = 60;
  const CrossCost c = cross_cost(L, R, al, ar, 1, 1, 1, T, 15, 2);  // no census bits: W adds nothing
  // Rows: 0 -> samples 1 .. 2 (60 + 21), 1 -> 1 .. 3 (15 + 6 + 3), 2 -> 1 .. 2 (40 + 3).
  EXPECT_EQ(c.sum, 60 + 21 + 15 + 6 + 3 + 40 + 3);
  EXPECT_EQ(c.pixels, 2 + 3 + 2);
  // No matched pixel: S i - d < 0.
  EXPECT_EQ(cross_cost(L, R, al, ar, 1, 1, 3, T, 15, 2).sum, -1);
}

TEST(CrossCostTest, NormalisedComparisonUsesProductsAndTiesAreEqual) {
  EXPECT_TRUE(cross_cost_less({9, 5}, {20, 10}));    // 1.8 < 2
  EXPECT_FALSE(cross_cost_less({10, 5}, {20, 10}));  // equal
  EXPECT_FALSE(cross_cost_less({20, 10}, {10, 5}));
  EXPECT_TRUE(cross_cost_less({0, 1089}, {1, 1089}));
  // 64-bit: the largest costs.
  const int32_t big = 1089 * kMaxCrossPixelCost;
  EXPECT_TRUE(cross_cost_less({big - 1, 1089}, {big, 1089}));
  EXPECT_FALSE(cross_cost_less({big, 1089}, {big, 1089}));
}

// ---------------------------------------------------------------- C4, brute force

namespace {

struct BruteWinner {
  int disparity = -1;
  CrossCost best, rival;
};

BruteWinner brute_winner(const Image<uint32_t>& L, const Image<uint32_t>& R, const Image<uint32_t>& al,
                         const Image<uint32_t>& ar, const Image<uint8_t>* ml, const Image<uint8_t>* mr, Range range,
                         int T, int W, int S, int i, int j) {
  auto admissible = [&](int d) {
    const int xr = S * i - d;
    return xr >= 0 && (!ml || (ml->at(S * i, S * j) != 0 && mr->at(xr, S * j) != 0));
  };
  BruteWinner b;
  for (int d = range.lo; d < range.hi; ++d) {
    if (!admissible(d)) continue;
    const CrossCost c = cross_cost(L, R, al, ar, i, j, d, T, W, S);
    if (b.disparity < 0 || cross_cost_less(c, b.best)) b.best = c, b.disparity = d;
  }
  if (b.disparity < 0) return b;
  for (int d = range.lo; d < range.hi; ++d) {
    if (!admissible(d) || std::abs(d - b.disparity) < 2) continue;
    const CrossCost c = cross_cost(L, R, al, ar, i, j, d, T, W, S);
    if (b.rival.sum < 0 || cross_cost_less(c, b.rival)) b.rival = c;  // ties: the smaller d's pair
  }
  return b;
}

}  // namespace

TEST(CrossMatch, WinnersRivalsUniquenessAndOfferedMapEqualBruteForce) {
  const int w = 31, h = 19;
  std::mt19937 rng(11);
  // Blobs of few colours with some noise: arms of every length, ties.
  Image<uint32_t> L(w, h), R(w, h);
  auto blob_colour = [&](int u, int v, uint32_t seed) {
    const uint32_t k = (static_cast<uint32_t>(u / 4) * 7u + static_cast<uint32_t>(v / 3) * 13u + seed) % 5u;
    return static_cast<int>(k) * 40;
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int a = blob_colour(x, y, 0), b = blob_colour(x + 3, y, 0);
      const bool noise = rng() % 9 == 0;
      L.at(x, y) = rgb(a, (a + 40) % 200, 100 + (noise ? 60 : 0));
      R.at(x, y) = rgb(b, (b + 40) % 200, 100 + (rng() % 9 == 0 ? 60 : 0));
    }
  Image<uint8_t> ml(w, h), mr(w, h);
  for (auto& v : ml.pixels) v = (rng() % 5) ? 255 : 0;
  for (auto& v : mr.pixels) v = (rng() % 5) ? 255 : 0;
  Image<uint32_t> al, ar, kl, kr;
  cross_arms(L, 20, 6, al);
  cross_arms(R, 20, 6, ar);
  cross_census(L, 1, kl);
  cross_census(R, 1, kr);
  long ties = 0, rivals = 0, rejected = 0, crowded = 0, empty_right = 0;
  for (int S : {1, 2, 3})
    for (bool masks : {false, true})
      for (Range range : {Range{0, 12}, Range{2, 9}})
        for (int ratio : {0, 15}) {
          const Image<uint8_t>* pl = masks ? &ml : nullptr;
          const Image<uint8_t>* pr = masks ? &mr : nullptr;
          const int T = 60;
          // The colour alone (C1b's words without their census: ties), and
          // with the census at two weights.
          const int W = (S + ratio) % 3 == 0 ? 0 : S == 2 ? kMaxCrossCensusWeight : 15;
          const Image<uint32_t>& wl = W ? kl : L;
          const Image<uint32_t>& wr = W ? kr : R;
          CrossWinners got;
          cross_match(wl, wr, al, ar, pl, pr, range, T, W, S, ratio, got);
          const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
          ASSERT_EQ(got.raw.width, ws);
          ASSERT_EQ(got.raw.height, hs);
          ASSERT_EQ(got.disparity.width, ws);
          ASSERT_EQ(got.best.width, ws);
          ASSERT_EQ(got.rival.height, hs);
          ASSERT_EQ(got.right.width, w);
          ASSERT_EQ(got.right.height, hs);
          Image<int16_t> right(w, hs, -1);
          Image<CrossCost> offer(w, hs);
          Image<int> offers(w, hs, 0);
          for (int j = 0; j < hs; ++j)
            for (int i = 0; i < ws; ++i) {
              const std::string at = "sample " + std::to_string(i) + "," + std::to_string(j) + " S " +
                                     std::to_string(S) + " masks " + std::to_string(masks) + " lo " +
                                     std::to_string(range.lo) + " ratio " + std::to_string(ratio) + " W " +
                                     std::to_string(W);
              const BruteWinner b = brute_winner(wl, wr, al, ar, pl, pr, range, T, W, S, i, j);
              ASSERT_EQ(got.raw.at(i, j), b.disparity) << at;
              ASSERT_TRUE(same_cost(got.best.at(i, j), b.best)) << at;
              ASSERT_TRUE(same_cost(got.rival.at(i, j), b.rival)) << at;
              int unique = b.disparity;
              if (ratio > 0 && b.disparity >= 0 && b.rival.sum >= 0 &&
                  !(int64_t{b.rival.sum} * b.best.pixels * 100 > int64_t{b.best.sum} * b.rival.pixels * (100 + ratio)))
                unique = -1;
              ASSERT_EQ(got.disparity.at(i, j), unique) << at;
              rejected += unique < 0 && b.disparity >= 0;
              if (b.disparity < 0) continue;
              rivals += b.rival.sum >= 0;
              // A tie: another admissible d at the winner's normalised cost.
              for (int d = b.disparity + 1; d < range.hi && S * i - d >= 0; ++d) {
                const CrossCost c = cross_cost(wl, wr, al, ar, i, j, d, T, W, S);
                if (!masks && !cross_cost_less(b.best, c)) ++ties;
              }
              // The offer to right pixel (S i - d, j).
              const int xr = S * i - b.disparity;
              ++offers.at(xr, j);
              if (right.at(xr, j) < 0 || cross_cost_less(b.best, offer.at(xr, j)) ||
                  (!cross_cost_less(offer.at(xr, j), b.best) && b.disparity < right.at(xr, j))) {
                right.at(xr, j) = static_cast<int16_t>(b.disparity);
                offer.at(xr, j) = b.best;
              }
            }
          for (int j = 0; j < hs; ++j)
            for (int x = 0; x < w; ++x) {
              ASSERT_EQ(got.right.at(x, j), right.at(x, j)) << "right " << x << "," << j << " S " << S;
              crowded += offers.at(x, j) > 1;
              empty_right += right.at(x, j) < 0;
            }
        }
  // The cases the rules are about did occur.
  EXPECT_GT(ties, 0);
  EXPECT_GT(rivals, 0);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(crowded, 0);
  EXPECT_GT(empty_right, 0);
}

TEST(CrossMatch, FlatViewsTieToTheSmallestDisparityAndFailUniqueness) {
  const int w = 20, h = 8;
  const Image<uint32_t> flat(w, h, rgb(30, 60, 90));
  Image<uint32_t> arms;
  cross_arms(flat, 20, 16, arms);
  CrossWinners got;
  cross_match(flat, flat, arms, arms, nullptr, nullptr, Range{3, 10}, 60, 15, 1, 0, got);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      EXPECT_EQ(got.raw.at(x, y), x >= 3 ? 3 : -1) << x;
      if (x < 3) {
        EXPECT_EQ(got.best.at(x, y).sum, -1);
        EXPECT_EQ(got.rival.at(x, y).sum, -1);
        continue;
      }
      EXPECT_EQ(got.best.at(x, y).sum, 0);
      // A rival exists once d = 5 is admissible (x >= 5), at cost 0.
      EXPECT_EQ(got.rival.at(x, y).sum, x >= 5 ? 0 : -1) << x;
    }
  // Offers: right pixel x - 3 from every left x >= 3.
  for (int x = 0; x < w; ++x) EXPECT_EQ(got.right.at(x, 0), x < w - 3 ? 3 : -1) << x;
  // Uniqueness: a rival of equal cost rejects; no rival keeps.
  cross_match(flat, flat, arms, arms, nullptr, nullptr, Range{3, 10}, 60, 15, 1, 1, got);
  EXPECT_EQ(got.disparity.at(10, 2), -1);
  EXPECT_EQ(got.disparity.at(4, 2), 3);
  EXPECT_EQ(got.raw.at(10, 2), 3);  // raw is before uniqueness
  EXPECT_EQ(got.right.at(7, 2), 3); // and so are the offers
}

TEST(CrossMatch, UniquenessKeepsTextureAndRejectsARepeatedPattern) {
  // Rows 0 .. 9 random colours, rows 10 .. 19 vertical stripes of period 6;
  // the right view is the left shifted by 8, so stripes fit at 2, 8 and 14.
  const int w = 64, h = 20, shift = 8;
  std::mt19937 rng(29);
  Image<uint32_t> tex(w + shift, h);
  for (auto& v : tex.pixels) v = rgb(rng() % 256, rng() % 256, rng() % 256);
  auto left_value = [&](int u, int y) { return y < 10 ? tex.at(u, y) : ((u % 6) < 3 ? grey(50) : grey(200)); };
  Image<uint32_t> L(w, h), R(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) L.at(x, y) = left_value(x, y), R.at(x, y) = left_value(x + shift, y);
  Image<uint32_t> al, ar;
  cross_arms(L, 20, 16, al);
  cross_arms(R, 20, 16, ar);
  CrossWinners plain, unique;
  cross_match(L, R, al, ar, nullptr, nullptr, Range{0, 20}, 60, 0, 1, 0, plain);
  cross_match(L, R, al, ar, nullptr, nullptr, Range{0, 20}, 60, 0, 1, 10, unique);
  // x = 38, the last pixel of a dark stripe: d = 2, 8, 14 fit exactly; at
  // 1 and 3 its own colour differs. (Elsewhere a shift by 1 or 3 still fits
  // over a region of two pixels of one stripe: cost 0, a tie with the whole
  // region's 0, which goes to the smaller d.)
  EXPECT_EQ(plain.raw.at(38, 15), 2);
  EXPECT_EQ(plain.disparity.at(38, 15), 2);
  EXPECT_EQ(unique.raw.at(38, 15), 2);
  EXPECT_EQ(unique.disparity.at(38, 15), -1);
  EXPECT_EQ(plain.rival.at(38, 15).sum, 0);
  for (int x = 20; x < 44; ++x) {
    EXPECT_EQ(unique.disparity.at(x, 5), shift) << x;
    EXPECT_EQ(unique.disparity.at(x, 15), -1) << x;
  }
}

// ---------------------------------------------------------------- C5

TEST(CrossReliable, LeftRightCheckOnSamples) {
  CrossWinners wn;
  // S = 2: 4 x 1 samples over a 7-pixel-wide view.
  wn.disparity = map_of(4, 1, {-1, 1, 2, 3});
  wn.right = map_of(7, 1, {-1, 1, 3, 9, 4, 5, 6});
  Image<int16_t> reliable;
  cross_reliable(wn, 2, true, 1, reliable);
  // (1): 2 - 1 = 1 -> right 1, same. (2): 4 - 2 = 2 -> 3, |2 - 3| = 1. (3): 6 - 3 = 3 -> 9.
  EXPECT_EQ(reliable.pixels, map_of(4, 1, {-1, 1, 2, -1}).pixels);
  cross_reliable(wn, 2, true, 0, reliable);
  EXPECT_EQ(reliable.pixels, map_of(4, 1, {-1, 1, -1, -1}).pixels);
  cross_reliable(wn, 2, true, 6, reliable);
  EXPECT_EQ(reliable.pixels, map_of(4, 1, {-1, 1, 2, 3}).pixels);
  // A right pixel without an offer fails whatever the tolerance.
  wn.right.at(3, 0) = -1;
  cross_reliable(wn, 2, true, 100, reliable);
  EXPECT_EQ(reliable.pixels, map_of(4, 1, {-1, 1, 2, -1}).pixels);
  // Off: the winners after uniqueness as they are.
  cross_reliable(wn, 2, false, 0, reliable);
  EXPECT_EQ(reliable.pixels, wn.disparity.pixels);
}

// ---------------------------------------------------------------- C6

TEST(CrossVote, CodesOfNeighbouringDisparitiesDifferInOneBit) {
  for (int d = 0; d + 1 < 4096; ++d) {
    EXPECT_EQ(__builtin_popcount(static_cast<unsigned>(cross_vote_code(d) ^ cross_vote_code(d + 1))), 1) << d;
    EXPECT_EQ(cross_vote_value(cross_vote_code(d)), d);
    EXPECT_LT(cross_vote_code(d), 4096);
  }
}

TEST(CrossVote, PaperFigure6Examples) {
  // Seven samples in one region (a 7 x 1 view whose arms reach it all).
  const Image<uint32_t> arms = whole_image_arms(7, 1);
  Image<int16_t> voted;
  // (b): 3, 4, 9, 9, 9, 5, 11, whose bits vote 9 in the paper. Their codes
  // 0010, 0110, 1101 (three), 0111, 1110 have at least four of seven ones
  // at every bit: code 1111, the disparity 10 (9 is no majority of the set).
  cross_vote(arms, map_of(7, 1, {3, 4, 9, 9, 9, 5, 11}), 1, Range{0, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 10);
  // As many 127s as 128s: every bit of d ties (the paper's bits vote 0),
  // but the codes 01000000 and 11000000 share bit 6: 127.
  cross_vote(arms, map_of(7, 1, {127, 128, 127, 128, -1, -1, -1}), 1, Range{0, 256}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 127);
  // (a): four 9s of seven decide whatever the others are.
  std::mt19937 rng(1);
  for (int t = 0; t < 20; ++t) {
    const int a = rng() % 4096, b = rng() % 4096, c = rng() % 4096;
    cross_vote(arms, map_of(7, 1, {9, a, 9, 9, 9, b, c}), 1, Range{0, 4096}, nullptr, voted);
    for (int v : voted.pixels) EXPECT_EQ(v, 9) << a << " " << b << " " << c;
  }
  // Unreliable estimates (-1) do not vote: two 6s against one 1.
  cross_vote(arms, map_of(7, 1, {-1, 6, -1, 1, -1, 6, -1}), 1, Range{0, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 6);
  // A tie of bits is no majority: 1, 3 (codes 01, 10) -> bit 0 1 of 2, bit 1
  // 1 of 2 -> code 0, disparity 0.
  cross_vote(arms, map_of(7, 1, {1, -1, -1, -1, -1, -1, 3}), 1, Range{0, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 0);
  // ... which lies outside [1, 64): none.
  cross_vote(arms, map_of(7, 1, {1, -1, -1, -1, -1, -1, 3}), 1, Range{1, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, -1);
  // 1, 2 (codes 01, 11) agree on bit 0: 1.
  cross_vote(arms, map_of(7, 1, {1, -1, -1, -1, -1, -1, 2}), 1, Range{1, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 1);
  // Out of range above: 12 wins but the range ends at 12.
  cross_vote(arms, map_of(7, 1, {12, 12, 3, -1, -1, -1, -1}), 1, Range{0, 12}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, -1);
  cross_vote(arms, map_of(7, 1, {12, 12, 3, -1, -1, -1, -1}), 1, Range{0, 13}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, 12);
  // No estimate at all: n = 0 -> -1 (even with 0 in the range).
  cross_vote(arms, Image<int16_t>(7, 1, -1), 1, Range{0, 64}, nullptr, voted);
  for (int v : voted.pixels) EXPECT_EQ(v, -1);
}

TEST(CrossVote, SamplesAreStuffedAndOnlyTheirPixelsVote) {
  // S = 2 over a 5 x 4 view: samples at x = 0, 2, 4 and y = 0, 2.
  const Image<uint32_t> arms = whole_image_arms(5, 4);
  // Codes 5 -> 111, 7 -> 100, 5: bits 0 and 1 have two votes of three.
  Image<int16_t> voted;
  cross_vote(arms, map_of(3, 2, {5, -1, 5, 7, -1, -1}), 2, Range{0, 16}, nullptr, voted);
  ASSERT_EQ(voted.width, 5);
  ASSERT_EQ(voted.height, 4);
  for (int v : voted.pixels) EXPECT_EQ(v, 5);
  // Regions decide who votes: arms of one pixel (none) except at (1, 1),
  // whose row arm covers x 0 .. 2 and whose column arm rows 0 .. 2.
  Image<uint32_t> lone(5, 4, 0);
  for (int y = 0; y <= 2; ++y) lone.at(1, y) = pack_arms(1, 1, y == 1 ? 1 : 0, y == 1 ? 1 : 0);
  cross_vote(lone, map_of(3, 2, {3, 9, 9, 6, 9, 9}), 2, Range{0, 16}, nullptr, voted);
  // (1, 1): rows 0 .. 2, each over x 0 .. 2: samples (0,0) = 3, (2,0) = 9,
  // (0,2) = 6, (2,2) = 9, codes 0010, 1101, 0101, 1101: bits 0: 3 of 4,
  // 1: 1, 2: 3, 3: 2 -> code 0101, the disparity 6 (the bits of d vote 1).
  EXPECT_EQ(voted.at(1, 1), 6);
  // A sample pixel with a one-pixel region takes its own value; others have none.
  EXPECT_EQ(voted.at(0, 0), 3);
  EXPECT_EQ(voted.at(4, 2), 9);
  EXPECT_EQ(voted.at(3, 3), -1);
  // (1, 0): its arm covers (0, 0) and (2, 0), 3 and 9, whose codes 0010 and
  // 1101 agree on no bit: 0.
  EXPECT_EQ(voted.at(1, 0), 0);
}

TEST(CrossVote, SeparableSumsEqualTheRegionsOwnVotes) {
  const int w = 29, h = 23;
  std::mt19937 rng(7);
  Image<uint32_t> im(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) im.at(x, y) = grey(((x / 5 + y / 4) % 3) * 60 + (rng() % 7 == 0 ? 90 : 0));
  Image<uint32_t> arms;
  cross_arms(im, 20, 7, arms);
  Image<uint8_t> mask(w, h);
  for (auto& v : mask.pixels) v = (rng() % 6) ? 255 : 0;
  for (int S : {1, 2, 3}) {
    const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
    Image<int16_t> reliable(ws, hs);
    // Mostly near 22, some unreliable, some anywhere (out of range too).
    for (auto& v : reliable.pixels) {
      const int kind = static_cast<int>(rng() % 8);
      v = static_cast<int16_t>(kind < 5 ? 20 + static_cast<int>(rng() % 6) : kind < 7 ? -1 : static_cast<int>(rng() % 4096));
    }
    for (bool masks : {false, true}) {
      const Range range{0, 40};
      Image<int16_t> voted;
      cross_vote(arms, reliable, S, range, masks ? &mask : nullptr, voted);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const uint32_t a = arms.at(x, y);
          int n = 0, bits[kCrossVoteBits] = {};
          for (int v = y - cross_arm(a, 2); v <= y + cross_arm(a, 3); ++v) {
            const uint32_t b = arms.at(x, v);
            for (int u = x - cross_arm(b, 0); u <= x + cross_arm(b, 1); ++u) {
              if (u % S || v % S) continue;
              const int e = reliable.at(u / S, v / S);
              if (e < 0) continue;
              ++n;
              const int code = e ^ (e >> 1);  // stages.h C6's code, written out
              for (int l = 0; l < kCrossVoteBits; ++l) bits[l] += (code >> l) & 1;
            }
          }
          int code = 0;
          for (int l = 0; l < kCrossVoteBits; ++l)
            if (2 * bits[l] > n) code |= 1 << l;
          int d = 0;  // the disparity whose code that is: the one d with d ^ (d >> 1) == code
          while (d < 4096 && (d ^ (d >> 1)) != code) ++d;
          const int want = n == 0 || d < range.lo || d >= range.hi || (masks && !mask.at(x, y)) ? -1 : d;
          ASSERT_EQ(voted.at(x, y), want) << x << "," << y << " S " << S << " masks " << masks;
        }
    }
  }
}

// The voting's arms cut to Lv (stages.h C6) are the crosses C1 builds with
// arm length Lv, so the vote with Lv over arms of length 16 equals the vote
// over arms of length Lv; Lv at or above the arms' length changes nothing.
// And a shorter voting region keeps a thin structure's disparity that a
// long one outvotes.
TEST(CrossVote, VotingArmLengthCutsTheRegions) {
  const int w = 40, h = 30;
  std::mt19937 rng(5);
  Image<uint32_t> im(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) im.at(x, y) = grey(((x / 6 + y / 5) % 2) * 40 + static_cast<int>(rng() % 30));
  Image<int16_t> reliable(w, h);
  for (auto& v : reliable.pixels) v = static_cast<int16_t>(rng() % 5 == 0 ? -1 : 10 + static_cast<int>(rng() % 8));
  Image<uint32_t> arms16, arms;
  cross_arms(im, 20, 16, arms16);
  for (int lv : {1, 4, 9}) {
    cross_arms(im, 20, lv, arms);
    Image<int16_t> cut, built;
    cross_vote(arms16, reliable, 1, Range{0, 64}, nullptr, cut, lv);
    cross_vote(arms, reliable, 1, Range{0, 64}, nullptr, built);
    EXPECT_EQ(cut.pixels, built.pixels) << "Lv " << lv;
  }
  cross_arms(im, 20, 9, arms);
  Image<int16_t> same, plain;
  cross_vote(arms, reliable, 1, Range{0, 64}, nullptr, plain);
  cross_vote(arms, reliable, 1, Range{0, 64}, nullptr, same, 12);
  EXPECT_EQ(same.pixels, plain.pixels);
  // One row, one region: a run of three 40s inside 30s. The whole row votes
  // 30 everywhere; with arms of 1 the run's middle pixel keeps 40.
  const Image<uint32_t> row = whole_image_arms(15, 1);
  const Image<int16_t> run = map_of(15, 1, {30, 30, 30, 30, 30, 30, 40, 40, 40, 30, 30, 30, 30, 30, 30});
  Image<int16_t> voted;
  cross_vote(row, run, 1, Range{0, 64}, nullptr, voted);
  EXPECT_EQ(voted.at(7, 0), 30);
  cross_vote(row, run, 1, Range{0, 64}, nullptr, voted, 1);
  EXPECT_EQ(voted.at(7, 0), 40);
  EXPECT_EQ(voted.at(2, 0), 30);
}

// ---------------------------------------------------------------- C7

TEST(CrossMedian, NineValuesWithClampedReadsAndMasks) {
  const Image<int16_t> voted = map_of(3, 3, {-1, 5, 6,  //
                                             7, 8, 9,   //
                                             1, 2, 3});
  Image<int16_t> out;
  cross_median(voted, nullptr, out);
  // (0, 0): -1 x4, 5 x2, 7 x2, 8 -> 5th smallest 5.
  EXPECT_EQ(out.at(0, 0), 5);
  EXPECT_EQ(out.at(1, 1), 5);  // -1 1 2 3 5 6 7 8 9
  // (2, 2): 3 x4, 2 x2, 9 x2, 8 -> 2 2 3 3 3 3 8 9 9.
  EXPECT_EQ(out.at(2, 2), 3);
  // (1, 0): row 0 twice (-1 5 6), row 1 (7 8 9): -1 -1 5 5 6 6 7 8 9.
  EXPECT_EQ(out.at(1, 0), 6);
  // -1 counts as a value: one estimate among invalid pixels is dropped.
  Image<int16_t> lone(4, 4, -1);
  lone.at(1, 1) = 12;
  cross_median(lone, nullptr, out);
  for (int v : out.pixels) EXPECT_EQ(v, -1);
  // Background pixels are -1 whatever their neighbours.
  const Image<int16_t> even(4, 4, 7);
  Image<uint8_t> mask(4, 4, 255);
  mask.at(2, 1) = 0;
  cross_median(even, &mask, out);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(out.at(x, y), x == 2 && y == 1 ? -1 : 7);
}

// ---------------------------------------------------------------- C8

TEST(CrossFinish, WholePixelsAndZeroForInvalid) {
  const Image<int16_t> d = map_of(4, 2, {-1, 0, 1, 17, 255, 4095, 3, -1});
  std::vector<uint16_t> buf(2 * 6, 0xeeee);
  finish_cross_disparity(d, ImageView<uint16_t>{buf.data(), 4, 2, 6 * 2});
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[1], 0);  // a valid 0 reads as invalid
  EXPECT_EQ(buf[2], 16);
  EXPECT_EQ(buf[3], 17 * 16);
  EXPECT_EQ(buf[4], 0xeeee);  // the pitch's padding is not written
  EXPECT_EQ(buf[6], 255 * 16);
  EXPECT_EQ(buf[7], 4095 * 16);
  EXPECT_EQ(buf[8], 48);
  EXPECT_EQ(buf[9], 0);
}

TEST(CrossConfidenceTest, NormalisedMarginWhereTheVoteKeptTheMatch) {
  // S = 2: 6 x 2 pixels over 3 x 1 samples.
  CrossWinners wn;
  wn.raw = map_of(3, 1, {10, -1, 20});
  wn.best = Image<CrossCost>(3, 1);
  wn.rival = Image<CrossCost>(3, 1);
  wn.best.at(0, 0) = {10, 5};   // 2.0
  wn.rival.at(0, 0) = {30, 10}; // 3.0: 255 * (150 - 100) / 150 = 85
  wn.best.at(2, 0) = {0, 9};
  wn.rival.at(2, 0) = {7, 3};   // 255
  const Image<int16_t> d = map_of(6, 2, {10, 11, -1, 5, 20, 22,  //
                                         9, 12, 4, 4, 19, 21});
  Image<uint8_t> c;
  cross_confidence(wn, d, 2, c);
  ASSERT_EQ(c.width, 6);
  ASSERT_EQ(c.height, 2);
  EXPECT_EQ(c.at(0, 0), 85);
  EXPECT_EQ(c.at(1, 0), 85);   // |11 - 10| = 1: still the sample's match
  EXPECT_EQ(c.at(0, 1), 85);
  EXPECT_EQ(c.at(1, 1), 0);    // 12: the vote overruled it
  EXPECT_EQ(c.at(2, 0), 0);    // invalid
  EXPECT_EQ(c.at(3, 0), 0);    // the sample has no winner
  EXPECT_EQ(c.at(2, 1), 0);
  EXPECT_EQ(c.at(4, 0), 255);
  EXPECT_EQ(c.at(5, 0), 0);    // 22
  EXPECT_EQ(c.at(4, 1), 255);  // 19
  EXPECT_EQ(c.at(5, 1), 255);  // 21
  // No rival, or a rival of cost 0: 0.
  wn.rival.at(0, 0) = {};
  wn.rival.at(2, 0) = {0, 4};
  wn.best.at(2, 0) = {0, 9};
  cross_confidence(wn, d, 2, c);
  for (uint8_t v : c.pixels) EXPECT_EQ(v, 0);
  // Floor of the exact quotient, in 64 bits at the largest costs.
  wn.best.at(0, 0) = {1089 * 765 / 2, 1089};
  wn.rival.at(0, 0) = {765, 1};
  cross_confidence(wn, d, 2, c);
  EXPECT_EQ(c.at(0, 0), 127);  // 255 * (833085 - 416542) / 833085 = 127.50
}

// ---------------------------------------------------------------- whole method

TEST(CrossMethod, DebugHoldsEveryStepAndTheOutputIsTheirComposition) {
  const SyntheticPair s = make_step_pair(64, 40, 4, 12, 5);
  for (int S : {1, 2, 3}) {
    Params p = cross_params(16, S);
    p.confidence = true;
    // The parameters reach their steps: a ratio at S = 2, a tolerance at 3.
    if (S == 2) p.uniqueness_ratio = 10;
    if (S == 3) p.lr_tolerance = 2;  // not cross's default (0)
    Matcher m(p);
    Result r;
    r.q4 = Image<uint16_t>(64, 40);
    Image<uint8_t> confidence(64, 40);
    Outputs o;
    o.disparity_q4 = r.q4.view();
    o.confidence = confidence.view();
    ASSERT_EQ(m.process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), o), "");
    const Matcher::Debug& dbg = m.debug();
    ASSERT_EQ(dbg.levels.size(), 1u);
    const LevelDebug& l0 = dbg.levels[0];
    const CrossDebug& c = dbg.cross;
    EXPECT_EQ(l0.range.lo, 0);
    EXPECT_EQ(l0.range.hi, 16);
    EXPECT_EQ(l0.rgb_left.pixels.size(), 64u * 40u);
    Image<uint32_t> arms;
    cross_arms(l0.rgb_left, p.cross_tau, p.cross_arm_length, arms);
    EXPECT_EQ(c.arms_left.pixels, arms.pixels);
    // The right view's crosses on the sampled rows only (the others 0).
    Image<uint32_t> right_all;
    cross_arms(l0.rgb_right, p.cross_tau, p.cross_arm_length, right_all);
    for (int y = 0; y < 40; ++y)
      for (int x = 0; x < 64; ++x)
        ASSERT_EQ(c.arms_right.at(x, y), y % S == 0 ? right_all.at(x, y) : 0u) << x << ", " << y << " S " << S;
    const int ws = (64 + S - 1) / S, hs = (40 + S - 1) / S;
    EXPECT_EQ(c.winners.raw.width, ws);
    EXPECT_EQ(c.winners.raw.height, hs);
    EXPECT_EQ(c.winners.right.width, 64);
    EXPECT_EQ(c.winners.right.height, hs);
    // C1b's words of both views' sampled rows.
    Image<uint32_t> words_left, words_right;
    cross_census(l0.rgb_left, S, words_left);
    cross_census(l0.rgb_right, S, words_right);
    EXPECT_EQ(c.words_left.pixels, words_left.pixels);
    EXPECT_EQ(c.words_right.pixels, words_right.pixels);
    CrossWinners winners;
    cross_match(words_left, words_right, c.arms_left, c.arms_right, nullptr, nullptr, Range{0, 16},
                p.cross_truncation, p.cross_census_weight, S, resolve_uniqueness_ratio(p), winners);
    EXPECT_EQ(c.winners.raw.pixels, winners.raw.pixels);
    EXPECT_EQ(c.winners.disparity.pixels, winners.disparity.pixels);
    EXPECT_EQ(c.winners.right.pixels, winners.right.pixels);
    if (S == 2) {
      EXPECT_NE(winners.disparity.pixels, winners.raw.pixels);  // the ratio rejected some
    }
    Image<int16_t> reliable, voted, median;
    cross_reliable(c.winners, S, p.lr_check, resolve_lr_tolerance(p), reliable);
    EXPECT_EQ(c.reliable.pixels, reliable.pixels);
    cross_vote(c.arms_left, c.reliable, S, l0.range, nullptr, voted);
    EXPECT_EQ(c.voted.pixels, voted.pixels);
    cross_median(c.voted, nullptr, median);
    EXPECT_EQ(c.disparity.pixels, median.pixels);
    EXPECT_EQ(l0.disparity_left.pixels, median.pixels);
    EXPECT_EQ(l0.disparity_left.width, 64);
    EXPECT_EQ(l0.raw_left.pixels.empty(), S > 1);
    if (S == 1) {
      EXPECT_EQ(l0.raw_left.pixels, c.winners.raw.pixels);
      EXPECT_EQ(l0.raw_right.pixels, c.winners.right.pixels);
    }
    EXPECT_TRUE(dbg.costs.best.pixels.empty());
    Image<uint8_t> conf;
    cross_confidence(c.winners, median, S, conf);
    EXPECT_EQ(confidence.pixels, conf.pixels);
    EXPECT_EQ(dbg.confidence.pixels, conf.pixels);
    for (int y = 0; y < 40; ++y)
      for (int x = 0; x < 64; ++x) {
        const int d = median.at(x, y);
        ASSERT_EQ(r.q4.at(x, y), d > 0 ? d * 16 : 0);
      }
    long valid = 0;
    for (int16_t d : median.pixels) valid += d >= 0;
    EXPECT_DOUBLE_EQ(m.stats().valid_fraction, valid / (64.0 * 40.0));
    EXPECT_EQ(m.stats().levels, 1);
  }
}

// The accuracy of the whole method on step scenes (near half at 24, far
// half at 6, the occluded band unknown), bad-2 over the known pixels 4 px
// from the edges.
TEST(CrossMethod, StepSceneBad2) {
  double measured[4] = {};
  const SyntheticPair patches = make_patch_step_pair(240, 160, 6, 24, 17);
  for (int S : {1, 2, 3}) {
    Matcher m(cross_params(48, S));
    const Result r = run(m, patches);
    ASSERT_EQ(r.error, "");
    measured[S] = bad2(r.q4, patches.disparity, 4);
  }
  const SyntheticPair fine = make_step_pair(240, 160, 6, 24, 17);
  Matcher m(cross_params(48, 1));
  const Result r = run(m, fine);
  ASSERT_EQ(r.error, "");
  measured[0] = bad2(r.q4, fine.disparity, 4);
  std::printf("bad-2: patches S=1 %.4f S=2 %.4f S=3 %.4f; fine texture S=1 %.4f\n", measured[1], measured[2],
              measured[3], measured[0]);
  // Measured: 0.0036, 0.0094, 0.0050; 0.0001.
  EXPECT_LE(measured[1], 0.01);
  EXPECT_LE(measured[2], 0.02);
  EXPECT_LE(measured[3], 0.015);
  EXPECT_LE(measured[0], 0.003);
}

TEST(CrossMethod, GreyAndColourInputsOfTheSameValuesAgree) {
  const SyntheticPair s = make_step_pair(96, 48, 3, 14, 23);
  // Grey views: the luma of the synthetic pair, and RGBA views holding it in all three channels.
  Image<uint8_t> gl(96, 48), gr(96, 48);
  Image<uint32_t> cl(96, 48), cr(96, 48);
  for (size_t i = 0; i < gl.pixels.size(); ++i) {
    const uint32_t a = s.left_rgba.pixels[i], b = s.right_rgba.pixels[i];
    gl.pixels[i] = luma_from_rgb(a & 255, (a >> 8) & 255, (a >> 16) & 255);
    gr.pixels[i] = luma_from_rgb(b & 255, (b >> 8) & 255, (b >> 16) & 255);
    cl.pixels[i] = grey(gl.pixels[i]) | 0xffu << 24;
    cr.pixels[i] = grey(gr.pixels[i]) | 0xffu << 24;
  }
  for (int S : {1, 2}) {
    Image<uint16_t> from_grey(96, 48), from_colour(96, 48);
    Outputs o;
    Matcher mg(cross_params(24, S)), mc(cross_params(24, S));
    o.disparity_q4 = from_grey.view();
    ASSERT_EQ(mg.process(gray_view(gl), gray_view(gr), o), "");
    o.disparity_q4 = from_colour.view();
    ASSERT_EQ(mc.process(rgba_view(cl), rgba_view(cr), o), "");
    EXPECT_EQ(from_grey.pixels, from_colour.pixels);
    // Grey alone still finds most of the scene.
    // Measured: 0.0071 at S = 1, 0.080 at S = 2.
    EXPECT_LE(bad2(from_grey, s.disparity, 4), S == 1 ? 0.02 : 0.15) << "S " << S;
  }
}

TEST(CrossMethod, DegenerateInputs) {
  // A flat frame: a valid (possibly empty) map, no crash.
  {
    SyntheticPair s;
    s.left_rgba = Image<uint32_t>(40, 24, rgb(80, 80, 80) | 0xffu << 24);
    s.right_rgba = s.left_rgba;
    for (int S : {1, 2, 3}) {
      Matcher m(cross_params(16, S));
      const Result r = run(m, s);
      ASSERT_EQ(r.error, "");
      EXPECT_EQ(m.debug().levels[0].disparity_left.width, 40);
      EXPECT_EQ(m.debug().levels[0].disparity_left.height, 24);
      for (int16_t d : m.debug().levels[0].disparity_left.pixels) EXPECT_TRUE(d >= -1 && d < 16);
    }
  }
  // max_disparity equal to the width, minimum-size views, odd sizes.
  for (int S : {1, 2, 3})
    for (int size : {16, 17}) {
      SyntheticPair s;
      s.left_rgba = s.right_rgba = Image<uint32_t>(size, 16);
      for (int y = 0; y < 16; ++y)
        for (int x = 0; x < size; ++x) {
          s.left_rgba.at(x, y) = patch_colour(31, x, y);
          s.right_rgba.at(x, y) = patch_colour(31, x + 3, y);
        }
      Matcher m(cross_params(size, S));
      const Result r = run(m, s);
      ASSERT_EQ(r.error, "") << size << " S " << S;
      EXPECT_EQ(m.debug().levels[0].range.hi, size);
      for (int16_t d : m.debug().levels[0].disparity_left.pixels) EXPECT_TRUE(d >= -1 && d < size);
      long good = 0;
      for (int y = 0; y < 16; ++y)
        for (int x = 4; x < size; ++x) good += r.q4.at(x, y) == 3 * 16;
      // Measured: all at S = 1 and 3, 70 % at S = 2.
      EXPECT_GE(good, 16 * (size - 4) / 2) << size << " S " << S;
    }
  // A range starting beyond most of the samples.
  {
    const SyntheticPair s = make_plane_pair(32, 16, 20, 3);
    Params p = cross_params(32, 3);
    p.min_disparity = 30;
    Matcher m(p);
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
  }
}

TEST(CrossMethod, BackgroundPixelsAreInvalid) {
  const int w = 120, h = 72, dbg = 4, dobj = 14;
  for (int S : {1, 2}) {
    Params p = cross_params(24, S);
    p.background = true;
    p.warmup_frames = 3;
    p.confidence = true;
    Matcher m(p);
    for (int i = 0; i <= p.warmup_frames; ++i) ASSERT_EQ(run(m, make_sequence_frame(w, h, 0, dbg, dobj, 30, 0, 0, 0, 3)).error, "");
    const SyntheticPair s = make_sequence_frame(w, h, 2, dbg, dobj, 30, 24, 4, 0, 3);
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    const Matcher::Debug& d = m.debug();
    long inside = 0, inside_good = 0, fg = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (r.fg.at(x, y) == 0) {
          ASSERT_EQ(d.levels[0].disparity_left.at(x, y), -1) << x << "," << y;
          ASSERT_EQ(r.q4.at(x, y), 0);
          ASSERT_EQ(d.confidence.at(x, y), 0);
          ASSERT_EQ(d.cross.voted.at(x, y), -1);
        } else {
          ++fg;
          if (s.moving.at(x, y)) {
            ++inside;
            inside_good += std::abs(r.q4.at(x, y) - dobj * 16) <= 32;
          }
        }
      }
    ASSERT_GT(inside, 0);
    EXPECT_LT(fg, w * h / 2);  // the model did find a background
    // The sequence's texture changes at every pixel: S = 2 restores little
    // of it (see patch_colour), so the object's accuracy is S = 1's.
    if (S == 1) {
      EXPECT_GE(static_cast<double>(inside_good) / inside, 0.95);  // measured 0.994
    }
    EXPECT_LT(m.stats().matched_pixels, m.stats().matched_pixels_full);
  }
}

TEST(CrossMethod, ParamsAreValidatedInTheElementsTerms) {
  auto msg = [](void (*edit)(Params&)) {
    Params p = cross_params(64);
    edit(p);
    return p.validate();
  };
  EXPECT_EQ(msg([](Params&) {}), "");
  EXPECT_EQ(msg([](Params& p) { p.method = static_cast<Method>(7); }),
            "method (7) must be 0 (progressive), 1 (block), 2 (cross) or 3 (elas)");
  EXPECT_EQ(msg([](Params& p) { p.cross_tau = -1; }), "cross-tau (-1) must be between 0 and 255");
  EXPECT_EQ(msg([](Params& p) { p.cross_tau = 256; }), "cross-tau (256) must be between 0 and 255");
  EXPECT_EQ(msg([](Params& p) { p.cross_arm_length = 0; }), "cross-arm-length (0) must be between 1 and 16");
  EXPECT_EQ(msg([](Params& p) { p.cross_arm_length = 17; }), "cross-arm-length (17) must be between 1 and 16");
  EXPECT_EQ(msg([](Params& p) { p.cross_truncation = 0; }), "cross-truncation (0) must be between 1 and 765");
  EXPECT_EQ(msg([](Params& p) { p.cross_truncation = 766; }), "cross-truncation (766) must be between 1 and 765");
  EXPECT_EQ(msg([](Params& p) { p.cross_census_weight = -1; }), "cross-census-weight (-1) must be between 0 and 24");
  EXPECT_EQ(msg([](Params& p) { p.cross_census_weight = 25; }), "cross-census-weight (25) must be between 0 and 24");
  EXPECT_EQ(msg([](Params& p) { p.cross_vote_arm_length = 0; }), "cross-vote-arm-length (0) must be between 1 and 16");
  EXPECT_EQ(msg([](Params& p) { p.cross_vote_arm_length = 17; }),
            "cross-vote-arm-length (17) must be between 1 and 16");
  EXPECT_EQ(msg([](Params& p) { p.sample_restore = 0; }), "sample-restore (0) must be 1 (off), 2 or 3");
  EXPECT_EQ(msg([](Params& p) { p.sample_restore = 4; }), "sample-restore (4) must be 1 (off), 2 or 3");
  EXPECT_EQ(msg([](Params& p) {
              p.cross_tau = 255;
              p.cross_arm_length = 16;
              p.cross_truncation = 765;
              p.cross_census_weight = 24;
              p.cross_vote_arm_length = 1;
              p.sample_restore = 3;
            }),
            "");
  // Defaults: the paper's and the census term; no uniqueness unless asked;
  // one level.
  const Params p = cross_params(64);
  EXPECT_EQ(p.cross_tau, 20);
  EXPECT_EQ(p.cross_arm_length, 16);
  EXPECT_EQ(p.cross_truncation, 60);
  EXPECT_EQ(p.cross_census_weight, 15);  // ours (the paper's cost alone: 0)
  EXPECT_EQ(p.cross_vote_arm_length, 16);  // the paper's: the aggregation's regions
  EXPECT_EQ(p.lr_tolerance, -1);
  EXPECT_EQ(resolve_lr_tolerance(p), 0);  // the paper's check: equal disparities
  Params progressive;
  EXPECT_EQ(resolve_lr_tolerance(progressive), 2);
  progressive.lr_tolerance = 5;
  EXPECT_EQ(resolve_lr_tolerance(progressive), 5);
  EXPECT_EQ(p.sample_restore, 1);
  EXPECT_EQ(resolve_uniqueness_ratio(p), 0);
  EXPECT_EQ(pipeline_levels(p, 1280, 960), 1);
  // The matcher refuses what validate() refuses.
  Params bad = p;
  bad.sample_restore = 5;
  Matcher m(bad);
  EXPECT_EQ(run(m, make_plane_pair(32, 32, 2, 1)).error, "sample-restore (5) must be 1 (off), 2 or 3");
}
