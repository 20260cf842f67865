#include "rectify.h"

#include "stages.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cs {
namespace {

void mat_mul(const double a[9], const double b[9], double out[9]) {
  double r[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  std::copy(r, r + 9, out);
}

void transpose(const double a[9], double out[9]) {
  double r[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = a[3 * j + i];
  std::copy(r, r + 9, out);
}

void mat_vec(const double a[9], const double v[3], double out[3]) {
  double r[3];
  for (int i = 0; i < 3; ++i) r[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
  std::copy(r, r + 3, out);
}

// The rotation vector of R (axis times angle), from its antisymmetric part
// and trace; angles near pi from the diagonal.
void vector_from_rotation(const double R[9], double v[3]) {
  const double c = std::clamp((R[0] + R[4] + R[8] - 1) / 2, -1.0, 1.0);
  const double angle = std::acos(c);
  const double s[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
  const double n = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  if (angle < 1e-12) {
    v[0] = v[1] = v[2] = 0;
    return;
  }
  if (n > 1e-6) {
    for (int i = 0; i < 3; ++i) v[i] = s[i] / n * angle;
    return;
  }
  // About pi: R = 2 a a^T - I, the axis from the largest diagonal entry.
  double a[3] = {std::sqrt(std::max((R[0] + 1) / 2, 0.0)), std::sqrt(std::max((R[4] + 1) / 2, 0.0)),
                 std::sqrt(std::max((R[8] + 1) / 2, 0.0))};
  const int k = a[0] >= a[1] && a[0] >= a[2] ? 0 : a[1] >= a[2] ? 1 : 2;
  for (int i = 0; i < 3; ++i)
    if (i != k) a[i] = (R[3 * k + i] + R[3 * i + k]) / (4 * a[k]);
  for (int i = 0; i < 3; ++i) v[i] = a[i] * angle;
}

// Where a source pixel lands in a rectified view (normalized, rotated,
// projected with focal f and principal point (cx, cy)); false behind the camera.
bool rectified_position(const CameraIntrinsics& cam, const double rot[9], double f, double cx, double cy, double u,
                        double v, double* ru, double* rv) {
  double x, y;
  undistort_point(cam, u, v, &x, &y);
  const double p[3] = {x, y, 1};
  double q[3];
  mat_vec(rot, p, q);
  if (!(q[2] > 1e-12)) return false;
  *ru = f * q[0] / q[2] + cx;
  *rv = f * q[1] / q[2] + cy;
  return true;
}

// The rectangles of a view's rectified border with focal f and principal
// point (cx, cy): `outer` holds every source pixel's landing place, `inner`
// only places every side of the border surrounds (left, top, right, bottom).
void border_rectangles(const CameraIntrinsics& cam, const double rot[9], double f, double cx, double cy, int w,
                       int h, double outer[4], double inner[4]) {
  const double inf = std::numeric_limits<double>::infinity();
  outer[0] = outer[1] = inf;
  outer[2] = outer[3] = -inf;
  inner[0] = inner[1] = -inf;
  inner[2] = inner[3] = inf;
  constexpr int kSteps = 256;
  for (int side = 0; side < 4; ++side)
    for (int i = 0; i <= kSteps; ++i) {
      const double t = static_cast<double>(i) / kSteps;
      const double u = side == 0 ? 0 : side == 2 ? w - 1 : t * (w - 1);
      const double v = side == 1 ? 0 : side == 3 ? h - 1 : t * (h - 1);
      double ru, rv;
      if (!rectified_position(cam, rot, f, cx, cy, u, v, &ru, &rv)) continue;
      outer[0] = std::min(outer[0], ru);
      outer[1] = std::min(outer[1], rv);
      outer[2] = std::max(outer[2], ru);
      outer[3] = std::max(outer[3], rv);
      if (side == 0) inner[0] = std::max(inner[0], ru);
      if (side == 1) inner[1] = std::max(inner[1], rv);
      if (side == 2) inner[2] = std::min(inner[2], ru);
      if (side == 3) inner[3] = std::min(inner[3], rv);
    }
}

void fill_q(StereoRectification* r) {
  const double f = r->P1[0], tx = r->P2[3] / r->P2[0];
  const double q[16] = {1, 0, 0, -r->P1[2], 0, 1, 0, -r->P1[6], 0, 0, 0, f, 0, 0, -1 / tx, (r->P1[2] - r->P2[2]) / tx};
  std::copy(q, q + 16, r->Q);
}

}  // namespace

void rotation_from_vector(const double v[3], double R[9]) {
  const double angle = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (angle < 1e-15) {
    const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    std::copy(id, id + 9, R);
    return;
  }
  const double k[3] = {v[0] / angle, v[1] / angle, v[2] / angle};
  const double c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  const double r[9] = {c + t * k[0] * k[0],        t * k[0] * k[1] - s * k[2], t * k[0] * k[2] + s * k[1],
                       t * k[1] * k[0] + s * k[2], c + t * k[1] * k[1],        t * k[1] * k[2] - s * k[0],
                       t * k[2] * k[0] - s * k[1], t * k[2] * k[1] + s * k[0], c + t * k[2] * k[2]};
  std::copy(r, r + 9, R);
}

bool is_rotation(const double R[9]) {
  for (int i = 0; i < 9; ++i)
    if (!std::isfinite(R[i])) return false;
  double rt[9], p[9];
  transpose(R, rt);
  mat_mul(R, rt, p);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (std::fabs(p[3 * i + j] - (i == j ? 1.0 : 0.0)) > 1e-6) return false;
  const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                     R[2] * (R[3] * R[7] - R[4] * R[6]);
  return std::fabs(det - 1) < 1e-6;
}

void distort_point(const CameraIntrinsics& cam, double x, double y, double* u, double* v) {
  const std::vector<double>& D = cam.D;
  double xd = x, yd = y;
  if (cam.lens == LensModel::Equidistant) {
    const double r = std::sqrt(x * x + y * y);
    const double th = std::atan(r), t2 = th * th;
    const double thd = th * (1 + t2 * (D[0] + t2 * (D[1] + t2 * (D[2] + t2 * D[3]))));
    const double s = r > 1e-12 ? thd / r : 1.0;
    xd = x * s;
    yd = y * s;
  } else if (!D.empty()) {
    const double k1 = D[0], k2 = D[1], p1 = D[2], p2 = D[3];
    const double k3 = D.size() > 4 ? D[4] : 0, k4 = D.size() > 5 ? D[5] : 0, k5 = D.size() > 6 ? D[6] : 0,
                 k6 = D.size() > 7 ? D[7] : 0;
    const double r2 = x * x + y * y;
    const double radial = (1 + r2 * (k1 + r2 * (k2 + r2 * k3))) / (1 + r2 * (k4 + r2 * (k5 + r2 * k6)));
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x);
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
  }
  *u = cam.K[0] * xd + cam.K[1] * yd + cam.K[2];
  *v = cam.K[4] * yd + cam.K[5];
}

void undistort_point(const CameraIntrinsics& cam, double u, double v, double* x, double* y) {
  const double yd = (v - cam.K[5]) / cam.K[4];
  const double xd = (u - cam.K[2] - cam.K[1] * yd) / cam.K[0];
  const std::vector<double>& D = cam.D;
  if (cam.lens == LensModel::Equidistant) {
    const double thd = std::sqrt(xd * xd + yd * yd);
    double th = thd;
    for (int i = 0; i < 30 && thd > 1e-12; ++i) {
      const double t2 = th * th;
      const double f = th * (1 + t2 * (D[0] + t2 * (D[1] + t2 * (D[2] + t2 * D[3])))) - thd;
      const double df = 1 + t2 * (3 * D[0] + t2 * (5 * D[1] + t2 * (7 * D[2] + t2 * 9 * D[3])));
      if (!(std::fabs(df) > 1e-12)) break;
      th -= f / df;
    }
    const double s = thd > 1e-12 ? std::tan(th) / thd : 1.0;
    *x = xd * s;
    *y = yd * s;
    return;
  }
  // Fixed-point iteration x = (xd - tangential(x)) / radial(x), then Newton
  // steps on the forward model for the last digits.
  double px = xd, py = yd;
  for (int i = 0; i < 40 && !D.empty(); ++i) {
    double fu, fv;
    const CameraIntrinsics unit{{1, 0, 0, 0, 1, 0, 0, 0, 1}, D, cam.lens, 0, 0};
    distort_point(unit, px, py, &fu, &fv);
    // Newton with a numerical Jacobian of the forward model.
    const double h = 1e-7;
    double ux, vx, uy, vy;
    distort_point(unit, px + h, py, &ux, &vx);
    distort_point(unit, px, py + h, &uy, &vy);
    const double a = (ux - fu) / h, b = (uy - fu) / h, c = (vx - fv) / h, d = (vy - fv) / h;
    const double det = a * d - b * c;
    const double ex = fu - xd, ey = fv - yd;
    if (!(std::fabs(det) > 1e-12)) break;
    px -= (d * ex - b * ey) / det;
    py -= (a * ey - c * ex) / det;
    if (std::fabs(ex) + std::fabs(ey) < 1e-15) break;
  }
  *x = px;
  *y = py;
}

std::string stereo_rectify(const StereoCalibration& c, int width, int height, double alpha,
                           StereoRectification* out) {
  if (width < 2 || height < 2) return "rectification needs views of at least 2x2 pixels";
  if (c.left.width && (c.left.width != width || c.left.height != height))
    return c.source + ": the calibration is for " + std::to_string(c.left.width) + "x" +
           std::to_string(c.left.height) + " views, these are " + std::to_string(width) + "x" +
           std::to_string(height);
  if (!(alpha >= 0 && alpha <= 1)) return "the rectification's alpha must be between 0 and 1";
  StereoRectification r;
  r.width = width;
  r.height = height;
  if (c.has_rectification) {
    std::copy(c.R1, c.R1 + 9, r.R1);
    std::copy(c.R2, c.R2 + 9, r.R2);
    std::copy(c.P1, c.P1 + 12, r.P1);
    std::copy(c.P2, c.P2 + 12, r.P2);
    const auto differ = [](double a, double b) { return std::fabs(a - b) > 1e-6 * std::fabs(a); };
    if (differ(r.P1[0], r.P2[0]) || differ(r.P1[5], r.P2[5]))
      return c.source + ": the two projection_matrix focal lengths differ (" + std::to_string(r.P1[0]) + " and " +
             std::to_string(r.P2[0]) + "): not a rectified pair";
    // One principal point for both (what the matcher's non-negative range
    // and depth = f B / d take): a right view whose cx or cy differs is
    // shifted onto the left one's, so that disparity 0 is at infinity.
    r.P2[2] = r.P1[2];
    r.P2[6] = r.P1[6];
    fill_q(&r);
    *out = r;
    return {};
  }
  if (!c.has_pose) return c.source + ": neither a pose (R, T) nor a rectification";
  // Half the rotation each way: in frames turned by h = R^(1/2) (left) and
  // h^T (right) the cameras differ by the translation t = h^T T alone.
  double om[3], half[9], half_t[9], t[3];
  vector_from_rotation(c.R, om);
  const double om_half[3] = {om[0] / 2, om[1] / 2, om[2] / 2};
  rotation_from_vector(om_half, half);
  transpose(half, half_t);
  mat_vec(half_t, c.T, t);
  // Then both turn about t x e until t lies along e = (+-1, 0, 0).
  const double nt = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
  const double e[3] = {t[0] >= 0 ? 1.0 : -1.0, 0, 0};
  double w[3] = {t[1] * e[2] - t[2] * e[1], t[2] * e[0] - t[0] * e[2], t[0] * e[1] - t[1] * e[0]};
  const double nw = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  if (nw > 0) {
    const double angle = std::acos(std::min(std::fabs(t[0]) / nt, 1.0));
    for (double& x : w) x *= angle / nw;
  }
  double wr[9];
  rotation_from_vector(w, wr);
  mat_mul(wr, half, r.R1);
  mat_mul(wr, half_t, r.R2);
  double tr[3];
  mat_vec(r.R2, c.T, tr);  // the baseline in the rectified frames: (tr[0], 0, 0)
  if (std::fabs(tr[0]) < 0.5 * nt)
    return c.source + ": the cameras are one above the other (vertical baseline); side-by-side pairs only";
  // One focal length, the mean vertical one; one principal point, where the
  // centre of the views' corners lands, averaged over both views.
  double f = (c.left.K[4] + c.right.K[4]) / 2;
  const CameraIntrinsics* cams[2] = {&c.left, &c.right};
  const double* rots[2] = {r.R1, r.R2};
  double cx = 0, cy = 0;
  for (int k = 0; k < 2; ++k) {
    double sx = 0, sy = 0;
    for (int i = 0; i < 4; ++i) {
      double ru = 0, rv = 0;
      if (!rectified_position(*cams[k], rots[k], f, 0, 0, (i & 1) * (width - 1.0), (i >> 1) * (height - 1.0), &ru,
                              &rv))
        return c.source + ": a corner of the " + (k ? "right" : "left") + " view lies behind its rectified camera";
      sx += ru / 4;
      sy += rv / 4;
    }
    cx += ((width - 1) / 2.0 - sx) / 2;
    cy += ((height - 1) / 2.0 - sy) / 2;
  }
  // The crop: scale about the views' centre between s0 (alpha 0: every
  // rectified pixel has a source in both views) and s1 (alpha 1: every
  // source pixel of both views is kept).
  const double mx = (width - 1) / 2.0, my = (height - 1) / 2.0;
  double s0 = 0, s1 = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 2; ++k) {
    double outer[4], inner[4];
    border_rectangles(*cams[k], rots[k], f, cx, cy, width, height, outer, inner);
    const double in_l = mx - inner[0], in_t = my - inner[1], in_r = inner[2] - mx, in_b = inner[3] - my;
    if (!(in_l > 0 && in_t > 0 && in_r > 0 && in_b > 0))
      return c.source + ": the " + std::string(k ? "right" : "left") +
             " view's rectified image does not cover its centre (a calibration of other cameras?)";
    s0 = std::max({s0, mx / in_l, my / in_t, mx / in_r, my / in_b});
    s1 = std::min({s1, mx / (mx - outer[0]), my / (my - outer[1]), mx / (outer[2] - mx), my / (outer[3] - my)});
  }
  const double s = s0 * (1 - alpha) + s1 * alpha;
  f *= s;
  cx = mx + s * (cx - mx);
  cy = my + s * (cy - my);
  const double p1[12] = {f, 0, cx, 0, 0, f, cy, 0, 0, 0, 1, 0};
  std::copy(p1, p1 + 12, r.P1);
  std::copy(p1, p1 + 12, r.P2);
  r.P2[3] = tr[0] * f;
  fill_q(&r);
  *out = r;
  return {};
}

void rectify_map(const CameraIntrinsics& cam, const double rect_rotation[9], const double projection[12], int width,
                 int height, Image<RemapPoint>* map) {
  *map = Image<RemapPoint>(width, height);
  double back[9];
  transpose(rect_rotation, back);
  const double f = projection[0], fy = projection[5], cx = projection[2], cy = projection[6];
  for (int v = 0; v < height; ++v)
    for (int u = 0; u < width; ++u) {
      const double ray[3] = {(u - cx) / f, (v - cy) / fy, 1};
      double p[3];
      mat_vec(back, ray, p);
      if (!(p[2] > 1e-12)) continue;
      double su, sv;
      distort_point(cam, p[0] / p[2], p[1] / p[2], &su, &sv);
      map->at(u, v) = remap_point(su, sv, width, height);
    }
}

void remap_rgba(const Image<uint32_t>& src, const Image<RemapPoint>& map, Image<uint32_t>* dst) {
  *dst = Image<uint32_t>(map.width, map.height);
  const auto at = [&](int x, int y) { return src.at(x, y); };
  for (int y = 0; y < map.height; ++y)
    for (int x = 0; x < map.width; ++x) dst->at(x, y) = remap_rgba_pixel(map.at(x, y), src.width, src.height, at);
}

std::shared_ptr<const RectificationMaps> make_rectification_maps(const StereoCalibration& c,
                                                                 const StereoRectification& r) {
  auto m = std::make_shared<RectificationMaps>();
  m->width = r.width;
  m->height = r.height;
  m->geometry = r;
  rectify_map(c.left, r.R1, r.P1, r.width, r.height, &m->map[0]);
  rectify_map(c.right, r.R2, r.P2, r.width, r.height, &m->map[1]);
  return m;
}

void rectify_view(const FrameView& in, const Image<RemapPoint>& map, Image<uint32_t>& out) {
  Image<uint32_t> rgb;
  convert_to_rgb(in, rgb);
  remap_rgba(rgb, map, &out);
}

}  // namespace cs
