// A calibration written as the tools users calibrate with write it
// (calibration.h reads all three): for tests, benchmarks and tools/cs-makerig,
// which make scenes of a known rig and need its files. Every number to 17
// significant digits, so a file read back gives the same doubles.
#pragma once

#include <string>

#include "calibration.h"
#include "rectify.h"

namespace cs {

// OpenCV's FileStorage YAML of stereoCalibrate's results: imageSize, M1 D1
// M2 D2 R T.
std::string opencv_calibration_yaml(const StereoCalibration& c);

// A ROS camera_info YAML file of view 0 (left) or 1 (right): the camera's
// K and D (plumb_bob; equidistant for that lens) and `r`'s rectification
// and projection for it (ROS stereo: the right P holds -f * baseline).
std::string ros_camera_info_yaml(const StereoCalibration& c, const StereoRectification& r, int view);

// A Kalibr camchain YAML: cam0 and cam1 (pinhole; radtan or equidistant),
// cam1's T_cn_cnm1 from R and T. Kalibr's radtan has four coefficients:
// a k3 other than 0 cannot be written (the reason is returned in *error,
// and the text is empty).
std::string kalibr_camchain_yaml(const StereoCalibration& c, std::string* error);

}  // namespace cs
