// ELAS's descriptors and support points (elas_support.h, E1 and E2).
#include "elas_support.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "stereo_math.h"

namespace cs {
namespace {

uint8_t clamped(const Image<uint8_t>& im, int x, int y) {
  return im.at(clampi(x, 0, im.width - 1), clampi(y, 0, im.height - 1));
}

constexpr int kNeighbours[4][2] = {{0, -2}, {-2, 0}, {2, 0}, {0, 2}};

// E2 b (or c with right_reference) for the pixel (x, y) of the reference
// view over d in [d_min, d_max]: the winner, or -1 where the ratio test
// against the rival (the best at least 2 away) fails or there is no rival.
int support_match(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right, int x, int y, int d_min,
                  int d_max, bool right_reference, int ratio_pct) {
  if (d_max < d_min) return -1;
  std::vector<int> cost(d_max - d_min + 1);
  for (int d = d_min; d <= d_max; ++d) cost[d - d_min] = elas_support_cost(left, right, x, y, d, right_reference);
  const int k1 = static_cast<int>(std::min_element(cost.begin(), cost.end()) - cost.begin());
  int c2 = -1;
  for (int k = 0; k < static_cast<int>(cost.size()); ++k)
    if (std::abs(k - k1) >= 2 && (c2 < 0 || cost[k] < c2)) c2 = cost[k];
  return c2 >= 0 && 100LL * cost[k1] < static_cast<long long>(ratio_pct) * c2 ? d_min + k1 : -1;
}

}  // namespace

void elas_sobel(const Image<uint8_t>& gray, Image<uint8_t>& du, Image<uint8_t>& dv) {
  du = Image<uint8_t>(gray.width, gray.height);
  dv = Image<uint8_t>(gray.width, gray.height);
  for (int y = 0; y < gray.height; ++y)
    for (int x = 0; x < gray.width; ++x) {
      auto at = [&](int dx, int dy) { return static_cast<int>(clamped(gray, x + dx, y + dy)); };
      const int sx = at(1, -1) + 2 * at(1, 0) + at(1, 1) - at(-1, -1) - 2 * at(-1, 0) - at(-1, 1);
      const int sy = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1);
      du.at(x, y) = static_cast<uint8_t>(clampi(128 + (sx >> 2), 0, 255));
      dv.at(x, y) = static_cast<uint8_t>(clampi(128 + (sy >> 2), 0, 255));
    }
}

void elas_descriptors(const Image<uint8_t>& du, const Image<uint8_t>& dv, Image<ElasDescriptor>& out) {
  static constexpr int kDu[12][2] = {{0, -2}, {-1, -1}, {0, -1}, {1, -1}, {-2, 0}, {-1, 0},
                                     {1, 0},  {2, 0},   {-1, 1}, {0, 1},  {1, 1},  {0, 2}};
  static constexpr int kDv[4][2] = {{0, -1}, {-1, 0}, {1, 0}, {0, 1}};
  out = Image<ElasDescriptor>(du.width, du.height);
  for (int y = 0; y < du.height; ++y)
    for (int x = 0; x < du.width; ++x) {
      ElasDescriptor& d = out.at(x, y);
      for (int k = 0; k < 12; ++k) d[k] = clamped(du, x + kDu[k][0], y + kDu[k][1]);
      for (int k = 0; k < 4; ++k) d[12 + k] = clamped(dv, x + kDv[k][0], y + kDv[k][1]);
    }
}

void elas_view_descriptors(const Image<uint8_t>& gray, Image<ElasDescriptor>& out) {
  Image<uint8_t> du, dv;
  elas_sobel(gray, du, dv);
  elas_descriptors(du, dv, out);
}

int elas_sad(const ElasDescriptor& a, const ElasDescriptor& b) {
  int s = 0;
  for (int k = 0; k < 16; ++k) s += std::abs(static_cast<int>(a[k]) - static_cast<int>(b[k]));
  return s;
}

int elas_texture(const ElasDescriptor& d) {
  int t = 0;
  for (uint8_t b : d) t += std::abs(static_cast<int>(b) - 128);
  return t;
}

int elas_support_cost(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right, int x, int y, int d,
                      bool right_reference) {
  int cost = 0;
  for (const auto& n : kNeighbours) {
    const int qx = x + n[0], qy = y + n[1];
    cost += right_reference ? elas_sad(right.at(qx, qy), left.at(qx + d, qy))
                            : elas_sad(left.at(qx, qy), right.at(qx - d, qy));
  }
  return cost;
}

void elas_candidates(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right,
                     const ElasSupportParams& p, ElasDisparityGrid& grid, const Image<uint8_t>* mask_left) {
  const int s = std::max(1, p.candidate_step), w = left.width, h = left.height;
  grid.d = Image<int16_t>((w + s - 1) / s, (h + s - 1) / s, int16_t{-1});
  if (right.width != w || right.height != h) return;
  for (int j = 1; s * j + 2 < h; ++j)
    for (int i = 1; s * i + 2 < w; ++i) {
      const int x = s * i, y = s * j;
      if (x < 2 || y < 2) continue;  // (s = 1: the neighbours must lie inside)
      if (mask_left && !mask_left->at(x, y)) continue;
      if (elas_texture(left.at(x, y)) < p.support_texture) continue;
      const int d1 = support_match(left, right, x, y, p.min_disparity, std::min(p.max_disparity - 1, x - 2), false,
                                   p.support_ratio_pct);
      if (d1 < 0) continue;
      const int xr = x - d1;
      const int d1r = support_match(left, right, xr, y, p.min_disparity, std::min(p.max_disparity - 1, w - 3 - xr),
                                    true, p.support_ratio_pct);
      if (d1r < 0 || std::abs(d1 - d1r) > p.lr_threshold) continue;
      grid.d.at(i, j) = static_cast<int16_t>(d1);
    }
}

void elas_remove_inconsistent(const ElasSupportParams& p, ElasDisparityGrid& grid) {
  const Image<int16_t> before = grid.d;
  const int r = p.incon_window / 2;
  for (int j = 0; j < before.height; ++j)
    for (int i = 0; i < before.width; ++i) {
      const int d = before.at(i, j);
      if (d < 0) continue;
      int support = 0;
      for (int v = std::max(0, j - r); v <= std::min(before.height - 1, j + r); ++v)
        for (int u = std::max(0, i - r); u <= std::min(before.width - 1, i + r); ++u) {
          const int e = before.at(u, v);
          if ((u != i || v != j) && e >= 0 && std::abs(e - d) <= p.incon_threshold) ++support;
        }
      if (support < p.incon_min_support) grid.d.at(i, j) = -1;
    }
}

void elas_remove_redundant(const ElasSupportParams& p, ElasDisparityGrid& grid) {
  Image<int16_t>& g = grid.d;
  // One line of cells (a row or a column), scanned forwards; at(k) its k-th cell.
  auto scan = [&](int length, auto&& at) {
    for (int k = 0; k < length; ++k) {
      const int d = at(k);
      if (d < 0) continue;
      auto similar_within = [&](int step) {
        for (int m = 1; m <= p.redun_max_dist; ++m) {
          const int q = k + step * m;
          if (q < 0 || q >= length) break;
          const int e = at(q);
          if (e >= 0 && std::abs(e - d) <= p.redun_threshold) return true;
        }
        return false;
      };
      if (similar_within(-1) && similar_within(1)) at(k) = -1;
    }
  };
  for (int j = 0; j < g.height; ++j) scan(g.width, [&](int k) -> int16_t& { return g.at(k, j); });
  for (int i = 0; i < g.width; ++i) scan(g.height, [&](int k) -> int16_t& { return g.at(i, k); });
}

std::vector<ElasSupportPoint> elas_support_from_descriptors(const Image<ElasDescriptor>& left,
                                                            const Image<ElasDescriptor>& right,
                                                            const ElasSupportParams& p,
                                                            const Image<uint8_t>* mask_left) {
  ElasDisparityGrid grid;
  elas_support_grid(left, right, p, grid, mask_left);
  return elas_points_of(grid, p.candidate_step);
}

void elas_support_grid(const Image<ElasDescriptor>& left, const Image<ElasDescriptor>& right,
                       const ElasSupportParams& p, ElasDisparityGrid& grid, const Image<uint8_t>* mask_left) {
  elas_candidates(left, right, p, grid, mask_left);
  elas_remove_inconsistent(p, grid);
  elas_remove_redundant(p, grid);
}

std::vector<ElasSupportPoint> elas_points_of(const ElasDisparityGrid& grid, int candidate_step) {
  std::vector<ElasSupportPoint> out;
  const int s = std::max(1, candidate_step);
  for (int j = 0; j < grid.d.height; ++j)
    for (int i = 0; i < grid.d.width; ++i)
      if (grid.d.at(i, j) >= 0) out.push_back({s * i, s * j, grid.d.at(i, j)});
  return out;
}

std::vector<ElasSupportPoint> elas_support_points(const Image<uint8_t>& left, const Image<uint8_t>& right,
                                                  const ElasSupportParams& p) {
  if (left.width != right.width || left.height != right.height || left.width <= 0 || left.height <= 0) return {};
  Image<ElasDescriptor> dl, dr;
  elas_view_descriptors(left, dl);
  elas_view_descriptors(right, dr);
  return elas_support_from_descriptors(dl, dr, p);
}

}  // namespace cs
