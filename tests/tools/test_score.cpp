// Scoring on tiny hand-made maps whose answers are worked out by hand.
#include <gtest/gtest.h>

#include "score.h"

namespace {

using cs::Image;
using cs::tools::score_disparity;
using cs::tools::ScoreOptions;
using cs::tools::ScoreResult;

Image<uint16_t> make(int w, int h, std::initializer_list<int> values) {
  Image<uint16_t> im(w, h);
  size_t i = 0;
  for (int v : values) im.pixels.at(i++) = static_cast<uint16_t>(v);
  return im;
}

// Ground truth (whole pixels) and a Q4 estimate, pixel by pixel:
//   0: gt 10, est 10.0  -> error 0
//   1: gt 10, est 11.5  -> 1.5  (bad-1 only)
//   2: gt 10, est none  -> bad at every threshold
//   3: gt 10, est 13.0  -> 3.0  (bad-1, bad-2)
//   4: gt 20, est 25.0  -> 5.0  (bad everywhere)
//   5: gt 20, est 20.5  -> 0.5
//   6: gt unknown, est 6.25 -> not evaluated, counts for image density
//   7: gt 20, est 21.0  -> 1.0  (exactly at the bad-1 threshold: not bad)
const Image<uint16_t> kTruth = make(4, 2, {10, 10, 10, 10, 20, 20, 0, 20});
const Image<uint16_t> kEstimate = make(4, 2, {160, 184, 0, 208, 400, 328, 100, 336});

TEST(Score, CountsEveryCaseByHand) {
  ScoreResult r;
  ASSERT_EQ(score_disparity(kEstimate, kTruth, nullptr, ScoreOptions(), r), "");
  EXPECT_EQ(r.pixels, 8u);
  EXPECT_EQ(r.evaluated, 7u);
  EXPECT_EQ(r.valid_estimates, 6u);
  EXPECT_EQ(r.valid_anywhere, 7u);
  ASSERT_EQ(r.bad.size(), 3u);
  EXPECT_EQ(r.bad[0], 4u);
  EXPECT_EQ(r.bad[1], 3u);
  EXPECT_EQ(r.bad[2], 2u);
  EXPECT_DOUBLE_EQ(r.bad_percent[0], 400.0 / 7);
  EXPECT_DOUBLE_EQ(r.bad_percent[1], 300.0 / 7);
  EXPECT_DOUBLE_EQ(r.bad_percent[2], 200.0 / 7);
  EXPECT_DOUBLE_EQ(r.average_abs_error, 11.0 / 6);
  EXPECT_DOUBLE_EQ(r.density, 6.0 / 7);
  EXPECT_DOUBLE_EQ(r.image_density, 7.0 / 8);
}

TEST(Score, MaskLimitsTheEvaluatedPixels) {
  // Pixels 2 and 4 masked out (and 6, whose truth is unknown anyway).
  const Image<uint16_t> mask = make(4, 2, {255, 255, 0, 255, 0, 1, 0, 255});
  ScoreResult r;
  ASSERT_EQ(score_disparity(kEstimate, kTruth, &mask, ScoreOptions(), r), "");
  EXPECT_EQ(r.evaluated, 5u);
  EXPECT_EQ(r.valid_estimates, 5u);
  EXPECT_EQ(r.bad[0], 2u);  // pixels 1 and 3
  EXPECT_EQ(r.bad[1], 1u);  // pixel 3
  EXPECT_EQ(r.bad[2], 0u);
  EXPECT_DOUBLE_EQ(r.average_abs_error, (0 + 1.5 + 3 + 0.5 + 1) / 5);
  EXPECT_DOUBLE_EQ(r.density, 1.0);
}

TEST(Score, ScalesAndInvalidValueAreHonoured) {
  // 8-bit estimate (scale 1) against a ground truth stored as d * 2 with 255
  // meaning unknown: truth 5, 7.5, unknown, 3.
  const Image<uint16_t> truth = make(4, 1, {10, 15, 255, 6});
  const Image<uint16_t> estimate = make(4, 1, {5, 10, 9, 0});
  ScoreOptions o;
  o.disparity_scale = 1;
  o.gt_scale = 2;
  o.gt_invalid = 255;
  o.thresholds = {0.5, 2.0, 3.0};
  ScoreResult r;
  ASSERT_EQ(score_disparity(estimate, truth, nullptr, o, r), "");
  EXPECT_EQ(r.evaluated, 3u);
  EXPECT_EQ(r.valid_estimates, 2u);
  EXPECT_EQ(r.bad[0], 2u);  // error 2.5 and the missing one
  EXPECT_EQ(r.bad[1], 2u);
  EXPECT_EQ(r.bad[2], 1u);  // only the missing one
  EXPECT_DOUBLE_EQ(r.average_abs_error, 1.25);
}

TEST(Score, NothingEvaluatedGivesZerosNotNaN) {
  const Image<uint16_t> truth(3, 2, 0);
  const Image<uint16_t> estimate(3, 2, 16);
  ScoreResult r;
  ASSERT_EQ(score_disparity(estimate, truth, nullptr, ScoreOptions(), r), "");
  EXPECT_EQ(r.evaluated, 0u);
  EXPECT_EQ(r.bad_percent[1], 0.0);
  EXPECT_EQ(r.density, 0.0);
  EXPECT_EQ(r.average_abs_error, 0.0);
  EXPECT_DOUBLE_EQ(r.image_density, 1.0);
}

TEST(Score, RejectsMismatchedSizesAndBadScales) {
  ScoreResult r;
  const Image<uint16_t> other(3, 2, 1);
  std::string e = score_disparity(other, kTruth, nullptr, ScoreOptions(), r);
  EXPECT_NE(e.find("3 x 2"), std::string::npos) << e;
  EXPECT_NE(e.find("4 x 2"), std::string::npos) << e;
  e = score_disparity(kEstimate, kTruth, &other, ScoreOptions(), r);
  EXPECT_NE(e.find("mask"), std::string::npos) << e;
  ScoreOptions o;
  o.disparity_scale = 0;
  EXPECT_NE(score_disparity(kEstimate, kTruth, nullptr, o, r), "");
  o = ScoreOptions();
  o.gt_scale = -1;
  EXPECT_NE(score_disparity(kEstimate, kTruth, nullptr, o, r), "");
}

TEST(Score, SubsampleTakesEveryNthPixelFromTheOrigin) {
  // 5 x 3 -> 2 x 1 (integer halving drops the odd column and row).
  Image<uint16_t> im(5, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) im.at(x, y) = static_cast<uint16_t>(10 * y + x);
  const Image<uint16_t> half = cs::tools::subsample(im, 2);
  ASSERT_EQ(half.width, 2);
  ASSERT_EQ(half.height, 1);
  EXPECT_EQ(half.at(0, 0), 0);
  EXPECT_EQ(half.at(1, 0), 2);
  const Image<uint16_t> third = cs::tools::subsample(im, 3);
  ASSERT_EQ(third.width, 1);
  ASSERT_EQ(third.height, 1);
  const Image<uint16_t> same = cs::tools::subsample(im, 1);
  EXPECT_EQ(same.pixels, im.pixels);
}

}  // namespace
