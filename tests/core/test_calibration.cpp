// Calibration files and rectification (common/calibration.h, rectify.h): a
// known stereo rig with lens distortion, written here in every format the
// element reads; the rectification's geometry checked against points
// projected through the rig, and every format giving the same maps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "calibration.h"
#include "calibration_text.h"
#include "engine.h"
#include "stages.h"
#include "rectify.h"
#include "synthetic.h"
#include "rig_scene.h"

namespace cs {
namespace {

// The rig: two 640x480 cameras 12 cm apart, slightly turned, each with its
// own radial-tangential lens (rig_scene.h example_rig).
StereoCalibration rig() { return example_rig(640, 480); }

std::string temp_path(const std::string& name) {
  return "/tmp/cs-calib-" + std::to_string(getpid()) + "-" + name;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string numbers(const double* v, int n, const char* sep) {
  std::string s;
  char buf[64];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    s += (i ? sep : "") + std::string(buf);
  }
  return s;
}

std::string yaml_matrix(const char* name, const double* v, int rows, int cols) {
  return std::string(name) + ": !!opencv-matrix\n   rows: " + std::to_string(rows) + "\n   cols: " +
         std::to_string(cols) + "\n   dt: d\n   data: [ " + numbers(v, rows * cols, ", ") + " ]\n";
}

std::string xml_matrix(const char* name, const double* v, int rows, int cols) {
  return std::string("<") + name + " type_id=\"opencv-matrix\">\n  <rows>" + std::to_string(rows) + "</rows>\n  <cols>" +
         std::to_string(cols) + "</cols>\n  <dt>d</dt>\n  <data>\n    " + numbers(v, rows * cols, " ") +
         "</data></" + name + ">\n";
}

std::string opencv_xml(const StereoCalibration& c) {
  return "<?xml version=\"1.0\"?>\n<opencv_storage>\n<imageSize>640 480</imageSize>\n" +
         xml_matrix("M1", c.left.K, 3, 3) + xml_matrix("D1", c.left.D.data(), 1, 5) +
         xml_matrix("M2", c.right.K, 3, 3) + xml_matrix("D2", c.right.D.data(), 1, 5) + xml_matrix("R", c.R, 3, 3) +
         xml_matrix("T", c.T, 3, 1) + "</opencv_storage>\n";
}

void expect_same_maps(const StereoRectification& a, const CameraIntrinsics* ca, const StereoRectification& b,
                      const CameraIntrinsics* cb) {
  for (int k = 0; k < 2; ++k) {
    Image<RemapPoint> ma, mb;
    rectify_map(ca[k], k ? a.R2 : a.R1, k ? a.P2 : a.P1, a.width, a.height, &ma);
    rectify_map(cb[k], k ? b.R2 : b.R1, k ? b.P2 : b.P1, b.width, b.height, &mb);
    size_t differ = 0;
    for (size_t i = 0; i < ma.pixels.size(); ++i)
      differ += ma.pixels[i].x != mb.pixels[i].x || ma.pixels[i].y != mb.pixels[i].y;
    EXPECT_EQ(differ, 0u) << "view " << k;
  }
}

TEST(Calibration, RotationVectorRoundTrip) {
  for (const double* om : {(const double[3]){0.3, -0.2, 0.1}, (const double[3]){0, 0, 0},
                           (const double[3]){3.1, 0.05, -0.02}}) {
    double r[9];
    rotation_from_vector(om, r);
    EXPECT_TRUE(is_rotation(r));
  }
  const double bad[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1.01};
  EXPECT_FALSE(is_rotation(bad));
}

TEST(Calibration, DistortionInvertsForBothLensModels) {
  StereoCalibration c = rig();
  CameraIntrinsics fisheye = c.left;
  fisheye.lens = LensModel::Equidistant;
  fisheye.D = {0.08, -0.02, 0.004, -0.0005};
  for (const CameraIntrinsics& cam : {c.left, fisheye})
    for (double x = -0.4; x <= 0.4; x += 0.2)
      for (double y = -0.3; y <= 0.3; y += 0.15) {
        double u, v, bx, by;
        distort_point(cam, x, y, &u, &v);
        undistort_point(cam, u, v, &bx, &by);
        EXPECT_NEAR(bx, x, 1e-9);
        EXPECT_NEAR(by, y, 1e-9);
      }
}

// Points seen by both cameras land on one row of the rectified views, and
// their disparity is f * baseline / Z; a view's map takes its rectified
// pixel back to where the point is in the camera's own image.
TEST(Calibration, RectifiedRowsAndDisparities) {
  const StereoCalibration c = rig();
  StereoRectification r;
  ASSERT_EQ(stereo_rectify(c, 640, 480, 0.0, &r), "");
  EXPECT_NEAR(r.baseline(), 0.12, 0.0002);  // |T| along the new x axis
  EXPECT_EQ(r.disparity_offset(), 0.0);
  Image<RemapPoint> map_left;
  rectify_map(c.left, r.R1, r.P1, 640, 480, &map_left);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ux(-0.3, 0.3), uz(1.5, 8.0);
  int checked = 0;
  for (int i = 0; i < 500; ++i) {
    const double z = uz(rng), X[3] = {ux(rng) * z, ux(rng) * z * 0.7, z};
    double q[3] = {0, 0, 0}, xr[3], qr[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) q[a] += r.R1[3 * a + b] * X[b];
    for (int a = 0; a < 3; ++a) xr[a] = c.R[3 * a] * X[0] + c.R[3 * a + 1] * X[1] + c.R[3 * a + 2] * X[2] + c.T[a];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) qr[a] += r.R2[3 * a + b] * xr[b];
    const double ul = r.P1[0] * q[0] / q[2] + r.P1[2], vl = r.P1[5] * q[1] / q[2] + r.P1[6];
    const double ur = r.P2[0] * qr[0] / qr[2] + r.P2[2], vr = r.P2[5] * qr[1] / qr[2] + r.P2[6];
    EXPECT_NEAR(vl, vr, 1e-9);
    EXPECT_NEAR(ul - ur, r.focal() * r.baseline() / q[2], 1e-9);
    // The map at the nearest rectified pixel: within a pixel of the point's
    // place in the left camera's image.
    const int U = static_cast<int>(std::lround(ul)), V = static_cast<int>(std::lround(vl));
    if (U < 0 || V < 0 || U >= 640 || V >= 480) continue;
    double su, sv;
    distort_point(c.left, X[0] / X[2], X[1] / X[2], &su, &sv);
    const RemapPoint p = map_left.at(U, V);
    ASSERT_NE(p.x, kRemapOutside);
    EXPECT_LT(std::hypot(p.x / 32.0 - su, p.y / 32.0 - sv), 1.0);
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

// alpha 0: every rectified pixel has a source in both views; alpha 1: every
// source corner is inside the rectified views (so some pixels have none).
TEST(Calibration, AlphaChoosesTheCrop) {
  const StereoCalibration c = rig();
  StereoRectification r0, r1;
  ASSERT_EQ(stereo_rectify(c, 640, 480, 0.0, &r0), "");
  ASSERT_EQ(stereo_rectify(c, 640, 480, 1.0, &r1), "");
  EXPECT_GT(r0.focal(), r1.focal());
  size_t outside0 = 0, outside1 = 0;
  for (int k = 0; k < 2; ++k) {
    const CameraIntrinsics& cam = k ? c.right : c.left;
    Image<RemapPoint> m0, m1;
    rectify_map(cam, k ? r0.R2 : r0.R1, k ? r0.P2 : r0.P1, 640, 480, &m0);
    rectify_map(cam, k ? r1.R2 : r1.R1, k ? r1.P2 : r1.P1, 640, 480, &m1);
    for (const RemapPoint& p : m0.pixels) outside0 += p.x == kRemapOutside;
    for (const RemapPoint& p : m1.pixels) outside1 += p.x == kRemapOutside;
  }
  EXPECT_EQ(outside0, 0u);
  EXPECT_GT(outside1, 1000u);
}

// The same rig in every format gives the same maps, bit for bit.
TEST(Calibration, EveryFormatGivesTheSameMaps) {
  const StereoCalibration c = rig();
  StereoCalibration yaml, xml, merged;
  ASSERT_EQ(load_stereo_calibration(write("stereo.yml", opencv_calibration_yaml(c)), &yaml), "");
  ASSERT_EQ(load_stereo_calibration(write("stereo.xml", opencv_xml(c)), &xml), "");
  // stereo_calib's two files, intrinsics and extrinsics, merged.
  const std::string intr = write("intrinsics.yml", "%YAML:1.0\n" + yaml_matrix("M1", c.left.K, 3, 3) +
                                                       yaml_matrix("D1", c.left.D.data(), 1, 5) +
                                                       yaml_matrix("M2", c.right.K, 3, 3) +
                                                       yaml_matrix("D2", c.right.D.data(), 1, 5));
  const std::string extr = write("extrinsics.yml", "%YAML:1.0\n" + yaml_matrix("R", c.R, 3, 3) +
                                                       yaml_matrix("T", c.T, 3, 1));
  ASSERT_EQ(load_stereo_calibration(intr + "," + extr, &merged), "");
  for (const StereoCalibration* f : {&yaml, &xml, &merged}) {
    for (int i = 0; i < 9; ++i) {
      EXPECT_EQ(f->left.K[i], c.left.K[i]);
      EXPECT_EQ(f->right.K[i], c.right.K[i]);
      EXPECT_EQ(f->R[i], c.R[i]);
    }
    EXPECT_EQ(f->left.D, c.left.D);
    EXPECT_EQ(f->right.D, c.right.D);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f->T[i], c.T[i]);
  }
  EXPECT_EQ(yaml.left.width, 640);
  EXPECT_EQ(xml.left.height, 480);
  EXPECT_EQ(merged.left.width, 0);  // stereo_calib's files state no size

  StereoRectification ry, rx;
  ASSERT_EQ(stereo_rectify(yaml, 640, 480, 0.0, &ry), "");
  ASSERT_EQ(stereo_rectify(xml, 640, 480, 0.0, &rx), "");
  const CameraIntrinsics yc[2] = {yaml.left, yaml.right}, xc[2] = {xml.left, xml.right};
  expect_same_maps(ry, yc, rx, xc);

  // ROS: the rectification above written into two camera_info files.
  StereoCalibration ros;
  const std::string left = write("left.yaml", ros_camera_info_yaml(c, ry, 0));
  const std::string right = write("right.yaml", ros_camera_info_yaml(c, ry, 1));
  ASSERT_EQ(load_stereo_calibration(left + ", " + right, &ros), "");
  EXPECT_TRUE(ros.has_rectification);
  StereoRectification rr;
  ASSERT_EQ(stereo_rectify(ros, 640, 480, 0.5, &rr), "");  // the files' own: alpha not used
  const CameraIntrinsics rc[2] = {ros.left, ros.right};
  expect_same_maps(ry, yc, rr, rc);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(rr.Q[i], ry.Q[i]);
  // A ROS pair whose right principal point differs (disparity at infinity
  // cx1 - cx2 as written): moved onto the left one's, the same maps.
  StereoRectification shifted_r = ry;
  shifted_r.P2[2] += 3.25;
  shifted_r.P2[6] -= 0.5;
  StereoCalibration shifted;
  const std::string right_shifted = write("right-shifted.yaml", ros_camera_info_yaml(c, shifted_r, 1));
  ASSERT_EQ(load_stereo_calibration(left + "," + right_shifted, &shifted), "");
  StereoRectification rs;
  ASSERT_EQ(stereo_rectify(shifted, 640, 480, 0.0, &rs), "");
  EXPECT_EQ(rs.disparity_offset(), 0.0);
  const CameraIntrinsics sc[2] = {shifted.left, shifted.right};
  expect_same_maps(ry, yc, rs, sc);
  // Focal lengths that differ: not a rectified pair.
  StereoRectification other_f = ry;
  other_f.P2[0] *= 1.01;
  StereoCalibration bad_f;
  ASSERT_EQ(load_stereo_calibration(left + "," + write("right-f.yaml", ros_camera_info_yaml(c, other_f, 1)), &bad_f),
            "");
  EXPECT_NE(stereo_rectify(bad_f, 640, 480, 0.0, &rs).find("focal lengths differ"), std::string::npos);

  // Kalibr: four radtan coefficients, so the rig without k3, against the
  // OpenCV file of that rig.
  StereoCalibration four = c;
  four.left.D.resize(4);
  four.right.D.resize(4);
  StereoCalibration kal, cv4;
  std::string why;
  EXPECT_EQ(kalibr_camchain_yaml(c, &why), "");  // k3 is not 0
  EXPECT_NE(why.find("four coefficients"), std::string::npos);
  const std::string chain = kalibr_camchain_yaml(four, &why);
  ASSERT_EQ(why, "");
  ASSERT_EQ(load_stereo_calibration(write("camchain.yaml", chain), &kal), "");
  std::string y4 = opencv_calibration_yaml(c);
  const std::string d1 = numbers(c.left.D.data(), 5, ", "), d2 = numbers(c.right.D.data(), 5, ", ");
  y4.replace(y4.find(d1), d1.size(), numbers(c.left.D.data(), 4, ", "));
  y4.replace(y4.find(d2), d2.size(), numbers(c.right.D.data(), 4, ", "));
  for (size_t at = y4.find("cols: 5"); at != std::string::npos; at = y4.find("cols: 5")) y4.replace(at, 7, "cols: 4");
  ASSERT_EQ(load_stereo_calibration(write("four.yml", y4), &cv4), "");
  StereoRectification rk, r4;
  ASSERT_EQ(stereo_rectify(kal, 640, 480, 0.0, &rk), "");
  ASSERT_EQ(stereo_rectify(cv4, 640, 480, 0.0, &r4), "");
  const CameraIntrinsics kc[2] = {kal.left, kal.right}, c4[2] = {cv4.left, cv4.right};
  expect_same_maps(rk, kc, r4, c4);
}

// Every problem is named with its file and field.
TEST(Calibration, ProblemsNameTheFileAndTheField) {
  const StereoCalibration c = rig();
  StereoCalibration out;
  auto says = [&](const std::string& spec, const std::string& part) {
    const std::string e = load_stereo_calibration(spec, &out);
    EXPECT_NE(e.find(part), std::string::npos) << "\"" << e << "\" should say \"" << part << "\"";
  };
  says(temp_path("missing.yml"), "missing.yml: cannot be read");
  says(write("broken.yml", "M1: [1, 2\nD1: ]]\n"), "broken.yml: not valid YAML (line");
  says(write("broken.xml", "<?xml version=\"1.0\"?>\n<opencv_storage><M1>"), "broken.xml: not valid XML");
  std::string y = opencv_calibration_yaml(c);
  says(write("nom2.yml", y.substr(0, y.find("M2:")) + y.substr(y.find("D2:"))), "nom2.yml: no field M2");
  std::string bad_t = y.substr(0, y.find("T: "));
  bad_t += yaml_matrix("T", c.T, 1, 2);
  says(write("badt.yml", bad_t), "badt.yml: field T must hold 3 numbers, not 1x2");
  StereoCalibration zero = c;
  zero.T[0] = zero.T[1] = zero.T[2] = 0;
  says(write("zero.yml", opencv_calibration_yaml(zero)), "T is zero");
  StereoCalibration skew = c;
  skew.R[0] = 1.2;
  says(write("skew.yml", opencv_calibration_yaml(skew)), "R is not a rotation");
  StereoCalibration nof = c;
  nof.left.K[0] = -700;
  says(write("nof.yml", opencv_calibration_yaml(nof)), "left camera's focal lengths");
  StereoRectification own;
  ASSERT_EQ(stereo_rectify(c, 640, 480, 0.0, &own), "");
  const std::string left = write("l.yaml", ros_camera_info_yaml(c, own, 0));
  says(left, "needs its pair");
  StereoCalibration four = c;  // Kalibr's radtan: four coefficients
  four.left.D.resize(4);
  four.right.D.resize(4);
  std::string why;
  std::string k = kalibr_camchain_yaml(four, &why);
  says(write("omni.yaml", k.replace(k.find("pinhole"), 7, "omni")), "camera_model \"omni\" is not supported");
  std::string fish = kalibr_camchain_yaml(four, &why);
  fish.replace(fish.find("radtan"), 6, "equidistant");
  says(write("fish.yaml", fish.substr(0, fish.find("cam1:")) + "cam1:\n  camera_model: pinhole\n"),
       "fish.yaml cam1: no field intrinsics");
  StereoRectification r;
  ASSERT_EQ(load_stereo_calibration(write("ok.yml", opencv_calibration_yaml(c)), &out), "");
  EXPECT_NE(stereo_rectify(out, 1280, 720, 0.0, &r).find("for 640x480 views, these are 1280x720"), std::string::npos);
  EXPECT_NE(stereo_rectify(out, 640, 480, 1.5, &r).find("alpha"), std::string::npos);
}

// The resampling: an identity map gives the image back; half a pixel to the
// right averages two neighbours (rounded half up); outside is 0.
TEST(Calibration, RemapIsIntegerBilinear) {
  Image<uint32_t> src(4, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) src.at(x, y) = (x * 40u + y * 7u) * 0x01010101u;
  Image<RemapPoint> map(4, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) map.at(x, y) = remap_point(x, y, 4, 2);
  Image<uint32_t> out;
  remap_rgba(src, map, &out);
  EXPECT_EQ(out.pixels, src.pixels);
  map.at(0, 0) = remap_point(0.5, 0, 4, 2);   // (0 + 40) / 2
  map.at(1, 0) = remap_point(1.5, 0.5, 4, 2);  // (40 + 80 + 47 + 87) / 4 = 63.5 -> 64
  map.at(2, 0) = remap_point(-0.1, 0, 4, 2);
  map.at(3, 0) = remap_point(3, 1, 4, 2);      // the last pixel itself
  remap_rgba(src, map, &out);
  EXPECT_EQ(out.at(0, 0), 20u * 0x01010101u);
  EXPECT_EQ(out.at(1, 0), 64u * 0x01010101u);
  EXPECT_EQ(out.at(2, 0), 0u);
  EXPECT_EQ(out.at(3, 0), src.at(3, 1));
}

StereoCalibration small_rig() { return example_rig(320, 240); }

// bad-2 (error above 2 pixels, invalid counted as bad) over the pixels at
// least `margin` from the border whose match is inside the right view.
double bad2(const Image<uint16_t>& q4, double truth, int margin) {
  size_t n = 0, bad = 0;
  for (int y = margin; y < q4.height - margin; ++y)
    for (int x = margin + static_cast<int>(truth); x < q4.width - margin; ++x) {
      ++n;
      const uint16_t v = q4.at(x, y);
      bad += v == 0 || std::fabs(v / 16.0 - truth) > 2.0;
    }
  return 100.0 * bad / n;
}

// A plane seen through the distorted, turned cameras: matched after
// rectification, its disparity is f * B / Z; matched as the cameras deliver
// the views, it is not.
TEST(Calibration, RectifiedMatchingFindsThePlane) {
  const StereoCalibration c = small_rig();
  StereoRectification r;
  ASSERT_EQ(stereo_rectify(c, 320, 240, 0.0, &r), "");
  const double depth = r.focal() * r.baseline() / 21.0;  // 21 pixels of disparity
  const RigScene scene = render_plane_through_rig(c, r, depth, 11);
  EXPECT_NEAR(scene.disparity, 21.0, 1e-9);
  Params p;
  p.max_disparity = 48;
  p.rectification = make_rectification_maps(c, r);
  Image<uint16_t> q4(320, 240);
  Outputs o;
  o.disparity_q4 = q4.view();
  {
    Matcher m(p);
    ASSERT_EQ(m.process(rgba_view(scene.left), rgba_view(scene.right), o), "");
  }
  const double rectified = bad2(q4, scene.disparity, 12);
  p.rectification.reset();
  {
    Matcher m(p);
    ASSERT_EQ(m.process(rgba_view(scene.left), rgba_view(scene.right), o), "");
  }
  const double raw = bad2(q4, scene.disparity, 12);
  EXPECT_LT(rectified, 1.0);
  EXPECT_GT(raw, 10 * rectified + 5.0);
  std::printf("bad-2 rectified %.3f %%, as delivered %.3f %%\n", rectified, raw);
  // Maps of another size are refused by name.
  p.rectification = make_rectification_maps(c, r);
  Matcher m(p);
  Image<uint32_t> other(160, 120);
  EXPECT_NE(m.process(rgba_view(other), rgba_view(other), o).find("rectification maps are for 320x240"),
            std::string::npos);
}

// output-mode=rectified's engine side: the CPU engine writes both views as
// stage 0 makes them (or as stage 1 reads them without maps), left first,
// beside each other or one above the other, in the output's byte order.
TEST(Calibration, EngineOutputsTheViews) {
  const StereoCalibration c = small_rig();
  StereoRectification r;
  ASSERT_EQ(stereo_rectify(c, 320, 240, 0.0, &r), "");
  const RigScene scene = render_plane_through_rig(c, r, r.focal() * r.baseline() / 21.0, 5);
  const FrameView in[2] = {rgba_view(scene.left), rgba_view(scene.right)};
  Params p;
  p.max_disparity = 48;
  p.rectification = make_rectification_maps(c, r);
  for (bool maps : {true, false}) {
    Params q = p;
    if (!maps) q.rectification.reset();
    std::unique_ptr<Engine> e = make_cpu_engine(q);
    Image<uint32_t> want[2];
    for (int v = 0; v < 2; ++v) {
      if (maps)
        rectify_view(in[v], q.rectification->map[v], want[v]);
      else
        convert_to_rgb(in[v], want[v]);
    }
    for (ViewsOutput layout : {ViewsOutput::SideBySide, ViewsOutput::TopBottom})
      for (OutputFormat f : {OutputFormat::RGBA, OutputFormat::BGRx}) {
        EncodeParams enc;
        enc.format = f;
        enc.views = layout;
        const bool sbs = layout == ViewsOutput::SideBySide;
        Image<uint32_t> out(sbs ? 640 : 320, sbs ? 240 : 480, 0x12345678u);
        OutputFrame o{reinterpret_cast<uint8_t*>(out.pixels.data()), out.width * 4, out.width, out.height};
        ASSERT_EQ(e->process(in[0], in[1], enc, o), "");
        size_t differ = 0;
        for (int v = 0; v < 2; ++v)
          for (int y = 0; y < 240; ++y)
            for (int x = 0; x < 320; ++x) {
              const uint32_t rgb = want[v].at(x, y);
              const uint32_t r8 = rgb & 255, g8 = rgb >> 8 & 255, b8 = rgb >> 16 & 255;
              const uint32_t px = f == OutputFormat::RGBA ? (r8 | g8 << 8 | b8 << 16 | 255u << 24)
                                                          : (b8 | g8 << 8 | r8 << 16 | 255u << 24);
              differ += out.at(x + (sbs && v ? 320 : 0), y + (!sbs && v ? 240 : 0)) != px;
            }
        EXPECT_EQ(differ, 0u) << (maps ? "rectified " : "as delivered ") << (sbs ? "side by side " : "top-bottom ")
                              << output_format_name(f);
        EXPECT_EQ(e->stats().matched_pixels, 0u);
      }
  }
  // Rectified views differ from the views as delivered (the rig turns and
  // distorts them), and the output's size and format are checked.
  std::unique_ptr<Engine> e = make_cpu_engine(p);
  EncodeParams enc;
  enc.format = OutputFormat::RGBA;
  enc.views = ViewsOutput::SideBySide;
  Image<uint32_t> out(320, 240);
  OutputFrame o{reinterpret_cast<uint8_t*>(out.pixels.data()), 320 * 4, 320, 240};
  EXPECT_NE(e->process(in[0], in[1], enc, o).find("both views side by side: 640x240"), std::string::npos);
  Image<uint8_t> gray(640, 240);
  enc.format = OutputFormat::Gray8;
  OutputFrame g{gray.pixels.data(), 640, 640, 240};
  EXPECT_NE(e->process(in[0], in[1], enc, g).find("RGBA, BGRA, RGBx or BGRx"), std::string::npos);
}

}  // namespace
}  // namespace cs
