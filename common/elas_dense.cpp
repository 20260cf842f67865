// ELAS's dense matching and post-processing (elas_dense.h, E3 to E7).
#include "elas_dense.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "stereo_math.h"
#include "triangle_prior.h"
#include "triangulation.h"

namespace cs {
namespace {

// A view's prior (E4) from its support points, at their places in that view.
void prior_of(const std::vector<ElasSupportPoint>& points, int width, int height, Image<int32_t>& mu_q4) {
  std::vector<TriPoint> at;
  std::vector<int> d;
  at.reserve(points.size());
  for (const ElasSupportPoint& s : points) {
    at.push_back({s.x, s.y});
    d.push_back(s.d);
  }
  Image<int32_t> owner;
  rasterize_prior(at, d, delaunay_triangulate(at), width, height, mu_q4, owner);
}

}  // namespace

ElasGrid elas_grid(const std::vector<ElasSupportPoint>& points, int width, int height, int grid_size) {
  ElasGrid g;
  g.size = std::max(1, grid_size);
  g.cells_x = (std::max(width, 0) + g.size - 1) / g.size;
  g.cells_y = (std::max(height, 0) + g.size - 1) / g.size;
  std::vector<std::vector<int16_t>> own(static_cast<size_t>(g.cells_x) * g.cells_y);
  for (const ElasSupportPoint& s : points)
    if (s.x >= 0 && s.y >= 0 && s.x < width && s.y < height && s.d >= 0)
      own[(s.y / g.size) * g.cells_x + s.x / g.size].push_back(static_cast<int16_t>(s.d));
  g.sets.assign(own.size(), {});
  for (int cy = 0; cy < g.cells_y; ++cy)
    for (int cx = 0; cx < g.cells_x; ++cx) {
      std::vector<int16_t>& set = g.sets[cy * g.cells_x + cx];
      for (int v = std::max(0, cy - 1); v <= std::min(g.cells_y - 1, cy + 1); ++v)
        for (int u = std::max(0, cx - 1); u <= std::min(g.cells_x - 1, cx + 1); ++u)
          set.insert(set.end(), own[v * g.cells_x + u].begin(), own[v * g.cells_x + u].end());
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
    }
  return g;
}

std::vector<uint16_t> elas_prior_table(double beta, double gamma, double sigma) {
  std::vector<uint16_t> t(16 * 64 + 1);
  const double top = std::log(gamma + 1);
  for (size_t i = 0; i < t.size(); ++i) {
    const double delta = static_cast<double>(i) / 16;
    const double e = (top - std::log(gamma + std::exp(-delta * delta / (2 * sigma * sigma)))) / beta;
    t[i] = static_cast<uint16_t>(std::clamp(std::lround(e), 0L, 65535L));
  }
  return t;
}

void elas_dense(const Image<ElasDescriptor>& reference, const Image<ElasDescriptor>& other, bool right_reference,
                const Image<int32_t>& mu_q4, const ElasGrid& grid, const std::vector<uint16_t>& prior,
                int min_disparity, int max_disparity, int sradius, const Image<uint8_t>* mask,
                Image<int16_t>& disparity, Image<int32_t>* best, Image<int32_t>* rival) {
  const int w = reference.width, h = reference.height;
  disparity = Image<int16_t>(w, h, int16_t{-1});
  if (best) *best = Image<int32_t>(w, h, kNoCost);
  if (rival) *rival = Image<int32_t>(w, h, kNoCost);
  if (prior.empty()) return;
  const int far = prior.back();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (mask && !mask->at(x, y)) continue;
      const int32_t mu = mu_q4.at(x, y);
      // Each candidate once or more (a multiset: the least E and its
      // smallest d are the same as over the set).
      auto each_candidate = [&](auto&& visit) {
        auto consider = [&](int d) {
          if (d < min_disparity || d >= max_disparity) return;
          const int xo = right_reference ? x + d : x - d;
          if (xo < 0 || xo >= w) return;
          int e = elas_sad(reference.at(x, y), other.at(xo, y));
          if (mu == kNoPrior) {
            e += far;
          } else {
            const int64_t t = std::llabs(16LL * d - mu);
            e += t < static_cast<int64_t>(prior.size()) ? prior[static_cast<size_t>(t)] : far;
          }
          visit(d, e);
        };
        if (mu != kNoPrior) {
          const int m = static_cast<int>(floor_div(static_cast<int64_t>(mu) + 8, 16));
          for (int d = m - sradius; d <= m + sradius; ++d) consider(d);
        }
        for (int16_t d : grid.at(x, y)) consider(d);
      };
      int best_e = 0, best_d = -1;
      each_candidate([&](int d, int e) {
        if (best_d < 0 || e < best_e || (e == best_e && d < best_d)) best_e = e, best_d = d;
      });
      disparity.at(x, y) = static_cast<int16_t>(best_d);
      if (best_d < 0) continue;
      if (best) best->at(x, y) = best_e;
      if (rival) {
        int32_t r = kNoCost;
        each_candidate([&](int d, int e) {
          if (std::abs(d - best_d) >= 2 && (r == kNoCost || e < r)) r = e;
        });
        rival->at(x, y) = r;
      }
    }
}

void elas_lr_check(Image<int16_t>& left, Image<int16_t>& right, int lr_threshold) {
  const Image<int16_t> l = left, r = right;
  const int w = l.width;
  for (int y = 0; y < l.height; ++y)
    for (int x = 0; x < w; ++x) {
      const int dl = l.at(x, y);
      if (dl >= 0) {
        const int xr = x - dl;
        const int dr = xr >= 0 && xr < w ? r.at(xr, y) : -1;
        if (dr < 0 || std::abs(dl - dr) > lr_threshold) left.at(x, y) = -1;
      }
      const int d2 = r.at(x, y);
      if (d2 >= 0) {
        const int xl = x + d2;
        const int d1 = xl >= 0 && xl < w ? l.at(xl, y) : -1;
        if (d1 < 0 || std::abs(d2 - d1) > lr_threshold) right.at(x, y) = -1;
      }
    }
}

void elas_remove_speckles(Image<int16_t>& disparity, int speckle_size, int similarity) {
  const int w = disparity.width, h = disparity.height;
  std::vector<int32_t> label(static_cast<size_t>(w) * h, -1);
  std::vector<int32_t> stack, members;
  for (int start = 0; start < w * h; ++start) {
    if (label[start] >= 0 || disparity.pixels[start] < 0) continue;
    members.clear();
    stack.assign(1, start);
    label[start] = start;
    while (!stack.empty()) {
      const int32_t q = stack.back();
      stack.pop_back();
      members.push_back(q);
      const int qx = q % w, qy = q / w, dq = disparity.pixels[q];
      const int nx[4] = {qx - 1, qx + 1, qx, qx}, ny[4] = {qy, qy, qy - 1, qy + 1};
      for (int k = 0; k < 4; ++k) {
        if (nx[k] < 0 || ny[k] < 0 || nx[k] >= w || ny[k] >= h) continue;
        const int32_t n = ny[k] * w + nx[k];
        const int dn = disparity.pixels[n];
        if (label[n] >= 0 || dn < 0 || std::abs(dn - dq) > similarity) continue;
        label[n] = start;
        stack.push_back(n);
      }
    }
    if (static_cast<int>(members.size()) < speckle_size)
      for (int32_t q : members) disparity.pixels[q] = -1;
  }
}

void elas_fill_gaps(Image<int16_t>& disparity, int gap_width, bool fill_all, const Image<uint8_t>* mask) {
  // One line (a row or a column) of n pixels, at(k) its k-th, on(k) whether
  // it may be filled (the mask's foreground); the others cut the line.
  auto fill_line = [&](int n, auto&& at, auto&& on) {
    int k = 0;
    while (k < n) {
      if (at(k) >= 0 || !on(k)) {
        ++k;
        continue;
      }
      int e = k;
      while (e < n && at(e) < 0 && on(e)) ++e;  // the run [k, e)
      // A run's neighbour is the pixel beside it whatever the mask says (in
      // elas_match a background pixel holds -1: E5 matched none).
      const int a = k > 0 ? at(k - 1) : -1, b = e < n ? at(e) : -1;
      int value = -1;
      if (a >= 0 && b >= 0 && (fill_all || e - k <= gap_width)) value = std::min(a, b);
      else if (fill_all && (a >= 0 || b >= 0)) value = std::max(a, b);
      if (value >= 0)
        for (int q = k; q < e; ++q) at(q) = static_cast<int16_t>(value);
      k = e;
    }
  };
  const int w = disparity.width, h = disparity.height;
  for (int y = 0; y < h; ++y)
    fill_line(w, [&](int k) -> int16_t& { return disparity.at(k, y); },
              [&](int k) { return !mask || mask->at(k, y) != 0; });
  for (int x = 0; x < w; ++x)
    fill_line(h, [&](int k) -> int16_t& { return disparity.at(x, k); },
              [&](int k) { return !mask || mask->at(x, k) != 0; });
}

void elas_confidence(const Image<int16_t>& raw, const Image<int32_t>& best, const Image<int32_t>& rival,
                     const Image<int16_t>& disparity, Image<uint8_t>& confidence) {
  confidence = Image<uint8_t>(disparity.width, disparity.height, uint8_t{0});
  for (size_t i = 0; i < disparity.pixels.size(); ++i) {
    const int d = disparity.pixels[i];
    if (d >= 0 && d == raw.pixels[i]) confidence.pixels[i] = confidence_from_costs(best.pixels[i], rival.pixels[i]);
  }
}

void elas_match(const Image<uint8_t>& left, const Image<uint8_t>& right, const ElasParams& p,
                Image<int16_t>& disparity, Image<int16_t>* right_disparity, const Image<uint8_t>* mask_left,
                const Image<uint8_t>* mask_right, ElasDebug* debug) {
  const int w = left.width, h = left.height;
  disparity = Image<int16_t>(std::max(w, 0), std::max(h, 0), int16_t{-1});
  if (right_disparity) *right_disparity = disparity;
  ElasDebug own;
  ElasDebug& g = debug ? *debug : own;
  g = ElasDebug();
  if (right.width != w || right.height != h || w <= 0 || h <= 0) return;
  if (!mask_left || !mask_right) mask_left = mask_right = nullptr;
  elas_view_descriptors(left, g.descriptors[0]);
  elas_view_descriptors(right, g.descriptors[1]);
  const Image<ElasDescriptor>&dl = g.descriptors[0], &dr = g.descriptors[1];
  elas_support_grid(dl, dr, p.support, g.support, mask_left);
  const std::vector<ElasSupportPoint> points = elas_points_of(g.support, p.support.candidate_step);
  std::vector<ElasSupportPoint> right_points;
  for (const ElasSupportPoint& q : points) right_points.push_back({q.x - q.d, q.y, q.d});
  const std::vector<uint16_t> table = elas_prior_table(p.beta, p.gamma, p.sigma);
  prior_of(points, w, h, g.mu_q4[0]);
  prior_of(right_points, w, h, g.mu_q4[1]);
  const int lo = p.support.min_disparity, hi = p.support.max_disparity;
  elas_dense(dl, dr, false, g.mu_q4[0], elas_grid(points, w, h, p.grid_size), table, lo, hi, p.sradius, mask_left,
             g.raw[0], &g.best, &g.rival);
  elas_dense(dr, dl, true, g.mu_q4[1], elas_grid(right_points, w, h, p.grid_size), table, lo, hi, p.sradius,
             mask_right, g.raw[1]);
  if (p.uniqueness_ratio > 0)
    for (size_t i = 0; i < g.raw[0].pixels.size(); ++i)
      if (g.raw[0].pixels[i] >= 0 && !passes_uniqueness(g.best.pixels[i], g.rival.pixels[i], p.uniqueness_ratio))
        g.raw[0].pixels[i] = -1;
  g.checked[0] = g.raw[0];
  g.checked[1] = g.raw[1];
  if (p.lr_check) elas_lr_check(g.checked[0], g.checked[1], p.lr_threshold);
  if (right_disparity) *right_disparity = g.checked[1];
  disparity = g.checked[0];
  elas_remove_speckles(disparity, p.speckle_size, p.speckle_similarity);
  elas_fill_gaps(disparity, p.gap_width, p.fill_all, mask_left);
  if (debug) g.disparity = disparity;
}

}  // namespace cs
