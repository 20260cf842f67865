#include "rig_scene.h"

#include <algorithm>
#include <cmath>

namespace cs {
namespace {

uint32_t hash(int32_t i, int32_t j, uint32_t seed) {
  uint32_t h = seed * 0x9E3779B9u ^ static_cast<uint32_t>(i) * 0x85EBCA6Bu ^ static_cast<uint32_t>(j) * 0xC2B2AE35u;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}

// Value noise: lattice values blended bilinearly, one channel a call.
double noise(double x, double y, uint32_t seed) {
  const double fx = std::floor(x), fy = std::floor(y);
  const int32_t i = static_cast<int32_t>(fx), j = static_cast<int32_t>(fy);
  const double tx = x - fx, ty = y - fy;
  auto at = [&](int32_t a, int32_t b) { return static_cast<double>(hash(a, b, seed) & 255u); };
  const double top = at(i, j) * (1 - tx) + at(i + 1, j) * tx;
  const double bottom = at(i, j + 1) * (1 - tx) + at(i + 1, j + 1) * tx;
  return top * (1 - ty) + bottom * ty;
}

// The ray of camera pixel (u, v) in the camera's rectified frame (its lens
// undone, then its rectifying rotation R), not normalised.
void rectified_ray(const CameraIntrinsics& cam, const double R[9], int u, int v, double ray[3]) {
  double x, y;
  undistort_point(cam, u, v, &x, &y);
  ray[0] = R[0] * x + R[1] * y + R[2];
  ray[1] = R[3] * x + R[4] * y + R[5];
  ray[2] = R[6] * x + R[7] * y + R[8];
}

}  // namespace

StereoCalibration example_rig(int width, int height) {
  StereoCalibration c;
  const double sx = width / 640.0, sy = height / 480.0;
  const double k1[9] = {700 * sx, 0, 322.5 * sx, 0, 705 * sy, 238.2 * sy, 0, 0, 1};
  const double k2[9] = {690 * sx, 0, 315.1 * sx, 0, 698 * sy, 244.7 * sy, 0, 0, 1};
  std::copy(k1, k1 + 9, c.left.K);
  std::copy(k2, k2 + 9, c.right.K);
  c.left.D = {-0.21, 0.05, 0.0012, -0.0008, -0.004};
  c.right.D = {-0.19, 0.04, -0.0005, 0.0011, -0.002};
  c.left.width = c.right.width = width;
  c.left.height = c.right.height = height;
  const double om[3] = {0.012, -0.021, 0.004};
  rotation_from_vector(om, c.R);
  c.T[0] = -0.12;
  c.T[1] = 0.0015;
  c.T[2] = -0.0021;
  c.has_pose = true;
  c.source = "the example rig";
  return c;
}

RigScene render_plane_through_rig(const StereoCalibration& c, const StereoRectification& r, double depth,
                                  uint32_t seed) {
  RigScene s;
  s.disparity = r.focal() * r.baseline() / depth;
  const double cell = depth / r.focal() * 2.5;  // about 2.5 rectified pixels a lattice cell
  const double shift = r.P2[3] / r.P2[0];       // right rectified frame = left's + (shift, 0, 0)
  const CameraIntrinsics* cams[2] = {&c.left, &c.right};
  const double* rots[2] = {r.R1, r.R2};
  Image<uint32_t>* out[2] = {&s.left, &s.right};
  for (int k = 0; k < 2; ++k) {
    *out[k] = Image<uint32_t>(r.width, r.height);
    for (int v = 0; v < r.height; ++v)
      for (int u = 0; u < r.width; ++u) {
        double ray[3];
        rectified_ray(*cams[k], rots[k], u, v, ray);
        uint32_t px = 0;
        if (ray[2] > 1e-9) {
          const double t = depth / ray[2];
          const double X = t * ray[0] - (k ? shift : 0), Y = t * ray[1];
          uint32_t rgb[3];
          for (int ch = 0; ch < 3; ++ch)
            rgb[ch] = static_cast<uint32_t>(std::lround(noise(X / cell, Y / cell, seed * 3 + ch)));
          px = rgb[0] | rgb[1] << 8 | rgb[2] << 16;
        }
        out[k]->at(u, v) = px;
      }
  }
  return s;
}

RigScene deliver_through_rig(const StereoCalibration& c, const StereoRectification& r, const Image<uint32_t>& left,
                             const Image<uint32_t>& right) {
  RigScene s;
  const CameraIntrinsics* cams[2] = {&c.left, &c.right};
  const double* rots[2] = {r.R1, r.R2};
  const double* projs[2] = {r.P1, r.P2};
  const Image<uint32_t>* in[2] = {&left, &right};
  Image<uint32_t>* out[2] = {&s.left, &s.right};
  for (int k = 0; k < 2; ++k) {
    const Image<uint32_t>& src = *in[k];
    *out[k] = Image<uint32_t>(r.width, r.height);
    for (int v = 0; v < r.height; ++v)
      for (int u = 0; u < r.width; ++u) {
        double q[3];
        rectified_ray(*cams[k], rots[k], u, v, q);
        if (!(q[2] > 1e-9)) continue;
        const double* P = projs[k];
        const double ru = P[0] * q[0] / q[2] + P[2], rv = P[5] * q[1] / q[2] + P[6];
        if (!(ru >= 0 && rv >= 0 && ru <= src.width - 1 && rv <= src.height - 1)) continue;
        const int x0 = static_cast<int>(ru), y0 = static_cast<int>(rv);
        const int x1 = std::min(x0 + 1, src.width - 1), y1 = std::min(y0 + 1, src.height - 1);
        const double fx = ru - x0, fy = rv - y0;
        uint32_t px = 0;
        for (int ch = 0; ch < 24; ch += 8) {
          auto at = [&](int xx, int yy) { return static_cast<double>(src.at(xx, yy) >> ch & 255u); };
          const double val = (at(x0, y0) * (1 - fx) + at(x1, y0) * fx) * (1 - fy) + (at(x0, y1) * (1 - fx) + at(x1, y1) * fx) * fy;
          px |= static_cast<uint32_t>(std::lround(val)) << ch;
        }
        out[k]->at(u, v) = px;
      }
  }
  return s;
}

}  // namespace cs
