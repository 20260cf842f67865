// ELAS's descriptors and support points (common/elas_support.h, E1 and E2):
// Sobel values and descriptor positions by hand, the candidates against an
// independent brute force written from the specification, the removal
// rules on hand-made grids, a textured pair at a known disparity, and
// degenerate frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "elas_support.h"
#include "stages.h"
#include "synthetic.h"

namespace cs {
namespace {

Image<uint8_t> ramp_x(int w, int h, int slope) {
  Image<uint8_t> im(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) im.at(x, y) = static_cast<uint8_t>(std::min(255, slope * x));
  return im;
}

TEST(ElasSupport, SobelOfARampByHand) {
  Image<uint8_t> du, dv;
  elas_sobel(ramp_x(10, 6, 4), du, dv);
  // Inside: sx = 4 (4 (x + 1)) - 4 (4 (x - 1)) = 32, du = 128 + 8; no
  // vertical change. At x = 0 the clamped column x - 1 is column 0: sx = 16.
  for (int y = 0; y < 6; ++y) {
    EXPECT_EQ(du.at(0, y), 132);
    for (int x = 1; x < 9; ++x) EXPECT_EQ(du.at(x, y), 136) << x;
    EXPECT_EQ(du.at(9, y), 132);
    for (int x = 0; x < 10; ++x) EXPECT_EQ(dv.at(x, y), 128);
  }
  // A steep ramp saturates: sx = 4 * 2 * 255 at most -> 128 + 255 -> 255;
  // and negative values floor (>> 2): a falling ramp of 1 a pixel gives
  // sx = -8, du = 126.
  Image<uint8_t> fall(6, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 6; ++x) fall.at(x, y) = static_cast<uint8_t>(100 - x);
  elas_sobel(fall, du, dv);
  EXPECT_EQ(du.at(2, 1), 126);
  Image<uint8_t> step(6, 3, 0);
  for (int y = 0; y < 3; ++y)
    for (int x = 3; x < 6; ++x) step.at(x, y) = 255;
  elas_sobel(step, du, dv);
  EXPECT_EQ(du.at(2, 1), 255);  // sx = 4 * 255: 128 + 255 clamped to 255
}

TEST(ElasSupport, DescriptorTakesTheStatedPoints) {
  // du and dv with a distinct value a pixel: the descriptor names them.
  const int w = 9, h = 8;
  Image<uint8_t> du(w, h), dv(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      du.at(x, y) = static_cast<uint8_t>(10 * y + x);
      dv.at(x, y) = static_cast<uint8_t>(100 + 10 * y + x);
    }
  Image<ElasDescriptor> d;
  elas_descriptors(du, dv, d);
  const int ux[12] = {0, -1, 0, 1, -2, -1, 1, 2, -1, 0, 1, 0}, uy[12] = {-2, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 2};
  const int vx[4] = {0, -1, 1, 0}, vy[4] = {-1, 0, 0, 1};
  for (const auto& [x, y] : std::vector<std::pair<int, int>>{{4, 4}, {0, 0}, {8, 7}, {1, 6}}) {
    for (int k = 0; k < 12; ++k) {
      const int cx = std::clamp(x + ux[k], 0, w - 1), cy = std::clamp(y + uy[k], 0, h - 1);
      EXPECT_EQ(d.at(x, y)[k], 10 * cy + cx) << x << "," << y << " du " << k;
    }
    for (int k = 0; k < 4; ++k) {
      const int cx = std::clamp(x + vx[k], 0, w - 1), cy = std::clamp(y + vy[k], 0, h - 1);
      EXPECT_EQ(d.at(x, y)[12 + k], 100 + 10 * cy + cx) << x << "," << y << " dv " << k;
    }
  }
  ElasDescriptor flat;
  flat.fill(128);
  EXPECT_EQ(elas_texture(flat), 0);
  flat[3] = 120;
  flat[15] = 140;
  EXPECT_EQ(elas_texture(flat), 20);
}

// A rendered view's matching intensity (stage 1, as the engines make it).
Image<uint8_t> grey_of(const Image<uint32_t>& rgba) {
  Image<uint8_t> g;
  convert_to_gray(rgba_view(rgba), g);
  return g;
}

// The candidates from the specification, written again: the best, then the
// rival at least 2 away; the right match the same way.
int brute_match(const Image<ElasDescriptor>& l, const Image<ElasDescriptor>& r, int x, int y, int d_max, bool right_ref,
                int pct) {
  if (d_max < 1) return -1;
  std::vector<int> cost;
  for (int d = 0; d <= d_max; ++d) {
    int c = 0;
    const int nx[4] = {0, -2, 2, 0}, ny[4] = {-2, 0, 0, 2};
    for (int k = 0; k < 4; ++k) {
      const ElasDescriptor& a = right_ref ? r.at(x + nx[k], y + ny[k]) : l.at(x + nx[k], y + ny[k]);
      const ElasDescriptor& b = right_ref ? l.at(x + nx[k] + d, y + ny[k]) : r.at(x + nx[k] - d, y + ny[k]);
      for (int f = 0; f < 16; ++f) c += std::abs(a[f] - b[f]);
    }
    cost.push_back(c);
  }
  const int d1 = static_cast<int>(std::min_element(cost.begin(), cost.end()) - cost.begin());
  int c2 = INT32_MAX;
  for (int d = 0; d <= d_max; ++d)
    if (d < d1 - 1 || d > d1 + 1) c2 = std::min(c2, cost[d]);
  return c2 != INT32_MAX && 100LL * cost[d1] < static_cast<long long>(pct) * c2 ? d1 : -1;
}

TEST(ElasSupport, CandidatesMatchABruteForce) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    // A step scene: two planes, an occluded strip, texture everywhere.
    const SyntheticPair pair = make_step_pair(96, 64, 6, 19, seed);
    const Image<uint8_t> l = grey_of(pair.left_rgba), r = grey_of(pair.right_rgba);
    ElasSupportParams p;
    p.max_disparity = 32;
    Image<ElasDescriptor> dl, dr;
    elas_view_descriptors(l, dl);
    elas_view_descriptors(r, dr);
    if (seed == 3) {  // a bar at the candidates' median texture rejects half of them
      std::vector<int> t;
      for (int y = 5; y + 2 < 64; y += 5)
        for (int x = 5; x + 2 < 96; x += 5) t.push_back(elas_texture(dl.at(x, y)));
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      p.support_texture = t[t.size() / 2];
    }
    ElasDisparityGrid grid;
    elas_candidates(dl, dr, p, grid);
    ASSERT_EQ(grid.d.width, 96 / 5 + 1);
    ASSERT_EQ(grid.d.height, 64 / 5 + 1);
    int found = 0, textured_out = 0;
    for (int j = 0; j < grid.d.height; ++j)
      for (int i = 0; i < grid.d.width; ++i) {
        const int x = 5 * i, y = 5 * j;
        int want = -1;
        if (i >= 1 && j >= 1 && x + 2 < 96 && y + 2 < 64) {
          if (elas_texture(dl.at(x, y)) < p.support_texture) {
            ++textured_out;
          } else {
            const int d1 = brute_match(dl, dr, x, y, std::min(p.max_disparity - 1, x - 2), false, 85);
            if (d1 >= 0) {
              const int back = brute_match(dl, dr, x - d1, y, std::min(p.max_disparity - 1, 96 - 3 - (x - d1)), true, 85);
              if (back >= 0 && std::abs(back - d1) <= p.lr_threshold) want = d1;
            }
          }
        }
        ASSERT_EQ(grid.d.at(i, j), want) << "seed " << seed << " cell " << i << "," << j;
        found += want >= 0;
      }
    EXPECT_GT(found, seed == 3 ? 10 : 20) << seed;
    if (seed == 3) {
      EXPECT_GT(textured_out, 20);
    }
  }
}

TEST(ElasSupport, InconsistentCandidatesByHand) {
  ElasSupportParams p;  // window 5, threshold 5, at least 5 others
  ElasDisparityGrid g;
  g.d = Image<int16_t>(7, 7, int16_t{20});
  g.d.at(3, 3) = 60;   // an outlier among 24 agreeing neighbours
  g.d.at(0, 0) = 24;   // a corner: 8 others in its window, all within 5
  g.d.at(6, 6) = -1;
  for (int i = 0; i < 7; ++i) g.d.at(i, 5) = -1;  // a gap row
  g.d.at(1, 6) = 14;   // its window's others are 20s, 6 away
  const Image<int16_t> before = g.d;
  elas_remove_inconsistent(p, g);
  EXPECT_EQ(g.d.at(3, 3), -1);
  EXPECT_EQ(g.d.at(0, 0), 24);
  // Decided on the grid before the step: (2, 2) keeps its support although
  // the outlier beside it goes.
  EXPECT_EQ(g.d.at(2, 2), 20);
  // (1, 6): the others in its window (rows 4 and 6; row 5 is empty) are
  // 20s, 6 away from 14: none agrees.
  EXPECT_EQ(g.d.at(1, 6), -1);
  // One pass: the result does not depend on the order, so running it on a
  // transposed grid gives the transposed result.
  ElasDisparityGrid t;
  t.d = Image<int16_t>(7, 7);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 7; ++x) t.d.at(y, x) = before.at(x, y);
  elas_remove_inconsistent(p, t);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 7; ++x) EXPECT_EQ(t.d.at(y, x), g.d.at(x, y));
}

TEST(ElasSupport, InconsistentCandidatesTheWindowsReach) {
  // Agreeing candidates three cells away are outside a 5 x 5 window, two
  // cells away inside it.
  ElasSupportParams p;
  for (int dist : {2, 3}) {
    ElasDisparityGrid g;
    g.d = Image<int16_t>(9, 9, int16_t{-1});
    g.d.at(4, 4) = 10;
    for (const auto& [u, v] : std::vector<std::pair<int, int>>{{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {-1, -1}})
      g.d.at(4 + dist * u, 4 + dist * v) = 13;
    elas_remove_inconsistent(p, g);
    EXPECT_EQ(g.d.at(4, 4), dist == 2 ? 10 : -1) << dist;
  }
  // The minimum support: four agreeing others are not enough, five are.
  for (int others : {4, 5}) {
    ElasDisparityGrid g;
    g.d = Image<int16_t>(5, 5, int16_t{-1});
    g.d.at(2, 2) = 40;
    for (int k = 0; k < others; ++k) g.d.at(k, 0) = 35;
    elas_remove_inconsistent(p, g);
    EXPECT_EQ(g.d.at(2, 2), others == 5 ? 40 : -1) << others;
  }
}

TEST(ElasSupport, RedundantCandidatesByHand) {
  ElasSupportParams p;  // within 5 cells, disparities within 1
  ElasDisparityGrid g;
  g.d = Image<int16_t>(9, 1, int16_t{5});
  g.d.at(4, 0) = 9;  // unlike its neighbours: stays
  g.d.at(6, 0) = 6;  // within 1 of 5
  elas_remove_redundant(p, g);
  // Left to right: 0 has nothing on its left; 1, 2, 3 have 5s on both
  // sides (the removals are seen: 2 and 3 find 0 on their left); 4 (9)
  // stays; 5 has 0 five cells to its left and 6 on its right; 6 finds on
  // its left only removed cells and the 9 (0 is six away): stays; 7 has 6
  // and 8; 8 has nothing on its right.
  const int16_t want[9] = {5, -1, -1, -1, 9, -1, 6, -1, 5};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(g.d.at(i, 0), want[i]) << i;
  // Columns after rows: a column of three equal values loses its middle.
  ElasDisparityGrid c;
  c.d = Image<int16_t>(1, 3, int16_t{30});
  elas_remove_redundant(p, c);
  EXPECT_EQ(c.d.at(0, 0), 30);
  EXPECT_EQ(c.d.at(0, 1), -1);
  EXPECT_EQ(c.d.at(0, 2), 30);
}

TEST(ElasSupport, TexturedPlaneGivesItsDisparity) {
  for (int d0 : {0, 7, 23}) {
    const SyntheticPair pair = make_plane_pair(160, 120, d0, 11);
    const Image<uint8_t> l = grey_of(pair.left_rgba), r = grey_of(pair.right_rgba);
    ElasSupportParams p;
    p.max_disparity = 64;
    Image<ElasDescriptor> dl, dr;
    elas_view_descriptors(l, dl);
    elas_view_descriptors(r, dr);
    ElasDisparityGrid grid;
    elas_candidates(dl, dr, p, grid);
    int candidates = 0, right = 0;
    for (int j = 1; 5 * j + 2 < 120; ++j)
      for (int i = 1; 5 * i + 2 < 160; ++i) {
        if (5 * i - 2 < d0) continue;  // d0 beyond the candidate's range
        ++candidates;
        right += grid.d.at(i, j) == d0;
        if (grid.d.at(i, j) >= 0) {
          EXPECT_EQ(grid.d.at(i, j), d0) << i << "," << j;
        }
      }
    EXPECT_GT(right, candidates * 8 / 10) << d0;
    const std::vector<ElasSupportPoint> sp = elas_support_points(l, r, p);
    ASSERT_FALSE(sp.empty());
    for (const ElasSupportPoint& s : sp) EXPECT_EQ(s.d, d0);
    // Redundancy leaves a sparse set: far fewer than the candidates.
    EXPECT_LT(static_cast<int>(sp.size()), right / 2);
    EXPECT_TRUE(std::is_sorted(sp.begin(), sp.end(), [](const ElasSupportPoint& a, const ElasSupportPoint& b) {
      return a.y != b.y ? a.y < b.y : a.x < b.x;
    }));
  }
}

TEST(ElasSupport, DegenerateFramesGiveNoSupport) {
  ElasSupportParams p;
  const Image<uint8_t> flat(64, 48, 90);
  EXPECT_TRUE(elas_support_points(flat, flat, p).empty());  // no texture
  const SyntheticPair pair = make_plane_pair(64, 48, 4, 5);
  const Image<uint8_t> l = grey_of(pair.left_rgba), r = grey_of(pair.right_rgba);
  // Too small for a candidate, one row, one pixel, different sizes.
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{7, 48}, {64, 7}, {64, 1}, {1, 1}}) {
    Image<uint8_t> a(w, h), b(w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) a.at(x, y) = l.at(x, y), b.at(x, y) = r.at(x, y);
    EXPECT_TRUE(elas_support_points(a, b, p).empty()) << w << "x" << h;
  }
  EXPECT_TRUE(elas_support_points(l, Image<uint8_t>(63, 48), p).empty());
  // Fewer than three disparities: no rival, no support; a range beyond
  // the width is capped by the rule.
  for (int d : {1, 2}) {
    p.max_disparity = d;
    EXPECT_TRUE(elas_support_points(l, r, p).empty()) << d;
  }
  // (A candidate whose range x - 2 stops short of the truth takes a wrong
  // disparity within the left-right tolerance: x = 5 finds 3 here.)
  p.max_disparity = 1000;
  const std::vector<ElasSupportPoint> wide = elas_support_points(l, r, p);
  ASSERT_FALSE(wide.empty());
  for (const ElasSupportPoint& s : wide) {
    if (s.x - 2 >= 4) {
      EXPECT_EQ(s.d, 4) << s.x << "," << s.y;
    }
  }
}

}  // namespace
}  // namespace cs
