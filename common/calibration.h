// A stereo camera's calibration as the tools users calibrate with write it
// (issue 40): OpenCV's stereo calibration (cv::FileStorage YAML or XML from
// stereoCalibrate and stereoRectify), a pair of ROS camera_info YAML files,
// or a Kalibr camchain. GStreamer-free and CUDA-free; the files are read with
// yaml-cpp and libxml2 (calibration_files.cpp), the rectification computed
// from what they hold in rectify.h.
//
// Conventions. Matrices are row-major doubles. A point X in the left
// camera's frame is X_right = R * X + T in the right one's (OpenCV's R and T;
// Kalibr's T_cn_cnm1 of cam1). Lengths are in the file's unit (OpenCV and
// Kalibr: whatever the calibration target was measured in, usually metres
// or millimetres; ROS: metres).
#pragma once

#include <string>
#include <vector>

namespace cs {

// A camera's lens model: pinhole with radial-tangential distortion (OpenCV's
// and ROS's plumb_bob or rational_polynomial, Kalibr's radtan: k1 k2 p1 p2
// [k3 [k4 k5 k6]]), or the equidistant fisheye model (Kalibr's equidistant,
// ROS's equidistant: k1 k2 k3 k4 on the angle).
enum class LensModel { Pinhole, Equidistant };

struct CameraIntrinsics {
  double K[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};  // fx s cx / 0 fy cy / 0 0 1
  std::vector<double> D;                     // empty: no distortion
  LensModel lens = LensModel::Pinhole;
  int width = 0, height = 0;                 // 0: the file does not say
};

struct StereoCalibration {
  CameraIntrinsics left, right;
  // The right camera's pose relative to the left one (OpenCV, Kalibr).
  bool has_pose = false;
  double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double T[3] = {0, 0, 0};
  // A rectification the file fixes (ROS camera_info: each camera's R and P),
  // used as it is; OpenCV's R1 R2 P1 P2 are not read: the element computes
  // its own from M, D, R and T with its crop choice (rectify.h).
  bool has_rectification = false;
  double R1[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, R2[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double P1[12] = {}, P2[12] = {};
  // What was read, for messages: "OpenCV YAML stereo.yml", "ROS camera_info
  // left.yaml, right.yaml", "Kalibr camchain.yaml".
  std::string source;
};

// Reads `spec`: a file, or file names separated by commas:
//  - OpenCV FileStorage, YAML or XML: M1 D1 M2 D2 R T (R1 R2 P1 P2 Q may be
//    there too); several files are merged, as stereo_calib's
//    intrinsics.yml and extrinsics.yml; an image size from imageSize,
//    image_width and image_height, or width and height where present;
//  - two ROS camera_info YAML files, left then right (image_width,
//    image_height, camera_matrix, distortion_model, distortion_coefficients,
//    rectification_matrix, projection_matrix);
//  - a Kalibr camchain YAML (cam0, cam1: camera_model pinhole, intrinsics,
//    distortion_model radtan, equidistant or none, distortion_coeffs,
//    resolution, and cam1's T_cn_cnm1).
// Empty on success; else one sentence naming the file and the field (a
// missing or unreadable file, a field missing or of the wrong shape, a
// lens model not supported, a degenerate calibration: check_calibration).
std::string load_stereo_calibration(const std::string& spec, StereoCalibration* out);

// What makes a calibration unusable, in a sentence naming the field (a
// focal length not positive, distortion of a length the lens model does not
// have, R not a rotation, a zero baseline, the two cameras' sizes differing,
// a projection without a focal length or baseline); empty when usable.
// `where` names the source for the message.
std::string check_calibration(const StereoCalibration& c, const std::string& where);

}  // namespace cs
