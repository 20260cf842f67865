// cs-bench-rig: rectification's accuracy on a scene with exact truth (issue
// 40), through the CPU reference (the CUDA engine gives the same bytes).
//
// A textured plane facing the rectified cameras at a known depth, rendered
// through the example rig's distorted, turned cameras (common/rig_scene.h;
// k3 = 0, so that Kalibr's four-coefficient radtan model holds it too). The
// rig's calibration is written in the three formats the element reads
// (OpenCV YAML, a ROS camera_info pair, a Kalibr camchain), each read back
// and rectified as the element does it (alpha 0). For each size and plane
// depth one markdown row:
//   - the plane's true disparity once rectified (f * B / Z) and its depth;
//   - bad-2 of the disparity (missing or off by more than 2 px, over the
//     plane's pixels at least 12 from the border whose match is inside the
//     right view), rectified, and the same views matched as delivered;
//   - depth error in mm as output-mode=depth gives it (Z = f B / d from the
//     file, rounded to whole mm): mean and 95th percentile of |Z - truth|
//     over the valid pixels of the same set;
//   - whether the three formats gave byte-identical disparity maps.
// Usage: cs-bench-rig [--sizes 320x240,640x480,1280x720]
//        [--disparities 8,21,40] [--max-disparity 64]
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "calibration.h"
#include "calibration_text.h"
#include "rectify.h"
#include "rig_scene.h"
#include "stereo.h"
#include "stereo_math.h"
#include "synthetic.h"

namespace {

std::vector<int> numbers(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    v.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    if (end == p) break;
    p = *end == ',' || *end == 'x' ? end + 1 : end;
  }
  return v;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/cs-bench-rig-" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

struct Score {
  double bad2 = 0, mean_mm = 0, p95_mm = 0;
};

Score score(const cs::Image<uint16_t>& q4, double truth_d, double depth_mm, double k_q4) {
  constexpr int kMargin = 12;
  size_t n = 0, bad = 0;
  std::vector<double> err;
  for (int y = kMargin; y < q4.height - kMargin; ++y)
    for (int x = kMargin + static_cast<int>(std::ceil(truth_d)); x < q4.width - kMargin; ++x) {
      ++n;
      const int v = q4.at(x, y);
      bad += v == 0 || std::fabs(v / 16.0 - truth_d) > 2.0;
      if (v > 0) err.push_back(std::fabs(cs::depth_mm_from_q4(v, k_q4) - depth_mm));
    }
  Score s;
  s.bad2 = n ? 100.0 * bad / n : 100.0;
  if (!err.empty()) {
    double sum = 0;
    for (double e : err) sum += e;
    s.mean_mm = sum / err.size();
    std::sort(err.begin(), err.end());
    s.p95_mm = err[std::min(err.size() - 1, err.size() * 95 / 100)];
  }
  return s;
}

std::string match(const cs::Params& p, const cs::RigScene& scene, cs::Image<uint16_t>* q4) {
  cs::Matcher m(p);
  *q4 = cs::Image<uint16_t>(scene.left.width, scene.left.height);
  cs::Outputs o;
  o.disparity_q4 = q4->view();
  return m.process(cs::rgba_view(scene.left), cs::rgba_view(scene.right), o);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {320, 240, 640, 480, 1280, 720}, disparities = {8, 21, 40};
  int max_disparity = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes = numbers(argv[++i]);
    } else if (a == "--disparities" && i + 1 < argc) {
      disparities = numbers(argv[++i]);
    } else if (a == "--max-disparity" && i + 1 < argc) {
      max_disparity = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: cs-bench-rig [--sizes WxH,...] [--disparities D,...] [--max-disparity N]\n");
      return 2;
    }
  }
  if (sizes.empty() || sizes.size() % 2 != 0) {
    std::fprintf(stderr, "cs-bench-rig: --sizes takes WxH[,WxH...]\n");
    return 2;
  }
  std::printf("| views | disparity | depth (mm) | bad-2 rectified | bad-2 as delivered | depth error mean (mm) | "
              "depth error p95 (mm) | formats identical |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  int failures = 0;
  for (size_t s = 0; s + 1 < sizes.size(); s += 2) {
    const int w = sizes[s], h = sizes[s + 1];
    cs::StereoCalibration rig = cs::example_rig(w, h);
    rig.left.D.resize(4);  // k3 = 0: Kalibr's radtan holds it
    rig.right.D.resize(4);
    cs::StereoRectification r;
    std::string e = cs::stereo_rectify(rig, w, h, 0.0, &r);
    std::string why;
    const std::string files[3] = {
        write_temp("stereo.yml", cs::opencv_calibration_yaml(rig)),
        write_temp("left.yaml", cs::ros_camera_info_yaml(rig, r, 0)) + "," +
            write_temp("right.yaml", cs::ros_camera_info_yaml(rig, r, 1)),
        write_temp("camchain.yaml", cs::kalibr_camchain_yaml(rig, &why)),
    };
    if (e.empty() && !why.empty()) e = why;
    for (int d : disparities) {
      const double depth = r.focal() * r.baseline() / d;  // metres
      const cs::RigScene scene = cs::render_plane_through_rig(rig, r, depth, 17 + d);
      cs::Params p;
      p.max_disparity = max_disparity;
      cs::Image<uint16_t> maps_q4[3], raw_q4;
      double k_q4 = 0;
      for (int f = 0; f < 3 && e.empty(); ++f) {
        cs::StereoCalibration read;
        cs::StereoRectification rr;
        e = cs::load_stereo_calibration(files[f], &read);
        if (e.empty()) e = cs::stereo_rectify(read, w, h, 0.0, &rr);
        if (!e.empty()) break;
        p.rectification = cs::make_rectification_maps(read, rr);
        e = match(p, scene, &maps_q4[f]);
        k_q4 = rr.baseline() * 1000.0 * rr.focal() * 16.0;
      }
      p.rectification.reset();
      if (e.empty()) e = match(p, scene, &raw_q4);
      if (!e.empty()) {
        std::fprintf(stderr, "cs-bench-rig: %dx%d, d %d: %s\n", w, h, d, e.c_str());
        return 1;
      }
      const bool identical = maps_q4[0].pixels == maps_q4[1].pixels && maps_q4[0].pixels == maps_q4[2].pixels;
      failures += !identical;
      const Score rect = score(maps_q4[0], scene.disparity, depth * 1000.0, k_q4);
      const Score raw = score(raw_q4, scene.disparity, depth * 1000.0, k_q4);
      std::printf("| %dx%d | %d | %.0f | %.2f %% | %.2f %% | %.1f | %.1f | %s |\n", w, h, d, depth * 1000.0,
                  rect.bad2, raw.bad2, rect.mean_mm, rect.p95_mm, identical ? "yes" : "NO");
    }
    for (const std::string& f : files)
      for (size_t a = 0, b; a <= f.size(); a = b + 1) {
        b = f.find(',', a);
        if (b == std::string::npos) b = f.size();
        unlink(f.substr(a, b - a).c_str());
      }
  }
  return failures ? 1 : 0;
}
