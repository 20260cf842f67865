// ELAS's dense matching and its post-processing (Geiger et al. as the thesis
// in shared/seeds/003 describes them, sections 3.1, 3.2.3 to 3.2.6 and 5.3.3
// to 5.3.6), after the support points (elas_support.h, E1 and E2), their
// triangulation (triangulation.h) and the prior's planes (triangle_prior.h):
// the whole method as a CPU reference, in integers (the prior's energy as a
// table made once on the host), for a later CUDA version to equal.
//
// E3. Disparity grid: the image in cells of grid_size x grid_size pixels
//     (cell (x / grid_size, y / grid_size)); a cell's set holds the
//     disparities of the support points in it and in its eight neighbour
//     cells (the thesis's "diffused" grid), each once, ascending.
// E4. The prior. In each view the support points' triangulation (the right
//     view's points are the left ones moved to (x - d, y), the first of equal
//     positions kept) gives mu_q4 at the pixels its triangles cover
//     (triangle_prior.h), kNoPrior elsewhere. The energy of Eq. (3) divided
//     by beta, in whole units: E(d) = SAD of the descriptors + prior_cost(|16
//     d - mu_q4|), with the table
//       prior_cost(t) = round((ln(gamma + 1) - ln(gamma + exp(-(t / 16)^2 /
//       (2 sigma^2)))) / beta)
//     (0 at the mean, rising to round(ln((gamma + 1) / gamma) / beta), 14
//     with the defaults), made in double once (elas_prior_table) and used by
//     both engines; beyond the table's end, and where there is no prior, its
//     last entry.
// E5. Dense matching, each view as the reference: pixel (x, y)'s candidates
//     are m - sradius .. m + sradius with m = floor((mu_q4 + 8) / 16) where
//     it has a prior, and its cell's set (E3); a candidate counts where
//     min_disparity <= d < max_disparity and the other view's pixel (x - d
//     for the left view, x + d for the right) is inside the image. The SAD
//     is of the pixels' own descriptors (E1). The least E wins (best), ties
//     to the smaller d; none: -1. The rival: the least E over the pixel's
//     candidates at least 2 from the winner (kNoCost: none), as the
//     project's other uniqueness tests. With the background model only the
//     view's foreground pixels (its mask != 0) are matched; the others are
//     -1.
//     Uniqueness (uniqueness_ratio r > 0, stages.h B3's passes_uniqueness
//     on best and rival): applied to the left map, before E6.
// E6. Left-right check, both maps at once (each against the other's map
//     before the check): a left d at x stays iff the right map at x - d
//     holds d' with |d - d'| <= lr_threshold, and the same for the right map
//     at x + d; else -1.
// E7. Post-processing of the left map: speckles, then gaps.
//     Speckles: valid pixels are joined to their 4-neighbours whose
//     disparity differs by at most speckle_similarity; components of fewer
//     than speckle_size pixels become -1.
//     Gaps: along each row, a run of -1 between two valid pixels a (left) and
//     b (right) is filled with min(a, b) (the farther surface: what is
//     hidden is behind) where the run is at most gap_width long or
//     fill_all; with fill_all, runs at a row's ends take their one valid
//     neighbour; then the same down each column for what is left. With
//     fill_all (the default: the issue counts a missing estimate as wrong)
//     every pixel of a frame with any valid one gets a disparity. With the
//     background model the lines are cut at the left view's background
//     pixels: those are never filled and end a run as a line's end does.
// E8. The output: whole-pixel disparities (no sub-pixel step), -1 for none;
//     in Q4 as method cross's (stages.h C8: 16 d where d > 0, else 0).
//     Confidence: 0 where the final d < 0 or differs from the pixel's E5
//     winner (gap filling chose it), else confidence_from_costs(best,
//     rival) of E5 (stereo_math.h).
#pragma once

#include <cstdint>
#include <vector>

#include "elas_support.h"
#include "stereo.h"

namespace cs {

struct ElasParams {
  ElasSupportParams support;  // its max_disparity is the method's
  int grid_size = 20;         // GRID_SIZE
  int sradius = 2;            // SRADIUS
  double beta = 0.02, gamma = 3, sigma = 1;  // BETA, GAMMA, SIGMA
  int lr_threshold = 2;       // LR_THRESHOLD
  int speckle_size = 200;     // SPECKLE_SIZE
  int speckle_similarity = 1; // SPECKLE_SIM_THRESHOLD
  int gap_width = 3;          // INTERPOL_GAP_WIDTH
  bool fill_all = true;
  int uniqueness_ratio = 0;   // E5's (0: off)
  bool lr_check = true;       // E6 (false: the maps after E5 go on)
};

// E3.
struct ElasGrid {
  int size = 20, cells_x = 0, cells_y = 0;
  std::vector<std::vector<int16_t>> sets;  // cells_x * cells_y, row-major
  const std::vector<int16_t>& at(int x, int y) const { return sets[(y / size) * cells_x + x / size]; }
};
ElasGrid elas_grid(const std::vector<ElasSupportPoint>& points, int width, int height, int grid_size);

// E4's table, entries for t = 0 .. 16 * 64 (Q4 distances up to 64 pixels).
std::vector<uint16_t> elas_prior_table(double beta, double gamma, double sigma);

// E5 for one view; right_reference: the right view is the reference; mask:
// the reference view's foreground (nullptr: every pixel); best and rival
// (optional): each pixel's E, kNoCost where it has none.
void elas_dense(const Image<ElasDescriptor>& reference, const Image<ElasDescriptor>& other, bool right_reference,
                const Image<int32_t>& mu_q4, const ElasGrid& grid, const std::vector<uint16_t>& prior,
                int min_disparity, int max_disparity, int sradius, const Image<uint8_t>* mask,
                Image<int16_t>& disparity, Image<int32_t>* best = nullptr, Image<int32_t>* rival = nullptr);

// E6, in place on both maps.
void elas_lr_check(Image<int16_t>& left, Image<int16_t>& right, int lr_threshold);

// E7.
void elas_remove_speckles(Image<int16_t>& disparity, int speckle_size, int similarity);
// mask: the left view's foreground (nullptr: no cut).
void elas_fill_gaps(Image<int16_t>& disparity, int gap_width, bool fill_all, const Image<uint8_t>* mask = nullptr);

// E8's confidence from E5's left winners (raw), best and rival and the final map.
void elas_confidence(const Image<int16_t>& raw, const Image<int32_t>& best, const Image<int32_t>& rival,
                     const Image<int16_t>& disparity, Image<uint8_t>& confidence);

// Every step's result of one frame (the CUDA engine's debug copy holds the same).
struct ElasDebug {
  Image<ElasDescriptor> descriptors[2];  // E1: left, right
  ElasDisparityGrid support;             // E2 after d and e (the support points by cell)
  Image<int32_t> mu_q4[2];               // E4: left, right
  Image<int16_t> raw[2];                 // E5: left (after uniqueness), right
  Image<int32_t> best, rival;            // E5, left view
  Image<int16_t> checked[2];             // E6
  Image<int16_t> disparity;              // E7: the final left map
};

// E1 to E7: the left map (and the right one after E6, before E7, if asked).
// Views of different sizes or empty ones: an all -1 map of the left's size.
// masks: the views' foreground (both or neither; nullptr: every pixel).
void elas_match(const Image<uint8_t>& left, const Image<uint8_t>& right, const ElasParams& p,
                Image<int16_t>& disparity, Image<int16_t>* right_disparity = nullptr,
                const Image<uint8_t>* mask_left = nullptr, const Image<uint8_t>* mask_right = nullptr,
                ElasDebug* debug = nullptr);

}  // namespace cs
