// ELAS's descriptors and support points (Geiger et al. as the thesis in
// shared/seeds/003 describes them, sections 3.2.1, 3.2.2, 5.3.1 and 5.3.2),
// stated in integers so that a CUDA version can equal this reference bit
// for bit. Parameters and their defaults: the thesis's Table 5.
//
// E1. Sobel images and descriptors (each view alike; I the grey view,
//     coordinates clamped into the image, replicating its border):
//   du(x, y) = clamp(128 + (sx >> 2), 0, 255), sx = I(x+1, y-1) + 2 I(x+1, y)
//     + I(x+1, y+1) - I(x-1, y-1) - 2 I(x-1, y) - I(x-1, y+1) (>> 2: the
//     floor of a quarter), dv alike with sy = the same down the column
//     (rows y+1 minus rows y-1).
//   The descriptor of (x, y): 16 bytes from the 5 x 5 window (the thesis:
//     "16 features taken from a 5x5 window"): du at the 12 points of the
//     window's diamond {(0,-2), (-1,-1), (0,-1), (1,-1), (-2,0), (-1,0),
//     (1,0), (2,0), (-1,1), (0,1), (1,1), (0,2)} and dv at {(0,-1), (-1,0),
//     (1,0), (0,1)}, in that order, each point clamped into the image.
//   Its texture: the sum over the 16 bytes of |byte - 128|.
//
// E2. Support points, on the candidate grid: candidate (i, j), i, j >= 1, is
//     the pixel (s i, s j) (s = candidate_step) where s i + 2 < width and
//     s j + 2 < height. Its matching cost at disparity d is the sum of the
//     descriptors' absolute differences (SAD, 16 bytes) at its four
//     neighbours (the thesis: "the SAD between the descriptor vectors of four
//     neighboring pixels") q = (x, y - 2), (x - 2, y), (x + 2, y), (x, y + 2):
//     left q against right q - (d, 0).
//   a. Texture: the left descriptor at (x, y) has texture >= support_texture,
//      else no support.
//      With the background model (a mask of the left view given): only
//      candidates on its foreground (mask(x, y) != 0), the rest as none.
//   b. Left to right: d in [min_disparity, min(max_disparity - 1, x - 2)]
//      (the same lower bound in c); the best cost
//      c1 at d1 (ties: the smaller d), the rival c2 = the least cost at a d
//      at least 2 away from d1 (as the project's other uniqueness tests: a
//      neighbour of the winner is the same match a fraction of a pixel off;
//      the thesis's "second best" over every other d with its 0.85 kept
//      half of these candidates on Aloe: bad-2 12.8 against 4.7 % at full
//      size, bench/RESULTS.md). Support iff such a d exists and 100 c1 <
//      support_ratio_pct c2.
//   c. Right to left: the right pixel (x - d1, y) matched the same way with
//      the views' roles swapped (its neighbours' right descriptors against
//      the left ones at + (d, 0); d in [min_disparity, min(max_disparity -
//      1, width - 3 - (x - d1))]; ties: the smaller d; the same ratio test);
//      support iff that match exists and |d1 - d1'| <= lr_threshold. The
//      candidate's disparity is d1.
//   d. Inconsistent candidates: a candidate stays iff at least
//      incon_min_support other candidates in the incon_window x incon_window
//      window of grid cells around it (odd; cells outside the grid count as
//      none) have a disparity within incon_threshold of its own, all decided
//      on the candidates after c (one pass, no candidate's removal seen by
//      another: any order gives the same result).
//   e. Redundant candidates: along each grid row, left to right, a candidate
//      is removed when a remaining candidate within redun_max_dist cells to
//      its left and one within redun_max_dist cells to its right both have a
//      disparity within redun_threshold of its own (a removal is seen by the
//      candidates after it in the row); then the same down each grid column,
//      top to bottom. (The thesis: rows are independent of each other, the
//      scan along a row is not.)
//   The support points: the remaining candidates, in row-major grid order.
//   Frames too small for any candidate (a side below s + 3, a 1-pixel row),
//   a flat frame, max_disparity below 3 (no rival): none (an empty list,
//   not an error).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stereo.h"

namespace cs {

struct ElasSupportParams {
  int min_disparity = 0;      // disparities min_disparity .. max_disparity - 1
  int max_disparity = 256;
  int candidate_step = 5;     // CANDIDATE_STEPSIZE
  int support_texture = 10;   // SUPPORT_TEXTURE
  int support_ratio_pct = 85; // SUPPORT_THRESHOLD 0.85 in percent
  int lr_threshold = 2;       // LR_THRESHOLD
  int incon_window = 5;       // ICON_WINDOW_SIZE (odd)
  int incon_threshold = 5;    // INCON_THRESHOLD
  int incon_min_support = 5;  // INCON_MIN_SUPPORT
  int redun_max_dist = 5;     // REDUN_MAX_DIST (grid cells)
  int redun_threshold = 1;    // REDUN_THRESHOLD
};

using ElasDescriptor = std::array<uint8_t, 16>;

// E1.
void elas_sobel(const Image<uint8_t>& gray, Image<uint8_t>& du, Image<uint8_t>& dv);
void elas_descriptors(const Image<uint8_t>& du, const Image<uint8_t>& dv, Image<ElasDescriptor>& out);
// Both steps for one grey view.
void elas_view_descriptors(const Image<uint8_t>& gray, Image<ElasDescriptor>& out);
int elas_texture(const ElasDescriptor& d);
// The descriptors' sum of absolute differences.
int elas_sad(const ElasDescriptor& a, const ElasDescriptor& b);

// E2 a-c on a grid: cell (i, j) = candidate (i, j), -1 where there is none
// (cells with i = 0 or j = 0 and those outside the candidates: -1 too).
// The grid is ceil(width / s) x ceil(height / s).
struct ElasDisparityGrid {
  Image<int16_t> d;
};
void elas_candidates(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right,
                     const ElasSupportParams& p, ElasDisparityGrid& grid, const Image<uint8_t>* mask_left = nullptr);
// E2 d and e, in place.
void elas_remove_inconsistent(const ElasSupportParams& p, ElasDisparityGrid& grid);
void elas_remove_redundant(const ElasSupportParams& p, ElasDisparityGrid& grid);

struct ElasSupportPoint {
  int x, y, d;
};
// E2 a to e: the support grid.
void elas_support_grid(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right,
                       const ElasSupportParams& p, ElasDisparityGrid& grid, const Image<uint8_t>* mask_left = nullptr);
// The support grid's points (cell (i, j): (s i, s j)) in row-major grid order.
std::vector<ElasSupportPoint> elas_points_of(const ElasDisparityGrid& grid, int candidate_step);
// E2 from the views' descriptors: the support points in row-major grid
// order.
std::vector<ElasSupportPoint> elas_support_from_descriptors(const Image<ElasDescriptor>& left,
                                                            const Image<ElasDescriptor>& right,
                                                            const ElasSupportParams& p,
                                                            const Image<uint8_t>* mask_left = nullptr);
// E1 and E2 from the grey views (equal sizes; else none).
std::vector<ElasSupportPoint> elas_support_points(const Image<uint8_t>& left, const Image<uint8_t>& right,
                                                  const ElasSupportParams& p);

// The cost of E2 (the four neighbours' SAD) of left pixel (x, y) at d,
// right_reference: the views' roles swapped (right (x, y) against left
// (x + d, y)). The caller keeps every neighbour inside both images.
int elas_support_cost(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right, int x, int y, int d,
                      bool right_reference);

}  // namespace cs
