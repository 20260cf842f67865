// Method block (stages.h B1 .. B4): SSD costs and winners against hand
// values and brute force, then the whole method on synthetic scenes with
// exact ground truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>
#include <string>

#include "matcher_debug.h"
#include "stages.h"
#include "pipeline_run.h"
#include "synthetic.h"

using namespace cs;

namespace {

Image<uint8_t> image_of(int w, int h, std::initializer_list<int> values) {
  Image<uint8_t> im(w, h);
  auto it = values.begin();
  for (auto& v : im.pixels) v = static_cast<uint8_t>(*it++);
  return im;
}

Params block_params(int max_disparity) {
  Params p;
  p.method = Method::Block;
  p.max_disparity = max_disparity;
  return p;
}

using test::Result;
using test::run;

// Over ground-truth pixels at least `margin` from the image edges: the share
// with an estimate within 2 px (invalid = bad) and the share with any estimate.
struct Score {
  double good2 = 0, density = 0;
};
Score score(const Image<uint16_t>& q4, const Image<float>& gt, int margin) {
  long n = 0, good = 0, valid = 0;
  for (int y = margin; y < gt.height - margin; ++y)
    for (int x = margin; x < gt.width - margin; ++x) {
      if (gt.at(x, y) < 0) continue;
      ++n;
      const int q = q4.at(x, y);
      valid += q != 0;
      good += q != 0 && std::fabs(q / 16.0 - gt.at(x, y)) <= 2.0;
    }
  return {n ? static_cast<double>(good) / n : 0.0, n ? static_cast<double>(valid) / n : 0.0};
}

}  // namespace

// ---------------------------------------------------------------- B1, by hand

TEST(BlockCost, SsdByHandWithClampedColumnsAndEmptyRows) {
  // 4 x 2 views; 3 x 3 blocks.
  const Image<uint8_t> L = image_of(4, 2, {10, 20, 30, 40,  //
                                           50, 60, 70, 80});
  const Image<uint8_t> R = image_of(4, 2, {11, 22, 33, 44,  //
                                           55, 66, 77, 88});
  // Left reference, (1, 0), d = 1: rows -1 (outside, 0), 0 and 1; columns
  // u = 0, 1, 2 against R columns clamp(u - 1) = 0, 0, 1.
  //   row 0: (10-11)^2 + (20-11)^2 + (30-22)^2 = 1 + 81 + 64 = 146
  //   row 1: (50-55)^2 + (60-55)^2 + (70-66)^2 = 25 + 25 + 16 = 66
  EXPECT_EQ(block_ssd(L, R, Reference::Left, 1, 0, 1, 3), 212);
  // Left reference, (0, 1), d = 0: columns -1, 0, 1 -> clamp 0, 0, 1 in both.
  //   row 0: 1 + 1 + 4 = 6; row 1: 25 + 25 + 36 = 86; row 2 outside.
  EXPECT_EQ(block_ssd(L, R, Reference::Left, 0, 1, 0, 3), 92);
  // Right reference, (3, 0), d = 2: R columns 2, 3, 4 -> 2, 3, 3 against L
  // columns clamp(u + 2) = 3, 3, 3.
  //   row 0: (33-40)^2 + (44-40)^2 + (44-40)^2 = 49 + 16 + 16 = 81
  //   row 1: (77-80)^2 + (88-80)^2 + (88-80)^2 = 9 + 64 + 64 = 137
  EXPECT_EQ(block_ssd(R, L, Reference::Right, 3, 0, 2, 3), 218);
  // The right view's cost is the left view's at the matched pixel.
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      for (int d = 0; d <= x; ++d)
        EXPECT_EQ(block_ssd(R, L, Reference::Right, x - d, y, d, 3), block_ssd(L, R, Reference::Left, x, y, d, 3));
}

TEST(BlockCost, SweepWinnerByHand) {
  // d:     0  1  2  3  4  5  6  7
  // cost:  9  4  6  2  3  8  1  5   (d = 6 not admissible)
  const int cost[8] = {9, 4, 6, 2, 3, 8, 1, 5};
  SweepWinner s;
  for (int d = 0; d < 8; ++d) s.visit(d, cost[d], d != 6);
  EXPECT_EQ(s.disparity, 3);
  EXPECT_EQ(s.best, 2);
  EXPECT_EQ(s.below, 6);
  EXPECT_EQ(s.above, 3);
  EXPECT_EQ(s.rival, 4);  // d = 1; d = 2, 4 are neighbours, d = 6 not admissible
  // Ties go to the smaller d, and a tie more than one away is the rival.
  SweepWinner t;
  const int tie[5] = {7, 3, 5, 3, 4};
  for (int d = 0; d < 5; ++d) t.visit(d + 10, tie[d], true);
  EXPECT_EQ(t.disparity, 11);
  EXPECT_EQ(t.rival, 3);
  EXPECT_EQ(t.below, 7);
  EXPECT_EQ(t.above, 5);
  // A single candidate: no rival, no neighbours.
  SweepWinner one;
  one.visit(4, 10, true);
  EXPECT_EQ(one.disparity, 4);
  EXPECT_EQ(one.rival, kNoCost);
  EXPECT_EQ(one.below, kNoCost);
  EXPECT_EQ(one.above, kNoCost);
  // Nothing admissible: no winner.
  SweepWinner none;
  for (int d = 0; d < 4; ++d) none.visit(d, d, false);
  EXPECT_EQ(none.disparity, -1);
}

TEST(BlockCost, UniquenessAndConfidenceRules) {
  EXPECT_TRUE(passes_uniqueness(100, 100, 0));    // off
  EXPECT_TRUE(passes_uniqueness(100, kNoCost, 50));  // no rival
  EXPECT_TRUE(passes_uniqueness(100, 111, 10));   // 11100 > 11000
  EXPECT_FALSE(passes_uniqueness(100, 110, 10));  // equality rejects
  EXPECT_FALSE(passes_uniqueness(0, 0, 1));
  EXPECT_TRUE(passes_uniqueness(0, 1, 1000));
  // 64-bit products: a 31 x 31 SSD near its maximum.
  const int32_t big = 961 * 255 * 255 - 1;  // even
  EXPECT_TRUE(passes_uniqueness(big / 2 - 1, big, 100));
  EXPECT_FALSE(passes_uniqueness(big / 2, big, 100));
  EXPECT_EQ(confidence_from_costs(0, 10), 255);
  EXPECT_EQ(confidence_from_costs(10, 10), 0);
  EXPECT_EQ(confidence_from_costs(1, 3), 170);   // 255 * 2 / 3
  EXPECT_EQ(confidence_from_costs(2, 3), 85);
  EXPECT_EQ(confidence_from_costs(0, 0), 0);
  EXPECT_EQ(confidence_from_costs(5, kNoCost), 0);
  EXPECT_EQ(confidence_from_costs(big / 2, big), 127);  // floor(255 / 2), no overflow
  EXPECT_EQ(confidence_from_costs(0, big), 255);
}

// ---------------------------------------------------------------- B2, brute force

namespace {

bool admissible(const Image<uint8_t>* ml, const Image<uint8_t>* mr, int xl, int xr, int y) {
  return !ml || (ml->at(xl, y) != 0 && mr->at(xr, y) != 0);
}

}  // namespace

TEST(BlockMatch, WinnersEqualBruteForceWithMasksTiesAndBorders) {
  const int w = 29, h = 13;
  std::mt19937 rng(5);
  // Few grey levels: ties happen, and the smaller-d rule is checked.
  Image<uint8_t> L(w, h), R(w, h), ml(w, h), mr(w, h);
  for (auto& v : L.pixels) v = static_cast<uint8_t>((rng() % 4) * 60);
  for (auto& v : R.pixels) v = static_cast<uint8_t>((rng() % 4) * 60);
  for (auto& v : ml.pixels) v = (rng() % 4) ? 255 : 0;
  for (auto& v : mr.pixels) v = (rng() % 4) ? 255 : 0;
  for (bool masks : {false, true})
    for (int bs : {3, 5})
      for (Range range : {Range{0, 9}, Range{3, 12}}) {
        const Image<uint8_t>* pl = masks ? &ml : nullptr;
        const Image<uint8_t>* pr = masks ? &mr : nullptr;
        BlockWinners got;
        Image<int16_t> right;
        block_match(L, R, pl, pr, range, bs, got, right);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            // Left view.
            int win = -1, best = INT_MAX;
            for (int d = range.lo; d < range.hi && x - d >= 0; ++d) {
              if (!admissible(pl, pr, x, x - d, y)) continue;
              const int c = block_ssd(L, R, Reference::Left, x, y, d, bs);
              if (c < best) best = c, win = d;
            }
            const std::string at = "x " + std::to_string(x) + " y " + std::to_string(y) + " bs " +
                                   std::to_string(bs) + " masks " + std::to_string(masks) + " lo " +
                                   std::to_string(range.lo);
            ASSERT_EQ(got.disparity.at(x, y), win) << at;
            if (win < 0) {
              ASSERT_EQ(got.best.at(x, y), kNoCost) << at;
              ASSERT_EQ(got.rival.at(x, y), kNoCost) << at;
            } else {
              int rival = kNoCost;
              for (int d = range.lo; d < range.hi && x - d >= 0; ++d)
                if (std::abs(d - win) >= 2 && admissible(pl, pr, x, x - d, y))
                  rival = std::min(rival, block_ssd(L, R, Reference::Left, x, y, d, bs));
              ASSERT_EQ(got.best.at(x, y), best) << at;
              ASSERT_EQ(got.rival.at(x, y), rival) << at;
              const bool has_below = win - 1 >= range.lo;
              const bool has_above = win + 1 < range.hi && x - (win + 1) >= 0;
              ASSERT_EQ(got.below.at(x, y), has_below ? block_ssd(L, R, Reference::Left, x, y, win - 1, bs) : kNoCost)
                  << at;
              ASSERT_EQ(got.above.at(x, y), has_above ? block_ssd(L, R, Reference::Left, x, y, win + 1, bs) : kNoCost)
                  << at;
            }
            // Right view, from its own costs.
            int rwin = -1, rbest = INT_MAX;
            for (int d = range.lo; d < range.hi && x + d < w; ++d) {
              if (!admissible(pl, pr, x + d, x, y)) continue;
              const int c = block_ssd(R, L, Reference::Right, x, y, d, bs);
              if (c < rbest) rbest = c, rwin = d;
            }
            ASSERT_EQ(right.at(x, y), rwin) << "right " << at;
          }
        if (!masks) continue;
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            if (ml.at(x, y) == 0) {
              EXPECT_EQ(got.disparity.at(x, y), -1);
            }
            if (mr.at(x, y) == 0) {
              EXPECT_EQ(right.at(x, y), -1);
            }
          }
      }
}

TEST(BlockMatch, WinnerTakesAllOnAHandMadePair) {
  // One row pattern, the right view the left shifted by 2; uniform rows
  // around it. 3 x 3 blocks, range 0 .. 4.
  const Image<uint8_t> L = image_of(8, 1, {0, 0, 0, 0, 200, 0, 0, 0});
  const Image<uint8_t> R = image_of(8, 1, {0, 0, 200, 0, 0, 0, 0, 0});
  BlockWinners got;
  Image<int16_t> right;
  block_match(L, R, nullptr, nullptr, Range{0, 4}, 3, got, right);
  // Left x = 4 sees the bright pixel at d = 2 with cost 0.
  EXPECT_EQ(got.disparity.at(4, 0), 2);
  EXPECT_EQ(got.best.at(4, 0), 0);
  // d = 0: columns 3..5 of L (0, 200, 0) against R (0, 0, 0): 40000; d = 1:
  // R columns 2..4 (200, 0, 0) against (0, 200, 0): 80000; d = 3: R 0..2
  // (0, 0, 200): 80000.
  EXPECT_EQ(got.rival.at(4, 0), 40000);
  EXPECT_EQ(got.below.at(4, 0), 80000);
  EXPECT_EQ(got.above.at(4, 0), 80000);
  // Far from the pattern every d costs 0: the tie goes to the smallest d.
  EXPECT_EQ(got.disparity.at(7, 0), 0);
  EXPECT_EQ(got.disparity.at(0, 0), 0);  // only d = 0 is admissible at x = 0
  EXPECT_EQ(right.at(2, 0), 2);
  // Uniqueness: x = 4 has a rival 40000 > 0; the flat x = 7 has a rival of 0.
  Image<int16_t> d = got.disparity;
  apply_uniqueness(got, 10, d);
  EXPECT_EQ(d.at(4, 0), 2);
  EXPECT_EQ(d.at(7, 0), -1);
  EXPECT_EQ(d.at(0, 0), 0);  // no rival: kept
  Image<uint8_t> confidence;
  block_confidence(got, d, confidence);
  EXPECT_EQ(confidence.at(4, 0), 255);
  EXPECT_EQ(confidence.at(7, 0), 0);
  EXPECT_EQ(confidence.at(0, 0), 0);
}

// ---------------------------------------------------------------- B4

TEST(BlockFinish, ParabolaOnSsdCostsAndItsConditions) {
  const int w = 12, h = 1;
  BlockWinners b;
  b.disparity = Image<int16_t>(w, h, 5);
  b.best = Image<int32_t>(w, h, 100);
  b.below = Image<int32_t>(w, h, 500);
  b.above = Image<int32_t>(w, h, 300);
  // Vertex offset (500 - 300) / (2 (500 + 300 - 200)) = 1/6 px = 2.67/16 -> 3.
  Image<int16_t> d = b.disparity;
  d.at(0, 0) = -1;
  d.at(9, 0) = 9;   // d + 1 = 10 >= range.hi: whole pixel
  d.at(5, 0) = 5;   // x - (d + 1) < 0: whole pixel
  d.at(3, 0) = 0;   // a valid 0 stays 0
  std::vector<uint16_t> buf(w + 3, 0xeeee);
  finish_block_disparity(b, d, Range{0, 10}, true, ImageView<uint16_t>{buf.data(), w, h, (w + 3) * 2});
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[3], 0);
  EXPECT_EQ(buf[5], 80);
  EXPECT_EQ(buf[9], 144);
  EXPECT_EQ(buf[7], 5 * 16 + 3);
  EXPECT_EQ(buf[7], 80 + subpixel_offset_q4(500, 100, 300));
  EXPECT_EQ(buf[w], 0xeeee);
  finish_block_disparity(b, d, Range{0, 10}, false, ImageView<uint16_t>{buf.data(), w, h, (w + 3) * 2});
  EXPECT_EQ(buf[7], 80);
  // Range starting at d: no d - 1 neighbour.
  finish_block_disparity(b, d, Range{5, 10}, true, ImageView<uint16_t>{buf.data(), w, h, (w + 3) * 2});
  EXPECT_EQ(buf[7], 80);
  // The SSD bound keeps the parabola's 32-bit arithmetic exact: the largest
  // 31 x 31 costs give the rounded vertex of the real-valued formula.
  const int32_t big = 961 * 255 * 255;
  const int q = subpixel_offset_q4(big, 0, big / 4);
  const double exact = 16.0 * (big - big / 4) / (2.0 * (big + big / 4));
  EXPECT_EQ(q, static_cast<int>(std::lround(exact)));
}

// ---------------------------------------------------------------- whole method

TEST(BlockMethod, FrontoParallelPlanes) {
  for (int disparity : {3, 17, 40}) {
    const SyntheticPair s = make_plane_pair(160, 96, disparity, 21);
    Matcher m(block_params(64));
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    const Score sc = score(r.q4, s.disparity, 4);
    EXPECT_GE(sc.good2, 0.99) << "d " << disparity;
    EXPECT_GE(sc.density, 0.99) << "d " << disparity;
    // Sub-pixel: the parabola through asymmetric neighbours moves the vertex
    // off the integer, by less than a quarter pixel.
    int near = 0, n = 0;
    for (int y = 8; y < 88; ++y)
      for (int x = disparity + 8; x < 152; ++x, ++n) near += std::abs(r.q4.at(x, y) - disparity * 16) <= 4;
    EXPECT_GE(static_cast<double>(near) / n, 0.99) << "d " << disparity;
    // Whole pixels: the exact value (a zero cost has no rival in texture).
    Params whole = block_params(64);
    whole.subpixel = false;
    Matcher mw(whole);
    const Result rw = run(mw, s);
    ASSERT_EQ(rw.error, "");
    int exact = 0;
    for (int y = 8; y < 88; ++y)
      for (int x = disparity + 8; x < 152; ++x) exact += rw.q4.at(x, y) == disparity * 16;
    EXPECT_GE(static_cast<double>(exact) / n, 0.99) << "d " << disparity;
  }
}

TEST(BlockMethod, StepSceneAndItsOccludedBand) {
  const int w = 200, h = 80, d_far = 8, d_near = 30;
  const SyntheticPair s = make_step_pair(w, h, d_far, d_near, 9);
  Params p = block_params(48);
  p.match_block_size = 7;
  Matcher m(p);
  const Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  const Score sc = score(r.q4, s.disparity, 4);
  EXPECT_GE(sc.good2, 0.95);
  EXPECT_GE(sc.density, 0.95);
  // Away from the edge (a block's reach), the known pixels are right.
  long n = 0, good = 0;
  for (int y = 4; y < h - 4; ++y)
    for (int x = 4; x < w - 4; ++x) {
      if (s.disparity.at(x, y) < 0 || std::abs(x - w / 2) <= 4 || std::abs(x - (w / 2 + d_near - d_far)) <= 4)
        continue;
      ++n;
      good += r.q4.at(x, y) != 0 && std::abs(r.q4.at(x, y) / 16.0 - s.disparity.at(x, y)) <= 2.0;
    }
  EXPECT_GE(static_cast<double>(good) / n, 0.98);
}

// make_step_pair's near half is on the left, so its left view hides
// nothing; an object in front of a background hides, in the right view, the
// band of background just left of the object (width d_object - d_background).
TEST(BlockMethod, LeftRightCheckInvalidatesTheOccludedBand) {
  const int w = 200, h = 80, d_bg = 6, d_obj = 30;
  const SyntheticPair s = make_sequence_frame(w, h, 10, d_bg, d_obj, 60, 40, 4, 0, 5);
  Params p = block_params(48);
  p.match_block_size = 7;
  p.uniqueness_ratio = 0;  // the check alone
  // The band: background pixels in the object's rows whose match is hidden.
  // (The winners, not the Q4 output, where a valid d = 0 reads as invalid.)
  auto band_valid = [&](const Image<int16_t>& disparity, long* count) {
    long band = 0, valid = 0;
    for (int y = 0; y < h; ++y)
      for (int x = d_bg; x < w; ++x) {
        if (s.disparity.at(x, y) >= 0 || s.moving.at(x, y)) continue;
        // Leave out the block's reach into the visible surfaces around it.
        if (s.disparity.at(x - 3, y) >= 0 || s.disparity.at(std::min(x + 3, w - 1), y) >= 0) continue;
        if (y < 3 || y >= h - 3 || s.disparity.at(x, y - 3) >= 0 || s.disparity.at(x, y + 3) >= 0) continue;
        ++band;
        valid += disparity.at(x, y) >= 0;
      }
    *count = band;
    return static_cast<double>(valid) / band;
  };
  Matcher m(p);
  const Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  long band = 0;
  EXPECT_LE(band_valid(m.debug().levels[0].disparity_left, &band), 0.05);
  EXPECT_GE(band, 10 * (d_obj - d_bg));  // the band was found
  const Score sc = score(r.q4, s.disparity, 4);
  EXPECT_GE(sc.good2, 0.9);
  // Without the check every pixel of the band has an estimate.
  p.lr_check = false;
  Matcher unchecked(p);
  const Result u = run(unchecked, s);
  ASSERT_EQ(u.error, "");
  EXPECT_EQ(band_valid(unchecked.debug().levels[0].disparity_left, &band), 1.0);
}

TEST(BlockMethod, UniquenessRejectsARepeatedPattern) {
  // Left view: rows 0..31 a random texture, rows 32..63 stripes of period 8
  // (constant down each column). Right view: the left shifted by 12, so the
  // stripes fit equally at 12 - 8 = 4, 12 and 20.
  const int w = 128, h = 64, shift = 12;
  std::mt19937 rng(17);
  Image<uint8_t> texture(w + shift, h);
  for (auto& v : texture.pixels) v = static_cast<uint8_t>(20 + rng() % 200);
  auto left_value = [&](int u, int y) {
    if (y < h / 2) return texture.at(u, y);
    return static_cast<uint8_t>(((u % 8) < 4) ? 60 : 180);
  };
  Image<uint32_t> L(w, h), R(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint32_t a = left_value(x, y), b = left_value(x + shift, y);
      L.at(x, y) = a | a << 8 | a << 16 | 0xffu << 24;
      R.at(x, y) = b | b << 8 | b << 16 | 0xffu << 24;
    }
  SyntheticPair s;
  s.left_rgba = L;
  s.right_rgba = R;
  Params p = block_params(32);
  p.match_block_size = 5;
  p.lr_check = false;  // uniqueness alone
  p.subpixel = false;
  // Interior of each part (3 rows from the seam, 40 px from the sides).
  auto share_valid = [&](const Result& r, int y0, int y1) {
    long n = 0, valid = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = 40; x < w - 40; ++x, ++n) valid += r.q4.at(x, y) != 0;
    return static_cast<double>(valid) / n;
  };
  for (int ratio : {0, 1, 10}) {
    p.uniqueness_ratio = ratio;
    Matcher m(p);
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    if (ratio == 0) {
      EXPECT_EQ(share_valid(r, h / 2 + 3, h), 1.0);
      // Ties go to the smaller d: the stripes read 4, not 12.
      EXPECT_EQ(r.q4.at(64, 50), 4 * 16);
    } else {
      EXPECT_EQ(share_valid(r, h / 2 + 3, h), 0.0) << "ratio " << ratio;
    }
    EXPECT_EQ(share_valid(r, 3, h / 2 - 3), 1.0) << "ratio " << ratio;
    EXPECT_EQ(r.q4.at(64, 10), shift * 16);
    const Image<uint8_t>& confidence = m.debug().confidence;
    EXPECT_EQ(confidence.at(64, 50), 0);
    EXPECT_GE(confidence.at(64, 10), 128);
  }
}

TEST(BlockMethod, SubpixelReducesTheErrorOnASlantedPlane) {
  const SyntheticPair s = make_slanted_pair(192, 64, 6.0f, 0.1f, 13);
  double mean[2] = {0, 0};
  for (bool subpixel : {false, true}) {
    Params p = block_params(32);
    p.subpixel = subpixel;
    Matcher m(p);
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    double sum = 0;
    long n = 0;
    for (int y = 8; y < 56; ++y)
      for (int x = 16; x < 184; ++x) {
        if (s.disparity.at(x, y) < 0 || r.q4.at(x, y) == 0) continue;
        sum += std::fabs(r.q4.at(x, y) / 16.0 - s.disparity.at(x, y));
        ++n;
      }
    ASSERT_GT(n, 7000);
    mean[subpixel] = sum / n;
  }
  // Whole pixels are off by 0.25 on average; the parabola must do much better.
  EXPECT_GT(mean[0], 0.2);
  EXPECT_LT(mean[1], 0.6 * mean[0]) << "whole " << mean[0] << " sub-pixel " << mean[1];
}

TEST(BlockMethod, BackgroundModeMatchesOnlyTheForeground) {
  const int w = 160, h = 96, dbg = 6, dobj = 18, ow = 40, oh = 32, speed = 4;
  Params p = block_params(32);
  p.levels = 3;
  p.background = true;
  p.warmup_frames = 5;
  Matcher m(p);
  for (int i = 0; i <= p.warmup_frames; ++i) {
    const Result r = run(m, make_sequence_frame(w, h, 0, dbg, dobj, ow, 0, 0, 0, 3));
    ASSERT_EQ(r.error, "");
  }
  for (int i = 1; i <= 4; ++i) {
    const SyntheticPair s = make_sequence_frame(w, h, i, dbg, dobj, ow, oh, speed, 0, 3);
    const Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    long outside = 0, inside = 0, inside_good = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (r.fg.at(x, y) == 0) {
          outside += r.q4.at(x, y) != 0;
          EXPECT_EQ(m.debug().confidence.at(x, y), 0);
        } else if (s.moving.at(x, y) && x >= 0) {
          ++inside;
          inside_good += std::abs(r.q4.at(x, y) - dobj * 16) <= 32;
        }
      }
    EXPECT_EQ(outside, 0) << "frame " << i << ": disparities outside the mask";
    ASSERT_GT(inside, 0);
    EXPECT_GE(static_cast<double>(inside_good) / inside, 0.8) << "frame " << i;
  }
}

TEST(BlockMethod, ParamsAreValidatedInTheElementsTerms) {
  auto msg = [](void (*edit)(Params&)) {
    Params p;
    edit(p);
    return p.validate();
  };
  EXPECT_EQ(msg([](Params& p) { p.match_block_size = 8; }), "block-size (8) must be odd and between 3 and 31");
  EXPECT_EQ(msg([](Params& p) { p.match_block_size = 1; }), "block-size (1) must be odd and between 3 and 31");
  EXPECT_EQ(msg([](Params& p) { p.match_block_size = 33; }), "block-size (33) must be odd and between 3 and 31");
  EXPECT_EQ(msg([](Params& p) { p.uniqueness_ratio = -2; }),
            "uniqueness-ratio (-2) must be -1 (the method's default), 0 (off) or a percentage up to 1000");
  EXPECT_EQ(msg([](Params& p) { p.uniqueness_ratio = 1001; }),
            "uniqueness-ratio (1001) must be -1 (the method's default), 0 (off) or a percentage up to 1000");
  EXPECT_EQ(msg([](Params& p) { p.method = static_cast<Method>(7); }), "method (7) must be 0 (progressive), 1 (block), 2 (cross) or 3 (elas)");
  EXPECT_EQ(msg([](Params& p) { p.match_block_size = 31; p.uniqueness_ratio = 1000; }), "");
  // Defaults: progressive without uniqueness, block with its own ratio.
  Params p;
  EXPECT_EQ(p.method, Method::Progressive);
  EXPECT_EQ(resolve_uniqueness_ratio(p), 0);
  p.method = Method::Block;
  EXPECT_EQ(resolve_uniqueness_ratio(p), kBlockUniquenessRatio);
  p.uniqueness_ratio = 0;
  EXPECT_EQ(resolve_uniqueness_ratio(p), 0);
  // The matcher refuses what validate() refuses.
  p.match_block_size = 4;
  Matcher m(p);
  const Result r = run(m, make_plane_pair(32, 32, 2, 1));
  EXPECT_EQ(r.error, "block-size (4) must be odd and between 3 and 31");
}

// ---------------------------------------------------------------- progressive uniqueness

namespace {

// Winner and rival of a candidate interval by brute force (stages 6, 7, B3).
int brute_unique(const Image<uint32_t>& a, const Image<uint32_t>& b, Reference ref, const Image<uint8_t>* moth,
                 int x, int y, int lo, int hi, int r, int best, int ratio) {
  const int w = a.width;
  auto admissible = [&](int d) {
    const int m = ref == Reference::Left ? x - d : x + d;
    return d >= 0 && m >= 0 && m < w && (!moth || moth->at(m, y) != 0);
  };
  int win = -1, cost = INT_MAX;
  for (int d = lo; d < hi; ++d)
    if (admissible(d)) {
      const int c = window_cost(a, b, ref, x, y, d, r, best);
      if (c < cost) cost = c, win = d;
    }
  if (win < 0) return -1;
  int rival = kNoCost;
  for (int d = lo; d < hi; ++d)
    if (admissible(d) && std::abs(d - win) >= 2) rival = std::min(rival, window_cost(a, b, ref, x, y, d, r, best));
  return passes_uniqueness(cost, rival, ratio) ? win : -1;
}

}  // namespace

TEST(ProgressiveUniqueness, FullRangeAndRefinementEqualBruteForce) {
  const int w = 37, h = 21;
  std::mt19937 rng(23);
  Image<uint32_t> a(w, h), b(w, h);
  for (auto& v : a.pixels) v = rng() & 0x3f;
  for (auto& v : b.pixels) v = rng() & 0x3f;
  Image<uint8_t> mb(w, h);
  for (auto& v : mb.pixels) v = (rng() % 5) ? 255 : 0;
  Image<int16_t> coarser(w / 2, h / 2, -1);
  for (auto& v : coarser.pixels) v = (rng() % 3) ? static_cast<int16_t>(rng() % 8) : -1;
  const Range range{1, 16};
  long rejected = 0;
  for (Reference ref : {Reference::Left, Reference::Right})
    for (bool masks : {false, true})
      for (int ratio : {0, 5, 30}) {
        const Image<uint8_t>* mo = masks ? &mb : nullptr;
        Image<int16_t> full, refined, plain;
        match_full_range(a, b, ref, nullptr, mo, range, 1, 2, full, ratio);
        match_full_range(a, b, ref, nullptr, mo, range, 1, 2, plain);
        refine_level(a, b, ref, nullptr, mo, coarser, range, 1, 2, 1, 0, refined, ratio);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            ASSERT_EQ(full.at(x, y), brute_unique(a, b, ref, mo, x, y, range.lo, range.hi, 1, 2, ratio))
                << x << "," << y << " ratio " << ratio;
            if (ratio == 0) ASSERT_EQ(full.at(x, y), plain.at(x, y));
            rejected += full.at(x, y) < 0 && plain.at(x, y) >= 0;
            // The refinement's interval, as stage 7 states it.
            const int px = std::min(x / 2, w / 2 - 1), py = std::min(y / 2, h / 2 - 1);
            int lo = 0, hi = 0;
            if (coarser.at(px, py) >= 0) {
              lo = 2 * coarser.at(px, py) - 2;
              hi = 2 * coarser.at(px, py) + 3;
            } else {
              int mn = 1000, mx = -1;
              for (int v = std::max(py - 1, 0); v <= std::min(py + 1, h / 2 - 1); ++v)
                for (int u = std::max(px - 1, 0); u <= std::min(px + 1, w / 2 - 1); ++u)
                  if (coarser.at(u, v) >= 0) {
                    mn = std::min<int>(mn, coarser.at(u, v));
                    mx = std::max<int>(mx, coarser.at(u, v));
                  }
              if (mx >= 0) lo = 2 * mn - 2, hi = 2 * mx + 3;
            }
            lo = std::max(lo, range.lo);
            hi = std::min(hi, range.hi);
            ASSERT_EQ(refined.at(x, y), brute_unique(a, b, ref, mo, x, y, lo, hi, 1, 2, ratio))
                << "refined " << x << "," << y << " ratio " << ratio;
          }
      }
  EXPECT_GT(rejected, 0);  // the ratios did reject something
}

TEST(ProgressiveUniqueness, PipelineDefaultIsOffAndARatioRejectsTheRepeatedPattern) {
  // Stripes of period 8 over the whole view, shifted by 12: every window
  // fits at 4, 12 and 20 alike.
  const int w = 128, h = 64, shift = 12;
  Image<uint32_t> L(w, h), R(w, h);
  auto stripe = [](int u, int y) { return static_cast<uint32_t>(((u % 8) < 4) ? 60 + (y % 3) * 20 : 180); };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint32_t a = stripe(x, y), b = stripe(x + shift, y);
      L.at(x, y) = a | a << 8 | a << 16 | 0xffu << 24;
      R.at(x, y) = b | b << 8 | b << 16 | 0xffu << 24;
    }
  SyntheticPair s;
  s.left_rgba = L;
  s.right_rgba = R;
  Params p;
  p.max_disparity = 32;
  p.lr_check = false;
  auto valid_share = [&](const Params& params) {
    Matcher m(params);
    const Result r = run(m, s);
    EXPECT_EQ(r.error, "");
    long valid = 0, n = 0;
    for (int y = 8; y < h - 8; ++y)
      for (int x = 40; x < w - 40; ++x, ++n) valid += r.q4.at(x, y) != 0;
    return static_cast<double>(valid) / n;
  };
  EXPECT_EQ(valid_share(p), 1.0);  // default -1: off for progressive
  p.uniqueness_ratio = 10;
  EXPECT_LE(valid_share(p), 0.05);
}
