#include "content_scenes.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stages.h"
#include "synthetic.h"

namespace cs::bench {

namespace {

// One surface seen by both views: a rectangle of the left view, its
// disparity d(x) = d0 + slope * x for left-view column x, and either a
// texture (fixed to the surface, so both views sample the same pattern) or
// a flat grey.
struct Surface {
  int x0, y0, x1, y1;  // left-view rectangle, half-open
  double d0, slope;
  bool textured;
  uint32_t seed;
  int flat_level;  // flat surfaces: grey at the top row, + ramp to the bottom
  int ramp;
};

double texture_at(uint32_t seed, double u, int v) {
  const double f = std::floor(u);
  const double t = u - f;
  const int i = static_cast<int>(f);
  return (1.0 - t) * texture_value(seed, i, v) + t * texture_value(seed, i + 1, v);
}

double surface_value(const Surface& s, double xl, int y, int height) {
  if (s.textured) return texture_at(s.seed, xl - s.x0, y - s.y0);
  return s.flat_level + static_cast<double>(s.ramp) * y / std::max(1, height - 1);
}

// Renders both views with occlusion: at each pixel the surface of greatest
// disparity wins. Right pixel xr sees the surface point xl with
// xl - d(xl) = xr, i.e. xl = (xr + d0) / (1 - slope).
GreyPair render(const std::vector<Surface>& surfaces, int width, int height) {
  GreyPair p{Image<uint8_t>(width, height), Image<uint8_t>(width, height)};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double best_left = -1e9, best_right = -1e9, left = 0, right = 0;
      for (const Surface& s : surfaces) {
        if (y < s.y0 || y >= s.y1) continue;
        if (x >= s.x0 && x < s.x1) {
          const double d = s.d0 + s.slope * x;
          if (d > best_left) best_left = d, left = surface_value(s, x, y, height);
        }
        const double xl = (x + s.d0) / (1.0 - s.slope);
        if (xl >= s.x0 && xl < s.x1) {
          const double d = s.d0 + s.slope * xl;
          if (d > best_right) best_right = d, right = surface_value(s, xl, y, height);
        }
      }
      p.left.at(x, y) = static_cast<uint8_t>(std::clamp(std::lround(left), 0L, 255L));
      p.right.at(x, y) = static_cast<uint8_t>(std::clamp(std::lround(right), 0L, 255L));
    }
  return p;
}

uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

void add_noise(Image<uint8_t>& img, uint32_t seed, int amplitude) {
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const uint32_t h = mix(seed ^ mix(static_cast<uint32_t>(y) * 0x9e3779b9u + static_cast<uint32_t>(x)));
      const int n = static_cast<int>(h % (2 * amplitude + 1)) - amplitude;
      img.at(x, y) = static_cast<uint8_t>(std::clamp(img.at(x, y) + n, 0, 255));
    }
}

Surface box(int width, int height, double fx0, double fy0, double fx1, double fy1, double d, uint32_t seed) {
  return {static_cast<int>(fx0 * width), static_cast<int>(fy0 * height), static_cast<int>(fx1 * width),
          static_cast<int>(fy1 * height), d, 0.0, true, seed, 0, 0};
}

}  // namespace

GreyPair make_textured_scene(int width, int height, int disparities) {
  const int dmax = std::max(1, disparities - 8);
  const SyntheticPair rgba = make_slanted_pair(width, height, dmax * 0.2f, dmax * 0.7f / width, 9);
  GreyPair p;
  convert_to_gray(rgba_view(rgba.left_rgba), p.left);
  convert_to_gray(rgba_view(rgba.right_rgba), p.right);
  return p;
}

GreyPair make_low_texture_scene(int width, int height, int disparities) {
  const double r = std::max(1, disparities - 8);
  std::vector<Surface> s;
  // Backgrounds reach D columns past the left view's right edge, where the
  // right view still sees them.
  s.push_back({0, 0, width + disparities, height, std::round(0.25 * r), 0.0, false, 0, 100, 40});
  Surface wall = box(width, height, 0.55, 0.15, 0.85, 0.6, std::round(0.6 * r), 0);
  wall.textured = false;
  wall.flat_level = 170;
  s.push_back(wall);
  s.push_back(box(width, height, 0.10, 0.20, 0.30, 0.45, std::round(0.3 * r), 21));
  s.push_back(box(width, height, 0.35, 0.60, 0.50, 0.90, std::round(0.5 * r), 22));
  s.push_back(box(width, height, 0.65, 0.65, 0.90, 0.90, std::round(0.8 * r), 23));
  GreyPair p = render(s, width, height);
  add_noise(p.left, 101, 2);
  add_noise(p.right, 202, 2);
  return p;
}

GreyPair make_wide_spread_scene(int width, int height, int disparities) {
  const double top = disparities - 1;
  std::vector<Surface> s;
  // Background: 0 at the left edge to a quarter of the range at the right.
  s.push_back({0, 0, width + disparities, height, 0.0, 0.25 * top / width, true, 31, 0, 0});
  constexpr int kCols = 6, kRows = 4, kBoxes = kCols * kRows;
  // Disparity ranks in an order that puts far and near boxes side by side.
  constexpr int kOrder[kBoxes] = {0, 23, 5, 18, 11, 14, 20, 3, 16, 7, 22, 1,
                                  9, 12, 2, 21, 6, 17, 15, 8, 19, 4, 13, 10};
  const double cell_w = 1.0 / kCols, cell_h = 1.0 / kRows, gap = 0.02;
  for (int i = 0; i < kBoxes; ++i) {
    const int cx = i % kCols, cy = i / kCols;
    const double d = std::round(top * kOrder[i] / (kBoxes - 1));
    s.push_back(box(width, height, cx * cell_w + gap, cy * cell_h + gap, (cx + 1) * cell_w - gap,
                    (cy + 1) * cell_h - gap, d, 100 + i));
  }
  return render(s, width, height);
}

bool make_content_scene(const std::string& name, int width, int height, int disparities, GreyPair* out) {
  if (name == "textured") *out = make_textured_scene(width, height, disparities);
  else if (name == "low-texture") *out = make_low_texture_scene(width, height, disparities);
  else if (name == "wide-spread") *out = make_wide_spread_scene(width, height, disparities);
  else return false;
  return true;
}

}  // namespace cs::bench
