// The support-point triangulation (common/triangulation.h): exact
// predicates against hand-computed values, the perturbed incircle's signs
// against the determinant with explicit integer perturbations, and the
// triangulation against independent checks (validity, empty circles, a
// brute-force construction of the perturbed Delaunay triangulation,
// invariance under shuffles).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "triangulation.h"

namespace cs {
namespace {

using Triangles = std::vector<TriIndices>;
using i128 = __int128;

std::string to_string(i128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string s;
  while (v != 0) {
    const int digit = static_cast<int>(v % 10);
    s.push_back(static_cast<char>('0' + (digit < 0 ? -digit : digit)));
    v /= 10;
  }
  if (negative) s.push_back('-');
  return std::string(s.rbegin(), s.rend());
}

// ------------------------------------------------------------ predicates

TEST(TriPredicates, Orient2dHandValues) {
  EXPECT_EQ(orient2d({0, 0}, {1, 0}, {0, 1}), 1);
  EXPECT_EQ(orient2d({0, 0}, {0, 1}, {1, 0}), -1);
  EXPECT_EQ(orient2d({0, 0}, {2, 1}, {4, 2}), 0);
  EXPECT_EQ(orient2d({3, 7}, {10, 2}, {5, 9}), (10 - 3) * (9 - 7) - (2 - 7) * (5 - 3));  // 14 + 10
  // At the bounds: a triangle in the square has twice its area at most
  // 32767^2, the largest magnitude.
  EXPECT_EQ(orient2d({0, 0}, {32767, 0}, {0, 32767}), int64_t{1073676289});
  EXPECT_EQ(orient2d({32767, 32767}, {0, 32767}, {32767, 0}), int64_t{1073676289});
  EXPECT_EQ(orient2d({0, 32767}, {32767, 0}, {32767, 32767}), int64_t{1073676289});
}

// For a = (0,0), b = (P,0), c = (0,Q) the circle is x^2 + y^2 - P x - Q y = 0
// and the determinant, linear in d's height with coefficient
// -orient2d(a,b,c) = -P Q and zero on the circle, is
// -P Q (dx^2 + dy^2 - P dx - Q dy).
i128 right_triangle_incircle(int64_t P, int64_t Q, int64_t dx, int64_t dy) {
  return -static_cast<i128>(P * Q) * (dx * dx + dy * dy - P * dx - Q * dy);
}

TEST(TriPredicates, IncircleHandValues) {
  EXPECT_TRUE(incircle({0, 0}, {2, 0}, {0, 2}, {1, 1}) == 8);     // the centre: -4 * (2 - 4)
  EXPECT_TRUE(incircle({0, 0}, {2, 0}, {0, 2}, {2, 2}) == 0);     // on the circle
  EXPECT_TRUE(incircle({0, 0}, {2, 0}, {0, 2}, {3, 3}) == -24);   // outside: -4 * (18 - 12)
  EXPECT_TRUE(incircle({0, 0}, {0, 2}, {2, 0}, {1, 1}) == -8);    // clockwise: the sign flips
  EXPECT_TRUE(incircle({0, 0}, {1, 0}, {2, 0}, {1, 1}) == 2);     // a, b, c on a line: the side of d
}

TEST(TriPredicates, IncircleExactAtTheCoordinateBounds) {
  const int M = 32767;
  struct Case {
    int P, Q, dx, dy;
  } cases[] = {
      {32766, 32766, 16383, 16383},  // the centre: 32766^4 / 2 = 576320027699445768 (~2^59)
      {M, M, M, M},                  // the fourth corner of the square: on the circle
      {M, M, 1, 1},                  // 2 M^2 (M - 1)
      {M, M - 1, M, M},              // just outside: -M (M - 1) M
      {M, 1, M, M},                  // a thin triangle and a far point
      {1, M, M, 0},                  // a far point on the x axis
      {M, M, M - 1, M},              // inside by a hair
  };
  for (const Case& k : cases) {
    const i128 expected = right_triangle_incircle(k.P, k.Q, k.dx, k.dy);
    const i128 got = incircle({0, 0}, {k.P, 0}, {0, k.Q}, {k.dx, k.dy});
    EXPECT_TRUE(got == expected) << to_string(got) << " != " << to_string(expected);
    // Translation and a rotation of the arguments leave it unchanged; the
    // same circle, far from the origin, mirrored into the other corner.
    const i128 rotated = incircle({k.P, 0}, {0, k.Q}, {0, 0}, {k.dx, k.dy});
    EXPECT_TRUE(rotated == expected);
    const i128 mirrored = incircle({M, M}, {M - k.P, M}, {M, M - k.Q}, {M - k.dx, M - k.dy});
    EXPECT_TRUE(mirrored == expected) << to_string(mirrored);  // a point reflection keeps orientation
  }
  EXPECT_TRUE(right_triangle_incircle(32766, 32766, 16383, 16383) == i128{576320027699445768});
  EXPECT_TRUE(right_triangle_incircle(M, M, 1, 1) == i128{70360154570748});
}

// The 4x4 determinant |x y z 1| by the Leibniz formula (24 products), in
// 128-bit integers: independent of the predicates' expansion.
i128 det4(const i128 m[4][4]) {
  int perm[4] = {0, 1, 2, 3};
  i128 sum = 0;
  do {
    int inversions = 0;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) inversions += perm[i] > perm[j];
    i128 product = 1;
    for (int r = 0; r < 4; ++r) product *= m[r][perm[r]];
    sum += inversions % 2 ? -product : product;
  } while (std::next_permutation(perm, perm + 4));
  return sum;
}

// The perturbed determinant made concrete: z_p = (x^2 + y^2) K^4 + K^(3 - rank)
// with rank 0 for the point of smallest tri_priority. With K = 2^16 and
// coordinates below 128 every orient2d is below K - 1 in magnitude, so the
// exact part decides when it is nonzero and otherwise the highest-ranked
// nonzero coefficient does. Entries stay below 2^80, products below 2^96.
int explicit_perturbed_sign(const TriPoint q[4]) {
  const i128 K = i128{1} << 16;
  i128 m[4][4];
  for (int r = 0; r < 4; ++r) {
    int rank = 0;
    for (int s = 0; s < 4; ++s) rank += tri_priority(q[s]) < tri_priority(q[r]);
    i128 eps = 1;
    for (int k = 0; k < 3 - rank; ++k) eps *= K;
    m[r][0] = q[r].x;
    m[r][1] = q[r].y;
    m[r][2] = static_cast<i128>(q[r].x * q[r].x + q[r].y * q[r].y) * K * K * K * K + eps;
    m[r][3] = 1;
  }
  const i128 d = det4(m);
  return d > 0 ? 1 : (d < 0 ? -1 : 0);
}

// Co-circular (and some degenerate) quadruples, coordinates below 128.
std::vector<std::array<TriPoint, 4>> test_quadruples(unsigned seed) {
  std::mt19937 rng(seed);
  const auto coord = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<std::array<TriPoint, 4>> quads;
  for (int i = 0; i < 300; ++i) {  // lattice squares and rectangles
    const int x = coord(0, 60), y = coord(0, 60), w = coord(1, 60), h = i % 2 ? w : coord(1, 60);
    quads.push_back({TriPoint{x, y}, TriPoint{x + w, y}, TriPoint{x, y + h}, TriPoint{x + w, y + h}});
  }
  // Circles with many lattice points: 5^2 = 3^2 + 4^2, 13^2 = 5^2 + 12^2,
  // 25^2 = 7^2 + 24^2 = 15^2 + 20^2, 10^2 = 6^2 + 8^2.
  for (int radius : {5, 10, 13, 25}) {
    std::vector<std::pair<int, int>> offsets;
    for (int dx = -radius; dx <= radius; ++dx)
      for (int dy = -radius; dy <= radius; ++dy)
        if (dx * dx + dy * dy == radius * radius) offsets.push_back({dx, dy});
    for (int i = 0; i < 300; ++i) {
      const int cx = coord(radius, 127 - radius), cy = coord(radius, 127 - radius);
      std::shuffle(offsets.begin(), offsets.end(), rng);
      std::array<TriPoint, 4> q;
      for (int k = 0; k < 4; ++k) q[k] = {cx + offsets[k].first, cy + offsets[k].second};
      quads.push_back(q);
    }
  }
  for (int i = 0; i < 300; ++i) {  // three or four on a line, and random ones
    const int x = coord(0, 40), y = coord(0, 40), dx = coord(-3, 3), dy = coord(0, 3);
    std::array<TriPoint, 4> q = {TriPoint{x, y}, TriPoint{x + dx, y + dy}, TriPoint{x + 2 * dx, y + 2 * dy},
                                 TriPoint{coord(0, 127), coord(0, 127)}};
    if (i % 3 == 0) q[3] = {x + 3 * dx, y + 3 * dy};
    if (i % 3 == 1) q = {TriPoint{coord(0, 127), coord(0, 127)}, TriPoint{coord(0, 127), coord(0, 127)},
                         TriPoint{coord(0, 127), coord(0, 127)}, TriPoint{coord(0, 127), coord(0, 127)}};
    quads.push_back(q);
  }
  return quads;
}

bool distinct(const std::array<TriPoint, 4>& q) {
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (q[i].x == q[j].x && q[i].y == q[j].y) return false;
  return true;
}

TEST(TriPredicates, PerturbedSignsMatchExplicitPerturbationInEveryArgumentOrder) {
  int checked = 0, ties = 0;
  for (const auto& quad : test_quadruples(7)) {
    if (!distinct(quad)) continue;
    if (incircle(quad[0], quad[1], quad[2], quad[3]) == 0) ++ties;
    int perm[4] = {0, 1, 2, 3};
    do {
      const TriPoint q[4] = {quad[perm[0]], quad[perm[1]], quad[perm[2]], quad[perm[3]]};
      const int expected = explicit_perturbed_sign(q);
      ASSERT_EQ(incircle_perturbed(q[0], q[1], q[2], q[3]), expected)
          << "(" << q[0].x << "," << q[0].y << ") (" << q[1].x << "," << q[1].y << ") (" << q[2].x << ","
          << q[2].y << ") (" << q[3].x << "," << q[3].y << ")";
      // Only four points on one line give no sign.
      if (orient2d(q[0], q[1], q[2]) != 0) {
        ASSERT_NE(expected, 0);
      }
      ++checked;
    } while (std::next_permutation(perm, perm + 4));
  }
  EXPECT_GT(ties, 1200);  // most quadruples are co-circular: the rule is what is tested
  EXPECT_GT(checked, 24 * 1500);
}

TEST(TriPredicates, PerturbedSquareHandSigns) {
  // (0,0) has the largest perturbation: raised, it is outside the circle of
  // the other three, and each triangle on the diagonal (1,0)-(0,1) has the
  // fourth point outside its circle.
  EXPECT_EQ(incircle_perturbed({1, 0}, {1, 1}, {0, 1}, {0, 0}), -1);
  EXPECT_EQ(incircle_perturbed({0, 0}, {1, 0}, {0, 1}, {1, 1}), -1);
  EXPECT_EQ(incircle_perturbed({0, 0}, {1, 0}, {1, 1}, {0, 1}), 1);  // (0,1) inside: (0,0)-(1,1) is not an edge
  EXPECT_EQ(incircle_perturbed({0, 0}, {1, 1}, {0, 1}, {1, 0}), 1);
  EXPECT_EQ(incircle_perturbed({0, 0}, {1, 0}, {2, 0}, {3, 0}), 0);  // all on a line
}

// ------------------------------------------------------------ checks

int64_t cross(TriPoint o, TriPoint a, TriPoint b) { return orient2d(o, a, b); }

// Index of the vertex for each input point: the first of equal in-range points.
std::vector<int32_t> expected_vertices(const std::vector<TriPoint>& points) {
  std::map<std::pair<int, int>, int32_t> first;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const TriPoint p = points[i];
    if (p.x < 0 || p.y < 0 || p.x >= kTriCoordLimit || p.y >= kTriCoordLimit) continue;
    first.emplace(std::make_pair(p.x, p.y), static_cast<int32_t>(i));
  }
  std::vector<int32_t> v;
  for (const auto& kv : first) v.push_back(kv.second);
  std::sort(v.begin(), v.end());
  return v;
}

// Andrew's monotone chain, strictly convex corners; twice the hull's area.
int64_t doubled_hull_area(std::vector<TriPoint> pts) {
  std::sort(pts.begin(), pts.end(), [](TriPoint a, TriPoint b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
  if (pts.size() < 3) return 0;
  std::vector<TriPoint> hull(2 * pts.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (std::size_t i = pts.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  int64_t area = 0;
  for (std::size_t i = 0; i + 1 < k; ++i)
    area += static_cast<int64_t>(hull[i].x) * hull[i + 1].y - static_cast<int64_t>(hull[i + 1].x) * hull[i].y;
  return area;
}

// A valid triangulation of the vertices' convex hull, in canonical form.
void expect_valid(const std::vector<TriPoint>& points, const Triangles& tris) {
  const std::vector<int32_t> vertices = expected_vertices(points);
  std::vector<TriPoint> vpts;
  for (int32_t v : vertices) vpts.push_back(points[v]);
  const int64_t hull_area = doubled_hull_area(vpts);
  if (hull_area == 0) {  // fewer than 3 points, or all on a line
    EXPECT_TRUE(tris.empty()) << tris.size() << " triangles for a degenerate input";
    return;
  }
  ASSERT_FALSE(tris.empty());
  EXPECT_TRUE(std::is_sorted(tris.begin(), tris.end()));
  EXPECT_TRUE(std::adjacent_find(tris.begin(), tris.end()) == tris.end());
  std::vector<char> is_vertex(points.size(), 0), used(points.size(), 0);
  for (int32_t v : vertices) is_vertex[v] = 1;
  std::map<std::pair<int32_t, int32_t>, int> directed;
  int64_t area = 0;
  for (const TriIndices& t : tris) {
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(t[k] >= 0 && t[k] < static_cast<int32_t>(points.size()) && is_vertex[t[k]]) << t[k];
      used[t[k]] = 1;
      ++directed[{t[k], t[(k + 1) % 3]}];
    }
    EXPECT_LT(t[0], t[1]);
    EXPECT_LT(t[0], t[2]);
    const int64_t o = orient2d(points[t[0]], points[t[1]], points[t[2]]);
    ASSERT_GT(o, 0) << t[0] << " " << t[1] << " " << t[2];
    area += o;
  }
  EXPECT_EQ(area, hull_area);
  for (int32_t v : vertices) EXPECT_TRUE(used[v]) << "point " << v << " is not a vertex";
  // Each side once in each direction at most; a side with one direction is
  // on the hull (every point on its inner side or on its line).
  std::size_t hull_edges = 0, edges = 0;
  for (const auto& kv : directed) {
    ASSERT_EQ(kv.second, 1) << "half-edge " << kv.first.first << "->" << kv.first.second << " repeated";
    const bool paired = directed.count({kv.first.second, kv.first.first}) != 0;
    if (paired) {
      if (kv.first.first < kv.first.second) ++edges;
      continue;
    }
    ++edges;
    ++hull_edges;
    const TriPoint a = points[kv.first.first], b = points[kv.first.second];
    for (const TriPoint& p : vpts) ASSERT_GE(orient2d(a, b, p), 0) << "side not on the hull";
  }
  // Euler for a triangulated disc (V - E + F = 1) and T = 2V - 2 - h.
  const int64_t V = static_cast<int64_t>(vertices.size()), E = static_cast<int64_t>(edges),
                F = static_cast<int64_t>(tris.size());
  EXPECT_EQ(V - E + F, 1);
  EXPECT_EQ(F, 2 * V - 2 - static_cast<int64_t>(hull_edges));
}

// Every side locally Delaunay: exactly (no point strictly inside) and under
// the rule (the opposite vertex outside the perturbed circle).
void expect_locally_delaunay(const std::vector<TriPoint>& points, const Triangles& tris) {
  std::map<std::pair<int32_t, int32_t>, int32_t> apex;  // half-edge -> opposite vertex
  for (const TriIndices& t : tris)
    for (int k = 0; k < 3; ++k) apex[{t[k], t[(k + 1) % 3]}] = t[(k + 2) % 3];
  for (const auto& kv : apex) {
    const auto other = apex.find({kv.first.second, kv.first.first});
    if (other == apex.end()) continue;
    const TriPoint a = points[kv.first.first], b = points[kv.first.second], c = points[kv.second],
                   d = points[other->second];
    ASSERT_TRUE(incircle(a, b, c, d) <= 0);
    ASSERT_EQ(incircle_perturbed(a, b, c, d), -1);
  }
}

// No vertex strictly inside any triangle's circle, and none inside its
// perturbed circle: O(T n).
void expect_empty_circles(const std::vector<TriPoint>& points, const Triangles& tris) {
  const std::vector<int32_t> vertices = expected_vertices(points);
  for (const TriIndices& t : tris) {
    const TriPoint a = points[t[0]], b = points[t[1]], c = points[t[2]];
    for (int32_t v : vertices) {
      if (v == t[0] || v == t[1] || v == t[2]) continue;
      ASSERT_TRUE(incircle(a, b, c, points[v]) <= 0);
      ASSERT_EQ(incircle_perturbed(a, b, c, points[v]), -1);
    }
  }
}

// The definition itself, O(n^4): every positively oriented triple whose
// perturbed circle holds no other vertex.
Triangles brute_force_delaunay(const std::vector<TriPoint>& points) {
  const std::vector<int32_t> v = expected_vertices(points);
  Triangles tris;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i + 1; j < v.size(); ++j)
      for (std::size_t k = j + 1; k < v.size(); ++k) {
        int32_t a = v[i], b = v[j], c = v[k];
        const int64_t o = orient2d(points[a], points[b], points[c]);
        if (o == 0) continue;
        if (o < 0) std::swap(b, c);
        bool empty = true;
        for (std::size_t l = 0; l < v.size() && empty; ++l)
          if (l != i && l != j && l != k) empty = incircle_perturbed(points[a], points[b], points[c], points[v[l]]) < 0;
        if (empty) tris.push_back({a, b, c});
      }
  std::sort(tris.begin(), tris.end());
  return tris;
}

// The triangulation of the points in another order, in the original indices.
Triangles triangulate_shuffled(const std::vector<TriPoint>& points, std::mt19937& rng) {
  std::vector<int32_t> perm(points.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<TriPoint> shuffled(points.size());
  for (std::size_t i = 0; i < perm.size(); ++i) shuffled[i] = points[perm[i]];
  Triangles tris = delaunay_triangulate(shuffled);
  for (TriIndices& t : tris) {
    for (int32_t& v : t) v = perm[v];
    std::rotate(t.begin(), std::min_element(t.begin(), t.end()), t.end());
  }
  std::sort(tris.begin(), tris.end());
  return tris;
}

std::vector<TriPoint> random_points(std::size_t n, int width, int height, unsigned seed, bool distinct_only) {
  std::mt19937 rng(seed);
  std::set<std::pair<int, int>> seen;
  std::vector<TriPoint> pts;
  while (pts.size() < n) {
    const TriPoint p = {std::uniform_int_distribution<int>(0, width - 1)(rng),
                        std::uniform_int_distribution<int>(0, height - 1)(rng)};
    if (distinct_only && !seen.insert({p.x, p.y}).second) continue;
    pts.push_back(p);
  }
  return pts;
}

// A lattice (ELAS's candidate grid: every step-th pixel) with a share of
// its points left out.
std::vector<TriPoint> lattice(int columns, int rows, int step, double holes, unsigned seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution hole(holes);
  std::vector<TriPoint> pts;
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i)
      if (!hole(rng)) pts.push_back({i * step, j * step});
  return pts;
}

// ------------------------------------------------------------ degenerate inputs

TEST(Triangulation, FewerThanThreePointsOrALineGiveNoTriangles) {
  EXPECT_TRUE(delaunay_triangulate({}).empty());
  EXPECT_TRUE(delaunay_triangulate({{5, 5}}).empty());
  EXPECT_TRUE(delaunay_triangulate({{5, 5}, {6, 9}}).empty());
  EXPECT_TRUE(delaunay_triangulate({{5, 5}, {5, 5}, {5, 5}}).empty());           // one point, three times
  EXPECT_TRUE(delaunay_triangulate({{1, 1}, {2, 2}, {1, 1}, {2, 2}}).empty());   // two points
  EXPECT_TRUE(delaunay_triangulate({{0, 0}, {2, 1}, {4, 2}}).empty());           // three on a line
  std::vector<TriPoint> line;
  for (int i = 0; i < 100; ++i) line.push_back({(i * 37) % 100 * 3, (i * 37) % 100 * 2 + 7});
  EXPECT_TRUE(delaunay_triangulate(line).empty());
  std::vector<TriPoint> column;
  for (int i = 0; i < 50; ++i) column.push_back({9, 49 - i});
  EXPECT_TRUE(delaunay_triangulate(column).empty());
}

TEST(Triangulation, ThreePointsGiveOneTriangleInPositiveOrientation) {
  const std::vector<TriPoint> pts = {{10, 0}, {0, 0}, {0, 10}};  // clockwise as given
  EXPECT_EQ(delaunay_triangulate(pts), (Triangles{{0, 2, 1}}));
  EXPECT_EQ(delaunay_triangulate({{0, 0}, {10, 0}, {0, 10}}), (Triangles{{0, 1, 2}}));
}

TEST(Triangulation, SquareTakesTheDiagonalAwayFromTheFirstPointInRowMajorOrder) {
  // (0,0) has the largest perturbation: the diagonal is (1,0)-(0,1).
  const std::vector<TriPoint> square = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  const Triangles expected = {{0, 1, 2}, {1, 3, 2}};
  EXPECT_EQ(delaunay_triangulate(square), expected);
  EXPECT_EQ(brute_force_delaunay(square), expected);
  // Any order, any size and place: the same diagonal, by coordinates.
  const std::vector<TriPoint> big = {{32767, 32767}, {100, 32767}, {32767, 100}, {100, 100}};
  EXPECT_EQ(delaunay_triangulate(big), (Triangles{{0, 1, 2}, {1, 3, 2}}));  // diagonal (100,32767)-(32767,100)
}

TEST(Triangulation, CoCircularFourTakeTheDiagonalAwayFromTheFirstInRowMajorOrder) {
  // On the circle of radius 5 about (5,5). A square cannot tell row-major
  // order from its reverse or from column-major order; these can: the
  // diagonal is the pair without the point of the largest perturbation.
  // (2,1) first (reversed: (8,9)): the diagonal (8,1)-(8,9).
  EXPECT_EQ(delaunay_triangulate({{2, 1}, {8, 1}, {10, 5}, {8, 9}}), (Triangles{{0, 1, 3}, {1, 2, 3}}));
  // (8,1) first (column-major: (1,2)): the diagonal (1,2)-(10,5).
  EXPECT_EQ(delaunay_triangulate({{1, 2}, {8, 1}, {10, 5}, {2, 9}}), (Triangles{{0, 1, 2}, {0, 2, 3}}));
}

TEST(Triangulation, DuplicatesKeepTheFirstIndex) {
  const std::vector<TriPoint> pts = {{0, 0}, {4, 0}, {4, 0}, {0, 4}, {0, 0}, {0, 4}, {3, 3}};
  const Triangles tris = delaunay_triangulate(pts);
  expect_valid(pts, tris);
  for (const TriIndices& t : tris)
    for (int32_t v : t) EXPECT_TRUE(v == 0 || v == 1 || v == 3 || v == 6) << v;
  EXPECT_EQ(tris, brute_force_delaunay(pts));
  EXPECT_EQ(tris, (Triangles{{0, 1, 6}, {0, 6, 3}}));
}

TEST(Triangulation, PointsOutsideTheRangeAreNotVertices) {
  const std::vector<TriPoint> pts = {{-1, 0}, {0, 0}, {32768, 5}, {10, 0}, {0, 10}, {3, -7}, {5, 40000}};
  EXPECT_EQ(delaunay_triangulate(pts), (Triangles{{1, 3, 4}}));
}

TEST(Triangulation, PointsOnTheImageBounds) {
  const int M = kTriCoordLimit - 1;
  std::vector<TriPoint> pts = {{0, 0}, {M, 0}, {0, M}, {M, M}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> any(0, M);
  for (int i = 0; i < 10; ++i) {
    pts.push_back({any(rng), 0});
    pts.push_back({any(rng), M});
    pts.push_back({0, any(rng)});
    pts.push_back({M, any(rng)});
    pts.push_back({any(rng), any(rng)});
  }
  const Triangles tris = delaunay_triangulate(pts);
  expect_valid(pts, tris);
  expect_empty_circles(pts, tris);
  EXPECT_EQ(tris, brute_force_delaunay(pts));
  EXPECT_EQ(tris, triangulate_shuffled(pts, rng));
  // The four corners alone: the square rule at full size.
  EXPECT_EQ(delaunay_triangulate({{0, 0}, {M, 0}, {0, M}, {M, M}}), (Triangles{{0, 1, 2}, {1, 3, 2}}));
}

TEST(Triangulation, CollinearStartThenApex) {
  // The sweep's first points on one line (a column, then a slanted line),
  // the apex to either side.
  for (int side : {-1, 1}) {
    std::vector<TriPoint> pts;
    for (int i = 0; i < 8; ++i) pts.push_back({20, 5 + 3 * i});
    pts.push_back({20 + side * 7, 12});  // before or after the column
    pts.push_back({40, 40});
    std::vector<TriPoint> slanted;
    for (int i = 0; i < 8; ++i) slanted.push_back({2 + 2 * i, 30 + side * 3 * i});
    slanted.push_back({9, 31});
    slanted.push_back({30, 20});
    for (const auto& set : {pts, slanted}) {
      const Triangles tris = delaunay_triangulate(set);
      expect_valid(set, tris);
      EXPECT_EQ(tris, brute_force_delaunay(set));
    }
  }
}

// ------------------------------------------------------------ Delaunay and uniqueness

TEST(Triangulation, RandomSetsMatchTheBruteForceDefinition) {
  for (unsigned seed = 0; seed < 40; ++seed) {
    // Small ranges for many ties (co-circular and collinear points, duplicates).
    const int range = seed % 2 ? 8 : 200;
    const std::vector<TriPoint> pts = random_points(3 + seed * 2, range, range, seed, false);
    const Triangles tris = delaunay_triangulate(pts);
    expect_valid(pts, tris);
    expect_empty_circles(pts, tris);
    EXPECT_EQ(tris, brute_force_delaunay(pts)) << "seed " << seed;
    EXPECT_EQ(tris, delaunay_triangulate(pts));  // twice: the same
  }
}

TEST(Triangulation, ShufflesGiveTheSameTriangles) {
  std::mt19937 rng(5);
  for (unsigned seed = 0; seed < 6; ++seed) {
    const std::vector<TriPoint> pts = random_points(500, seed % 2 ? 40 : 1920, seed % 2 ? 40 : 1080, seed, true);
    const Triangles tris = delaunay_triangulate(pts);
    expect_valid(pts, tris);
    expect_locally_delaunay(pts, tris);
    for (int shuffle = 0; shuffle < 5; ++shuffle) EXPECT_EQ(triangulate_shuffled(pts, rng), tris);
  }
}

TEST(Triangulation, LatticesAreResolvedByTheRule) {
  std::mt19937 rng(17);
  // Small lattices (step 5 and 1, holes or none) against the definition.
  for (unsigned seed = 0; seed < 8; ++seed) {
    const std::vector<TriPoint> pts = lattice(9 + seed % 3, 7, seed % 2 ? 5 : 1, seed < 4 ? 0.0 : 0.3, seed);
    const Triangles tris = delaunay_triangulate(pts);
    expect_valid(pts, tris);
    EXPECT_EQ(tris, brute_force_delaunay(pts)) << "seed " << seed;
    EXPECT_EQ(triangulate_shuffled(pts, rng), tris);
  }
  // A full lattice: every unit square split along its (1,0)-(0,1) diagonal.
  const std::vector<TriPoint> full = lattice(6, 5, 5, 0.0, 1);
  Triangles expected;
  for (int j = 0; j + 1 < 5; ++j)
    for (int i = 0; i + 1 < 6; ++i) {
      const int32_t a = j * 6 + i, b = a + 1, c = a + 6, d = c + 1;
      expected.push_back({a, b, c});
      expected.push_back({b, d, c});
    }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(delaunay_triangulate(full), expected);
  // ELAS's 20 x 15 candidate grid, step 5, random holes.
  for (unsigned seed = 0; seed < 4; ++seed) {
    const std::vector<TriPoint> pts = lattice(20, 15, 5, 0.1 * seed, 100 + seed);
    const Triangles tris = delaunay_triangulate(pts);
    expect_valid(pts, tris);
    expect_empty_circles(pts, tris);
    for (int shuffle = 0; shuffle < 4; ++shuffle) EXPECT_EQ(triangulate_shuffled(pts, rng), tris);
  }
}

// ------------------------------------------------------------ size

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Triangulation, FiftyThousandRandomPointsAndAFullHdCandidateGrid) {
  // 1920 x 1080: some points repeat, as support points of a frame would not,
  // but duplicates must cost nothing.
  const std::vector<TriPoint> pts = random_points(50000, 1920, 1080, 42, false);
  auto start = std::chrono::steady_clock::now();
  const Triangles tris = delaunay_triangulate(pts);
  std::printf("[ time     ] 50000 random points: %zu triangles in %.1f ms\n", tris.size(), 1e3 * seconds_since(start));
  expect_valid(pts, tris);
  expect_locally_delaunay(pts, tris);

  // ELAS's candidate grid at 1920 x 1080 (step 5), 30 % left out.
  const std::vector<TriPoint> grid = lattice(384, 216, 5, 0.3, 43);
  start = std::chrono::steady_clock::now();
  const Triangles grid_tris = delaunay_triangulate(grid);
  std::printf("[ time     ] 384 x 216 lattice, 30 %% holes (%zu points): %zu triangles in %.1f ms\n", grid.size(),
              grid_tris.size(), 1e3 * seconds_since(start));
  expect_valid(grid, grid_tris);
  expect_locally_delaunay(grid, grid_tris);
  std::mt19937 rng(44);
  EXPECT_EQ(triangulate_shuffled(grid, rng), grid_tris);
}

}  // namespace
}  // namespace cs
