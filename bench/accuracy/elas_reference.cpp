// cs-bench-elas-reference: ELAS's CPU reference (common/elas_dense.h) on a
// pair of files, for its accuracy before the method has kernels (issue 38):
// the left map as cs-stereo writes one (16-bit PNG, d * 16, 0 = none), to be
// scored by cs-score. One thread; the time is the reference's, not a goal.
//
//   cs-bench-elas-reference --left L --right R --out D.png [--scale 1|2]
//       [--max-disparity D] [--support-ratio PCT] [--no-fill]
//
// --scale 2 matches the half-size views (2x2 averages, as cs-stereo's); the
// views go to grey by the engine's luma rule.
#include <chrono>
#include <cstdio>
#include <string>

#include "area_resize.h"
#include "args.h"
#include "elas_dense.h"
#include "imageio.h"
#include "stages.h"

namespace {

// The matching intensity as the engine and cs-stereo make it (stage 1's
// convert_to_gray), halved by the pyramid's 2x2 averages for --scale 2.
std::string grey_view(const std::string& path, int scale, cs::Image<uint8_t>& out) {
  if (std::string e = cs::tools::read_grey(path, out); !e.empty()) return e;
  if (scale == 2) {
    const cs::Image<uint8_t> full = out;
    cs::downsample(full, out);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using cs::tools::Args;
  Args args;
  std::string error = args.parse(argc, argv,
                                 {{"left", true}, {"right", true}, {"out", true}, {"scale", true},
                                  {"max-disparity", true}, {"support-ratio", true}, {"no-fill", false}});
  int scale = 1, max_disparity = 256, ratio = 85;
  args.integer("scale", scale, 1, 2, error);
  args.integer("max-disparity", max_disparity, 1, 16384, error);
  args.integer("support-ratio", ratio, 1, 100, error);
  for (const char* need : {"left", "right", "out"})
    if (!args.has(need)) Args::add(error, std::string("--") + need + " is required");
  if (!error.empty()) {
    std::fprintf(stderr, "cs-bench-elas-reference: %s\n", error.c_str());
    return cs::tools::kExitUsage;
  }
  cs::Image<uint8_t> left, right;
  for (auto [path, view] : {std::pair{args.text("left"), &left}, std::pair{args.text("right"), &right}})
    if (std::string e = grey_view(path, scale, *view); !e.empty()) {
      std::fprintf(stderr, "cs-bench-elas-reference: %s\n", e.c_str());
      return cs::tools::kExitFailure;
    }
  cs::ElasParams p;
  p.support.max_disparity = max_disparity;
  p.support.support_ratio_pct = ratio;
  p.fill_all = !args.has("no-fill");
  const auto t0 = std::chrono::steady_clock::now();
  cs::Image<int16_t> d;
  cs::elas_match(left, right, p, d);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  cs::Image<uint16_t> q4(d.width, d.height);
  size_t valid = 0;
  for (size_t i = 0; i < d.pixels.size(); ++i) {
    q4.pixels[i] = d.pixels[i] > 0 ? static_cast<uint16_t>(d.pixels[i] * 16) : 0;
    valid += d.pixels[i] >= 0;
  }
  if (std::string e = cs::tools::write_image(args.text("out"), cs::tools::picture_from_q4(q4)); !e.empty()) {
    std::fprintf(stderr, "cs-bench-elas-reference: %s\n", e.c_str());
    return cs::tools::kExitFailure;
  }
  std::printf("result size=%dx%d D=%d support_ratio=%d fill=%d ms=%.0f density=%.2f\n", d.width, d.height,
              max_disparity, ratio, p.fill_all ? 1 : 0, ms, d.pixels.empty() ? 0.0 : 100.0 * valid / d.pixels.size());
  return cs::tools::kExitOk;
}
