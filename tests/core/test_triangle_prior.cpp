// ELAS's prior from the triangles (common/triangle_prior.h): the plane's
// rounding against exact rational arithmetic, the coverage rule against an
// independent count over every triangle and an independent convex hull,
// the planes' agreement along shared edges, and the rasterised prior
// against the per-pixel definition whatever the triangles' order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "triangle_prior.h"
#include "triangulation.h"

namespace cs {
namespace {

using i128 = __int128;

// Whether mu_q4 is round-half-up of 16 n / den: 2 den mu <= 32 n + den <
// 2 den (mu + 1), in 128 bits.
bool rounds_correctly(int32_t mu, i128 n, i128 den) {
  const i128 v = 32 * n + den;
  return 2 * den * mu <= v && v < 2 * den * (static_cast<i128>(mu) + 1);
}

// The exact numerator a x + b y + c from the barycentric form, computed
// independently of triangle_plane's coefficients.
i128 barycentric_numerator(TriPoint p0, int d0, TriPoint p1, int d1, TriPoint p2, int d2, TriPoint q) {
  return static_cast<i128>(d0) * orient2d(q, p1, p2) + static_cast<i128>(d1) * orient2d(p0, q, p2) +
         static_cast<i128>(d2) * orient2d(p0, p1, q);
}

TEST(TrianglePrior, PlaneIsTheCornersDisparitiesAndRoundsHalfUp) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> coord(0, 32767), disp(-16383, 16383);
  int tested = 0;
  while (tested < 2000) {
    const TriPoint p0{coord(rng), coord(rng)}, p1{coord(rng), coord(rng)}, p2{coord(rng), coord(rng)};
    if (orient2d(p0, p1, p2) <= 0) continue;
    const int d0 = disp(rng), d1 = disp(rng), d2 = disp(rng);
    const TrianglePlane t = triangle_plane(p0, d0, p1, d1, p2, d2);
    ASSERT_EQ(t.den, orient2d(p0, p1, p2));
    EXPECT_EQ(plane_q4(t, p0.x, p0.y), 16 * d0);
    EXPECT_EQ(plane_q4(t, p1.x, p1.y), 16 * d1);
    EXPECT_EQ(plane_q4(t, p2.x, p2.y), 16 * d2);
    for (int k = 0; k < 8; ++k) {
      const TriPoint q{coord(rng), coord(rng)};
      const i128 n = barycentric_numerator(p0, d0, p1, d1, p2, d2, q);
      ASSERT_EQ(static_cast<i128>(t.a) * q.x + static_cast<i128>(t.b) * q.y + t.c, n);
      EXPECT_TRUE(rounds_correctly(plane_q4(t, q.x, q.y), n, t.den)) << q.x << "," << q.y;
    }
    ++tested;
  }
}

TEST(TrianglePrior, HalvesRoundUpwardsOnBothSidesOfZero) {
  // The plane from d = 0 at (0,0) and (0,2) to d = 1 at (2,0)... mu = x / 2.
  const TrianglePlane t = triangle_plane({0, 0}, 0, {2, 0}, 1, {0, 2}, 0);
  ASSERT_GT(t.den, 0);
  EXPECT_EQ(plane_q4(t, 1, 0), 8);  // 0.5 -> 8/16 exactly
  // mu = x / 32 at x = 1: 16 / 32 = 0.5 sixteenths -> rounds up to 1; at
  // x = -1: -0.5 -> 0.
  const TrianglePlane s = triangle_plane({0, 0}, 0, {32, 0}, 1, {0, 32}, 0);
  EXPECT_EQ(plane_q4(s, 1, 0), 1);
  EXPECT_EQ(plane_q4(s, -1, 0), 0);
  EXPECT_EQ(plane_q4(s, -3, 0), -1);  // -1.5 -> -1
}

TEST(TrianglePrior, CoverageOfOneTriangleByHand) {
  // (0,0) (4,0) (0,4) in positive orientation; the edge function rule:
  // the edge (4,0) -> (0,4) has dy > 0 (not owned), (0,4) -> (0,0) dy < 0
  // (owned), (0,0) -> (4,0) dy = 0, dx > 0 (owned).
  const TriPoint a{0, 0}, b{4, 0}, c{0, 4};
  ASSERT_GT(orient2d(a, b, c), 0);
  EXPECT_TRUE(triangle_covers(a, b, c, {1, 1}));
  EXPECT_TRUE(triangle_covers(a, b, c, {2, 0}));   // on the owned edge a -> b
  EXPECT_TRUE(triangle_covers(a, b, c, {0, 2}));   // on the owned edge c -> a
  EXPECT_FALSE(triangle_covers(a, b, c, {2, 2}));  // on the edge b -> c, not owned
  EXPECT_TRUE(triangle_covers(a, b, c, {0, 0}));   // the corner between two owned edges
  EXPECT_FALSE(triangle_covers(a, b, c, {4, 0}));
  EXPECT_FALSE(triangle_covers(a, b, c, {0, 4}));
  EXPECT_FALSE(triangle_covers(a, b, c, {3, 3}));
  // The other triangle of the square (4,0) (4,4) (0,4) owns (2,2).
  EXPECT_TRUE(triangle_covers(b, {4, 4}, c, {2, 2}));
}

// The convex hull (Andrew's monotone chain), positive orientation, without
// collinear points; and whether q is strictly inside / strictly outside.
std::vector<TriPoint> hull_of(std::vector<TriPoint> p) {
  std::sort(p.begin(), p.end(), [](TriPoint a, TriPoint b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
  p.erase(std::unique(p.begin(), p.end(), [](TriPoint a, TriPoint b) { return a.x == b.x && a.y == b.y; }), p.end());
  if (p.size() < 3) return p;
  std::vector<TriPoint> h(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && orient2d(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  for (size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && orient2d(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}
int hull_side(const std::vector<TriPoint>& hull, TriPoint q) {  // 1 inside, 0 on the boundary, -1 outside
  int side = 1;
  for (size_t i = 0; i < hull.size(); ++i) {
    const int64_t e = orient2d(hull[i], hull[(i + 1) % hull.size()], q);
    if (e < 0) return -1;
    if (e == 0) side = 0;
  }
  return side;
}

// Every pixel of the box around the points: covered by at most one
// triangle, exactly one strictly inside the hull, none outside; and
// rasterize_prior agrees with the definition pixel by pixel, for the
// triangles in either order.
void check_prior(const std::vector<TriPoint>& pts, const std::vector<int>& disp, int w, int h) {
  const std::vector<TriIndices> tris = delaunay_triangulate(pts);
  ASSERT_FALSE(tris.empty());
  const std::vector<TriPoint> hull = hull_of(pts);
  Image<int32_t> mu, owner;
  rasterize_prior(pts, disp, tris, w, h, mu, owner);
  std::vector<TriIndices> reversed(tris.rbegin(), tris.rend());
  Image<int32_t> mu_r, owner_r;
  rasterize_prior(pts, disp, reversed, w, h, mu_r, owner_r);
  EXPECT_EQ(mu.pixels, mu_r.pixels);
  int inside = 0, boundary_covered = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int covering = 0, which = -1;
      for (size_t t = 0; t < tris.size(); ++t)
        if (triangle_covers(pts[tris[t][0]], pts[tris[t][1]], pts[tris[t][2]], {x, y})) ++covering, which = static_cast<int>(t);
      ASSERT_LE(covering, 1) << x << "," << y;
      const int side = hull_side(hull, {x, y});
      if (side > 0) {
        ASSERT_EQ(covering, 1) << x << "," << y;
        ++inside;
      }
      if (side < 0) {
        ASSERT_EQ(covering, 0) << x << "," << y;
      }
      if (side == 0) boundary_covered += covering;
      ASSERT_EQ(owner.at(x, y), which);
      if (which < 0) {
        ASSERT_EQ(mu.at(x, y), kNoPrior);
        continue;
      }
      ASSERT_EQ(owner_r.at(x, y), static_cast<int>(tris.size()) - 1 - which);
      const TriIndices& k = tris[which];
      const i128 n = barycentric_numerator(pts[k[0]], disp[k[0]], pts[k[1]], disp[k[1]], pts[k[2]], disp[k[2]], {x, y});
      ASSERT_TRUE(rounds_correctly(mu.at(x, y), n, orient2d(pts[k[0]], pts[k[1]], pts[k[2]])));
    }
  EXPECT_GT(inside, 0);
  EXPECT_GT(boundary_covered, 0);  // the rule owns some of the hull's boundary
}

TEST(TrianglePrior, EveryPixelOnceOnRandomPoints) {
  std::mt19937 rng(11);
  for (int round = 0; round < 10; ++round) {
    std::uniform_int_distribution<int> cx(0, 79), cy(0, 59), d(0, 63);
    std::vector<TriPoint> pts;
    std::vector<int> disp;
    for (int i = 0; i < 40; ++i) {
      pts.push_back({cx(rng), cy(rng)});
      disp.push_back(d(rng));
    }
    check_prior(pts, disp, 80, 60);
  }
}

TEST(TrianglePrior, EveryPixelOnceOnACandidateLatticeWithHoles) {
  // ELAS's candidates on a 5-pixel grid: every unit cell's pixels lie on
  // shared edges and vertices.
  std::mt19937 rng(3);
  std::bernoulli_distribution hole(0.3);
  std::uniform_int_distribution<int> d(0, 127);
  std::vector<TriPoint> pts;
  std::vector<int> disp;
  for (int y = 2; y < 60; y += 5)
    for (int x = 2; x < 80; x += 5)
      if (!hole(rng)) {
        pts.push_back({x, y});
        disp.push_back(d(rng));
      }
  check_prior(pts, disp, 80, 60);
}

TEST(TrianglePrior, SharedEdgesAgreeBetweenTheirTwoPlanes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> c(0, 200), d(0, 255);
  std::vector<TriPoint> pts;
  std::vector<int> disp;
  for (int i = 0; i < 60; ++i) {
    pts.push_back({c(rng) / 10 * 10, c(rng) / 10 * 10});  // many integer points on edges
    disp.push_back(d(rng));
  }
  const std::vector<TriIndices> tris = delaunay_triangulate(pts);
  std::vector<TrianglePlane> planes;
  for (const TriIndices& k : tris)
    planes.push_back(triangle_plane(pts[k[0]], disp[k[0]], pts[k[1]], disp[k[1]], pts[k[2]], disp[k[2]]));
  int checked = 0;
  for (size_t s = 0; s < tris.size(); ++s)
    for (size_t t = s + 1; t < tris.size(); ++t) {
      std::vector<int32_t> shared;
      for (int32_t u : tris[s])
        if (std::count(tris[t].begin(), tris[t].end(), u)) shared.push_back(u);
      if (shared.size() != 2) continue;
      const TriPoint a = pts[shared[0]], b = pts[shared[1]];
      const int steps = std::gcd(std::abs(b.x - a.x), std::abs(b.y - a.y));
      for (int k = 0; k <= steps; ++k) {
        const TriPoint q{a.x + (b.x - a.x) / steps * k, a.y + (b.y - a.y) / steps * k};
        const i128 ns = static_cast<i128>(planes[s].a) * q.x + static_cast<i128>(planes[s].b) * q.y + planes[s].c;
        const i128 nt = static_cast<i128>(planes[t].a) * q.x + static_cast<i128>(planes[t].b) * q.y + planes[t].c;
        ASSERT_TRUE(ns * planes[t].den == nt * planes[s].den);
        ASSERT_EQ(plane_q4(planes[s], q.x, q.y), plane_q4(planes[t], q.x, q.y));
        ++checked;
      }
    }
  EXPECT_GT(checked, 100);
}

TEST(TrianglePrior, DegenerateInputsGiveNoPrior) {
  const std::vector<TriPoint> pts = {{0, 0}, {8, 0}, {0, 8}, {8, 8}};
  const std::vector<int> disp = {1, 2, 3, 4};
  Image<int32_t> mu, owner;
  // No triangles, a clockwise one, indices out of range: nothing covered.
  for (const std::vector<TriIndices>& tris :
       {std::vector<TriIndices>{}, std::vector<TriIndices>{{0, 2, 1}}, std::vector<TriIndices>{{0, 1, 7}}}) {
    rasterize_prior(pts, disp, tris, 9, 9, mu, owner);
    EXPECT_TRUE(std::all_of(mu.pixels.begin(), mu.pixels.end(), [](int32_t v) { return v == kNoPrior; }));
    EXPECT_TRUE(std::all_of(owner.pixels.begin(), owner.pixels.end(), [](int32_t v) { return v == -1; }));
  }
  // An image smaller than the triangles, and an empty one.
  const std::vector<TriIndices> tris = delaunay_triangulate(pts);
  rasterize_prior(pts, disp, tris, 1, 1, mu, owner);
  ASSERT_EQ(mu.pixels.size(), 1u);
  EXPECT_EQ(mu.at(0, 0), 16);  // the corner (0, 0), d = 1
  rasterize_prior(pts, disp, tris, 0, 0, mu, owner);
  EXPECT_TRUE(mu.pixels.empty());
}

}  // namespace
}  // namespace cs
