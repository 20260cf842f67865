// Method cross (stages.h, C1 .. C8): colour crosses, aggregation over the
// overlap of both views' regions, winner-takes-all with the offered right
// map, the reliability check, bitwise fast voting, a 3 x 3 median.
//
// Aggregation is swept one disparity at a time, the outermost loop as in the
// paper's CUDA version (section V-B): per d, the pixel costs of every
// sampled row, a prefix sum along each row gives every sample's horizontal
// sum H in two reads, then a prefix sum of H down each column gives every
// anchor's C in two more (the orthogonal integral images of its ref. [5]).
// Each (sample, d) thus costs a few operations whatever the arms, and the
// winners are updated on the fly (CrossSweep), so no cost volume is kept.
// Arms are at most kMaxCrossArm (cross_arms with a valid L): the packed
// costs below and the voting's byte counts rely on it.
#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <vector>

#include "cross_rules.h"
#include "stages.h"

namespace cs {

namespace {

enum Arm { kLeft = 0, kRight = 1, kUp = 2, kDown = 3 };

inline int channel(uint32_t rgb, int c) { return static_cast<int>((rgb >> (8 * c)) & 255); }

// The eq. (1) colour test: max over R, G, B of the absolute difference.
inline int colour_distance(uint32_t a, uint32_t b) {
  int m = 0;
  for (int c = 0; c < 3; ++c) m = std::max(m, std::abs(channel(a, c) - channel(b, c)));
  return m;
}

// A cost (C, N) as the sweep keeps it: packed in 32 bits (cross_rules.h),
// so that a sample's state is 18 bytes: at full size the sweep's memory
// traffic is most of its time.
CrossCost unpack_cost(uint32_t c) { return {cross_cost_sum(c), cross_cost_pixels(c)}; }
uint32_t pack_cost(CrossCost c) { return c.sum < 0 ? kNoCrossCost : pack_cross_cost(c.sum, c.pixels); }

// Winner-takes-all of one sample over an ascending, contiguous run of d,
// on normalised costs (SweepWinner's scheme: `before` holds the least
// admissible cost at d' <= d - 2, so a new winner inherits it as its rival).
// Strict comparisons keep the smaller d on ties, for the winner and for the
// rival alike (so the rival's (C, N) is that of its smallest d).
struct CrossSweep {
  uint32_t best = kNoCrossCost, rival = kNoCrossCost, before = kNoCrossCost;
  uint32_t last = kNoCrossCost;  // C(d - 1) where d - 1 was admissible
  int16_t disparity = -1;

  void visit(int d, uint32_t cost, bool admissible) {
    if (admissible) {
      if (cross_cost_below(cost, best)) {
        rival = before;
        best = cost;
        disparity = static_cast<int16_t>(d);
      } else if (d != disparity + 1 && cross_cost_below(cost, rival)) {
        rival = cost;  // a neighbour of the winner is no rival
      }
    }
    if (cross_cost_below(last, before)) before = last;
    last = admissible ? cost : kNoCrossCost;
  }
};

// One view's arms at the samples' rows, unpacked and divided by S (C2):
// arm[a][j * width + x], x every column of the view or every S-th.
struct SampledArms {
  int width = 0;
  std::vector<uint8_t> arm[4];
};

SampledArms sample_arms(const Image<uint32_t>& arms, int sample, int column_step) {
  SampledArms s;
  const int rows = (arms.height + sample - 1) / sample;
  s.width = (arms.width + column_step - 1) / column_step;
  for (auto& a : s.arm) a.resize(static_cast<size_t>(s.width) * rows);
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < s.width; ++i) {
      const uint32_t packed = arms.at(i * column_step, j * sample);
      for (int a = 0; a < 4; ++a) s.arm[a][static_cast<size_t>(j) * s.width + i] =
          static_cast<uint8_t>(cross_arm(packed, a) / sample);
    }
  return s;
}

}  // namespace

// ---------------------------------------------------------------- C1

void cross_arms(const Image<uint32_t>& rgb, int tau, int arm_length, Image<uint32_t>& arms, int row_step) {
  const int w = rgb.width, h = rgb.height;
  arms = Image<uint32_t>(w, h);  // the rows row_step skips stay 0
  static const int step[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
  for (int y = 0; y < h; y += row_step)
    for (int x = 0; x < w; ++x) {
      const uint32_t centre = rgb.at(x, y);
      // phi: outside the image, or a channel more than tau away.
      auto differs = [&](int u, int v) {
        return u < 0 || u >= w || v < 0 || v >= h || colour_distance(centre, rgb.at(u, v)) > tau;
      };
      uint32_t packed = 0;
      for (int a = 0; a < 4; ++a) {
        const int dx = step[a][0], dy = step[a][1];
        int i = 0;
        while (i < arm_length &&
               !(differs(x + (i + 1) * dx, y + (i + 1) * dy) && differs(x + (i + 2) * dx, y + (i + 2) * dy)))
          ++i;
        packed |= static_cast<uint32_t>(i) << (8 * a);
      }
      arms.at(x, y) = packed;
    }
}

// ---------------------------------------------------------------- C1b

void cross_census(const Image<uint32_t>& rgb, int sample, Image<uint32_t>& words) {
  const int w = rgb.width, h = rgb.height;
  words = Image<uint32_t>(w, h);  // the rows between the samples' stay 0
  auto colour = [&](int u, int v) { return rgb.at(u, v); };
  for (int y = 0; y < h; y += sample)
    for (int x = 0; x < w; ++x) words.at(x, y) = cross_word(colour, x, y, w, h, sample);
}

// ---------------------------------------------------------------- C3

CrossCost cross_cost(const Image<uint32_t>& words_left, const Image<uint32_t>& words_right,
                     const Image<uint32_t>& arms_left, const Image<uint32_t>& arms_right, int i, int j, int d,
                     int truncation, int census_weight, int sample) {
  const Image<uint32_t>* colour[2] = {&words_left, &words_right};
  const Image<uint32_t>* arms[2] = {&arms_left, &arms_right};
  return unpack_cost(cross_region_cost([&](int v, int x, int y) { return colour[v]->at(x, y); },
                                       [&](int v, int x, int y) { return arms[v]->at(x, y); }, i, j, d, truncation,
                                       census_weight, sample));
}

// ---------------------------------------------------------------- C4

void cross_match(const Image<uint32_t>& words_left, const Image<uint32_t>& words_right,
                 const Image<uint32_t>& arms_left, const Image<uint32_t>& arms_right, const Image<uint8_t>* mask_left,
                 const Image<uint8_t>* mask_right, Range range, int truncation, int census_weight, int sample,
                 int uniqueness_ratio, CrossWinners& out) {
  const int w = words_left.width, h = words_left.height, S = sample;
  const int ws = (w + S - 1) / S, hs = (h + S - 1) / S;
  const bool masks = mask_left != nullptr && mask_right != nullptr;
  const size_t samples = static_cast<size_t>(ws) * hs;

  // The samples (left) and the sampled rows (right, every column).
  const SampledArms al = sample_arms(arms_left, S, S), ar = sample_arms(arms_right, S, 1);
  std::vector<uint32_t> cl(samples), cr(static_cast<size_t>(w) * hs);
  std::vector<uint8_t> ml(masks ? samples : 0), mr(masks ? cr.size() : 0);
  for (int j = 0; j < hs; ++j) {
    for (int i = 0; i < ws; ++i) {
      cl[static_cast<size_t>(j) * ws + i] = words_left.at(S * i, S * j);
      if (masks) ml[static_cast<size_t>(j) * ws + i] = mask_left->at(S * i, S * j) != 0;
    }
    for (int x = 0; x < w; ++x) {
      cr[static_cast<size_t>(j) * w + x] = words_right.at(x, S * j);
      if (masks) mr[static_cast<size_t>(j) * w + x] = mask_right->at(x, S * j) != 0;
    }
  }

  // An anchor reaches at most `reach` sampled rows down (its left pixel's arm).
  int reach = 0;
  for (uint8_t a : al.arm[kDown]) reach = std::max<int>(reach, a);

  std::vector<CrossSweep> sweep(samples);
  std::vector<int32_t> cost(ws), prefix(ws + 1);
  // Column prefix sums of H (high 32 bits) and N_H (low): row j + 1 holds
  // rows 0 .. j. The sums stay below 2^31 and N_H's never borrows.
  std::vector<int64_t> column(static_cast<size_t>(hs + 1) * ws, 0);
  const int lo = std::max(range.lo, 0), hi = std::min(range.hi, w);
  for (int d = lo; d < hi; ++d) {
    const int i0 = (d + S - 1) / S;  // the first sample with S i - d >= 0
    if (i0 >= ws) break;
    // C and N of the anchors of sampled row j, from the column sums.
    auto anchors = [&](int j) {
      const size_t row = static_cast<size_t>(j) * ws;
      const uint8_t* lm = &al.arm[kUp][row];
      const uint8_t* lp = &al.arm[kDown][row];
      const uint8_t* rm = &ar.arm[kUp][static_cast<size_t>(j) * w];
      const uint8_t* rp = &ar.arm[kDown][static_cast<size_t>(j) * w];
      for (int i = i0; i < ws; ++i) {
        const int xr = S * i - d;
        const int vm = std::min(lm[i], rm[xr]), vp = std::min(lp[i], rp[xr]);
        assert(j - vm >= 0 && j + vp < hs);
        const int64_t c = column[static_cast<size_t>(j + vp + 1) * ws + i] - column[static_cast<size_t>(j - vm) * ws + i];
        const bool admissible = !masks || (ml[row + i] && mr[static_cast<size_t>(j) * w + xr]);
        sweep[row + i].visit(d, pack_cross_cost(static_cast<int>(c >> 32), static_cast<int>(c & 0xFFFFFFFF)), admissible);
      }
    };
    // Row by row: H, then the column sums through it, then the anchors whose
    // regions end there (so the rows read are still in cache).
    for (int j = 0; j < hs; ++j) {
      const size_t row = static_cast<size_t>(j) * ws;
      const uint32_t* lrow = &cl[row];
      const uint32_t* rrow = &cr[static_cast<size_t>(j) * w];
      // prefix[k - i0] = sum of e(i0 .. k - 1, j, d) (e apart: a loop the
      // compiler vectorises).
      for (int i = i0; i < ws; ++i) cost[i] = cross_pixel_cost(lrow[i], rrow[S * i - d], truncation, census_weight);
      prefix[0] = 0;
      for (int i = i0; i < ws; ++i) prefix[i - i0 + 1] = prefix[i - i0] + cost[i];
      const uint8_t* lm = &al.arm[kLeft][row];
      const uint8_t* lp = &al.arm[kRight][row];
      const uint8_t* rm = &ar.arm[kLeft][static_cast<size_t>(j) * w];
      const uint8_t* rp = &ar.arm[kRight][static_cast<size_t>(j) * w];
      const int64_t* above = &column[row];
      int64_t* through = &column[row + ws];
      for (int i = i0; i < ws; ++i) {
        const int hm = std::min(lm[i], rm[S * i - d]), hp = std::min(lp[i], rp[S * i - d]);
        assert(i - hm >= i0 && i + hp < ws);
        const int64_t h = prefix[i + hp + 1 - i0] - prefix[i - hm - i0];
        through[i] = above[i] + (h << 32) + (hm + hp + 1);
      }
      if (j - reach >= 0) anchors(j - reach);
    }
    for (int j = std::max(hs - reach, 0); j < hs; ++j) anchors(j);
  }

  out.raw = Image<int16_t>(ws, hs, -1);
  out.best = Image<CrossCost>(ws, hs);
  out.rival = Image<CrossCost>(ws, hs);
  for (size_t s = 0; s < samples; ++s) {
    if (sweep[s].disparity < 0) continue;
    out.raw.pixels[s] = sweep[s].disparity;
    out.best.pixels[s] = unpack_cost(sweep[s].best);
    out.rival.pixels[s] = unpack_cost(sweep[s].rival);
  }

  // Uniqueness on normalised costs (B3's rule, products instead of quotients).
  out.disparity = out.raw;
  for (size_t s = 0; s < samples; ++s)
    if (out.disparity.pixels[s] >= 0 && !cross_unique(sweep[s].best, sweep[s].rival, uniqueness_ratio))
      out.disparity.pixels[s] = -1;

  // The offered right map: lowest offer, ties to the smaller d.
  out.right = Image<int16_t>(w, hs, -1);
  std::vector<CrossCost> offer(static_cast<size_t>(w) * hs);
  for (int j = 0; j < hs; ++j)
    for (int i = 0; i < ws; ++i) {
      const int d = out.raw.at(i, j);
      if (d < 0) continue;
      const size_t r = static_cast<size_t>(j) * w + (S * i - d);
      const CrossCost c = out.best.at(i, j);
      const int taken = out.right.pixels[r];
      if (taken < 0 || cross_cost_less(c, offer[r]) || (!cross_cost_less(offer[r], c) && d < taken)) {
        offer[r] = c;
        out.right.pixels[r] = static_cast<int16_t>(d);
      }
    }
}

// ---------------------------------------------------------------- C5

void cross_reliable(const CrossWinners& winners, int sample, bool lr_check, int tolerance, Image<int16_t>& reliable) {
  reliable = winners.disparity;
  if (!lr_check) return;
  for (int j = 0; j < reliable.height; ++j)
    for (int i = 0; i < reliable.width; ++i) {
      int16_t& dl = reliable.at(i, j);
      if (dl < 0) continue;
      const int xr = sample * i - dl;
      const int dr = xr >= 0 && xr < winners.right.width ? winners.right.at(xr, j) : -1;
      if (dr < 0 || std::abs(dl - dr) > tolerance) dl = -1;
    }
}

// ---------------------------------------------------------------- C6

void cross_vote(const Image<uint32_t>& arms_left, const Image<int16_t>& reliable, int sample, Range range,
                const Image<uint8_t>* mask_left, Image<int16_t>& voted, int vote_arm_length) {
  const int w = arms_left.width, h = arms_left.height, S = sample;
  const size_t n = static_cast<size_t>(w) * h;
  // The estimates at full size: the samples' reliable values, stuffed (SAR).
  std::vector<int16_t> estimate(n, -1);
  for (int y = 0; y < h; y += S)
    for (int x = 0; x < w; x += S) estimate[static_cast<size_t>(y) * w + x] = reliable.at(x / S, y / S);

  // Horizontal pass: n_H and b_H^l of every pixel from per-row prefix sums,
  // one plane per count (at most 2 L + 1 = 33: a byte).
  constexpr int kCounts = kCrossVoteBits + 1;  // plane 0: n_H, plane 1 + l: b_H^l
  std::vector<uint8_t> horizontal(n * kCounts);
  std::vector<int32_t> prefix(static_cast<size_t>(w + 1) * kCounts);
  for (int y = 0; y < h; ++y) {
    const size_t row = static_cast<size_t>(y) * w;
    std::fill(prefix.begin(), prefix.begin() + kCounts, 0);
    for (int x = 0; x < w; ++x) {
      const int e = estimate[row + x];
      const int32_t* before = &prefix[static_cast<size_t>(x) * kCounts];
      int32_t* after = &prefix[static_cast<size_t>(x + 1) * kCounts];
      after[0] = before[0] + (e >= 0);
      const int code = e >= 0 ? cross_vote_code(e) : 0;
      for (int l = 0; l < kCrossVoteBits; ++l) after[1 + l] = before[1 + l] + ((code >> l) & 1);
    }
    for (int x = 0; x < w; ++x) {
      const uint32_t a = arms_left.at(x, y);
      const int32_t* lo = &prefix[static_cast<size_t>(x - cross_vote_arm(a, kLeft, vote_arm_length)) * kCounts];
      const int32_t* hi = &prefix[static_cast<size_t>(x + cross_vote_arm(a, kRight, vote_arm_length) + 1) * kCounts];
      for (int k = 0; k < kCounts; ++k) horizontal[k * n + row + x] = static_cast<uint8_t>(hi[k] - lo[k]);
    }
  }

  // Vertical pass, one count at a time (column prefix sums of that count).
  std::vector<int32_t> column(static_cast<size_t>(h + 1) * w);
  std::vector<int32_t> total(n), value(n, 0);
  for (int k = 0; k < kCounts; ++k) {
    std::fill(column.begin(), column.begin() + w, 0);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t p = static_cast<size_t>(y) * w + x;
        column[p + w] = column[p] + horizontal[k * n + p];
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t p = static_cast<size_t>(y) * w + x;
        const uint32_t a = arms_left.at(x, y);
        const int32_t c = column[static_cast<size_t>(y + cross_vote_arm(a, kDown, vote_arm_length) + 1) * w + x] -
                          column[static_cast<size_t>(y - cross_vote_arm(a, kUp, vote_arm_length)) * w + x];
        if (k == 0)
          total[p] = c;
        else if (2 * c > total[p])  // eq. (8): a strict majority sets bit l
          value[p] |= 1 << (k - 1);
      }
  }

  voted = Image<int16_t>(w, h, -1);
  for (size_t p = 0; p < n; ++p) {
    const int d = cross_vote_value(value[p]);
    if (total[p] == 0 || d < range.lo || d >= range.hi) continue;
    if (mask_left && !mask_left->pixels[p]) continue;
    voted.pixels[p] = static_cast<int16_t>(d);
  }
}

// ---------------------------------------------------------------- C7

void cross_median(const Image<int16_t>& voted, const Image<uint8_t>* mask_left, Image<int16_t>& out) {
  const int w = voted.width, h = voted.height;
  out = Image<int16_t>(w, h, -1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (mask_left && !mask_left->at(x, y)) continue;
      int16_t v[9];
      int k = 0;
      for (int b = -1; b <= 1; ++b)
        for (int a = -1; a <= 1; ++a) v[k++] = voted.at(clampi(x + a, 0, w - 1), clampi(y + b, 0, h - 1));
      std::nth_element(v, v + 4, v + 9);
      out.at(x, y) = v[4];
    }
}

// ---------------------------------------------------------------- C8

void finish_cross_disparity(const Image<int16_t>& disparity, ImageView<uint16_t> disparity_q4) {
  for (int y = 0; y < disparity.height; ++y) {
    uint16_t* out = disparity_q4.row(y);
    for (int x = 0; x < disparity.width; ++x) {
      const int d = disparity.at(x, y);
      out[x] = d > 0 ? static_cast<uint16_t>(d * 16) : kInvalidDisparity;
    }
  }
}

void cross_confidence(const CrossWinners& winners, const Image<int16_t>& disparity, int sample,
                      Image<uint8_t>& confidence) {
  const int w = disparity.width, h = disparity.height;
  confidence = Image<uint8_t>(w, h, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int d = disparity.at(x, y);
      const int i = x / sample, j = y / sample;
      const int win = winners.raw.at(i, j);
      if (d < 0 || win < 0 || std::abs(d - win) > 1) continue;
      confidence.at(x, y) = cross_confidence_of(pack_cost(winners.best.at(i, j)), pack_cost(winners.rival.at(i, j)));
    }
}

}  // namespace cs
