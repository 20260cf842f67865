// Matching: adaptive-window census costs, winner-takes-all over per-pixel
// candidate intervals, progressive refinement, left-right check, sub-pixel.
//
// Every pixel's candidates form one interval [lo, hi) of disparities (the
// full range at the coarsest level, 2 dc - 2 .. 2 dc + 2 or a hole's span
// below it). Costs are evaluated tile by tile: for each disparity some pixel
// of a tile needs, the pixel costs of the tile plus its window margin go into
// a small integral image, from which the nine sub-window sums of every pixel
// are four reads each. Coarse levels thus cost O(pixels x range) and finer
// levels O(pixels x candidates), as in the paper's progressive scheme.
#include <algorithm>
#include <climits>
#include <vector>

#include "stages.h"

namespace cs {

namespace {

constexpr int kTile = 32;
constexpr uint32_t kNoOfferedKey = 0xFFFFFFFFu;

struct Intervals {
  int width = 0, height = 0;
  std::vector<int> lo, hi;  // empty where lo >= hi
  Intervals(int w, int h) : width(w), height(h), lo(static_cast<size_t>(w) * h, 0), hi(static_cast<size_t>(w) * h, 0) {}
};

// Calls visit(x, y, d, cost) for every pixel and every d of its interval, d
// ascending for each pixel.
template <typename Visit>
void evaluate_intervals(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                        const Intervals& iv, int radius, int best, Visit visit) {
  const int w = census_ref.width, h = census_ref.height;
  const int s = 2 * radius + 1;
  const int margin = s + radius;
  std::vector<int> needed;
  std::vector<int> integral;
  std::vector<int> sums;
  const int sign = ref == Reference::Left ? -1 : 1;
  for (int ty0 = 0; ty0 < h; ty0 += kTile) {
    const int ty1 = std::min(ty0 + kTile, h);
    for (int tx0 = 0; tx0 < w; tx0 += kTile) {
      const int tx1 = std::min(tx0 + kTile, w);
      int dmin = INT_MAX, dmax = INT_MIN;
      for (int y = ty0; y < ty1; ++y)
        for (int x = tx0; x < tx1; ++x) {
          const size_t p = static_cast<size_t>(y) * w + x;
          if (iv.lo[p] >= iv.hi[p]) continue;
          dmin = std::min(dmin, iv.lo[p]);
          dmax = std::max(dmax, iv.hi[p]);
        }
      if (dmin >= dmax) continue;
      // Which disparities some pixel of the tile needs (difference array).
      needed.assign(dmax - dmin + 1, 0);
      for (int y = ty0; y < ty1; ++y)
        for (int x = tx0; x < tx1; ++x) {
          const size_t p = static_cast<size_t>(y) * w + x;
          if (iv.lo[p] >= iv.hi[p]) continue;
          ++needed[iv.lo[p] - dmin];
          --needed[iv.hi[p] - dmin];
        }
      const int ax = tx0 - margin, ay = ty0 - margin;
      const int lw = (tx1 - tx0) + 2 * margin, lh = (ty1 - ty0) + 2 * margin;
      const int sw = (tx1 - tx0) + 2 * s, sh = (ty1 - ty0) + 2 * s;
      integral.assign(static_cast<size_t>(lw + 1) * (lh + 1), 0);
      sums.assign(static_cast<size_t>(sw) * sh, 0);
      int active = 0;
      for (int d = dmin; d < dmax; ++d) {
        active += needed[d - dmin];
        if (active <= 0) continue;
        // Pixel costs of the tile and its margin: columns clamped to the
        // image, rows outside it add 0.
        for (int ly = 0; ly < lh; ++ly) {
          const int y = ay + ly;
          int* irow = &integral[static_cast<size_t>(ly + 1) * (lw + 1)];
          const int* iprev = irow - (lw + 1);
          int run = 0;
          const bool row_inside = y >= 0 && y < h;
          const uint32_t* rref = row_inside ? &census_ref.pixels[static_cast<size_t>(y) * w] : nullptr;
          const uint32_t* roth = row_inside ? &census_other.pixels[static_cast<size_t>(y) * w] : nullptr;
          irow[0] = 0;
          for (int lx = 0; lx < lw; ++lx) {
            const int x = ax + lx;
            if (row_inside) run += census_cost(rref[clampi(x, 0, w - 1)], roth[clampi(x + sign * d, 0, w - 1)]);
            irow[lx + 1] = iprev[lx + 1] + run;
          }
        }
        // Sub-window sums centred at tile-local (i - s, j - s).
        for (int j = 0; j < sh; ++j) {
          const int* top = &integral[static_cast<size_t>(j) * (lw + 1)];
          const int* bottom = &integral[static_cast<size_t>(j + s) * (lw + 1)];
          int* srow = &sums[static_cast<size_t>(j) * sw];
          for (int i = 0; i < sw; ++i) srow[i] = bottom[i + s] - bottom[i] - top[i + s] + top[i];
        }
        for (int y = ty0; y < ty1; ++y)
          for (int x = tx0; x < tx1; ++x) {
            const size_t p = static_cast<size_t>(y) * w + x;
            if (d < iv.lo[p] || d >= iv.hi[p]) continue;
            const int ci = x - tx0 + s, cj = y - ty0 + s;
            const int centre = sums[static_cast<size_t>(cj) * sw + ci];
            int around[8];
            int k = 0;
            for (int j = -1; j <= 1; ++j)
              for (int i = -1; i <= 1; ++i)
                if (i != 0 || j != 0) around[k++] = sums[static_cast<size_t>(cj + j * s) * sw + ci + i * s];
            visit(x, y, d, adaptive_window_cost(centre, around, best));
          }
      }
    }
  }
}

// Limits an interval to the disparities whose matched pixel is in the image.
void clip_to_image(Reference ref, int x, int w, int* lo, int* hi) {
  if (ref == Reference::Left)
    *hi = std::min(*hi, x + 1);  // x - d >= 0
  else
    *hi = std::min(*hi, w - x);  // x + d < w
  *lo = std::max(*lo, 0);
}

void winner_takes_all(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                      const Image<uint8_t>* mask_other, const Intervals& iv, int radius, int best,
                      int uniqueness_ratio, Image<int16_t>& disparity, SweepCosts* costs,
                      Image<int16_t>* offered = nullptr) {
  const int w = census_ref.width, h = census_ref.height;
  disparity = Image<int16_t>(w, h, -1);
  // Each pixel's interval is visited d ascending, as SweepWinner needs.
  std::vector<SweepWinner> sweep(static_cast<size_t>(w) * h);
  evaluate_intervals(census_ref, census_other, ref, iv, radius, best, [&](int x, int y, int d, int cost) {
    bool admissible = true;
    if (mask_other) {
      const int xm = ref == Reference::Left ? x - d : x + d;
      admissible = mask_other->at(xm, y) != 0;
    }
    sweep[static_cast<size_t>(y) * w + x].visit(d, cost, admissible);
  });
  if (offered) {
    // Each winner (before uniqueness) offers cost << 16 | d to the other
    // view's pixel it matches; the least key wins (least cost, ties to the
    // smaller d).
    std::vector<uint32_t> keys(static_cast<size_t>(w) * h, kNoOfferedKey);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const SweepWinner& s = sweep[static_cast<size_t>(y) * w + x];
        if (s.disparity < 0) continue;
        uint32_t& k = keys[static_cast<size_t>(y) * w + (ref == Reference::Left ? x - s.disparity : x + s.disparity)];
        k = std::min(k, static_cast<uint32_t>(s.best) << 16 | static_cast<uint32_t>(s.disparity));
      }
    *offered = Image<int16_t>(w, h, -1);
    for (size_t p = 0; p < keys.size(); ++p)
      if (keys[p] != kNoOfferedKey) offered->pixels[p] = static_cast<int16_t>(keys[p] & 0xFFFFu);
  }
  for (size_t p = 0; p < sweep.size(); ++p)
    if (passes_uniqueness(sweep[p].best, sweep[p].rival, uniqueness_ratio)) disparity.pixels[p] = sweep[p].disparity;
  if (costs) {
    costs->best = Image<int32_t>(w, h, kNoCost);
    costs->rival = Image<int32_t>(w, h, kNoCost);
    for (size_t p = 0; p < sweep.size(); ++p) {
      costs->best.pixels[p] = sweep[p].best;
      costs->rival.pixels[p] = sweep[p].rival;
    }
  }
}

}  // namespace

int window_cost(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref, int x, int y,
                int d, int radius, int best) {
  const int w = census_ref.width, h = census_ref.height;
  const int sign = ref == Reference::Left ? -1 : 1;
  auto sub = [&](int cx, int cy) {
    int sum = 0;
    for (int v = cy - radius; v <= cy + radius; ++v) {
      if (v < 0 || v >= h) continue;
      for (int u = cx - radius; u <= cx + radius; ++u)
        sum += census_cost(census_ref.at(clampi(u, 0, w - 1), v), census_other.at(clampi(u + sign * d, 0, w - 1), v));
    }
    return sum;
  };
  const int s = 2 * radius + 1;
  int around[8];
  int k = 0;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i)
      if (i != 0 || j != 0) around[k++] = sub(x + i * s, y + j * s);
  return adaptive_window_cost(sub(x, y), around, best);
}

void match_full_range(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                      const Image<uint8_t>* mask_ref, const Image<uint8_t>* mask_other, Range range, int radius,
                      int best, Image<int16_t>& disparity, int uniqueness_ratio, SweepCosts* costs,
                      Image<int16_t>* offered) {
  const int w = census_ref.width, h = census_ref.height;
  Intervals iv(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (mask_ref && mask_ref->at(x, y) == 0) continue;
      int lo = range.lo, hi = range.hi;
      clip_to_image(ref, x, w, &lo, &hi);
      iv.lo[static_cast<size_t>(y) * w + x] = lo;
      iv.hi[static_cast<size_t>(y) * w + x] = hi;
    }
  winner_takes_all(census_ref, census_other, ref, mask_other, iv, radius, best, uniqueness_ratio, disparity, costs,
                   offered);
}

bool refined_candidates(const Image<int16_t>& coarser, Reference ref, int x, int y, int w, Range range,
                        int hole_radius, int hole_span, int* lo, int* hi) {
  const int wc = coarser.width, hc = coarser.height;
  const int px = std::min(x / 2, wc - 1), py = std::min(y / 2, hc - 1);
  const int dc = coarser.at(px, py);
  if (dc >= 0) {
    refinement_interval(dc, dc, false, hole_span, lo, hi);
  } else {
    int mn = INT_MAX, mx = INT_MIN;
    for (int v = std::max(py - hole_radius, 0); v <= std::min(py + hole_radius, hc - 1); ++v)
      for (int u = std::max(px - hole_radius, 0); u <= std::min(px + hole_radius, wc - 1); ++u) {
        const int c = coarser.at(u, v);
        if (c < 0) continue;
        mn = std::min(mn, c);
        mx = std::max(mx, c);
      }
    if (mn > mx) return false;
    refinement_interval(mn, mx, true, hole_span, lo, hi);
  }
  *lo = std::max(*lo, range.lo);
  *hi = std::min(*hi, range.hi);
  clip_to_image(ref, x, w, lo, hi);
  return true;
}

void refine_level(const Image<uint32_t>& census_ref, const Image<uint32_t>& census_other, Reference ref,
                  const Image<uint8_t>* mask_ref, const Image<uint8_t>* mask_other, const Image<int16_t>& coarser,
                  Range range, int radius, int best, int hole_radius, int hole_span,
                  Image<int16_t>& disparity, int uniqueness_ratio, SweepCosts* costs, Image<int16_t>* offered) {
  const int w = census_ref.width, h = census_ref.height;
  Intervals iv(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (mask_ref && mask_ref->at(x, y) == 0) continue;
      int lo, hi;
      if (!refined_candidates(coarser, ref, x, y, w, range, hole_radius, hole_span, &lo, &hi)) continue;
      iv.lo[static_cast<size_t>(y) * w + x] = lo;
      iv.hi[static_cast<size_t>(y) * w + x] = hi;
    }
  winner_takes_all(census_ref, census_other, ref, mask_other, iv, radius, best, uniqueness_ratio, disparity, costs,
                   offered);
}

void cross_check(Image<int16_t>& left, Image<int16_t>& right, int tolerance) {
  const Image<int16_t> l0 = left, r0 = right;
  const int w = left.width, h = left.height;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int dl = l0.at(x, y);
      if (dl >= 0 && !lr_consistent(dl, x - dl, w, &r0.at(0, y), tolerance)) left.at(x, y) = -1;
      const int dr = r0.at(x, y);
      if (dr >= 0 && !lr_consistent(dr, x + dr, w, &l0.at(0, y), tolerance)) right.at(x, y) = -1;
    }
}

void support_filter(Image<int16_t>& disparity, int min_support) {
  if (min_support <= 0) return;
  const Image<int16_t> in = disparity;
  const int w = in.width, h = in.height;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int d = in.at(x, y);
      if (d < 0) continue;
      int agree = 0;
      for (int v = std::max(y - 1, 0); v <= std::min(y + 1, h - 1); ++v)
        for (int u = std::max(x - 1, 0); u <= std::min(x + 1, w - 1); ++u)
          if ((u != x || v != y) && supports(d, in.at(u, v))) ++agree;
      if (agree < min_support) disparity.at(x, y) = -1;
    }
}

void confidence_map(const SweepCosts& costs, const Image<int16_t>& disparity, Image<uint8_t>& confidence) {
  confidence = Image<uint8_t>(disparity.width, disparity.height, 0);
  for (size_t p = 0; p < disparity.pixels.size(); ++p)
    if (disparity.pixels[p] >= 0) confidence.pixels[p] = confidence_from_costs(costs.best.pixels[p], costs.rival.pixels[p]);
}

void finish_disparity(const Image<uint32_t>& census_left, const Image<uint32_t>& census_right,
                      const Image<int16_t>& disparity, Range range, int radius, int best, bool subpixel,
                      ImageView<uint16_t> disparity_q4) {
  const int w = disparity.width, h = disparity.height;
  Intervals iv(w, h);
  if (subpixel) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int d = disparity.at(x, y);
        if (!subpixel_neighbours_in_range(d, x, range.lo, range.hi)) continue;
        iv.lo[static_cast<size_t>(y) * w + x] = d - 1;
        iv.hi[static_cast<size_t>(y) * w + x] = d + 2;
      }
  }
  std::vector<int> costs(static_cast<size_t>(w) * h * 3, 0);
  if (subpixel)
    evaluate_intervals(census_left, census_right, Reference::Left, iv, radius, best, [&](int x, int y, int d, int cost) {
      const size_t p = static_cast<size_t>(y) * w + x;
      costs[p * 3 + (d - iv.lo[p])] = cost;
    });
  for (int y = 0; y < h; ++y) {
    uint16_t* out = disparity_q4.row(y);
    for (int x = 0; x < w; ++x) {
      const int d = disparity.at(x, y);
      if (d < 0) {
        out[x] = kInvalidDisparity;
        continue;
      }
      int q = d * 16;
      const size_t p = static_cast<size_t>(y) * w + x;
      if (iv.lo[p] < iv.hi[p]) q += subpixel_offset_q4(costs[p * 3], costs[p * 3 + 1], costs[p * 3 + 2]);
      out[x] = static_cast<uint16_t>(q < 0 ? 0 : q);
    }
  }
}

}  // namespace cs
