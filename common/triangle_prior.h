// ELAS's disparity prior from the support points' triangles (the thesis in
// shared/seeds/003, sections 3.2.5 and 5.3.5): in each triangle of the
// triangulation (triangulation.h) the plane through its corners'
// disparities gives the prior mean mu at the pixels the triangle covers.
// Stated in integers so that the CPU reference and a CUDA implementation
// give the same mu at the same pixels, bit for bit, whatever order they
// visit the triangles in:
//
// Pixels are the integer points (x, y) of the image (a pixel's centre),
// in the coordinates of the support points.
//
// Coverage (the top-left rule, made exact). A triangle with corners p0, p1,
// p2 in positive orientation (orient2d > 0) covers pixel q when for each of
// its directed edges i -> j (p0 -> p1, p1 -> p2, p2 -> p0) the edge
// function E = orient2d(p_i, p_j, q) is > 0, or is 0 and the edge owns its
// points: dy = y_j - y_i < 0, or dy = 0 and dx = x_j - x_i > 0. This is the
// sign E would have at q + (delta, delta^2) for an infinitesimal delta > 0
// (dE/dx = -dy, dE/dy = dx): every pixel is judged as a point that lies on
// no edge. So a pixel strictly inside the triangulation's hull is covered by
// exactly one triangle, on a shared edge or vertex too; one on the hull's
// boundary by at most one (where the hull's edge owns it); one outside the
// hull by none.
//
// The plane. With den = orient2d(p0, p1, p2) > 0 and the corners'
// disparities d0, d1, d2 (integers, |d| < 2^15),
//   mu(x, y) = (a x + b y + c) / den, the affine function equal to d_k at p_k:
//   a = d0 (y1 - y2) + d1 (y2 - y0) + d2 (y0 - y1)
//   b = d0 (x2 - x1) + d1 (x0 - x2) + d2 (x1 - x0)
//   c = d0 (x1 y2 - x2 y1) + d1 (x2 y0 - x0 y2) + d2 (x0 y1 - x1 y0)
// (so a x + b y + c = d0 orient2d(q, p1, p2) + d1 orient2d(p0, q, p2) + d2
// orient2d(p0, p1, q): the barycentric weights times den). Every term fits
// in 64 bits with coordinates below 2^15: |a|, |b| < 3 * 2^30, |c| < 3 *
// 2^45, |a x + b y + c| < 2^48.
// mu in Q4 (sixteenths) is that quotient times 16 rounded to the nearest,
// halves upwards: floor((32 (a x + b y + c) + den) / (2 den)), the floor of
// an exact integer division. At a corner it is 16 d_k exactly.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "stereo.h"
#include "stereo_math.h"
#include "triangulation.h"

namespace cs {

struct TrianglePlane {
  int64_t a = 0, b = 0, c = 0;
  int64_t den = 0;  // orient2d of the corners: > 0 for a triangle of the triangulation
};

CS_HD TrianglePlane triangle_plane(TriPoint p0, int d0, TriPoint p1, int d1, TriPoint p2, int d2) {
  TrianglePlane t;
  t.a = static_cast<int64_t>(d0) * (p1.y - p2.y) + static_cast<int64_t>(d1) * (p2.y - p0.y) +
        static_cast<int64_t>(d2) * (p0.y - p1.y);
  t.b = static_cast<int64_t>(d0) * (p2.x - p1.x) + static_cast<int64_t>(d1) * (p0.x - p2.x) +
        static_cast<int64_t>(d2) * (p1.x - p0.x);
  const int64_t c0 = static_cast<int64_t>(p1.x) * p2.y - static_cast<int64_t>(p2.x) * p1.y;
  const int64_t c1 = static_cast<int64_t>(p2.x) * p0.y - static_cast<int64_t>(p0.x) * p2.y;
  const int64_t c2 = static_cast<int64_t>(p0.x) * p1.y - static_cast<int64_t>(p1.x) * p0.y;
  t.c = d0 * c0 + d1 * c1 + d2 * c2;
  t.den = orient2d(p0, p1, p2);
  return t;
}

// floor(n / d) for d > 0, any sign of n.
CS_HD int64_t floor_div(int64_t n, int64_t d) {
  const int64_t q = n / d;
  return (n % d != 0 && n < 0) ? q - 1 : q;
}

// The numerator of plane_q4's quotient at (x, y): 32 (a x + b y + c) + den
// (the denominator is 2 den).
CS_HD int64_t plane_q4_numerator(const TrianglePlane& t, int x, int y) {
  return 32 * (t.a * x + t.b * y + t.c) + t.den;
}

// mu at (x, y) in Q4, rounded to the nearest, halves upwards (den > 0).
CS_HD int32_t plane_q4(const TrianglePlane& t, int x, int y) {
  return static_cast<int32_t>(floor_div(plane_q4_numerator(t, x, y), 2 * t.den));
}

// Whether directed edge i -> j owns the pixels on it (the header's rule).
CS_HD bool edge_owns_its_points(TriPoint i, TriPoint j) {
  const int dy = j.y - i.y;
  return dy < 0 || (dy == 0 && j.x - i.x > 0);
}

// Whether the triangle p0, p1, p2 (positive orientation) covers pixel q.
CS_HD bool triangle_covers(TriPoint p0, TriPoint p1, TriPoint p2, TriPoint q) {
  const TriPoint p[3] = {p0, p1, p2};
  for (int k = 0; k < 3; ++k) {
    const TriPoint i = p[k], j = p[k == 2 ? 0 : k + 1];
    const int64_t e = orient2d(i, j, q);
    if (e < 0 || (e == 0 && !edge_owns_its_points(i, j))) return false;
  }
  return true;
}

// The prior over a width x height image: for every pixel covered by a
// triangle (indices into points, as delaunay_triangulate gives them; the
// corners' disparities in disparity[], one a point), mu_q4 = plane_q4 of
// that triangle and triangle = its index in triangles; elsewhere mu_q4 =
// kNoPrior and triangle = -1. Triangles that are not in positive
// orientation, or whose indices are out of range, cover nothing.
constexpr int32_t kNoPrior = INT32_MIN;
void rasterize_prior(const std::vector<TriPoint>& points, const std::vector<int>& disparity,
                     const std::vector<TriIndices>& triangles, int width, int height, Image<int32_t>& mu_q4,
                     Image<int32_t>& triangle);

}  // namespace cs
