// ELAS's dense matching and post-processing (common/elas_dense.h, E3 to
// E7): the grid, the prior table, the dense winner against a brute force of
// the energy, the left-right check, speckles and gaps by hand, and the whole
// method on scenes with known disparities and on degenerate frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "elas_dense.h"
#include "stereo_math.h"
#include "stages.h"
#include "synthetic.h"
#include "triangle_prior.h"

namespace cs {
namespace {

// A rendered view's matching intensity (stage 1, as the engines make it).
Image<uint8_t> grey_of(const Image<uint32_t>& rgba) {
  Image<uint8_t> g;
  convert_to_gray(rgba_view(rgba), g);
  return g;
}

TEST(ElasDense, GridHoldsItsCellAndTheEightAround) {
  // 100 x 60 in cells of 20: 5 x 3 cells.
  const std::vector<ElasSupportPoint> pts = {{5, 5, 10}, {25, 5, 12}, {5, 25, 10}, {95, 55, 30}, {99, 59, 7}};
  const ElasGrid g = elas_grid(pts, 100, 60, 20);
  ASSERT_EQ(g.cells_x, 5);
  ASSERT_EQ(g.cells_y, 3);
  EXPECT_EQ(g.at(0, 0), (std::vector<int16_t>{10, 12}));        // (0,0) with (1,0) and (0,1); 10 once
  EXPECT_EQ(g.at(25, 25), (std::vector<int16_t>{10, 12}));      // cell (1,1): its three neighbours'
  EXPECT_TRUE(g.at(45, 45).empty());                              // cell (2,2): nothing around it
  EXPECT_EQ(g.at(59, 19), (std::vector<int16_t>{12}));          // cell (2,0): (1,0) beside it
  EXPECT_EQ(g.at(99, 59), (std::vector<int16_t>{7, 30}));       // the corner cell
  EXPECT_EQ(g.at(65, 45), (std::vector<int16_t>{7, 30}));       // cell (3,2) beside it
}

TEST(ElasDense, PriorTableFromTheFormula) {
  const std::vector<uint16_t> t = elas_prior_table(0.02, 3, 1);
  ASSERT_EQ(t.size(), 16u * 64 + 1);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t.back(), 14);  // ln(4 / 3) / 0.02 = 14.38
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  // One pixel off: (ln 4 - ln(3 + e^-0.5)) / 0.02 = 5.18 -> 5.
  EXPECT_EQ(t[16], 5);
  EXPECT_EQ(t[32], 12);  // two pixels: (ln 4 - ln(3 + e^-2)) / 0.02 = 11.61
}

// The energy of E5 by brute force over every d, with the candidate rule
// written again: the winner (ties: the smaller d), its E and the rival (the
// least E at least 2 away).
struct Brute {
  int d = -1, best = kNoCost, rival = kNoCost;
};
Brute brute_dense(const Image<ElasDescriptor>& ref, const Image<ElasDescriptor>& other, bool right_ref, int x, int y,
                  int32_t mu, const std::vector<int16_t>& set, const std::vector<uint16_t>& table, int lo, int D,
                  int sradius) {
  std::vector<int> energy(D, -1);
  for (int d = lo; d < D; ++d) {
    bool cand = std::find(set.begin(), set.end(), d) != set.end();
    if (mu != kNoPrior) {
      const int m = static_cast<int>(std::floor((mu + 8) / 16.0));
      cand = cand || std::abs(d - m) <= sradius;
    }
    const int xo = right_ref ? x + d : x - d;
    if (!cand || xo < 0 || xo >= ref.width) continue;
    int e = 0;
    for (int k = 0; k < 16; ++k) e += std::abs(ref.at(x, y)[k] - other.at(xo, y)[k]);
    const long t = mu == kNoPrior ? 1 << 30 : std::labs(16L * d - mu);
    e += t < static_cast<long>(table.size()) ? table[t] : table.back();
    energy[d] = e;
  }
  Brute b;
  for (int d = 0; d < D; ++d)
    if (energy[d] >= 0 && (b.d < 0 || energy[d] < b.best)) b.d = d, b.best = energy[d];
  for (int d = 0; d < D; ++d)
    if (b.d >= 0 && energy[d] >= 0 && std::abs(d - b.d) >= 2 && energy[d] < b.rival) b.rival = energy[d];
  if (b.d < 0) b.best = kNoCost;
  return b;
}

TEST(ElasDense, WinnerMatchesABruteForceOfTheEnergy) {
  const SyntheticPair pair = make_step_pair(80, 40, 5, 17, 9);
  Image<ElasDescriptor> dl, dr;
  elas_view_descriptors(grey_of(pair.left_rgba), dl);
  elas_view_descriptors(grey_of(pair.right_rgba), dr);
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> mu_of(-40, 16 * 30);
  std::bernoulli_distribution none(0.2), off(0.1);
  Image<int32_t> mu(80, 40);
  for (int32_t& m : mu.pixels) m = none(rng) ? kNoPrior : mu_of(rng);
  Image<uint8_t> mask(80, 40);
  for (uint8_t& m : mask.pixels) m = off(rng) ? 0 : 255;
  const std::vector<ElasSupportPoint> pts = {{10, 10, 3}, {50, 10, 17}, {70, 30, 5}, {30, 30, 40}};
  const ElasGrid grid = elas_grid(pts, 80, 40, 20);
  const std::vector<uint16_t> table = elas_prior_table(0.02, 3, 1);
  for (int lo : {0, 4})
    for (bool masked : {false, true})
      for (bool right_ref : {false, true}) {
        Image<int16_t> got;
        Image<int32_t> best, rival;
        elas_dense(right_ref ? dr : dl, right_ref ? dl : dr, right_ref, mu, grid, table, lo, 32, 2,
                   masked ? &mask : nullptr, got, &best, &rival);
        int found = 0;
        for (int y = 0; y < 40; ++y)
          for (int x = 0; x < 80; ++x) {
            Brute want;
            if (!masked || mask.at(x, y))
              want = brute_dense(right_ref ? dr : dl, right_ref ? dl : dr, right_ref, x, y, mu.at(x, y),
                                 grid.at(x, y), table, lo, 32, 2);
            ASSERT_EQ(got.at(x, y), want.d) << (right_ref ? "right " : "left ") << x << "," << y << " lo " << lo;
            ASSERT_EQ(best.at(x, y), want.best) << x << "," << y;
            ASSERT_EQ(rival.at(x, y), want.rival) << x << "," << y;
            found += want.d >= 0;
            if (want.d >= 0) {
              ASSERT_GE(want.d, lo);
            }
          }
        EXPECT_GT(found, 80 * 40 / 2);
      }
}

TEST(ElasDense, LeftRightCheckByHand) {
  Image<int16_t> l(6, 1, int16_t{-1}), r(6, 1, int16_t{-1});
  // Left x = 5 at d 2 -> right x = 3 holds 2: both stay. Left x = 4 at d 1
  // -> right 3 holds 2 (within 2): stays; right 3 -> left 5 holds 2: stays.
  // Left x = 2 at d 2 -> right 0 holds 9: goes; right 0 at 9 -> left 9
  // outside: goes. Left x = 1 at 3 -> right -2 outside: goes.
  l.at(5, 0) = 2;
  l.at(4, 0) = 1;
  l.at(2, 0) = 2;
  l.at(1, 0) = 3;
  r.at(3, 0) = 2;
  r.at(0, 0) = 9;
  elas_lr_check(l, r, 2);
  EXPECT_EQ(l.at(5, 0), 2);
  EXPECT_EQ(l.at(4, 0), 1);
  EXPECT_EQ(l.at(2, 0), -1);
  EXPECT_EQ(l.at(1, 0), -1);
  EXPECT_EQ(r.at(3, 0), 2);
  EXPECT_EQ(r.at(0, 0), -1);
  // A threshold of 0 separates 1 from 2: left 4 goes (checked against the
  // right map before the check).
  Image<int16_t> l2(6, 1, int16_t{-1}), r2(6, 1, int16_t{-1});
  l2.at(4, 0) = 1;
  l2.at(5, 0) = 2;
  r2.at(3, 0) = 2;
  elas_lr_check(l2, r2, 0);
  EXPECT_EQ(l2.at(4, 0), -1);
  EXPECT_EQ(l2.at(5, 0), 2);
  EXPECT_EQ(r2.at(3, 0), 2);
}

TEST(ElasDense, SpecklesByHand) {
  Image<int16_t> d(10, 4, int16_t{20});
  // A 2 x 2 island of 40 (4 pixels) inside 20s; a ramp 20 21 22 .. is one
  // component at similarity 1.
  for (int y = 1; y < 3; ++y)
    for (int x = 1; x < 3; ++x) d.at(x, y) = 40;
  d.at(6, 0) = 21, d.at(7, 0) = 22, d.at(8, 0) = 23, d.at(9, 0) = 24;
  Image<int16_t> a = d;
  elas_remove_speckles(a, 5, 1);
  for (int y = 1; y < 3; ++y)
    for (int x = 1; x < 3; ++x) EXPECT_EQ(a.at(x, y), -1);
  EXPECT_EQ(a.at(9, 0), 24);  // joined to the 20s through the ramp
  EXPECT_EQ(a.at(0, 0), 20);
  Image<int16_t> b = d;
  elas_remove_speckles(b, 4, 1);  // four pixels are not fewer than four
  EXPECT_EQ(b.at(1, 1), 40);
  Image<int16_t> c = d;
  elas_remove_speckles(c, 5, 0);  // without the ramp's joins 21 .. 24 are single pixels
  EXPECT_EQ(c.at(7, 0), -1);
  EXPECT_EQ(c.at(0, 0), 20);
}

TEST(ElasDense, GapsByHand) {
  Image<int16_t> d(9, 2, int16_t{-1});
  const int16_t row[9] = {-1, 8, -1, -1, 5, -1, -1, -1, 7};
  for (int x = 0; x < 9; ++x) d.at(x, 0) = row[x];
  Image<int16_t> small = d;
  elas_fill_gaps(small, 2, false);
  // Runs of at most 2 between valid pixels take the smaller end; the others
  // and the row's ends stay; the empty second row stays.
  const int16_t want_small[9] = {-1, 8, 5, 5, 5, -1, -1, -1, 7};
  for (int x = 0; x < 9; ++x) EXPECT_EQ(small.at(x, 0), want_small[x]) << x;
  for (int x = 0; x < 9; ++x) EXPECT_EQ(small.at(x, 1), -1);
  Image<int16_t> all = d;
  elas_fill_gaps(all, 2, true);
  const int16_t want_all[9] = {8, 8, 5, 5, 5, 5, 5, 5, 7};
  for (int x = 0; x < 9; ++x) {
    EXPECT_EQ(all.at(x, 0), want_all[x]) << x;
    EXPECT_EQ(all.at(x, 1), want_all[x]) << x;  // the columns fill the empty row
  }
}

TEST(ElasDense, GapsStopAtTheBackground) {
  // Row: 6 . . | . 4 (| = background at x 3): the run 1..2 ends at the
  // background (a line's end), the run at 4 starts after it.
  Image<int16_t> d(6, 1, int16_t{-1});
  d.at(0, 0) = 6;
  d.at(5, 0) = 4;
  Image<uint8_t> mask(6, 1, uint8_t{255});
  mask.at(3, 0) = 0;
  Image<int16_t> cut = d;
  elas_fill_gaps(cut, 3, false, &mask);
  const int16_t want_cut[6] = {6, -1, -1, -1, -1, 4};  // no run has two valid ends
  for (int x = 0; x < 6; ++x) EXPECT_EQ(cut.at(x, 0), want_cut[x]) << x;
  Image<int16_t> all = d;
  elas_fill_gaps(all, 3, true, &mask);
  const int16_t want_all[6] = {6, 6, 6, -1, 4, 4};  // each side from its one neighbour; x 3 stays
  for (int x = 0; x < 6; ++x) EXPECT_EQ(all.at(x, 0), want_all[x]) << x;
  Image<int16_t> free = d;
  elas_fill_gaps(free, 4, false);  // without the mask one run of 4 between 6 and 4
  for (int x = 1; x < 5; ++x) EXPECT_EQ(free.at(x, 0), 4) << x;
}

TEST(ElasDense, ConfidenceOnlyWhereTheWinnerStayed) {
  Image<int16_t> raw(4, 1, int16_t{-1}), fin(4, 1, int16_t{-1});
  Image<int32_t> best(4, 1, kNoCost), rival(4, 1, kNoCost);
  raw.at(0, 0) = 5, fin.at(0, 0) = 5, best.at(0, 0) = 10, rival.at(0, 0) = 40;  // kept: 255 * 30 / 40
  raw.at(1, 0) = 5, fin.at(1, 0) = 7, best.at(1, 0) = 10, rival.at(1, 0) = 40;  // filled with another d
  raw.at(2, 0) = 5, fin.at(2, 0) = 5, best.at(2, 0) = 10;                        // no rival
  fin.at(3, 0) = 3;                                                              // filled
  Image<uint8_t> c;
  elas_confidence(raw, best, rival, fin, c);
  EXPECT_EQ(c.at(0, 0), 191);
  EXPECT_EQ(c.at(1, 0), 0);
  EXPECT_EQ(c.at(2, 0), 0);
  EXPECT_EQ(c.at(3, 0), 0);
}

TEST(ElasDense, BackgroundMatchesOnlyTheForeground) {
  const SyntheticPair step = make_step_pair(160, 120, 8, 24, 22);
  const Image<uint8_t> l = grey_of(step.left_rgba), r = grey_of(step.right_rgba);
  // The foreground: a box on the near plane (the left half, d 24) in each
  // view, the right one shifted by its d.
  Image<uint8_t> ml(160, 120, uint8_t{0}), mr(160, 120, uint8_t{0});
  for (int y = 30; y < 90; ++y)
    for (int x = 30; x < 76; ++x) ml.at(x, y) = 255, mr.at(x - 24, y) = 255;
  ElasParams p;
  p.support.max_disparity = 64;
  Image<int16_t> d;
  ElasDebug g;
  elas_match(l, r, p, d, nullptr, &ml, &mr, &g);
  int inside = 0, close = 0;
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x) {
      if (!ml.at(x, y)) {
        ASSERT_EQ(d.at(x, y), -1) << x << "," << y;
        ASSERT_EQ(g.raw[0].at(x, y), -1);
        continue;
      }
      ++inside;
      const float t = step.disparity.at(x, y);
      close += t >= 0 && d.at(x, y) >= 0 && std::abs(d.at(x, y) - t) <= 1;
    }
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x)
      if (!mr.at(x, y)) {
        ASSERT_EQ(g.raw[1].at(x, y), -1);
      }
  // Support points only on the left foreground.
  for (int j = 0; j < g.support.d.height; ++j)
    for (int i = 0; i < g.support.d.width; ++i)
      if (g.support.d.at(i, j) >= 0) {
        ASSERT_TRUE(ml.at(5 * i, 5 * j)) << i << "," << j;
      }
  EXPECT_GT(close, inside * 9 / 10);
}

TEST(ElasDense, MinimumDisparityBoundsEveryStep) {
  const SyntheticPair step = make_step_pair(160, 120, 8, 24, 22);
  ElasParams p;
  p.support.min_disparity = 12;
  p.support.max_disparity = 64;
  p.fill_all = false;
  Image<int16_t> d;
  ElasDebug g;
  elas_match(grey_of(step.left_rgba), grey_of(step.right_rgba), p, d, nullptr, nullptr, nullptr, &g);
  int near = 0;
  for (int16_t v : g.support.d.pixels) ASSERT_TRUE(v < 0 || v >= 12);
  for (int k = 0; k < 2; ++k)
    for (int16_t v : g.raw[k].pixels) ASSERT_TRUE(v < 0 || v >= 12);
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x) near += d.at(x, y) == 24 && step.disparity.at(x, y) == 24;
  EXPECT_GT(near, 0);
}

TEST(ElasDense, WholeMethodOnKnownScenes) {
  ElasParams p;
  p.support.max_disparity = 64;
  {
    const SyntheticPair plane = make_plane_pair(160, 120, 9, 21);
    Image<int16_t> d;
    elas_match(grey_of(plane.left_rgba), grey_of(plane.right_rgba), p, d);
    int right = 0;
    for (int16_t v : d.pixels) right += v == 9;
    EXPECT_GT(right, 160 * 120 * 95 / 100);
  }
  {
    const SyntheticPair step = make_step_pair(160, 120, 8, 24, 22);
    Image<int16_t> d;
    elas_match(grey_of(step.left_rgba), grey_of(step.right_rgba), p, d);
    int known = 0, close = 0;
    for (int y = 0; y < 120; ++y)
      for (int x = 0; x < 160; ++x) {
        const float t = step.disparity.at(x, y);
        if (t < 0) continue;
        ++known;
        close += d.at(x, y) >= 0 && std::abs(d.at(x, y) - t) <= 1;
      }
    EXPECT_GT(close, known * 9 / 10);
  }
}

TEST(ElasDense, DegenerateFramesGiveAValidMap) {
  ElasParams p;
  Image<int16_t> d, r;
  // Black and flat frames: no support point, no prior, no candidate: all -1.
  for (uint8_t v : {uint8_t{0}, uint8_t{128}}) {
    const Image<uint8_t> flat(64, 48, v);
    elas_match(flat, flat, p, d, &r);
    ASSERT_EQ(d.width, 64);
    EXPECT_TRUE(std::all_of(d.pixels.begin(), d.pixels.end(), [](int16_t x) { return x == -1; }));
    EXPECT_TRUE(std::all_of(r.pixels.begin(), r.pixels.end(), [](int16_t x) { return x == -1; }));
  }
  const SyntheticPair pair = make_plane_pair(64, 48, 4, 5);
  const Image<uint8_t> l = grey_of(pair.left_rgba), rr = grey_of(pair.right_rgba);
  // One row, one pixel, D beyond the width, different sizes: a map of the
  // left's size, no crash.
  Image<uint8_t> row(64, 1), row_r(64, 1);
  for (int x = 0; x < 64; ++x) row.at(x, 0) = l.at(x, 20), row_r.at(x, 0) = rr.at(x, 20);
  elas_match(row, row_r, p, d);
  EXPECT_EQ(d.width, 64);
  EXPECT_EQ(d.height, 1);
  elas_match(Image<uint8_t>(1, 1, 9), Image<uint8_t>(1, 1, 9), p, d);
  EXPECT_EQ(d.pixels.size(), 1u);
  p.support.max_disparity = 1000;
  elas_match(l, rr, p, d);
  int right = 0;
  for (int16_t v : d.pixels) right += v == 4;
  EXPECT_GT(right, 64 * 48 * 8 / 10);
  elas_match(l, Image<uint8_t>(63, 48), p, d);
  EXPECT_EQ(d.width, 64);
  EXPECT_TRUE(std::all_of(d.pixels.begin(), d.pixels.end(), [](int16_t x) { return x == -1; }));
  // Fewer than three support points: no triangle, the grid alone.
  Image<uint8_t> sparse_l(64, 48, 100), sparse_r(64, 48, 100);
  for (int y = 18; y < 30; ++y)
    for (int x = 20; x < 32; ++x) sparse_l.at(x, y) = l.at(x, y), sparse_r.at(x - 4, y) = l.at(x, y);
  elas_match(sparse_l, sparse_r, p, d);
  EXPECT_EQ(d.width, 64);
}

}  // namespace
}  // namespace cs
