// The stages of the per-frame pipeline, one function each, on the CPU.
//
// This file is the specification: each comment states the exact rule,
// including borders and ties, that the CUDA kernels must reproduce bit for
// bit. Images are tightly packed cs::Image<T> unless a view is taken.
#pragma once

#include <cstdint>
#include <vector>

#include "elas_dense.h"
#include "remap_math.h"
#include "stereo.h"
#include "stereo_math.h"

namespace cs {

// ---------------------------------------------------------------- 1. input

// Matching intensity of one view: for RGB-family formats luma_from_rgb();
// for GRAY8 the value; for I420/NV12 the Y plane as is; for YUY2/UYVY the
// pixel's own Y sample, as is.
void convert_to_gray(const FrameView& in, Image<uint8_t>& gray);

// Colour for the background model, packed R,G,B,0 per pixel (uint32 as
// bytes r | g << 8 | b << 16). GRAY8: r = g = b = value. I420/NV12: the
// chroma sample of pixel (x, y) is the one at (x / 2, y / 2), converted with
// rgb_from_yuv().
// YUY2/UYVY: row y is a run of 4-byte macropixels, macropixel m at bytes
// 4m .. 4m + 3 holding Y(2m) U Y(2m+1) V (YUY2) or U Y(2m) V Y(2m+1)
// (UYVY), so pixel x's Y is byte 2x (YUY2) or 2x + 1 (UYVY). Its colour is
// rgb_from_yuv(Y of x, U and V of macropixel x / 2): no interpolation
// between macropixels. With an odd width w the row holds ceil(w / 2)
// macropixels (4 * ceil(w / 2) bytes, as GStreamer's YUY2/UYVY stride): the
// last pixel, x = w - 1, is the first Y of the last macropixel and takes its
// U and V; that macropixel's second Y is padding and is never read.
void convert_to_rgb(const FrameView& in, Image<uint32_t>& rgb);

// ---------------------------------------------------------------- 0. rectification

// With Params::rectification (issue 40), before stage 1: each view's colour
// (convert_to_rgb) resampled through its map (rectify.h, 1/32 pixel):
// out(x, y) = remap_rgba_pixel(map(x, y)) (remap_math.h: integer bilinear,
// rounded half up, 0 where the map has no source), R,G,B,0 packed as
// convert_to_rgb packs them. Every later stage reads these views as RGBA
// (synthetic.h rgba_view): the matching intensity is then luma_from_rgb of the
// rectified colour, for every input format.
void rectify_view(const FrameView& in, const Image<RemapPoint>& map, Image<uint32_t>& out);

// ---------------------------------------------------------------- 2. pyramid

// Level l + 1 from level l: width / 2 x height / 2 (integer division: an odd
// last row or column is dropped); each pixel average4() of its 2x2 block.
void downsample(const Image<uint8_t>& fine, Image<uint8_t>& coarse);

// Size of level l of a width x height view.
inline int level_size(int size, int level) { return size >> level; }

// Disparity search range at level l: [min_disparity >> l, ceil(max_disparity
// / 2^l)) at level 0; above it the upper end is ceil(coarse_range_factor *
// max_disparity / 2^l) (Params::coarse_range_factor). Either upper bound is
// capped at the level's width. The automatic level rule (resolve_levels)
// reads the asked range, not the widened one. coarse_range_factor 0
// (automatic) reads as 1 here: the engines pass the factor they chose.
struct Range {
  int lo;  // inclusive
  int hi;  // exclusive
};
Range level_range(const Params& p, int level, int level_width);

// ---------------------------------------------------------------- 3. background

// Zhao & Taubin (section 3.2) model each pixel's colour in HSV with a running
// Gaussian and test it coarse to fine, copying a coarser level's label into
// blocks whose coarser neighbourhood agrees, "as long as [the model] can
// produce a binary mask". Here each view has two models: one at full size
// and one of cells, kBackgroundCell x kBackgroundCell pixels each (the last
// row and column of cells partial), whose colour is the rounded mean of
// their pixels' (cell_colour). Every frame every cell is tested and updated
// by background_pixel as a pixel would be (at the cell's (x, y) in the grid
// of cells, view + 2); a pixel whose cell's 3 x 3 neighbourhood of cells
// (those in the grid) is all background is background, one whose
// neighbourhood is all foreground is foreground, and the others (the
// boundary of what moves) are tested against the full-size model: the
// cells' label (cells_label) passed to background_pixel, which a pixel
// reads after the warm-up only. A labelled pixel is updated as a tested
// pixel of that label is, so a still scene costs a cell test a cell and,
// per pixel, an update on its turn. A label decided on one cell would miss
// what a cell averages away (an earlier model pooled per level flagged
// objects' edges wrongly, bench/RESULTS.md, issue 35); its neighbourhood
// keeps the test on every pixel within a cell of a foreground cell. The
// cells are tested in the frame's conversion, from the colours as they are
// converted (the CUDA engine's first kernel), the pixels right after it.
//
// Per pixel and view: background_pixel (stereo_math.h) on the model
// (BackgroundPixel, 64 bits: per channel a mean and a spread, and a
// foreground run), the colour convert_to_rgb gives and frames_seen (the
// frames the model has seen before this one), at (x, y) of view 0 (left) or
// 1 (right). With d_c the deviation of channel c from its mean in Q4 (hue:
// circular, times the observed saturation / 255, truncated towards zero)
// and sigma_c = max(8 * spread_c, sigma_min_q4) in Q4:
//  - frames_seen = 0: mean = the observation, spread 0, run 0; foreground.
//  - warm-up (frames_seen < warmup_frames): foreground; means and spreads
//    learn at warmup_alpha_q16 (the cumulative mean); run 0.
//  - after it, foreground iff the cells' label is 1, or it is kLabelTest
//    and |d_c| * 256 > k_q8 * sigma_c for some c;
//     - background: run 0; on the pixel's turn (background_turn: rows in
//       runs of 4, one frame in kBackgroundTurns) means and spreads learn at
//       turn_alpha_q16 = 1 - (1 - alpha)^kBackgroundTurns, else nothing.
//     - foreground: run + 1 (at most kRunMax); while run <= absorb_delay
//       nothing else (an object passing in fewer frames leaves no trace
//       behind it); beyond, on the pixel's turn, the means absorb at
//       absorb_turn_alpha_q16 = 1 - (1 - alpha / 4)^kBackgroundTurns and the
//       spreads stay (a lasting change such as a light switched on is
//       absorbed; a parked object becomes background).
//  - learning at rate a (Q16): mean_c += dithered_step(a, d_c, u) (hue wraps
//    to [0, 2880), S and V clamp to [0, 4080]); spread_c +=
//    dithered_step(a, t_c - spread_c, u') clamped to [0, 63], with t_c =
//    (|d_c| * kMadToSigmaQ8 + 1024) >> 11 (sigma from |d| in Q1); u and u'
//    the low and high halves of background_dither(x, y, frames_seen, view)
//    for H, of next_channel_dither of that for S, and of it again for V.
// So after a change of delta units in a channel (a global brightness change),
// a pixel is background again after about absorb_delay + ceil(ln(k
// min_sigma / delta) / ln(1 - learning_rate / 4)) frames, rounded up to its
// turns (at most kBackgroundTurns more), or sooner where its cells are
// absorbed first and label it; and the background uncovered behind a
// passing object at once. Updates on turns only are the model's economy:
// off its turn a labelled pixel needs no colour arithmetic at all.
struct BackgroundModel {
  int width = 0;
  int height = 0;
  std::vector<BackgroundPixel> pixels;
  // The cells' model: ceil(width / kBackgroundCell) x ceil(height / kBackgroundCell).
  std::vector<BackgroundPixel> cells;
};

BackgroundParams background_params(const Params& p);

// Every pixel of one view at full size: the cells, then the pixels with
// their cells' labels; raw (255 foreground, 0 background); a model of
// another size starts afresh (its frames_seen is the caller's: the engines
// restart the model with a change of size). Returns the tests made: every
// cell and the pixels their cells left to their own test (0 during warm-up,
// when every pixel is foreground untested).
uint64_t background_view(BackgroundModel& model, const Image<uint32_t>& rgb, const BackgroundParams& bp,
                         int frames_seen, int view, Image<uint8_t>& raw);

// The full-size mask from the raw test: a foreground pixel stays
// foreground iff at least 2 of its 8 neighbours are, a background one turns
// foreground iff at least 5 are, those outside the image counting as
// background (isolated pixels and pairs that camera noise pushed past the
// threshold drop out, pinholes inside an object fill in, an object's edge
// keeps pixels whose neighbours the test missed in part); then close_mask
// with `radius` (holes where an object looks like what is behind it); then
// open_mask with radius 1 (what noise left that holds no 3 x 3 square of
// foreground). (A 3 x 3 majority, 5 of 9, dropped more of an object's
// edge: Aloe sequence, mask IoU 0.9931 against 0.9957, bench/RESULTS.md.)
void clean_mask(const Image<uint8_t>& raw, int radius, Image<uint8_t>& mask);

// Dilation with a (2r+1)^2 square: the max over the window's pixels inside
// the image (a pixel within r of a foreground pixel, Chebyshev). r = 0
// copies.
void dilate_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out);

// Erosion then dilation with a (2r+1)^2 square; the erosion takes the min
// over the window's pixels inside the image, the dilation the max. r = 0
// copies.
void open_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out);

// Dilation then erosion with a (2r+1)^2 square; each takes max (resp. min)
// over the window's pixels inside the image. r = 0 copies.
void close_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out);

// Level l's mask from the full-size one: pixel (x, y) is foreground iff some
// full-size pixel of [x 2^l, (x + 1) 2^l) x [y 2^l, (y + 1) 2^l) is, so
// that a foreground pixel has a foreground parent at every level, but for
// the pixels beyond a level's last whole block (an odd last row or column
// somewhere down the pyramid), which no pixel of that level covers. l = 0
// copies.
void pool_mask(const Image<uint8_t>& full, int level, Image<uint8_t>& mask);

// Method progressive matches with the levels' masks (stages 5 to 8) unless
// both views' full-size masks hold at least whole_frame_foreground(w, h)
// pixels each (a scene change, a camera moved, the warm-up): then it matches
// every level as with the model off (masks nullptr), and the level-0 left
// map is -1 where the left mask is background before the finish (stage 9)
// and the confidence read it. Its statistics count every pixel matched.
// Matching around a few background pixels costs more than matching them
// too: on Aloe at 1080p x 128 with 97 % of the frame foreground, 0.352 ms
// a frame with the masks, 0.292 without (H200, bench/RESULTS.md, issue 35);
// with 84 % 0.335 with them, 0.321 without; with 74 % 0.303 with them,
// 0.325 without (at 640x480 the two meet near 70 %).
constexpr uint64_t kWholeFrameNum = 13, kWholeFrameDen = 16;  // 13/16 of the view, rounded up
constexpr uint64_t whole_frame_foreground(int width, int height) {
  return (kWholeFrameNum * static_cast<uint64_t>(width) * static_cast<uint64_t>(height) + kWholeFrameDen - 1) /
         kWholeFrameDen;
}
constexpr bool matches_whole_frame(uint64_t left_foreground, uint64_t right_foreground, int width, int height) {
  return left_foreground >= whole_frame_foreground(width, height) &&
         right_foreground >= whole_frame_foreground(width, height);
}

// What a frame's intermediates hold where the model leaves no work
// (Matcher::Debug, stage by stage): the engines compute census codes and
// disparity maps only around the foreground (the CUDA engine by tiles), so
// with the background model the debug maps are stated where they are read:
//  - disparity maps (raw and checked, both views) where the view's own mask
//    is foreground; -1 elsewhere, as the specification computes them;
//  - the level-0 left sweep's costs (SweepCosts, the confidence's) where
//    the left mask is foreground; kNoCost elsewhere;
//  - census codes (both views) within census_apron(radius) pixels
//    (Chebyshev) of a foreground pixel of either view's mask at the level;
//    0 elsewhere.
// A window of sub-window radius r reaches 3r + 1 pixels from its centre and
// the sub-pixel step one disparity further; a matched pixel of the other
// view is foreground (stage 5).
constexpr int census_apron(int radius) { return 3 * radius + 2; }
// (matcher_debug.h: mask_debug_to_foreground applies this to a Debug.)
// ---------------------------------------------------------------- 4. census

// census[x, y] over the 5x5 window, reads clamped to the image (stereo_math.h).
// Neighbour i in row-major order (0 = top-left, the centre skipped) is bit i.
void census_transform(const Image<uint8_t>& gray, Image<uint32_t>& census);

// ---------------------------------------------------------------- 5. matching cost

// Pixel cost at column u of the reference view, row v, disparity d:
//   left reference:  census_cost(L[clamp(u), v], R[clamp(u - d), v])
//   right reference: census_cost(R[clamp(u), v], L[clamp(u + d), v])
// with clamp to [0, w - 1]: columns beyond the image repeat its edge, in
// both views. In rows outside the image it is 0. Sub-window sum S(cx, cy) =
// sum of pixel costs over the (2r+1)^2 square centred at (cx, cy) (the
// centre may itself be outside).
// So both views read one cost volume: the right view's window cost at
// (x, y, d) is the left view's at (x + d, y, d), borders included, and a
// matcher may evaluate each window once for both. Every window counts the
// same pixels whatever d is, so no disparity gains from a window cut short
// by the image edge.
// Window cost at (x, y): adaptive_window_cost(S(x, y), {S(x + i s, y + j s)
// for the 8 (i, j) != (0, 0) in {-1,0,1}^2}, best) with s = 2r + 1.
enum class Reference { Left, Right };
int window_cost(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref, int x, int y,
                int d, int radius, int best);

// A candidate disparity d for reference pixel x is admissible when the
// matched pixel lies in the image (left: x - d >= 0; right: x + d < w) and,
// with masks, both the reference pixel and the matched pixel are foreground.

// What a pixel's winner-takes-all leaves besides its winner (SweepWinner in
// stereo_math.h): the winner's cost and the rival's (the least cost of the
// admissible candidates more than one disparity away), kNoCost where there
// is none. The confidence reads them (below).
struct SweepCosts {
  Image<int32_t> best, rival;
};

// ---------------------------------------------------------------- 6. coarsest level

// Winner-takes-all over [range.lo, range.hi): the admissible d with the
// smallest window cost, ties to the smaller d. No admissible d (or a
// background reference pixel) -> -1 (invalid). masks may be nullptr (all fg).
// Then uniqueness (B3, passes_uniqueness): with uniqueness_ratio > 0 the
// winner becomes -1 unless its cost is clearly lower than the least cost of
// the admissible candidates more than one disparity away (none: kept).
// costs (optional) gets every pixel's SweepCosts (kNoCost where it has no
// candidate), before uniqueness. offered (optional): the other view's map
// from this view's winners, as for refine_level (stage 7).
void match_full_range(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                      const Image<uint8_t>* mask_ref, const Image<uint8_t>* mask_other, Range range, int radius,
                      int best, Image<int16_t>& disparity, int uniqueness_ratio = 0, SweepCosts* costs = nullptr,
                      Image<int16_t>* offered = nullptr);

// ---------------------------------------------------------------- 7. refinement

// Level l from the (already checked) map of level l + 1. For pixel (x, y) the
// parent is (min(x / 2, wc - 1), min(y / 2, hc - 1)).
//  - parent valid (dc >= 0): candidates 2 dc - 2 .. 2 dc + 2;
//  - parent invalid (a hole): among the valid coarser disparities within
//    hole_radius (Chebyshev, clamped to the coarser image) of the parent,
//    candidates 2 min - 2 .. 2 max + 2, but at most hole_span of them from
//    2 min - 2 on (hole_span > 0; refinement_interval in stereo_math.h);
//    none valid -> invalid.
// Candidates are intersected with `range`, then winner-takes-all and
// uniqueness as in match_full_range (admissibility, ties to the smaller d;
// the rivals are the pixel's own candidates more than one away from its
// winner: 2 dc +- 2 for a winner 2 dc, fewer or none off-centre). costs as
// in match_full_range.
// The candidates [lo, hi) of pixel (x, y) of a level `w` wide as above
// (intersected with `range` and with what the other view admits); false for
// a hole with no valid disparity around it. [lo, hi) may be empty.
bool refined_candidates(const Image<int16_t>& coarser, Reference ref, int x, int y, int w, Range range,
                        int hole_radius, int hole_span, int* lo, int* hi);
void refine_level(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                  const Image<uint8_t>* mask_ref, const Image<uint8_t>* mask_other, const Image<int16_t>& coarser,
                  Range range, int radius, int best, int hole_radius, int hole_span,
                  Image<int16_t>& disparity, int uniqueness_ratio = 0, SweepCosts* costs = nullptr,
                  Image<int16_t>* offered = nullptr);
// offered (optional): the other view's map that this view's winners make.
// The winner d of reference pixel (x, y) (winner-takes-all over its
// candidates, before uniqueness) offers its cost to the other view's pixel
// it matches (left reference: x - d); that pixel takes the offer of least
// cost, ties to the smaller d, and -1 where none came. The cost is also the
// other view's own window at (x - d, y, d) (stage 5: one cost volume).
//
// The pipeline's right map at every level is the left view's offered map
// (match_full_range's at the coarsest level, refine_level's below), not a
// search or refinement of the right view of its own: it serves only the
// level's left-right check (stage 8), nothing is refined from it, and no
// uniqueness applies to it. The check then keeps a left
// winner unless another left pixel claims the same right pixel more cheaply
// at a disparity more than the tolerance away (the uniqueness constraint of
// one cost volume). On Aloe (CPU reference, defaults; bench/RESULTS.md,
// fourteenth session): bad-2 9.57 -> 7.99 % at full size x 256, 6.58 ->
// 5.62 % at half size x 128 (fewer pixels invalid; of those kept, slightly
// more are wrong: average error 1.35 -> 1.49 px at full size). Offering
// every evaluated candidate instead gave 8.72 and 5.96 % and cost the GPU
// an atomic per candidate; the coarsest level's own right search with the
// refined levels' offered maps, 8.07 and 5.67 %. The coarse probe (6b)
// still searches both views.

// ---------------------------------------------------------------- 6b. automatic coarse range

// Params::coarse_range_factor = 0. The coarse levels should cover the
// content's range (content beyond what they search scatters the refinement's
// candidates), level 0 searches the asked range. A probe finds the range:
// on the first frame, every kCoarseProbeInterval frames after it, and on the
// first frame after the size, levels or range changed, after matching. It
// matches the frame's coarsest level l over probe_range (match_full_range,
// both views, the frame's radius, best and masks, uniqueness ratio
// kProbeUniquenessRatio), cross-checks the two maps (resolve_lr_tolerance; always,
// whatever lr_check says) and keeps the left map's disparities with
// kProbeMinSupport supporting neighbours (support_filter): the disparities
// that are well supported, so that flat or noisy areas, whose matches over
// a wide range scatter, do not pass for content beyond the range.
// The factor from that left map (coarse_factor_from_probe) serves
// the frames after the probe's; the first frame uses 1. With one level
// there is no coarse level to widen: no probe, factor 1.
//
// probe_range: [min_disparity >> l, ceil(kMaxCoarseRangeFactor *
// max_disparity / 2^l)), the upper end capped at the level's width.
// coarse_factor_from_probe: with the n valid disparities sorted ascending and
// d the one at index floor(99 n / 100), p = d << l (its level-0 value); the
// smallest power of two f <= kMaxCoarseRangeFactor with f * max_disparity >=
// p; 1 when n = 0. (Content at D itself is reached from the coarse levels'
// last disparity by the refinement's +2: no need to widen for it.)
constexpr int kProbeUniquenessRatio = 10;
constexpr int kProbeMinSupport = 5;
Range probe_range(const Params& p, int level, int level_width);
int coarse_factor_from_probe(const Image<int16_t>& probe_left, int level, int max_disparity);
// The same rule from the map's histogram (counts[d] = valid pixels at d, for
// d < bins): what the CUDA engine reads back instead of the map.
int coarse_factor_from_histogram(const uint32_t* counts, int bins, int level, int max_disparity);
// The probe as a whole, on the coarsest level's census and masks (nullptr:
// all foreground): the factor.
int probe_coarse_factor(const Image<uint32_t>& census_left, const Image<uint32_t>& census_right,
                        const Image<uint8_t>* mask_left, const Image<uint8_t>* mask_right, const Params& p,
                        int level);

// When one stream of frames probes and which factor each frame uses, as the
// paragraph above says; both engines keep one per stream. Per frame with the
// automatic range and more than one level: begin_frame before matching (the
// frame's factor; 1 again after a change of size, levels or range), then
// after it, when probe_due, the probe and probe_made; then frame_done.
// set_factor takes a probe's factor whenever it is known (the CPU reference
// at once, the CUDA engine before the next frame).
class CoarseProbeSchedule {
 public:
  int begin_frame(int width, int height, int levels, const Params& p);
  bool probe_due(int width, int height, int levels, const Params& p) const;
  void probe_made(int width, int height, int levels, const Params& p);
  void frame_done() { ++frames_since_probe_; }
  void set_factor(int factor) { factor_ = factor; }

 private:
  bool changed(int width, int height, int levels, const Params& p) const;
  int factor_ = 1;
  uint64_t frames_since_probe_ = 0;
  // What the last probe was made for.
  int width_ = 0, height_ = 0, levels_ = 0, min_ = -1, max_ = -1;
};

// ---------------------------------------------------------------- 8. cross-check

// Left pixel x with dl >= 0 stays valid iff xr = x - dl is in the image,
// dr = right[xr] >= 0 and |dl - dr| <= tolerance; the right map likewise with
// xl = x + dr. Both maps are checked against the other's input values (not
// the already-checked ones) and written in place.
void cross_check(Image<int16_t>& left, Image<int16_t>& right, int tolerance);

// ---------------------------------------------------------------- 8b. support (levels above 0)

// After the cross-check (or on the raw maps without it), at every level
// above 0, in both views (the right one's filtered map feeds nothing now
// that refined right maps are offered, stage 7, but is kept as the
// engines' debug maps show it): a valid disparity d stays valid iff at least
// min_support of its 8 neighbours inside the image hold a value e of the
// same map (before this step) that supports(d, e) (stereo_math.h: valid and
// |e - d| <= 1). min_support = 0 changes nothing. Level 0, the output, is not
// filtered. The next finer level refines from the filtered maps, so a pixel
// dropped here is a hole there.
void support_filter(Image<int16_t>& disparity, int min_support);

// ---------------------------------------------------------------- 9. sub-pixel and output

// disparity_q4[x, y] = 0 where d < 0; else d * 16, plus, with subpixel,
// subpixel_offset_q4(C(d - 1), C(d), C(d + 1)) (left-reference window costs)
// when d - 1 >= range.lo, d + 1 < range.hi and x - (d + 1) >= 0. A result
// of 0 for a valid pixel (d = 0) stays 0: disparity 0 reads as invalid.
void finish_disparity(const Image<uint32_t>& census_left, const Image<uint32_t>& census_right,
                      const Image<int16_t>& disparity, Range range, int radius, int best, bool subpixel,
                      ImageView<uint16_t> disparity_q4);

// ---------------------------------------------------------------- confidence (every method)

// Per pixel of the final left map (after uniqueness and the cross-check):
// confidence[x, y] = 0 where disparity[x, y] < 0, else
// confidence_from_costs(best, rival) (stereo_math.h): floor(255 * (rival -
// best) / rival), 0 without a rival or with rival = 0. 255 = nothing else
// comes close; 0 = another disparity fits as well. best and rival are the
// SweepCosts of the sweep that chose the pixel's winner, at full size:
//  - method progressive: stage 6 (a single level) or 7 at level 0, left
//    view: the rival over the pixel's own candidates (the full range, its
//    +-2 interval, or its hole's span), so a pixel refined from 2 dc has at
//    most 2 dc +- 2 as rivals, and one whose interval holds no candidate two
//    away from its winner has none (confidence 0).
//  - method block: B2's best and rival over the full range (block_confidence).
// A valid d after uniqueness and the check is still that sweep's winner, so
// best is its cost.
void confidence_map(const SweepCosts& costs, const Image<int16_t>& disparity, Image<uint8_t>& confidence);

// ================================================================ method block
//
// SSD block matching (Stam 2008) with Tweddle's (2009) post-processing. Its
// input is stage 1's convert_to_gray at full size; the background model
// (stage 3), when on, gives the level-0 masks. Steps: block_match (costs,
// both views' winners, uniqueness inputs), uniqueness on the left map,
// cross_check (stage 8) of the left against the right winners, then
// finish_block_disparity and block_confidence.

// ---------------------------------------------------------------- B1. SSD cost

// Pixel cost at column u of the reference view, row v, disparity d:
//   left reference:  squared_difference(L[clamp(u), v], R[clamp(u - d), v])
//   right reference: squared_difference(R[clamp(u), v], L[clamp(u + d), v])
// with clamp to [0, w - 1] (columns beyond the image repeat its edge, in both
// views) and 0 in rows outside the image: the border rule of stage 5's census
// costs. The block cost C(x, y, d) is the sum of pixel costs over the
// block_size x block_size square centred at (x, y) (block_size odd, 3 .. 31,
// so C < 961 * 255^2 < 2^26). As in stage 5, every block counts the same
// pixels whatever d is, and the right view's C(x, y, d) is the left view's
// C(x + d, y, d): one cost per (left pixel, d) serves both views (Tweddle's
// left-right check without extra correlations).
int block_ssd(const Image<uint8_t>& gray_ref, const Image<uint8_t>& gray_other, Reference ref, int x, int y, int d,
              int block_size);

// ---------------------------------------------------------------- B2. winners

// Per left pixel, what the sweep over the range leaves (SweepWinner in
// stereo_math.h). Candidates are d in [range.lo, range.hi); d is admissible
// when the matched pixel lies in the image (left x: x - d >= 0) and, with
// masks, both the reference and the matched pixel are foreground (nonzero).
//  - disparity: the admissible d of least C, ties to the smaller d; -1 when
//    none (a background pixel has none).
//  - best: C(disparity); rival: the least C over the admissible d with
//    |d - disparity| >= 2, kNoCost when there is none;
//  - below, above: C(disparity - 1), C(disparity + 1) when that d is in the
//    range and its matched pixel in the image (masks do not matter), else
//    kNoCost.
// Every field is kNoCost (disparity -1) where there is no winner.
struct BlockWinners {
  Image<int16_t> disparity;
  Image<int32_t> best, rival, below, above;
};

// Both views' winner-takes-all over the full range at full resolution. The
// right map is the plain winner of the right view's candidates (right x:
// x + d < w, masks as above), ties to the smaller d; it only serves the
// left-right check. masks may be nullptr (all foreground).
void block_match(const Image<uint8_t>& gray_left, const Image<uint8_t>& gray_right, const Image<uint8_t>* mask_left,
                 const Image<uint8_t>* mask_right, Range range, int block_size, BlockWinners& left,
                 Image<int16_t>& right);

// ---------------------------------------------------------------- B3. uniqueness

// A pixel is kept only when its best cost is clearly lower than the best cost
// more than one disparity away (the rival): with uniqueness_ratio r in
// percent, a valid disparity becomes -1 unless r = 0, or there is no rival,
// or rival * 100 > best * (100 + r) in 64-bit integers (equality rejects);
// passes_uniqueness in stereo_math.h. The neighbours d +- 1 are left out
// because a true match between two integers costs little at both.
// Why this form: it is OpenCV StereoBM's (the rival must exceed the best by
// r %), which users already tune; a ratio, unlike Tweddle's fixed SSD margin
// of 250, does not depend on the block size or the image contrast. A pixel
// without a rival (fewer than three admissible disparities, at the left
// edge) has nothing to contradict it and is kept, as in StereoBM.
//
// Method progressive (the same rule and function, over the costs a pixel
// has; stages 6 and 7): at every level in the left view and in the
// probe's right view (the pipeline's right maps are offered by the left
// view, stage 7, and take no uniqueness), the rival is the
// least window cost over the pixel's admissible candidates more than one
// away from its winner: the full range at the coarsest level; below, the
// pixel's interval (2 dc - 2 .. 2 dc + 2, or a hole's span), where only
// 2 dc +- 2 can be rivals of 2 dc. A pixel rejected at level l + 1 is a hole
// for level l (stage 7), before the cross-check. r = 0 changes nothing.
void apply_uniqueness(const BlockWinners& winners, int uniqueness_ratio, Image<int16_t>& disparity);

// ---------------------------------------------------------------- B4. output

// disparity_q4[x, y] = 0 where d < 0; else d * 16, plus, with subpixel,
// subpixel_offset_q4(below, best, above) (the same integer parabola as stage
// 9; the SSD bound C < 2^26 keeps its arithmetic in 32 bits) when
// subpixel_neighbours_in_range(d, x, range.lo, range.hi). d is the pixel's
// winner (a valid d after uniqueness and cross-check is still its winner),
// so below and above are its neighbours' costs. A result of 0 stays 0.
void finish_block_disparity(const BlockWinners& winners, const Image<int16_t>& disparity, Range range,
                            bool subpixel, ImageView<uint16_t> disparity_q4);

// confidence_map (above) with the winners' best and rival.
void block_confidence(const BlockWinners& winners, const Image<int16_t>& disparity, Image<uint8_t>& confidence);

// ================================================================ method cross
//
// Cross-based aggregation with bitwise fast voting (Zhang, Lu, Yang,
// Lafruit, Lauwereins, Van Gool 2011; ../seeds 004). Its input is each
// view's colour at full size: stage 1's convert_to_rgb (stage 0's views
// with a calibration), channels R, G, B = bytes 0, 1, 2 (GRAY8: the three
// equal). The background model (stage 3), when on, gives the level-0 masks.
// Steps: cross_arms and cross_census (both views), cross_match
// (aggregation, winner-takes-all, uniqueness, the offered right map), cross_reliable (the check),
// cross_vote (restoration and refinement), cross_median, then
// finish_cross_disparity and cross_confidence. Everything is integer.
// Parameters (Params): tau = cross_tau, L = cross_arm_length, T =
// cross_truncation, W = cross_census_weight, S = sample_restore, Lv =
// cross_vote_arm_length, the range [range.lo, range.hi) = level_range at
// level 0.

// ---------------------------------------------------------------- C1. arms

// A pixel's cross: four arm lengths, left, right, up, down (the paper's
// h-, h+, v-, v+). phi(p, q) = 1 when q lies outside the image or
// max_c |I_c(p) - I_c(q)| > tau, else 0. The right arm is the smallest i >=
// 0 with phi(p, (x + i + 1, y)) = phi(p, (x + i + 2, y)) = 1 (eq. 1: the arm
// stops before two differing pixels in a row, so one noisy pixel does not
// cut it), capped at L; the image's edge counts as differing, so an arm
// never leaves the image. Left, up and down likewise with (x - i - 1, y),
// (x - i - 2, y); (x, y - i - 1) ...; (x, y + i + 1) ....
// Packed in 32 bits: left | right << 8 | up << 16 | down << 24 (cross_arm).
// Every pixel of the left view; of the right view only the rows C2 samples
// (row_step = S: the matching reads no other, and the voting reads the left
// view's), its other rows 0.
void cross_arms(const Image<uint32_t>& rgb, int tau, int arm_length, Image<uint32_t>& arms, int row_step = 1);
inline int cross_arm(uint32_t arms, int which) { return (arms >> (8 * which)) & 255; }  // 0 left 1 right 2 up 3 down

// ---------------------------------------------------------------- C1b. census words

// What C3 matches, per view, on the samples' rows (y a multiple of S; the
// other rows 0): a word R | G << 8 | B << 16 | K << 24 at every column x
// (cross_word). The colour is the pixel's for S = 1; for S > 1 the
// paper's downsampled views (section III-C), read as each channel's
// rounded mean over the S x S pixels from (x, y) on that lie inside the
// view (n of them: (sum + n / 2) / n). K is ours, beside the paper's
// colour cost (C3's census term): bit n is set when the luma Y = R + 2 G +
// B of that colour at neighbour n is below the pixel's, neighbours n = 0 ..
// 7 at (x + r dx, y + r dy), (dx, dy) = (-1, -1), (0, -1), (1, -1), (-1,
// 0), (1, 0), (-1, 1), (0, 1), (1, 1), r = 2 for S = 1 and 1 for S > 1
// (the means already span S pixels), coordinates clamped to the view.
// (On Aloe: bad-2 at full x 256, S = 2, 10.39 % with the sampled pixels'
// own colours and census, 8.29 % so.)
void cross_census(const Image<uint32_t>& rgb, int sample, Image<uint32_t>& words);

// ---------------------------------------------------------------- C2. samples (sample-and-restore)

// The initial map is matched at samples: left sample (i, j), 0 <= i < Ws =
// ceil(w / S), 0 <= j < Hs = ceil(h / S), is full-size pixel (S i, S j). The
// right view keeps every column of the sampled rows (the paper's W x H / S
// right image), so disparities stay whole pixels of the full size: sample
// (i, j) at disparity d matches right pixel (S i - d, S j). A sample's arms,
// in samples, are its pixel's arms / S (integer division), in both views;
// S = 1 is the plain method.

// ---------------------------------------------------------------- C3. aggregation

// Pixel cost of left sample (i, j) at d, of the two pixels' words a =
// L(S i, S j) and b = R(S i - d, S j) (C1b): e = min(T, sum over R, G, B
// of |a_c - b_c|) + W * popcount(K_a xor K_b), at most 765 + 8 * 24
// (cross_pixel_cost). W = 0 is the paper's eq. (2) alone.
// For a sample q = (i', j') with S i' - d >= 0 the horizontal overlap is
// hm = min(left arm of L(S i', S j'), left arm of R(S i' - d, S j')) / S,
// hp likewise with the right arms; H(q, d) = sum of e(k, j', d) for k = i' - hm .. i' + hp, N_H(q, d) =
// hm + hp + 1. For the anchor p = (i, j) with vm, vp the min of the two
// views' up and down arms (/ S) at L(S i, S j) and R(S i - d, S j): C(p, d)
// = sum of H((i, k), d) for k = j - vm .. j + vp, N(p, d) = sum of their
// N_H. So the region U_d(p) is the union, over the rows of the anchor's
// vertical overlap, of each row's horizontal overlap (the paper's
// horizontal pass, then vertical); the arms keep every pixel read inside
// both images. C <= 33 * 33 * 957 < 2^20 - 1, N <= 33 * 33.
// Costs are normalised by their region's size: (C1, N1) is lower than (C2,
// N2) iff C1 * N2 < C2 * N1 (64-bit, no division; cross_cost_less); equal
// products are equal costs.
// Admissible d: in the range, S i - d >= 0, and with masks both the left
// pixel (S i, S j) and the right pixel (S i - d, S j) foreground.
struct CrossCost {
  int32_t sum = -1;    // C; -1: none
  int32_t pixels = 0;  // N
};
inline bool cross_cost_less(CrossCost a, CrossCost b) {
  return static_cast<int64_t>(a.sum) * b.pixels < static_cast<int64_t>(b.sum) * a.pixels;
}
CrossCost cross_cost(const Image<uint32_t>& words_left, const Image<uint32_t>& words_right,
                     const Image<uint32_t>& arms_left, const Image<uint32_t>& arms_right, int i, int j, int d,
                     int truncation, int census_weight, int sample);

// ---------------------------------------------------------------- C4. winners

// Per left sample: the admissible d of lowest normalised cost, ties to the
// smaller d (-1 when none); best = its cost; rival = the lowest cost over
// the admissible d with |d - winner| >= 2 (sum -1: none; among equal
// normalised costs the smaller d's sum and size). Uniqueness
// (uniqueness_ratio r > 0, B3's rule on normalised costs): the winner
// becomes -1 unless there is no rival or rival.sum * best.pixels * 100 >
// best.sum * rival.pixels * (100 + r).
// The right map (w x Hs) is offered, as stage 7's: each sample's winner d
// (before uniqueness) offers its cost to right pixel (S i - d, j); a right
// pixel takes the lowest offer, ties to the smaller d, and is -1 where none
// came. (One cost volume: the right view's own search would find the same
// costs; the offers keep it to one sweep and one write a sample.)
struct CrossWinners {
  Image<int16_t> raw;         // Ws x Hs: winners before uniqueness
  Image<int16_t> disparity;   // Ws x Hs: after uniqueness
  Image<CrossCost> best, rival;  // Ws x Hs
  Image<int16_t> right;       // w x Hs: the offered map
};
void cross_match(const Image<uint32_t>& words_left, const Image<uint32_t>& words_right,
                 const Image<uint32_t>& arms_left, const Image<uint32_t>& arms_right, const Image<uint8_t>* mask_left,
                 const Image<uint8_t>* mask_right, Range range, int truncation, int census_weight, int sample,
                 int uniqueness_ratio, CrossWinners& out);

// ---------------------------------------------------------------- C5. reliability

// A sample's disparity dl >= 0 is reliable iff lr_check is off, or the
// right map's dr at (S i - dl, j) is >= 0 and |dl - dr| <= the tolerance
// (resolve_lr_tolerance: by default 0; the paper's section III asks for a
// "similar" disparity, read as equal); unreliable ones become -1.
// reliable: Ws x Hs.
void cross_reliable(const CrossWinners& winners, int sample, bool lr_check, int tolerance,
                    Image<int16_t>& reliable);

// ---------------------------------------------------------------- C6. voting

// Bitwise fast voting (section IV) at full size over each pixel's own
// region U(p) of the left view (its full-size arms, each cut to Lv: the
// paper's U(p) where Lv >= L; no overlap, no division). The estimate at pixel (x, y) is reliable(x / S, y / S) when x
// and y are multiples of S, none otherwise (SAR's stuffing), and none where
// it is -1. An estimate e votes with the bits of its code g(e) = e xor (e >>
// 1) (the reflected Gray code: cross_vote_code). For every pixel q: n_H(q)
// = the estimates on its horizontal arm (x from q.x - left arm to q.x +
// right arm), b_H^l(q) = those whose code has bit l set, l = 0 ..
// kCrossVoteBits - 1; for p: n = sum of n_H((p.x, y)) over y = p.y - up arm
// .. p.y + down arm, B^l likewise. g* = sum of 2^l over the l with 2 B^l >
// n (eq. 8: a strict majority), d* = the disparity whose code is g*
// (cross_vote_value). voted(p) = -1 when n = 0, d* lies outside the range,
// or (masks) p is background; else d*.
// The paper votes on the bits of d itself. Where one value holds a
// majority of the region's estimates (the paper's assumption) every code
// gives that value. Where none does, the bits of d mix neighbours into a
// far value (as many 127s as 128s vote 0, every bit tied), while
// neighbouring codes differ in one bit, so the vote lands among the values
// voted for (127 there). On Aloe (bad-2, visible pixels, CPU reference):
// full size x 256 6.39 -> 5.55 %, half size x 128 5.57 -> 5.05 %; with S =
// 2 8.29 -> 6.88 and 7.92 -> 6.95.
constexpr int kCrossVoteBits = 12;  // disparities < kMaxDisparity = 4096
void cross_vote(const Image<uint32_t>& arms_left, const Image<int16_t>& reliable, int sample, Range range,
                const Image<uint8_t>* mask_left, Image<int16_t>& voted, int vote_arm_length = kMaxCrossArm);

// ---------------------------------------------------------------- C7. median

// out(x, y) = the median (5th smallest) of voted at (clamp(x + a),
// clamp(y + b)), a, b in {-1, 0, 1}, reads clamped to the image and -1
// counted as a value; -1 where (masks) the left pixel is background.
void cross_median(const Image<int16_t>& voted, const Image<uint8_t>* mask_left, Image<int16_t>& out);

// ---------------------------------------------------------------- C8. output

// Whole pixels (the voting chooses integers; `subpixel` does not apply):
// disparity_q4 = d * 16 where d > 0, else 0.
// Confidence: 0 where d < 0; else, where the pixel's sample (x / S, y / S)
// has a raw winner w with |d - w| <= 1, confidence_from_costs on its
// normalised best and rival: floor(255 * (r.sum * b.pixels - b.sum *
// r.pixels) / (r.sum * b.pixels)), 0 without a rival or with r.sum = 0;
// 0 where the vote overruled the sample's own match (|d - w| > 1 or no w).
void finish_cross_disparity(const Image<int16_t>& disparity, ImageView<uint16_t> disparity_q4);
void cross_confidence(const CrossWinners& winners, const Image<int16_t>& disparity, int sample,
                      Image<uint8_t>& confidence);

// ================================================================ method elas
//
// ELAS (Geiger et al. 2010; Herrmann's thesis puts it on the GPU): its
// rules E1 .. E8 are stated with their functions in elas_support.h (E1
// descriptors, E2 support points), triangulation.h and triangle_prior.h
// (E4's triangulation and plane prior) and elas_dense.h (E3, E5 .. E8).
// Level 0 alone, on the grey views (stage 1). From the element's
// parameters: the range level_range(p, 0, width) (E2 and E5), lr_check (E6
// on or off; off: the maps after E5), resolve_lr_tolerance (E6's threshold; E2's
// right-to-left check keeps the thesis's 2), uniqueness (E5),
// elas_fill_gaps (E7: every gap, or those of at most 3 pixels), the
// background model's masks (E2, E5, E7); the thesis's Table 5 for the rest.
ElasParams elas_params(const Params& p, Range range);

}  // namespace cs
