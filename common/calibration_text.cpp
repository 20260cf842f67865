#include "calibration_text.h"

#include <cstdio>

namespace cs {
namespace {

std::string numbers(const double* v, size_t n) {
  std::string s;
  char buf[40];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s;
}

std::string opencv_matrix(const char* name, const double* v, size_t rows, size_t cols) {
  return std::string(name) + ": !!opencv-matrix\n   rows: " + std::to_string(rows) + "\n   cols: " +
         std::to_string(cols) + "\n   dt: d\n   data: [ " + numbers(v, rows * cols) + " ]\n";
}

std::string ros_matrix(const char* name, const double* v, size_t rows, size_t cols) {
  return std::string(name) + ":\n  rows: " + std::to_string(rows) + "\n  cols: " + std::to_string(cols) +
         "\n  data: [" + numbers(v, rows * cols) + "]\n";
}

}  // namespace

std::string opencv_calibration_yaml(const StereoCalibration& c) {
  return "%YAML:1.0\n---\nimageSize: [ " + std::to_string(c.left.width) + ", " + std::to_string(c.left.height) +
         " ]\n" + opencv_matrix("M1", c.left.K, 3, 3) + opencv_matrix("D1", c.left.D.data(), 1, c.left.D.size()) +
         opencv_matrix("M2", c.right.K, 3, 3) + opencv_matrix("D2", c.right.D.data(), 1, c.right.D.size()) +
         opencv_matrix("R", c.R, 3, 3) + opencv_matrix("T", c.T, 3, 1);
}

std::string ros_camera_info_yaml(const StereoCalibration& c, const StereoRectification& r, int view) {
  const CameraIntrinsics& cam = view == 0 ? c.left : c.right;
  const char* model = cam.lens == LensModel::Equidistant ? "equidistant" : "plumb_bob";
  return "image_width: " + std::to_string(cam.width) + "\nimage_height: " + std::to_string(cam.height) +
         "\ncamera_name: " + (view == 0 ? "left" : "right") + "\n" + ros_matrix("camera_matrix", cam.K, 3, 3) +
         "distortion_model: " + model + "\n" + ros_matrix("distortion_coefficients", cam.D.data(), 1, cam.D.size()) +
         ros_matrix("rectification_matrix", view == 0 ? r.R1 : r.R2, 3, 3) +
         ros_matrix("projection_matrix", view == 0 ? r.P1 : r.P2, 3, 4);
}

std::string kalibr_camchain_yaml(const StereoCalibration& c, std::string* error) {
  const CameraIntrinsics* cams[2] = {&c.left, &c.right};
  std::string out;
  for (int k = 0; k < 2; ++k) {
    const CameraIntrinsics& cam = *cams[k];
    const bool fisheye = cam.lens == LensModel::Equidistant;
    if (!fisheye && cam.D.size() > 4)
      for (size_t i = 4; i < cam.D.size(); ++i)
        if (cam.D[i] != 0) {
          *error = "Kalibr's radtan model has four coefficients; this camera's k3 or beyond is not 0";
          return {};
        }
    double d[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < 4 && i < cam.D.size(); ++i) d[i] = cam.D[i];
    const double in[4] = {cam.K[0], cam.K[4], cam.K[2], cam.K[5]};
    const std::string name = "cam" + std::to_string(k);
    out += name + ":\n  camera_model: pinhole\n  intrinsics: [" + numbers(in, 4) + "]\n  distortion_model: " +
           (cam.D.empty() ? "none" : fisheye ? "equidistant" : "radtan") + "\n  distortion_coeffs: [" +
           numbers(d, cam.D.empty() ? 0 : 4) + "]\n  resolution: [" + std::to_string(cam.width) + ", " +
           std::to_string(cam.height) + "]\n  rostopic: /" + name + "/image_raw\n";
    if (k == 1) {
      out += "  T_cn_cnm1:\n";
      for (int row = 0; row < 3; ++row) {
        const double v[4] = {c.R[3 * row], c.R[3 * row + 1], c.R[3 * row + 2], c.T[row]};
        out += "  - [" + numbers(v, 4) + "]\n";
      }
      out += "  - [0.0, 0.0, 0.0, 1.0]\n";
    }
  }
  error->clear();
  return out;
}

}  // namespace cs
