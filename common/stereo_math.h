// Exact integer arithmetic shared by the CPU reference and the CUDA kernels.
//
// Every per-pixel rule whose result must be bit-identical on both backends
// lives here, once, as an inline function that compiles for host and device.
// This header includes no GStreamer and no CUDA header: under nvcc the
// CS_HD macro adds __host__ __device__, under a plain C++ compiler it is empty.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CS_HD __host__ __device__ __forceinline__
#else
#define CS_HD inline
#endif

namespace cs {

// ---------------------------------------------------------------- basics

CS_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
CS_HD int mini(int a, int b) { return a < b ? a : b; }
CS_HD int maxi(int a, int b) { return a > b ? a : b; }

CS_HD int popcount32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __popc(v);
#else
  return __builtin_popcount(v);
#endif
}

// ---------------------------------------------------------------- colour

// Luma of an sRGB pixel, BT.601 weights in Q8 (77 + 150 + 29 = 256).
CS_HD uint8_t luma_from_rgb(int r, int g, int b) {
  return static_cast<uint8_t>((77 * r + 150 * g + 29 * b + 128) >> 8);
}

// BT.601 limited-range YCbCr to RGB, Q8 coefficients, clamped to 0..255.
// Used for the background model's colour from YUV input (I420, NV12, YUY2,
// UYVY); matching uses the Y samples directly.
CS_HD void rgb_from_yuv(int y, int u, int v, uint8_t* rgb) {
  const int c = 298 * (y - 16);
  const int d = u - 128;
  const int e = v - 128;
  rgb[0] = static_cast<uint8_t>(clampi((c + 409 * e + 128) >> 8, 0, 255));
  rgb[1] = static_cast<uint8_t>(clampi((c - 100 * d - 208 * e + 128) >> 8, 0, 255));
  rgb[2] = static_cast<uint8_t>(clampi((c + 516 * d + 128) >> 8, 0, 255));
}

// floor(n / d) for 0 <= n < 2^16 and 1 <= d < 2^10, exactly. On the GPU
// from a float quotient (n times the approximate reciprocal of d, within 1
// of the true one at these sizes: relative error below 2^-22) and one
// integer correction, which costs a few instructions where an integer
// division takes about twenty (the background model divides twice a pixel).
CS_HD int div_small(int n, int d) {
#if defined(__CUDA_ARCH__)
  float rcp;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rcp) : "f"(__int2float_rn(d)));
  int q = __float2int_rz(__int2float_rn(n) * rcp);
  const int r = n - q * d;
  q += r < 0 ? -1 : (r >= d ? 1 : 0);
  return q;
#else
  return n / d;
#endif
}

// n / d truncated towards zero (C++'s rule), |n| < 2^16, 1 <= d < 2^10.
// One division whatever the sign (no branch on the GPU).
CS_HD int div_small_signed(int n, int d) {
  const int q = div_small(n < 0 ? -n : n, d);
  return n < 0 ? -q : q;
}

// The saturation of a colour whose largest channel is mx and whose range
// (largest less smallest) is delta (hsv_from_rgb), in [0, 255].
CS_HD int saturation_from_range(int mx, int delta) { return mx == 0 ? 0 : div_small(255 * delta + mx / 2, mx); }

// The hue of a colour whose largest channel is mx and whose range is delta
// > 0 (hsv_from_rgb), in [0, 180).
CS_HD int hue_from_rgb(int r, int g, int b, int mx, int delta) {
  // In units of 1/30 sector = 2 degrees, before wrapping: the sector of the
  // largest channel (R, then G, then B on ties) and the rounded position in
  // it, which may be negative; chosen without branches.
  const bool red = mx == r, green = !red && mx == g;
  const int a = red ? g : (green ? b : r), c = red ? b : (green ? r : g);
  int hue = (red ? 0 : (green ? 60 : 120)) + div_small_signed(30 * (a - c) * 2 + delta, 2 * delta);
  if (hue < 0) hue += 180;
  if (hue >= 180) hue -= 180;
  return hue;
}

// HSV with H in [0, 180) (two degrees per unit, as OpenCV's 8-bit HSV),
// S and V in [0, 255]. Integer division truncates; every step is exact.
CS_HD void hsv_from_rgb(int r, int g, int b, int* h, int* s, int* v) {
  const int mx = maxi(r, maxi(g, b));
  const int mn = mini(r, mini(g, b));
  const int delta = mx - mn;
  *v = mx;
  *s = saturation_from_range(mx, delta);
  *h = delta == 0 ? 0 : hue_from_rgb(r, g, b, mx, delta);
}

// ---------------------------------------------------------------- pyramid

// One pixel of the next coarser level: the rounded mean of a 2x2 block.
CS_HD uint8_t average4(int a, int b, int c, int d) {
  return static_cast<uint8_t>((a + b + c + d + 2) >> 2);
}

// ---------------------------------------------------------------- cross-check

// The other view's disparity d_other at the matched pixel agrees with d:
// valid and within tolerance of it.
CS_HD bool lr_agree(int d, int d_other, int tolerance) {
  return d_other >= 0 && (d > d_other ? d - d_other : d_other - d) <= tolerance;
}

// The left-right check of one pixel (stages.h cross_check): disparity d >= 0
// of one view's map stays valid iff its matched column x_other (x - d for
// the left map, x + d for the right) lies in the image of width w and the
// other map's input value there agrees with d (lr_agree). other_row: the
// other map's row, anything that other_row[x] reads as a disparity (an
// int16 pointer, or a row of match keys on the GPU).
template <typename Row>
CS_HD bool lr_consistent(int d, int x_other, int w, const Row& other_row, int tolerance) {
  if (x_other < 0 || x_other >= w) return false;
  return lr_agree(d, other_row[x_other], tolerance);
}

// ---------------------------------------------------------------- refinement

// The candidates [lo, hi) a pixel of level l takes from the coarser level
// (stages.h refine_level): dmin = dmax = the parent's disparity when it is
// valid; for a hole, the least and greatest valid disparity around it. A
// hole's interval starts at the farthest surface around it (2 dmin - 2: an
// occluded pixel belongs to the background) and holds at most hole_span
// disparities (0: no bound), so a hole beside content beyond the range, or
// in a flat area whose neighbours matched anywhere, costs a bounded number
// of candidates instead of the whole spread of its neighbours.
CS_HD void refinement_interval(int dmin, int dmax, bool hole, int hole_span, int* lo, int* hi) {
  *lo = 2 * dmin - 2;
  *hi = 2 * dmax + 3;
  if (hole && hole_span > 0 && *hi - *lo > hole_span) *hi = *lo + hole_span;
}

// ---------------------------------------------------------------- support

// Whether neighbour value e agrees with disparity d >= 0 (support_filter):
// valid and within one disparity.
CS_HD bool supports(int d, int e) { return e >= 0 && e - d <= 1 && d - e <= 1; }

// ---------------------------------------------------------------- census

// 5x5 census transform: 24 bits, neighbours in row-major order skipping the
// centre; a bit is 1 where the neighbour is darker than the centre. Reads
// outside the image clamp to the nearest edge pixel (the caller does that).
constexpr int kCensusRadius = 2;
constexpr int kCensusBits = 24;

// Matching cost of one pixel pair: Hamming distance of their census codes.
CS_HD int census_cost(uint32_t a, uint32_t b) { return popcount32(a ^ b); }

// ---------------------------------------------------------------- window

// Adaptive window (Yang & Pollefeys 2003, as used by Zhao & Taubin 2011):
// 3x3 square sub-windows of side 2r+1 tile a (6r+3)^2 window. The window
// cost is the centre sub-window plus the `best` smallest of the 8 others
// (best = 0 gives the plain centre box, 8 the full square).
// `around` holds the 8 surrounding sub-window sums in any order.
CS_HD int adaptive_window_cost(int centre, const int* around, int best) {
  // Partial selection sort: `best` is at most 8 and usually 2.
  int v[8];
  for (int i = 0; i < 8; ++i) v[i] = around[i];
  int sum = centre;
  for (int k = 0; k < best; ++k) {
    int m = k;
    for (int i = k + 1; i < 8; ++i)
      if (v[i] < v[m]) m = i;
    const int t = v[k];
    v[k] = v[m];
    v[m] = t;
    sum += v[k];
  }
  return sum;
}

// ---------------------------------------------------------------- sub-pixel

// Whether disparity d at column x of the left view takes a sub-pixel
// offset: it is valid and both neighbours d - 1 and d + 1 lie in the search
// range [range_lo, range_hi) with x - (d + 1) still in the image.
CS_HD bool subpixel_neighbours_in_range(int d, int x, int range_lo, int range_hi) {
  return d >= 0 && d - 1 >= range_lo && d + 1 < range_hi && x - (d + 1) >= 0;
}

// Parabola through (d-1, cm), (d, c0), (d+1, cp); returns the offset of its
// vertex from d in 1/16 pixel, rounded half away from zero, in [-8, 8].
// No offset where the parabola does not open upward.
CS_HD int subpixel_offset_q4(int cm, int c0, int cp) {
  const int den = 2 * (cm + cp - 2 * c0);
  if (den <= 0) return 0;
  const int num = 16 * (cm - cp);
  int q = (2 * num + (num >= 0 ? den : -den)) / (2 * den);
  return clampi(q, -8, 8);
}

// ---------------------------------------------------------------- block matching

// Squared difference of two grey values: the pixel cost of method Block
// (Stam 2008 chose SSD over SAD because a GPU computes both in the same time).
CS_HD int squared_difference(int a, int b) { return (a - b) * (a - b); }

// A cost that was never seen: larger than any SSD of a 31 x 31 window
// (961 * 255^2 < 2^26).
constexpr int32_t kNoCost = 0x7fffffff;

// Winner-takes-all of one pixel over a disparity sweep, with what the
// uniqueness test, the confidence and the sub-pixel parabola need, in one
// pass and O(1) state (no cost volume is kept). visit() must be called for
// d ascending, once per disparity of a contiguous run; `admissible` says
// whether d may win (stages.h). The winner is the admissible d of smallest
// cost, ties to the smaller d.
struct SweepWinner {
  int32_t best = kNoCost;    // C(winner)
  int32_t rival = kNoCost;   // min C(d) over admissible d with |d - winner| >= 2
  int32_t below = kNoCost;   // C(winner - 1), admissible or not; kNoCost if not visited
  int32_t above = kNoCost;   // C(winner + 1), likewise
  int32_t before = kNoCost;  // min C over admissible d' <= d - 2 (d = the next visit)
  int32_t last = kNoCost;    // C(d - 1)
  int16_t disparity = -1;    // the winner; -1 while none
  bool last_admissible = false;

  CS_HD void visit(int d, int32_t cost, bool admissible) {
    if (admissible && cost < best) {
      // Every admissible d' <= d - 2 is more than one away from the new winner.
      rival = before;
      below = last;
      above = kNoCost;
      best = cost;
      disparity = static_cast<int16_t>(d);
    } else if (disparity >= 0 && d == disparity + 1) {
      above = cost;
    } else if (admissible && cost < rival) {
      rival = cost;
    }
    if (last_admissible && last < before) before = last;
    last = cost;
    last_admissible = admissible;
  }
};

// Uniqueness (stages.h): with ratio r > 0 (percent), the winner survives iff
// no rival exists or rival * 100 > best * (100 + r); ties with the bound are
// rejected. 64-bit products: SSD sums reach 961 * 255^2.
CS_HD bool passes_uniqueness(int32_t best, int32_t rival, int ratio) {
  if (ratio <= 0 || rival == kNoCost) return true;
  return static_cast<int64_t>(rival) * 100 > static_cast<int64_t>(best) * (100 + ratio);
}

// Confidence of a valid pixel, 0 .. 255: floor(255 * (rival - best) / rival),
// the rival's relative excess over the best. 0 without a rival or with
// rival = 0. It grows with rival / best, the quantity uniqueness thresholds:
// before the floor, (rival - best) / rival > r / (100 + r) is the test of
// ratio r, so a threshold on confidence acts like a uniqueness ratio.
CS_HD uint8_t confidence_from_costs(int32_t best, int32_t rival) {
  if (rival == kNoCost || rival <= 0) return 0;
  return static_cast<uint8_t>((static_cast<int64_t>(rival - best) * 255) / rival);
}

// ---------------------------------------------------------------- background

// The per-pixel background model of one view (stages.h stage 3), 64 bits a
// pixel as two 32-bit halves (so that a GPU reads and changes it with 32-bit
// operations), per channel c of (H, S, V):
//   mean   Q4 (1/16 of a unit), 12 bits: H in [0, 2880) (circular over 180
//          units), S and V in [0, 4080];
//   spread Q1 (1/2 unit), 6 bits, [0, 63]: the running estimate of the
//          channel's standard deviation (sigma), from its mean absolute
//          deviation (a Gaussian's sigma is sqrt(pi / 2) times it);
// and a 7-bit run: frames in a row the pixel was found foreground (0 .. 127).
//   low half:  bits 0..11 H mean, 12..23 S mean, 24..30 run;
//   high half: bits 0..11 V mean, 12..17 H spread, 18..23 S spread,
//              24..29 V spread.
// Eight bytes where a mean and a variance in 32 bits each took 24: the
// model is read (and mostly written) at every pixel of every frame, so its
// size is the model's cost. Updates round stochastically (a deterministic
// dither, background_dither) so that small steps accumulate on average: a
// mean of 1/16 unit still follows a learning rate of 1/1000.
using BackgroundPixel = uint64_t;
constexpr int kHueQ4 = 180 * 16;        // H mean wraps here
constexpr int kChannelMaxQ4 = 255 * 16;  // S, V means
constexpr int kSpreadMax = 63;           // Q1
constexpr int kRunMax = 127;
// sqrt(pi / 2) in Q8: sigma from a mean absolute deviation.
constexpr int kMadToSigmaQ8 = 321;

struct BackgroundFields {
  int mean[3];    // Q4
  int spread[3];  // Q1
  int run;
};

CS_HD BackgroundFields unpack_background(BackgroundPixel p) {
  const uint32_t lo = static_cast<uint32_t>(p), hi = static_cast<uint32_t>(p >> 32);
  BackgroundFields f;
  f.mean[0] = static_cast<int>(lo & 0xFFFu);
  f.mean[1] = static_cast<int>((lo >> 12) & 0xFFFu);
  f.mean[2] = static_cast<int>(hi & 0xFFFu);
  for (int c = 0; c < 3; ++c) f.spread[c] = static_cast<int>((hi >> (12 + 6 * c)) & 0x3Fu);
  f.run = static_cast<int>((lo >> 24) & 0x7Fu);
  return f;
}

CS_HD BackgroundPixel pack_background(const BackgroundFields& f) {
  const uint32_t lo = static_cast<uint32_t>(f.mean[0]) | static_cast<uint32_t>(f.mean[1]) << 12 |
                      static_cast<uint32_t>(f.run) << 24;
  const uint32_t hi = static_cast<uint32_t>(f.mean[2]) | static_cast<uint32_t>(f.spread[0]) << 12 |
                      static_cast<uint32_t>(f.spread[1]) << 18 | static_cast<uint32_t>(f.spread[2]) << 24;
  return static_cast<BackgroundPixel>(hi) << 32 | lo;
}

// What a frame's test and update need (background_params in stages.h makes
// it from Params).
struct BackgroundParams {
  int32_t alpha_q16;        // learning rate a frame: round(learning_rate * 65536), 1 .. 65536
  int32_t turn_alpha_q16;   // the rate of one update every kBackgroundTurns frames: 1 - (1 - a)^16
  int32_t absorb_alpha_q16; // a lasting foreground's rate: alpha_q16 / 4, at least 1
  int32_t absorb_turn_alpha_q16;  // ... on its turns: 1 - (1 - absorb_alpha)^16
  int32_t k_q8;             // foreground_threshold k: round(k * 256)
  int32_t sigma_min_q4;     // min_sigma: round(min_sigma * 16)
  int32_t absorb_delay;     // Params::absorb_delay
  int32_t warmup_frames;    // Params::warmup_frames
};

// Background pixels update their model on one frame in kBackgroundTurns
// (background_turn), at the rate that many frames compound to: the update
// (the colour's HSV, three means and spreads) is the model's cost in a still
// scene, where the cells label the pixels (stages.h stage 3). 16 against 4
// (and foreground pixels absorbing on their turns only): a still 1080p x
// 128 frame 0.066 -> 0.052 ms on the H200, the mask on the Aloe sequence as
// good (bench/RESULTS.md, issue 35).
constexpr int kBackgroundTurns = 16;

// Whether row y's background pixels update on the frame the model has seen
// frames_seen frames before (rows in runs of 4, a row of cells, so that a
// cell's pixels, the conversion's 4 x 4 blocks and its warps take one
// answer).
CS_HD bool background_turn(int y, int frames_seen) { return (((y >> 2) + frames_seen) & (kBackgroundTurns - 1)) == 0; }
static_assert((kBackgroundTurns & (kBackgroundTurns - 1)) == 0, "background_turn masks");

// The rate a frame during warm-up: the cumulative mean of the frames seen so
// far (1 / (n + 1)), never slower than the configured rate.
CS_HD int32_t warmup_alpha_q16(int frames_seen, int32_t alpha_q16) {
  const int32_t a = 65536 / (frames_seen + 1);
  return a > alpha_q16 ? a : alpha_q16;
}

// 32 well-mixed bits from a pixel of a view and the frame: the dither of
// that pixel's updates. The same on every machine (integer arithmetic).
CS_HD uint32_t background_dither(int x, int y, int frames_seen, int view) {
  uint32_t h = static_cast<uint32_t>(x) * 0x9E3779B1u ^ static_cast<uint32_t>(y) * 0x85EBCA77u ^
               (static_cast<uint32_t>(frames_seen) * 2u + static_cast<uint32_t>(view)) * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return h;
}

// The dither of the next channel (H, then S, then V) from the last's.
CS_HD uint32_t next_channel_dither(uint32_t h) {
  h = h * 0x9E3779B1u + 0x7F4A7C15u;
  return h ^ (h >> 16);
}

// floor((rate * step + u) / 65536) for u in [0, 65536): the step times the
// rate, rounded down or up with the probability that makes it exact on
// average (stochastic rounding with the dither u).
CS_HD int dithered_step(int32_t rate_q16, int step, uint32_t u16) {
  // |step| <= 4080 and rate <= 65536: the sum stays within 31 bits.
  const int32_t v = rate_q16 * step + static_cast<int32_t>(u16);
  return v >> 16;  // arithmetic: the floor
}

// A pixel's label from its cells (stages.h stage 3): background_pixel's
// `label`. kLabelTest: the pixel's own test; 0 / 1: background /
// foreground as its cells say, untested.
constexpr int kLabelTest = -1;

// The cells' label of a pixel whose cell's neighbourhood (the 3 x 3 cells
// around it that lie in the grid, `cells` of them) holds `foreground`
// foreground cells: 0 when none is, 1 when all are, else its own test.
CS_HD int cells_label(int foreground, int cells) {
  return foreground == 0 ? 0 : (foreground == cells ? 1 : kLabelTest);
}

// Cells of kBackgroundCell x kBackgroundCell pixels carry their own model
// (stages.h stage 3), so rows in runs of 4 (background_turn) are a cell row.
constexpr int kBackgroundCell = 4;

// A cell's colour: per channel the rounded mean of its n pixels' (sums of
// the r, g, b bytes), packed as pack_rgb.
CS_HD uint32_t cell_colour(int sum_r, int sum_g, int sum_b, int n) {
  const int half = n / 2;
  return static_cast<uint32_t>(div_small(sum_r + half, n)) | static_cast<uint32_t>(div_small(sum_g + half, n)) << 8 |
         static_cast<uint32_t>(div_small(sum_b + half, n)) << 16;
}

// One pixel of one view: the test against the model before the update, and
// the update (stages.h stage 3 states the rules). rgb: packed r | g << 8 |
// b << 16; label: the cells' (cells_label) or kLabelTest, read after the
// warm-up only. Returns whether the pixel is foreground; *model is updated.
CS_HD bool background_pixel(BackgroundPixel* model, uint32_t rgb, const BackgroundParams& bp, int frames_seen, int x,
                            int y, int view, int label = kLabelTest) {
  const int r = rgb & 255, g = (rgb >> 8) & 255, b = (rgb >> 16) & 255;
  BackgroundFields f;
  if (frames_seen == 0) {
    const int mx = maxi(r, maxi(g, b)), delta = mx - mini(r, mini(g, b));
    f.mean[0] = (delta == 0 ? 0 : hue_from_rgb(r, g, b, mx, delta)) * 16;
    f.mean[1] = saturation_from_range(mx, delta) * 16;
    f.mean[2] = mx * 16;
    for (int c = 0; c < 3; ++c) f.spread[c] = 0;
    f.run = 0;
    *model = pack_background(f);
    return true;
  }
  const uint32_t lo = static_cast<uint32_t>(*model), hi = static_cast<uint32_t>(*model >> 32);
  const bool warming_up = frames_seen < bp.warmup_frames;
  // Deviations in Q4; hue's is circular and weighted by the observed
  // saturation (greys' hue is noise), truncated towards zero. All three are
  // computed together, for a test or an update only: on a GPU a warp would
  // take the hue's path whenever one of its pixels needed it (nearly always
  // on colour content), and without branches the test is shorter.
  int d[3];
  auto deviations = [&] {
    const int mx = maxi(r, maxi(g, b)), delta = mx - mini(r, mini(g, b));
    const int sat = saturation_from_range(mx, delta);
    int dh = (delta == 0 ? 0 : hue_from_rgb(r, g, b, mx, delta)) * 16 - static_cast<int>(lo & 0xFFFu);
    dh += dh >= kHueQ4 / 2 ? -kHueQ4 : (dh < -kHueQ4 / 2 ? kHueQ4 : 0);
    d[0] = dh * sat / 255;
    d[1] = sat * 16 - static_cast<int>((lo >> 12) & 0xFFFu);
    d[2] = mx * 16 - static_cast<int>(hi & 0xFFFu);
  };
  auto beyond = [&](int c) {
    const int ad = d[c] < 0 ? -d[c] : d[c];
    const int sigma_q4 = maxi(static_cast<int>((hi >> (12 + 6 * c)) & 0x3Fu) * 8, bp.sigma_min_q4);
    return ad * 256 > bp.k_q8 * sigma_q4;
  };
  // The pixel's own test, or its cells' label (after the warm-up).
  const bool tested = !warming_up && label == kLabelTest;
  bool foreground = warming_up || label == 1;
  if (tested) {
    deviations();
    foreground = beyond(0) | beyond(1) | beyond(2);
  }
  // Which update: warm-up learns every frame at the cumulative rate; after
  // it, a background pixel learns on its turn, a foreground one holds still
  // for absorb_delay frames in a row and then absorbs (mean only) on its
  // turns at a quarter of the rate. Where only the run changes (most pixels
  // of most frames) the word is changed in place, and an untested pixel's
  // colour is never looked at.
  constexpr uint32_t kRunBits = 0x7Fu << 24;
  const int run = static_cast<int>((lo >> 24) & 0x7Fu);
  int32_t rate = 0;
  bool spread = true;
  int new_run = 0;
  if (warming_up) {
    rate = warmup_alpha_q16(frames_seen, bp.alpha_q16);
  } else if (!foreground) {
    if (!background_turn(y, frames_seen)) {
      *model = static_cast<BackgroundPixel>(hi) << 32 | (lo & ~kRunBits);
      return false;
    }
    rate = bp.turn_alpha_q16;
  } else {
    new_run = mini(run + 1, kRunMax);
    if (new_run <= bp.absorb_delay || !background_turn(y, frames_seen)) {
      *model = static_cast<BackgroundPixel>(hi) << 32 | (lo & ~kRunBits) | static_cast<uint32_t>(new_run) << 24;
      return true;
    }
    rate = bp.absorb_turn_alpha_q16;
    spread = false;
  }
  if (!tested) deviations();
  f = unpack_background(*model);
  f.run = new_run;
  uint32_t h = background_dither(x, y, frames_seen, view);
  for (int c = 0; c < 3; ++c) {
    int m = f.mean[c] + dithered_step(rate, d[c], h & 0xFFFFu);
    if (c == 0) {
      if (m < 0) m += kHueQ4;
      if (m >= kHueQ4) m -= kHueQ4;
    } else {
      m = clampi(m, 0, kChannelMaxQ4);
    }
    f.mean[c] = m;
    if (spread) {
      const int ad = d[c] < 0 ? -d[c] : d[c];
      const int target = (ad * kMadToSigmaQ8 + 1024) >> 11;  // Q4 |d| to Q1 sigma
      f.spread[c] = clampi(f.spread[c] + dithered_step(rate, target - f.spread[c], h >> 16), 0, kSpreadMax);
    }
    h = next_channel_dither(h);
  }
  *model = pack_background(f);
  return foreground;
}

// ---------------------------------------------------------------- encodings

// Raw disparity: value = d * 16 (4 fractional bits); 0 = invalid/background.
constexpr uint16_t kInvalidDisparity = 0;
constexpr int kDisparityFractionBits = 4;

// 8-bit disparity scaled by the configured range (never per frame):
// 0 = invalid, 1..255 = disparity 0 .. max_disparity linearly.
CS_HD uint8_t gray8_from_q4(int d_q4, int max_disparity) {
  if (d_q4 <= 0) return 0;
  const int full = max_disparity * 16;
  const int v = 1 + (d_q4 * 254 + full / 2) / full;
  return static_cast<uint8_t>(v > 255 ? 255 : v);
}

// Distance in millimetres from Q4 disparity: Z = baseline * focal / d.
// k_q4 = baseline_mm * focal_px * 16 is computed once on the host in double.
// 0 = invalid (no disparity, or nearer than 1 mm); 65535 = at or beyond 65.535 m.
CS_HD uint16_t depth_mm_from_q4(int d_q4, double k_q4) {
  if (d_q4 <= 0) return 0;
  const double z = k_q4 / static_cast<double>(d_q4);
  if (z >= 65535.0) return 65535;
  const int zi = static_cast<int>(z + 0.5);
  return static_cast<uint16_t>(zi < 1 ? 0 : zi);
}

}  // namespace cs
