// The resampling of rectification (rectify.h) for one pixel: integer
// bilinear interpolation at a source position in 1/32 pixel, the same code
// for the CPU reference and the CUDA engine (CS_HD), so that both give the
// same bytes.
#pragma once

#include <cmath>
#include <cstdint>

#include "stereo_math.h"

namespace cs {

constexpr int kRemapBits = 5;  // the maps' fixed point: 1/32 pixel
constexpr int kRemapOne = 1 << kRemapBits;
constexpr int32_t kRemapOutside = INT32_MIN;  // RemapPoint::x of a pixel with no source

// A rectified pixel's source position: pixel (i, j) of the source is at
// (i * 32, j * 32). Inside means 0 <= x <= (width - 1) * 32 and likewise y;
// a position outside is stored as x = kRemapOutside.
struct RemapPoint {
  int32_t x = kRemapOutside, y = 0;
};

// The source position in fixed point, rounded to the nearest 1/32 (halves
// up); outside where the rounded position is outside the image.
inline RemapPoint remap_point(double x, double y, int width, int height) {
  RemapPoint p;
  const double fx = std::floor(x * kRemapOne + 0.5), fy = std::floor(y * kRemapOne + 0.5);
  if (!(fx >= 0 && fy >= 0 && fx <= (width - 1) * kRemapOne && fy <= (height - 1) * kRemapOne)) return p;
  p.x = static_cast<int32_t>(fx);
  p.y = static_cast<int32_t>(fy);
  return p;
}

// One channel: the four neighbours a (x0, y0), b (x1, y0), c (x0, y1), d (x1,
// y1) weighted by the fractions fx, fy in 1/32, rounded half up.
CS_HD uint32_t remap_channel(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t fx, uint32_t fy) {
  const uint32_t top = a * (kRemapOne - fx) + b * fx;
  const uint32_t bottom = c * (kRemapOne - fx) + d * fx;
  return (top * (kRemapOne - fy) + bottom * fy + (1u << (2 * kRemapBits - 1))) >> (2 * kRemapBits);
}

// The RGBA (four 8-bit channels) value at source position p of an image of
// width x height whose pixel (x, y) is at(x, y); 0 (transparent black)
// outside.
template <typename PixelAt>
CS_HD uint32_t remap_rgba_pixel(RemapPoint p, int width, int height, PixelAt at) {
  if (p.x == kRemapOutside) return 0u;
  const int x0 = p.x >> kRemapBits, y0 = p.y >> kRemapBits;
  const uint32_t fx = static_cast<uint32_t>(p.x) & (kRemapOne - 1), fy = static_cast<uint32_t>(p.y) & (kRemapOne - 1);
  const int x1 = x0 + 1 < width ? x0 + 1 : x0, y1 = y0 + 1 < height ? y0 + 1 : y0;
  const uint32_t a = at(x0, y0), b = at(x1, y0), c = at(x0, y1), d = at(x1, y1);
  uint32_t out = 0;
  for (int s = 0; s < 32; s += 8)
    out |= remap_channel(a >> s & 255u, b >> s & 255u, c >> s & 255u, d >> s & 255u, fx, fy) << s;
  return out;
}

}  // namespace cs
