// Synthetic stereo scenes with exact ground truth, for tests, examples and
// benchmarks. Deterministic for a given seed; no files needed.
#pragma once

#include <cstdint>

#include "stereo.h"

namespace cs {

// A rendered pair: left and right views as packed RGBA (bytes R, G, B, A in
// memory order; A = 255) and the left-referenced ground truth.
struct SyntheticPair {
  Image<uint32_t> left_rgba, right_rgba;
  Image<float> disparity;   // left-referenced, pixels; < 0 where unknown (occluded in right view)
  Image<uint8_t> moving;    // 255 where the moving object covers the left view (sequences), else 0
};

// Texture: smooth-ish random pattern, deterministic in (seed, u, v) so that a
// surface keeps its texture when it moves. Values span roughly 20..235.
uint8_t texture_value(uint32_t seed, int u, int v);

// Fronto-parallel plane at disparity d (integer) everywhere.
SyntheticPair make_plane_pair(int width, int height, int disparity, uint32_t seed);

// Left half of the image at d_near, right half at d_far (a step edge at
// x = width / 2 in the left view). Pixels of the far plane hidden in the
// right view are marked unknown in the ground truth.
SyntheticPair make_step_pair(int width, int height, int d_far, int d_near, uint32_t seed);

// Colour patches (method cross's regions): patch_colour(seed, u, v) is one
// random colour per 7 x 5 block of surface coordinates (u, v >= 0) with +-3
// of noise a pixel, packed R, G, B, 255. (texture_value changes at every
// pixel: a cross's arms stay near 0 there at tau 20, and sample-and-restore,
// whose voting region must reach a sample, has little to restore from.)
// make_patch_step_pair: make_step_pair's geometry (the near plane on the
// left half of the left view) with such surfaces; the far plane's pixels
// hidden in the right view, and those whose match lies left of it, are
// unknown (-1).
uint32_t patch_colour(uint32_t seed, int u, int v);
SyntheticPair make_patch_step_pair(int width, int height, int d_far, int d_near, uint32_t seed);

// Slanted plane: disparity d0 + slope * x (pixels), rendered exactly by
// sampling the texture at the matching right-view coordinate.
SyntheticPair make_slanted_pair(int width, int height, float d0, float slope, uint32_t seed);

// Frame `index` of a surveillance-like sequence: a static textured background
// at disparity d_background and a textured rectangle (object_w x object_h) at
// disparity d_object moving horizontally by `speed` pixels per frame
// (bouncing at the edges). brightness_offset is added to every pixel of both
// views (clamped), to test the model's adaptation to global light changes.
SyntheticPair make_sequence_frame(int width, int height, int index, int d_background, int d_object, int object_w,
                                  int object_h, int speed, int brightness_offset, uint32_t seed);

// A FrameView over packed RGBA pixels.
FrameView rgba_view(const Image<uint32_t>& rgba);
// A FrameView over GRAY8 pixels.
FrameView gray_view(const Image<uint8_t>& gray);

}  // namespace cs
