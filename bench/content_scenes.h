// Generated grey scenes for cs-bench-engine: the content a real pair may
// lack, at any size and range, so that a frame's cost can be compared across
// content (issue 15, part 5: no content cliffs). Timing scenes, not accuracy
// tests: they carry no ground truth. Deterministic; CPU only.
#pragma once

#include <cstdint>
#include <string>

#include "stereo.h"

namespace cs::bench {

struct GreyPair {
  Image<uint8_t> left, right;
};

// A textured slanted plane (common/synthetic.h's make_slanted_pair with the
// parameters cs-bench-engine has always used: disparity 0.2 (D - 8) at the
// left edge rising by 0.7 (D - 8) across the width), as grey.
GreyPair make_textured_scene(int width, int height, int disparities);

// Large textureless areas: a flat background with a vertical brightness ramp
// and a flat box in front, with textured boxes on about a sixth of the view
// (disparities 0.3, 0.5 and 0.8 of the range). Every pixel of each view gets
// its own sensor noise of -2..+2 grey levels, independent between the views,
// as a camera's would be.
GreyPair make_low_texture_scene(int width, int height, int disparities);

// Wide disparity spread: a textured slanted background (0 to a quarter of
// the range) under a 6 x 4 grid of textured boxes with narrow gaps, whose
// disparities cover 0 .. D - 1 in a shuffled order, so that neighbours differ
// by up to the whole range and discontinuities and occlusions are everywhere.
GreyPair make_wide_spread_scene(int width, int height, int disparities);

// By name: "textured", "low-texture", "wide-spread". False for another name.
bool make_content_scene(const std::string& name, int width, int height, int disparities, GreyPair* out);

}  // namespace cs::bench
