// Rectification of a calibrated stereo pair (issue 40): the rectifying
// rotations and projections from a calibration (calibration.h), each view's
// map from rectified pixels to source positions, and the resampling. The
// maps are computed once, on the host, in double precision, and stored in
// fixed point (1/32 pixel), so that the resampling is integer arithmetic
// that the CPU reference and the CUDA engine do bit for bit alike
// (remap_math.h).
//
// The rectification follows Bouguet's method, as OpenCV's stereoRectify
// defines it: the rotation between the cameras is split in half between
// them, then both turn about one axis until the baseline lies along x; one
// focal length (the mean of the two vertical ones) for both; principal points
// where the image corners' centre lands. Here the two principal points are
// the same (OpenCV's CALIB_ZERO_DISPARITY), so that a point at infinity has
// disparity 0 and every disparity is f * baseline / Z: what the matcher's
// non-negative range and the element's depth output take. `alpha` chooses the
// crop as stereoRectify's does: 0 keeps only pixels that every source pixel
// covers (no black border, some of the views cut away), 1 keeps every source
// pixel (black corners), values between scale between the two.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "calibration.h"
#include "remap_math.h"
#include "stereo.h"

namespace cs {

// 3x3 rotation from a rotation vector (axis times angle in radians).
void rotation_from_vector(const double v[3], double R[9]);
// Orthonormal with determinant 1 (to 1e-6).
bool is_rotation(const double R[9]);

struct StereoRectification {
  int width = 0, height = 0;            // the views, before and after
  double R1[9] = {}, R2[9] = {};        // a camera's frame -> its rectified frame
  double P1[12] = {}, P2[12] = {};      // f 0 cx 0 / 0 f cy 0 / 0 0 1 0; P2[3] = -f * baseline
  // (x, y, disparity, 1) -> the homogeneous 3-D point in the left rectified
  // camera's frame, in the calibration's unit (OpenCV's Q).
  double Q[16] = {};
  double focal() const { return P1[0]; }
  double baseline() const { return -P2[3] / P2[0]; }
  // The disparity of a point at infinity: always 0 here (one principal
  // point for both views, stereo_rectify).
  double disparity_offset() const { return P1[2] - P2[2]; }
};

constexpr double kDefaultRectifyAlpha = 0.0;

// The rectification of views of width x height (a calibration that states
// its size must be of this one). Uses the file's own rectification where it
// fixes one (ROS; a right principal point other than the left's is moved
// onto it, which shifts the right rectified view, so that disparity 0 is at
// infinity here too), else computes it (alpha in [0, 1]). Empty on success, else
// the reason.
std::string stereo_rectify(const StereoCalibration& c, int width, int height, double alpha,
                           StereoRectification* out);

// One view's map: for each rectified pixel the source position (RemapPoint:
// 1/32 pixel, or outside), through the camera's lens model.
void rectify_map(const CameraIntrinsics& cam, const double rect_rotation[9], const double projection[12], int width,
                 int height, Image<RemapPoint>* map);

// A source position of the camera's image in pixels from a point (x, y, 1)
// of its normalized frame (the lens model's distortion applied), and back
// (the inverse, by iteration).
void distort_point(const CameraIntrinsics& cam, double x, double y, double* u, double* v);
void undistort_point(const CameraIntrinsics& cam, double u, double v, double* x, double* y);

// The resampled view (remap_rgba_pixel at every pixel of the map).
void remap_rgba(const Image<uint32_t>& src, const Image<RemapPoint>& map, Image<uint32_t>* dst);

// What the engines rectify with (Params::rectification): both views' maps
// and the geometry they came from (focal length, baseline, Q).
struct RectificationMaps {
  int width = 0, height = 0;
  Image<RemapPoint> map[2];  // left, right
  StereoRectification geometry;
};

// The maps of a rectification of calibration `c` (stereo_rectify).
std::shared_ptr<const RectificationMaps> make_rectification_maps(const StereoCalibration& c,
                                                                 const StereoRectification& r);

}  // namespace cs
