// A known scene seen through a calibrated, distorted stereo rig (issue 40's
// truth): a textured plane facing the rectified cameras at a given depth,
// rendered into the images the real cameras deliver (lens distortion, their
// own rotation). Rectified with the same calibration, every pixel of the
// plane has disparity f * B / depth exactly. For tests and benchmarks; no
// external data.
#pragma once

#include <cstdint>
#include <string>

#include "calibration.h"
#include "calibration_text.h"  // the rig written as a file
#include "rectify.h"
#include "stereo.h"

namespace cs {

// An example rig for tests and benchmarks: two cameras 12 cm apart (the
// right one to the right of the left), slightly turned (0.012, -0.021,
// 0.004 rad), each with its own radial-tangential lens (k1 about -0.2),
// for views of width x height (intrinsics scaled from 640x480).
StereoCalibration example_rig(int width, int height);

struct RigScene {
  Image<uint32_t> left, right;  // R,G,B,0 packed (rgba_view)
  double disparity = 0;         // of every plane pixel once rectified
};

// The plane at `depth` (the calibration's unit) in the left rectified
// camera's frame, textured with value noise of a few rectified pixels'
// scale (colours from `seed`), seen through both cameras of `c` as `r`
// rectifies them.
RigScene render_plane_through_rig(const StereoCalibration& c, const StereoRectification& r, double depth,
                                  uint32_t seed);

// A rectified pair (real content, e.g. a Middlebury pair) as the rig's
// cameras would deliver it: each camera pixel takes the rectified view's
// colour (bilinear, in double) where `r` maps it, 0 outside. Rectified with
// the same calibration it gives the pair back, up to resampling.
RigScene deliver_through_rig(const StereoCalibration& c, const StereoRectification& r, const Image<uint32_t>& left,
                             const Image<uint32_t>& right);

}  // namespace cs
