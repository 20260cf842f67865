// Moving objects over a real static stereo pair, with exact truth: the
// benchmark sequence of the background model (issue 35). Any background pair
// goes in (a file read by the caller, or a generated one in tests); textured
// rectangles at a known disparity enter, cross or bounce in front of it, and
// every frame carries camera noise. Deterministic: a frame depends only on
// the background, the spec and its index, and is the same on every machine
// (integer motion, a counter-based generator and integer noise sampling).
// No GStreamer, no CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stereo.h"

namespace cs {

// A textured rectangle in front of the background. Its texture is a patch of
// the background's left view (a seed-chosen place, its size), flipped
// horizontally and vertically so that it does not match what lies behind
// it; the same texture in both views.
struct MovingObject {
  int width = 0;
  int height = 0;
  int top = 0;        // first row in both views (may be negative or below the frame)
  int disparity = 0;  // >= 0: the right view draws the object at column x - disparity
  // Left-view column of the object's left edge on the first moving frame;
  // may lie outside the frame (the object enters).
  int start_x = 0;
  // Pixels per frame, signed (negative: leftwards). Positions are kept in
  // 1/256 px and rounded to whole pixels, so every machine draws the same.
  double speed = 0.0;
  // With bounce, the left edge goes back and forth inside [bounce_min,
  // bounce_max] (reflected at both ends; equal ends: the object stands
  // still); without, it moves on and may leave the frame.
  bool bounce = false;
  int bounce_min = 0;
  int bounce_max = 0;
};

struct MovingObjectsSpec {
  // Frames 0 .. warmup_frames - 1 show the background and noise only; the
  // objects appear from frame warmup_frames on (moving frame 0).
  int warmup_frames = 30;
  // Moving frames of the sequence: its length is warmup_frames +
  // moving_frames. Frames past the end still render (the motion goes on).
  int moving_frames = 60;
  // Drawn in order: later objects over earlier ones, all over the background.
  std::vector<MovingObject> objects;
  // Camera noise: Gaussian, per channel, pixel, view and frame, added to the
  // composed picture, rounded and clamped to 0..255. 0 = none.
  double noise_sigma = 2.0;
  uint64_t seed = 1;

  int frames() const { return warmup_frames + moving_frames; }
};

constexpr double kMaxNoiseSigma = 64.0;

// One rendered frame and its truth.
struct MovingObjectsFrame {
  Image<uint32_t> left_rgba, right_rgba;  // packed RGBA as SyntheticPair's (r | g << 8 | b << 16 | 255 << 24)
  Image<uint8_t> mask_left, mask_right;   // 255 where an object's pixel is seen, else 0
  Image<int16_t> disparity_left;          // the disparity of the object seen where mask_left, else -1
};

// Empty string when the spec can be drawn over a background of width x
// height, else a sentence naming the problem.
std::string validate_moving_objects(const MovingObjectsSpec& spec, int width, int height);

// Left-view column of the object's left edge on moving frame t (t >= 0;
// the frame index less warmup_frames).
int object_left_edge(const MovingObject& object, int moving_frame);

// The object's texture (width x height): the flipped patch of the
// background's left view that both views draw. Objects wider or taller than
// the background take the picture mirrored across its edges.
Image<uint32_t> object_texture(const Image<uint32_t>& background_left, const MovingObjectsSpec& spec,
                               int object_index);

// Renders frame `frame` (0-based, warm-up included) over the background pair
// (same size, packed RGBA). Reuses out's images when their sizes fit.
// Empty string on success, else the reason (out unspecified).
std::string render_moving_objects(const Image<uint32_t>& background_left, const Image<uint32_t>& background_right,
                                  const MovingObjectsSpec& spec, int frame, MovingObjectsFrame* out);

// A spec for mask quality: `count` objects (a fifth of the width, a third of
// the height, at `disparity`) enter from the left edge one after another, at
// rows spread over the frame, and cross the whole frame at `speed` px per
// frame (0: width / 40, at least 1). moving_frames is the time the last one
// takes to leave both views, plus `tail_frames` with the background alone
// (for the model's recovery of what the objects uncovered). Noise sigma 2.
MovingObjectsSpec crossing_objects_spec(int width, int height, int count, int disparity, int warmup_frames,
                                        uint64_t seed, double speed = 0.0, int tail_frames = 10);

// A spec whose objects cover `fraction` (0 .. 1) of the left view on every
// moving frame, to within half an object's height in pixels (the rounding
// of the widths: under 1 / (6 width) of the frame, 0.03 % at 640 wide),
// the same on every frame: objects in separate bands of rows, each
// bouncing left and right inside the frame, so the covered area never
// changes. Up to a quarter of the frame per band, bands a third of the
// height high (a quarter from four bands on). An object that has room to
// move (width / 32 px or more) beside its disparity stays whole in the right
// view too, so that view's fraction is the same (in practice up to 0.75);
// wider ones swing over the whole left view and leave the right view's
// left edge in part. 0: no object; 1: one object covering both views whose
// texture swings left and right under them (a scene change that goes on: a
// still one would become background after the model's absorb delay). Noise sigma 2, speed width / 64 (at
// least 1) px per frame.
MovingObjectsSpec fraction_objects_spec(int width, int height, double fraction, int disparity, int warmup_frames,
                                        int moving_frames, uint64_t seed);

}  // namespace cs
