// Synthetic stereo scenes with exact ground truth.
//
// Every surface carries a texture that is a function of its own surface
// coordinates, so the right view is rendered by looking up, for each right
// pixel, which surface point it sees. Integer disparities therefore give
// views that match pixel for pixel.
#include "synthetic.h"

#include <algorithm>
#include <cmath>

namespace cs {

namespace {

uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

double lattice(uint32_t seed, int i, int j) {
  const uint32_t h = mix(seed * 0x9e3779b1u ^ mix(static_cast<uint32_t>(i) * 0x85ebca77u ^
                                                  mix(static_cast<uint32_t>(j) * 0xc2b2ae3du + 0x27d4eb2fu)));
  return (h >> 8) * (1.0 / 16777216.0);
}

// Value noise: bilinear interpolation of random lattice values, summed over
// octaves of period 1, 2, 4 and 8 pixels. The period-1 octave gives every
// pixel its own value (census needs fine detail); the coarser ones give
// blobs so that windows differ at every scale.
double texture_at(uint32_t seed, double u, double v) {
  static const int periods[4] = {1, 2, 4, 8};
  static const double weights[4] = {0.55, 0.2, 0.15, 0.1};
  double sum = 0.0;
  for (int o = 0; o < 4; ++o) {
    const double x = u / periods[o], y = v / periods[o];
    const double fx = std::floor(x), fy = std::floor(y);
    const int i = static_cast<int>(fx), j = static_cast<int>(fy);
    const double ax = x - fx, ay = y - fy;
    const uint32_t s = seed * 4 + o + 1;
    const double top = lattice(s, i, j) * (1 - ax) + lattice(s, i + 1, j) * ax;
    const double bottom = lattice(s, i, j + 1) * (1 - ax) + lattice(s, i + 1, j + 1) * ax;
    sum += weights[o] * (top * (1 - ay) + bottom * ay);
  }
  // Stretch around the mean (the octave sum concentrates near 0.5).
  const double stretched = 0.5 + (sum - 0.5) * 1.6;
  return 20.0 + 215.0 * std::min(1.0, std::max(0.0, stretched));
}

uint8_t to_byte(double v) { return static_cast<uint8_t>(std::lround(std::min(255.0, std::max(0.0, v)))); }

// One surface point as RGBA: two independent textures give luma detail and
// hue variety (for the colour background model).
uint32_t surface_rgba(uint32_t seed, double u, double v, int brightness) {
  const double a = texture_at(seed, u, v);
  const double b = texture_at(seed ^ 0x5bd1e995u, u, v);
  const uint32_t r = to_byte(a + brightness);
  const uint32_t g = to_byte((a + b) / 2 + brightness);
  const uint32_t bl = to_byte(b + brightness);
  return r | (g << 8) | (bl << 16) | (255u << 24);
}

SyntheticPair blank(int width, int height) {
  SyntheticPair p;
  p.left_rgba = Image<uint32_t>(width, height);
  p.right_rgba = Image<uint32_t>(width, height);
  p.disparity = Image<float>(width, height, -1.0f);
  p.moving = Image<uint8_t>(width, height, 0);
  return p;
}

}  // namespace

uint8_t texture_value(uint32_t seed, int u, int v) { return to_byte(texture_at(seed, u, v)); }

SyntheticPair make_plane_pair(int width, int height, int disparity, uint32_t seed) {
  SyntheticPair p = blank(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      p.left_rgba.at(x, y) = surface_rgba(seed, x, y, 0);
      p.right_rgba.at(x, y) = surface_rgba(seed, x + disparity, y, 0);
      if (x - disparity >= 0 && x - disparity < width) p.disparity.at(x, y) = static_cast<float>(disparity);
    }
  return p;
}

SyntheticPair make_step_pair(int width, int height, int d_far, int d_near, uint32_t seed) {
  SyntheticPair p = blank(width, height);
  const int edge = width / 2;
  const uint32_t seed_near = seed + 1000003u;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      // Left view: the near surface covers x < edge.
      if (x < edge) {
        p.left_rgba.at(x, y) = surface_rgba(seed_near, x, y, 0);
        if (x - d_near >= 0) p.disparity.at(x, y) = static_cast<float>(d_near);
      } else {
        p.left_rgba.at(x, y) = surface_rgba(seed, x, y, 0);
        const int xr = x - d_far;
        // Hidden in the right view where the near surface covers xr.
        if (xr >= 0 && xr >= edge - d_near) p.disparity.at(x, y) = static_cast<float>(d_far);
      }
      // Right view: the near surface covers xr < edge - d_near.
      if (x < edge - d_near)
        p.right_rgba.at(x, y) = surface_rgba(seed_near, x + d_near, y, 0);
      else
        p.right_rgba.at(x, y) = surface_rgba(seed, x + d_far, y, 0);
    }
  return p;
}

SyntheticPair make_slanted_pair(int width, int height, float d0, float slope, uint32_t seed) {
  SyntheticPair p = blank(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      p.left_rgba.at(x, y) = surface_rgba(seed, x, y, 0);
      // Right pixel xr sees the surface point u with u - (d0 + slope u) = xr.
      const double u = (x + static_cast<double>(d0)) / (1.0 - slope);
      p.right_rgba.at(x, y) = surface_rgba(seed, u, y, 0);
      const double d = d0 + static_cast<double>(slope) * x;
      if (x - d >= 0) p.disparity.at(x, y) = static_cast<float>(d);
    }
  return p;
}

SyntheticPair make_sequence_frame(int width, int height, int index, int d_background, int d_object, int object_w,
                                  int object_h, int speed, int brightness_offset, uint32_t seed) {
  SyntheticPair p = blank(width, height);
  const uint32_t seed_object = seed + 7777777u;
  // The object stays fully visible in both views: x0 in [d_object, width - object_w].
  const int travel = std::max(width - object_w - d_object, 0);
  int x0 = d_object;
  if (travel > 0) {
    const long long pos = (static_cast<long long>(index) * speed) % (2LL * travel);
    x0 = d_object + static_cast<int>(pos <= travel ? pos : 2LL * travel - pos);
  }
  const int y0 = (height - object_h) / 2;
  auto in_object_rows = [&](int y) { return y >= y0 && y < y0 + object_h; };
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const bool left_object = in_object_rows(y) && x >= x0 && x < x0 + object_w;
      if (left_object) {
        p.left_rgba.at(x, y) = surface_rgba(seed_object, x - x0, y - y0, brightness_offset);
        p.disparity.at(x, y) = static_cast<float>(d_object);
        p.moving.at(x, y) = 255;
      } else {
        p.left_rgba.at(x, y) = surface_rgba(seed, x, y, brightness_offset);
        const int xr = x - d_background;
        const bool covered = in_object_rows(y) && xr >= x0 - d_object && xr < x0 - d_object + object_w;
        if (xr >= 0 && !covered) p.disparity.at(x, y) = static_cast<float>(d_background);
      }
      const int ox = x + d_object - x0;
      if (in_object_rows(y) && ox >= 0 && ox < object_w)
        p.right_rgba.at(x, y) = surface_rgba(seed_object, ox, y - y0, brightness_offset);
      else
        p.right_rgba.at(x, y) = surface_rgba(seed, x + d_background, y, brightness_offset);
    }
  return p;
}

FrameView rgba_view(const Image<uint32_t>& rgba) {
  FrameView v;
  v.format = PixelFormat::RGBA;
  v.width = rgba.width;
  v.height = rgba.height;
  v.plane[0] = reinterpret_cast<const uint8_t*>(rgba.pixels.data());
  v.pitch[0] = static_cast<std::ptrdiff_t>(rgba.width) * 4;
  return v;
}

FrameView gray_view(const Image<uint8_t>& gray) {
  FrameView v;
  v.format = PixelFormat::GRAY8;
  v.width = gray.width;
  v.height = gray.height;
  v.plane[0] = gray.pixels.data();
  v.pitch[0] = gray.width;
  return v;
}

uint32_t patch_colour(uint32_t seed, int u, int v) {
  const uint32_t patch = mix(seed * 0x9e3779b1u ^ mix(static_cast<uint32_t>(u / 7) * 0x85ebca77u ^
                                                      mix(static_cast<uint32_t>(v / 5) * 0xc2b2ae3du)));
  const uint32_t noise = mix(patch ^ mix(static_cast<uint32_t>(u) * 0x27d4eb2fu + static_cast<uint32_t>(v)));
  uint32_t out = 0xffu << 24;
  for (int c = 0; c < 3; ++c) {
    const int value = 30 + static_cast<int>((patch >> (8 * c)) % 196) + static_cast<int>((noise >> (8 * c)) % 7) - 3;
    out |= static_cast<uint32_t>(value) << (8 * c);
  }
  return out;
}

SyntheticPair make_patch_step_pair(int w, int h, int d_far, int d_near, uint32_t seed) {
  SyntheticPair p;
  p.left_rgba = Image<uint32_t>(w, h);
  p.right_rgba = Image<uint32_t>(w, h);
  p.disparity = Image<float>(w, h, -1.0f);
  const int edge = w / 2;
  const uint32_t near = seed + 1000003u;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (x < edge) {
        p.left_rgba.at(x, y) = patch_colour(near, x + 100, y);
        if (x - d_near >= 0) p.disparity.at(x, y) = static_cast<float>(d_near);
      } else {
        p.left_rgba.at(x, y) = patch_colour(seed, x + 100, y);
        if (x - d_far >= edge - d_near) p.disparity.at(x, y) = static_cast<float>(d_far);
      }
      p.right_rgba.at(x, y) =
          x < edge - d_near ? patch_colour(near, x + d_near + 100, y) : patch_colour(seed, x + d_far + 100, y);
    }
  return p;
}

}  // namespace cs
