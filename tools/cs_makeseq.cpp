// cs-makeseq: writes the built-in example stereo sequence (a textured object
// moving in front of a textured wall, common/synthetic.h) as numbered PNGs,
// plus the exact ground truth of frame 0, so pipelines such as
//   multifilesrc location=DIR/sbs_%04d.png caps=image/png ! pngdec ! ...
// and the quickstart have input without downloading anything.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "args.h"
#include "imageio.h"
#include "synthetic.h"

namespace {

const char* kUsage =
    "usage: cs-makeseq --out DIR [options]\n"
    "  --out DIR                       output folder (created if missing)\n"
    "  --width W, --height H           size of one view (default 640 x 360)\n"
    "  --frames N                      number of frames (default 90)\n"
    "  --layout side-by-side|top-bottom|separate   (default side-by-side)\n"
    "                                  files: sbs_%04d.png, tb_%04d.png, or\n"
    "                                  left_%04d.png + right_%04d.png\n"
    "  --background-disparity D        wall disparity in pixels (default 16)\n"
    "  --object-disparity D            object disparity in pixels (default 40)\n"
    "  --object-width W, --object-height H   (default width / 4, height / 3)\n"
    "  --speed S                       object motion, pixels per frame (default 4)\n"
    "  --seed N                        texture seed (default 1)\n"
    "Also writes gt_0000.png: frame 0's left-view disparity, 16-bit, d * 16,\n"
    "0 = unknown (score with cs-score --gt-scale 16).\n";

std::string numbered(const std::string& dir, const char* prefix, int index) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%04d.png", prefix, index);
  return (std::filesystem::path(dir) / name).string();
}

// Copies a packed RGBA view (bytes R, G, B, A) into an RGB picture at
// (x0, y0).
void place_rgb(const cs::Image<uint32_t>& rgba, cs::tools::Picture& dst, int x0, int y0) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(rgba.pixels.data());
  for (int y = 0; y < rgba.height; ++y)
    for (int x = 0; x < rgba.width; ++x)
      for (int c = 0; c < 3; ++c)
        dst.samples[(static_cast<size_t>(y0 + y) * dst.width + x0 + x) * 3 + c] =
            bytes[(static_cast<size_t>(y) * rgba.width + x) * 4 + c];
}

cs::tools::Picture rgb_picture(int width, int height) {
  cs::tools::Picture p;
  p.width = width;
  p.height = height;
  p.channels = 3;
  p.bit_depth = 8;
  p.max_value = 255;
  p.samples.assign(static_cast<size_t>(width) * height * 3, 0);
  return p;
}

// Renders frame `index` and writes its files (and the ground truth of
// frame 0). Empty string on success.
std::string write_frame(const std::string& dir, const std::string& layout, int index, int width, int height,
                        int d_background, int d_object, int object_w, int object_h, int speed, uint32_t seed) {
  using namespace cs::tools;
  const cs::SyntheticPair pair =
      cs::make_sequence_frame(width, height, index, d_background, d_object, object_w, object_h, speed, 0, seed);
  std::string error;
  if (layout == "separate") {
    Picture view = rgb_picture(width, height);
    place_rgb(pair.left_rgba, view, 0, 0);
    error = write_png(numbered(dir, "left", index), view);
    if (error.empty()) {
      place_rgb(pair.right_rgba, view, 0, 0);
      error = write_png(numbered(dir, "right", index), view);
    }
  } else {
    const bool sbs = layout == "side-by-side";
    Picture both = rgb_picture(sbs ? 2 * width : width, sbs ? height : 2 * height);
    place_rgb(pair.left_rgba, both, 0, 0);
    place_rgb(pair.right_rgba, both, sbs ? width : 0, sbs ? 0 : height);
    error = write_png(numbered(dir, sbs ? "sbs" : "tb", index), both);
  }
  if (error.empty() && index == 0) {
    cs::Image<uint16_t> truth_q4(width, height, 0);
    for (size_t k = 0; k < truth_q4.pixels.size(); ++k) {
      const float d = pair.disparity.pixels[k];
      if (d < 0.0f) continue;  // unknown: hidden in the right view
      const long q4 = std::lround(d * 16.0);
      truth_q4.pixels[k] = static_cast<uint16_t>(q4 < 1 ? 1 : (q4 > 65535 ? 65535 : q4));
    }
    error = write_png(numbered(dir, "gt", 0), picture_from_q4(truth_q4));
  }
  return error;
}

int run(int argc, char** argv) {
  using namespace cs::tools;
  Args args;
  std::string error = args.parse(argc, argv,
                                 {{"out", true}, {"width", true}, {"height", true}, {"frames", true}, {"layout", true},
                                  {"background-disparity", true}, {"object-disparity", true}, {"object-width", true},
                                  {"object-height", true}, {"speed", true}, {"seed", true}, {"help", false}});
  if (args.has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  int width = 640, height = 360, frames = 90, d_background = 16, d_object = 40, speed = 4, seed = 1;
  int object_w = -1, object_h = -1;
  const std::string layout = args.text("layout", "side-by-side");
  if (error.empty()) {
    args.integer("width", width, cs::kMinViewWidth, 8192, error);
    args.integer("height", height, cs::kMinViewHeight, 8192, error);
    args.integer("frames", frames, 1, 100000, error);
    args.integer("background-disparity", d_background, 1, 4095, error);
    args.integer("object-disparity", d_object, 1, 4095, error);
    args.integer("object-width", object_w, 1, 8192, error);
    args.integer("object-height", object_h, 1, 8192, error);
    args.integer("speed", speed, 0, 8192, error);
    args.integer("seed", seed, 0, 2147483647, error);
    if (layout != "side-by-side" && layout != "top-bottom" && layout != "separate")
      Args::add(error, "--layout must be side-by-side, top-bottom or separate, not '" + layout + "'");
    if (!args.has("out")) Args::add(error, "--out is required");
  }
  if (object_w < 0) object_w = width / 4;
  if (object_h < 0) object_h = height / 3;
  if (error.empty()) {
    if (d_background >= width || d_object >= width)
      Args::add(error, "disparities must be smaller than the width (" + std::to_string(width) + ")");
    if (object_w > width || object_h > height) Args::add(error, "the object must fit in the view");
  }
  if (!error.empty()) {
    std::fprintf(stderr, "cs-makeseq: %s\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }

  const std::string dir = args.text("out");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "cs-makeseq: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
    return kExitFailure;
  }

  // Frames are independent: render and compress them on every core.
  std::atomic<int> next{0};
  std::mutex error_lock;
  std::string first_error;
  auto worker = [&]() {
    for (int i = next++; i < frames; i = next++) {
      const std::string e = write_frame(dir, layout, i, width, height, d_background, d_object, object_w, object_h,
                                        speed, static_cast<uint32_t>(seed));
      if (!e.empty()) {
        std::lock_guard<std::mutex> hold(error_lock);
        if (first_error.empty()) first_error = e;
        next = frames;  // stop the others early
      }
    }
  };
  const unsigned cores = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < cores && static_cast<int>(t) < frames; ++t) workers.emplace_back(worker);
  worker();
  for (std::thread& t : workers) t.join();
  if (!first_error.empty()) {
    std::fprintf(stderr, "cs-makeseq: %s\n", first_error.c_str());
    return kExitFailure;
  }
  std::printf("wrote %d %s frames of %d x %d (disparities %d and %d) and gt_0000.png to %s\n", frames, layout.c_str(),
              width, height, d_background, d_object, dir.c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cs-makeseq: %s\n", e.what());
    return cs::tools::kExitFailure;
  }
}
