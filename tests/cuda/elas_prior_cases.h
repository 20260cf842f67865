// ELAS's prior on the GPU (cuda/elas_prior.h) against the CPU reference:
// the reference itself (what prior_of in common/elas_dense.cpp makes of a
// view's support points), the support grids the tests draw, and the
// comparisons. No CUDA header: the CPU emulation of the kernels
// (test_elas_triangulation_emulation.cpp) and the GPU test
// (test_elas_prior.cpp) share it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

#include "elas_prior_steps.h"
#include "elas_support.h"
#include "stages.h"
#include "stereo.h"
#include "synthetic.h"
#include "triangle_prior.h"
#include "triangulation.h"

namespace cs::cuda::elas_prior_cases {

// A view's support points as elas_match hands them to prior_of: the grid's
// cells with d >= 0 in row-major order, at (s i, s j), or (s i - d, s j) in
// the right view; their triangles and mu_q4.
struct Reference {
  std::vector<TriPoint> points;
  std::vector<int> d;
  std::vector<int> index_of_cell;  // the point's index in `points`, -1 where the cell has none
  std::vector<TriIndices> triangles;
  Image<int32_t> mu_q4;
};

inline Reference reference(const Image<int16_t>& grid, int step, bool right_view, int width, int height) {
  Reference r;
  r.index_of_cell.assign(grid.pixels.size(), -1);
  for (int j = 0; j < grid.height; ++j)
    for (int i = 0; i < grid.width; ++i) {
      const int d = grid.at(i, j);
      if (d < 0) continue;
      r.index_of_cell[j * grid.width + i] = static_cast<int>(r.points.size());
      r.points.push_back({step * i - (right_view ? d : 0), step * j});
      r.d.push_back(d);
    }
  r.triangles = delaunay_triangulate(r.points);
  Image<int32_t> owner;
  rasterize_prior(r.points, r.d, r.triangles, width, height, r.mu_q4, owner);
  return r;
}

// Triangles given as vertex ids (3 a triangle) of a mesh's row-slotted
// vertices, in delaunay_triangulate's canonical form: the input indices of
// their cells, rotated to the smallest first, sorted.
inline std::vector<TriIndices> canonical_triangles(const std::vector<int32_t>& corners,
                                                   const std::vector<PriorVertex>& vertex,
                                                   const std::vector<int>& index_of_cell) {
  std::vector<TriIndices> out;
  for (size_t t = 0; t + 2 < corners.size(); t += 3) {
    TriIndices tri;
    for (int k = 0; k < 3; ++k) tri[k] = index_of_cell[vertex[corners[t + k]].cell];
    std::rotate(tri.begin(), std::min_element(tri.begin(), tri.end()), tri.end());
    out.push_back(tri);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline ::testing::AssertionResult same_mu(const Image<int32_t>& want, const Image<int32_t>& got) {
  if (want.width != got.width || want.height != got.height) return ::testing::AssertionFailure() << "sizes differ";
  size_t diffs = 0;
  std::ostringstream first;
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      if (want.at(x, y) != got.at(x, y) && diffs++ == 0)
        first << "first at (" << x << ", " << y << "): want " << want.at(x, y) << ", got " << got.at(x, y);
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diffs << " pixels differ, " << first.str();
}

// Cells with a point with probability `density`, d uniform in 0 .. max_d.
inline Image<int16_t> random_grid(int cx, int cy, double density, int max_d, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> d(0, max_d);
  Image<int16_t> g(cx, cy, int16_t{-1});
  for (int16_t& v : g.pixels)
    if (u(rng) < density) v = static_cast<int16_t>(d(rng));
  return g;
}

// Rows of points between two boundaries that wave in and out (periods of
// 40 and 23 rows): between two of the hull's rows a bulge of each boundary
// lies inside the hull, which the pockets' rounds eat a row a round from
// its ends, so their tail is walked (pocket_walk). Disparity 10 everywhere.
inline Image<int16_t> wavy_grid(int cx = 70, int cy = 120) {
  const double pi = 3.14159265358979323846;
  Image<int16_t> grid(cx, cy, int16_t{-1});
  for (int j = 0; j < cy; ++j) {
    const int first = 12 + static_cast<int>(std::lround(9 * std::sin(2 * pi * j / 40.0)));
    const int last = 55 + static_cast<int>(std::lround(9 * std::sin(2 * pi * j / 23.0)));
    for (int i = std::max(first, 0); i <= std::min(last, cx - 1); ++i) grid.at(i, j) = 10;
  }
  return grid;
}

// The support grid of a rendered pair (E2 a to e), as elas_match makes it.
inline Image<int16_t> support_grid(const SyntheticPair& pair, const ElasSupportParams& p) {
  Image<uint8_t> gl, gr;
  convert_to_gray(rgba_view(pair.left_rgba), gl);
  convert_to_gray(rgba_view(pair.right_rgba), gr);
  Image<ElasDescriptor> dl, dr;
  elas_view_descriptors(gl, dl);
  elas_view_descriptors(gr, dr);
  const int s = p.candidate_step;
  Image<int16_t> grid((gl.width + s - 1) / s, (gl.height + s - 1) / s, int16_t{-1});
  for (const ElasSupportPoint& q : elas_support_from_descriptors(dl, dr, p))
    grid.at(q.x / s, q.y / s) = static_cast<int16_t>(q.d);
  return grid;
}

// Rendered scenes whose support grids the tests triangulate: 1080p frames
// (384 x 216 cells) and an odd size.
struct RenderedScene {
  const char* name;
  SyntheticPair pair;
};
inline std::vector<RenderedScene> rendered_scenes() {
  return {
      {"1080p step", make_step_pair(1920, 1080, 12, 60, 3)},
      {"1080p slanted", make_slanted_pair(1920, 1080, 8.0f, 0.03f, 4)},
      {"1080p sequence", make_sequence_frame(1920, 1080, 5, 20, 70, 500, 300, 9, 0, 6)},
      {"odd size", make_step_pair(333, 211, 5, 21, 8)},
  };
}
inline ElasSupportParams rendered_support_params() {
  ElasSupportParams p;
  p.max_disparity = 96;
  return p;
}

}  // namespace cs::cuda::elas_prior_cases
