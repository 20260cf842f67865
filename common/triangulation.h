// The Delaunay triangulation of ELAS's support points (Geiger et al.; the
// thesis in shared/seeds/003, sections 3.2.4 and 5.3.4), defined so that it
// is unique: the CPU reference here and a later CUDA implementation must give
// the same triangles, bit for bit, whatever their algorithms.
//
// Input. Points with integer coordinates 0 <= x, y < 2^15 (kTriCoordLimit),
// given as a list; a point's index is its position in the list. A point
// outside that range is not a vertex (the predicates below are exact only
// inside it). Of points with equal coordinates only the first (smallest
// index) is a vertex; the others are not. More than kTriMaxPoints points:
// no triangles (the half-edge indices would not fit in 32 bits).
//
// The triangulation. THE Delaunay triangulation of the distinct points under
// a symbolic perturbation of the lifted heights (Simulation of Simplicity,
// Edelsbrunner & Muecke, applied to the lifting only):
//   z_p = x_p^2 + y_p^2 + eps_p,
// eps_p > 0 infinitesimal, eps_p >> eps_q whenever p comes before q in
// row-major order (smaller y first, then smaller x; tri_priority). The
// triangles are the projections of the lower convex hull's faces of the
// lifted points. The perturbation makes every 4 points that are not all on
// one line non-co-planar after lifting, so:
//  (a) the triangulation is unique: any correct algorithm (the Lawson flips
//      here, a parallel GPU algorithm later) gives the same triangles;
//  (b) it does not depend on the order the points are given in (only the
//      indices it reports do);
//  (c) co-circular points (every unit square of a regular lattice) are
//      resolved by the rule, never by the algorithm. For a square
//      (0,0) (1,0) (0,1) (1,1): (0,0) has the largest eps, its lift is
//      above the plane of the three others, so the diagonal is (1,0)-(0,1).
// Every distinct point is a vertex (a point on a hull edge too: its lift is
// below the chord), and every triangle has nonzero area.
//
// Output. Triangles as triples of input indices in positive orientation
// (orient2d > 0: counter-clockwise with the y axis up, so clockwise on an
// image whose y axis points down), each rotated so that its smallest index
// comes first, the list sorted lexicographically: a canonical form, two
// runs compare with ==. Fewer than 3 distinct points, or all of them on one
// line: no triangles (an empty list, not an error).
//
// Predicates (exact; inline and CS_HD so that CUDA kernels can use them).
//  orient2d(a, b, c) = (b - a) x (c - a) = det |ax ay 1; bx by 1; cx cy 1|,
//    > 0 when a, b, c turn counter-clockwise (y up). |value| < 2^31.
//  incircle(a, b, c, d) = det |x y x^2+y^2 1| over the rows a, b, c, d,
//    > 0 when d is inside the circle through a, b, c and orient2d(a,b,c) > 0
//    (the sign flips with the orientation). Evaluated relative to d: each
//    of its three terms is a squared distance (< 2 * 2^30) times twice a
//    triangle's area (< 2^30), so the value is below 6 * 2^60 < 2^63 and
//    64-bit integers hold every product and sum (coordinates past
//    kTriCoordLimit would need wider ones: the flip rounds on the GPU run
//    this test a chain of dependent steps a round, and 128-bit products
//    lengthened it).
//  incircle_perturbed(a, b, c, d): the sign of the same determinant with the
//    perturbed heights; see its comment for the derivation of the signs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stereo_math.h"

namespace cs {

constexpr int32_t kTriCoordLimit = 1 << 15;
constexpr std::size_t kTriMaxPoints = std::size_t{1} << 26;

struct TriPoint {
  int32_t x, y;
};

// Three input indices, positive orientation, smallest first.
using TriIndices = std::array<int32_t, 3>;

// Smaller value: larger perturbation (row-major rank, coordinates alone).
CS_HD uint32_t tri_priority(TriPoint p) {
  return (static_cast<uint32_t>(p.y) << 15) | static_cast<uint32_t>(p.x);
}

CS_HD int64_t orient2d(TriPoint a, TriPoint b, TriPoint c) {
  return static_cast<int64_t>(b.x - a.x) * (c.y - a.y) - static_cast<int64_t>(b.y - a.y) * (c.x - a.x);
}

CS_HD int64_t incircle(TriPoint a, TriPoint b, TriPoint c, TriPoint d) {
  // Subtracting row d from the others and then 2*dx times column x and
  // 2*dy times column y from the height column leaves the determinant
  // unchanged and turns the heights into squared distances to d.
  const int64_t adx = a.x - d.x, ady = a.y - d.y;
  const int64_t bdx = b.x - d.x, bdy = b.y - d.y;
  const int64_t cdx = c.x - d.x, cdy = c.y - d.y;
  const int64_t alift = adx * adx + ady * ady;
  const int64_t blift = bdx * bdx + bdy * bdy;
  const int64_t clift = cdx * cdx + cdy * cdy;
  return alift * (bdx * cdy - bdy * cdx) + blift * (cdx * ady - cdy * adx) + clift * (adx * bdy - ady * bdx);
}

CS_HD int tri_sign(int64_t v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

// The sign of incircle(a, b, c, d) with z_p = x_p^2 + y_p^2 + eps_p.
// The determinant is linear in the height column; expanding
// det |x y z 1| along it (column 3, rows 1..4 = a, b, c, d; cofactor sign
// (-1)^(row+3)) gives the coefficient of each eps_p:
//   eps_a: +det|x y 1|(b, c, d) = +orient2d(b, c, d)
//   eps_b: -det|x y 1|(a, c, d) = -orient2d(a, c, d)
//   eps_c: +det|x y 1|(a, b, d) = +orient2d(a, b, d)
//   eps_d: -det|x y 1|(a, b, c) = -orient2d(a, b, c)
// (check: raising d's lift moves d out of the circle, and for a
// counter-clockwise a, b, c its coefficient is negative). When the exact
// determinant is 0, the sign is that of the coefficient of the largest eps
// (smallest tri_priority) whose coefficient is nonzero. All four are zero
// only when the four points are on one line: the result is then 0. With
// orient2d(a, b, c) != 0 it is never 0.
CS_HD int incircle_perturbed(TriPoint a, TriPoint b, TriPoint c, TriPoint d) {
  const int exact = tri_sign(incircle(a, b, c, d));
  if (exact != 0) return exact;
  // Distinct points have distinct priorities; pick the nonzero coefficient
  // whose point has the smallest one (no sort, no array: four points, in
  // registers on the GPU). best_coef 0: none picked yet.
  uint32_t best_priority = 0;
  int64_t best_coef = 0;
  auto consider = [&](TriPoint p, int64_t coef) {
    if (coef != 0 && (best_coef == 0 || tri_priority(p) < best_priority)) {
      best_priority = tri_priority(p);
      best_coef = coef;
    }
  };
  consider(a, orient2d(b, c, d));
  consider(b, -orient2d(a, c, d));
  consider(c, orient2d(a, b, d));
  consider(d, -orient2d(a, b, c));
  return tri_sign(best_coef);
}

// The triangulation defined above, in canonical form. O(n log n) expected
// (sort by distance from the bounding box's centre, radial sweep, Lawson
// flips after each insertion).
std::vector<TriIndices> delaunay_triangulate(const std::vector<TriPoint>& points);

}  // namespace cs
