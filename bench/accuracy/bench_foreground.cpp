// cs-bench-foreground: the background-model mode (paper section 3.2) on a
// generated surveillance-like sequence with exact truth: a textured object
// moving over a static textured background (common/synthetic.h,
// make_sequence_frame).
//
// The CPU reference (cs::Matcher) first learns the empty scene for
// warmup_frames frames (the object parked outside, height 0), then sees the
// object move. Over the moving frames it reports:
//   - mask IoU: foreground mask vs the object's true pixels (left view);
//   - foreground fraction found, and the object's true fraction;
//   - tested ratio: background tests made / tests a per-pixel test of every
//     pixel at every level would make (FrameStats), i.e. the work the
//     coarse-to-fine test saves;
//   - bad-1 / bad-2 inside the object (missing or off by more than 1 / 2 px);
//   - disparities reported outside the foreground mask (must be 0);
//   - ms per frame, and the same for full-frame matching (background off)
//     on the same frames, with its own bad-1 / bad-2 inside the object.
// One markdown row per run; --header prints the table header first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "stereo.h"
#include "synthetic.h"

namespace {

struct Options {
  int width = 640, height = 480, disparities = 64, levels = 0;
  int object_w = 0, object_h = 0, speed = 6;
  int d_background = 0, d_object = 0;
  int frames = 60, warmup = 30;
  bool header = false;
};

struct Accumulated {
  double iou_sum = 0, iou_min = 1, fg_sum = 0, truth_sum = 0, tested_sum = 0, ms_sum = 0;
  long inside = 0, bad1 = 0, bad2 = 0, outside_valid = 0;
  int frames = 0;
};

const char* usage =
    "usage: cs-bench-foreground [--size WxH] [--disparities D] [--levels L] [--object WxH]\n"
    "         [--speed PX] [--frames N] [--warmup N] [--header]\n"
    "  defaults: 640x480, 64 disparities, levels 0 (automatic), object a quarter of each side,\n"
    "  6 px per frame, background at D/8 and object at 5D/8, 60 moving frames after 30 warm-up\n";

bool parse(int argc, char** argv, Options& o, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    auto need = [&]() {
      if (!has_value) error = a + " needs a value";
      return has_value;
    };
    if (a == "--header") {
      o.header = true;
    } else if (a == "--size" || a == "--object") {
      if (!need()) return false;
      int w = 0, h = 0;
      if (std::sscanf(argv[++i], "%dx%d", &w, &h) != 2 || w < 1 || h < 1) {
        error = a + " wants WxH, got '" + argv[i] + "'";
        return false;
      }
      (a == "--size" ? o.width : o.object_w) = w;
      (a == "--size" ? o.height : o.object_h) = h;
    } else if (a == "--disparities" || a == "--levels" || a == "--speed" || a == "--frames" || a == "--warmup") {
      if (!need()) return false;
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > 100000) {
        error = a + " wants a non-negative integer, got '" + argv[i] + "'";
        return false;
      }
      if (a == "--disparities") o.disparities = static_cast<int>(v);
      if (a == "--levels") o.levels = static_cast<int>(v);
      if (a == "--speed") o.speed = static_cast<int>(v);
      if (a == "--frames") o.frames = static_cast<int>(v);
      if (a == "--warmup") o.warmup = static_cast<int>(v);
    } else {
      error = "unknown option '" + a + "'";
      return false;
    }
  }
  if (o.frames < 1) {
    error = "--frames must be at least 1";
    return false;
  }
  if (!o.object_w) o.object_w = o.width / 4, o.object_h = o.height / 4;
  o.d_background = std::max(1, o.disparities / 8);
  o.d_object = std::max(o.d_background + 1, o.disparities * 5 / 8);
  if (o.object_w + o.d_object > o.width || o.object_h > o.height) {
    error = "the object (" + std::to_string(o.object_w) + "x" + std::to_string(o.object_h) + " at disparity " +
            std::to_string(o.d_object) + ") does not fit the view";
    return false;
  }
  return true;
}

// Runs one frame and folds its scores into acc. Returns the error, if any.
std::string frame(cs::Matcher& m, const cs::SyntheticPair& s, const Options& o, bool measure, Accumulated& acc) {
  cs::Image<uint16_t> q4(o.width, o.height);
  cs::Image<uint8_t> fg(o.width, o.height);
  cs::Outputs out;
  out.disparity_q4 = q4.view();
  out.foreground = fg.view();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = m.process(cs::rgba_view(s.left_rgba), cs::rgba_view(s.right_rgba), out);
  const auto t1 = std::chrono::steady_clock::now();
  if (!err.empty() || !measure) return err;
  const bool model = m.params().background;
  long inter = 0, uni = 0, truth_n = 0, got_n = 0;
  for (int y = 0; y < o.height; ++y)
    for (int x = 0; x < o.width; ++x) {
      const bool truth = s.moving.at(x, y) != 0;
      const bool got = model ? fg.at(x, y) != 0 : true;
      inter += truth && got;
      uni += truth || got;
      truth_n += truth;
      got_n += got;
      const uint16_t d = q4.at(x, y);
      if (model && !got && d != 0) ++acc.outside_valid;
      if (truth) {
        ++acc.inside;
        const double e = std::fabs(d / 16.0 - o.d_object);
        acc.bad1 += d == 0 || e > 1.0;
        acc.bad2 += d == 0 || e > 2.0;
      }
    }
  const double n = static_cast<double>(o.width) * o.height;
  const double iou = uni ? static_cast<double>(inter) / uni : 1.0;
  acc.iou_sum += iou;
  acc.iou_min = std::min(acc.iou_min, iou);
  acc.fg_sum += got_n / n;
  acc.truth_sum += truth_n / n;
  const cs::FrameStats& st = m.stats();
  acc.tested_sum += st.background_tests_full ? static_cast<double>(st.background_tests) / st.background_tests_full : 1.0;
  acc.ms_sum += std::chrono::duration<double, std::milli>(t1 - t0).count();
  ++acc.frames;
  return "";
}

std::string run(const Options& o, bool background, int& levels_used, Accumulated& acc) {
  cs::Params p;
  p.max_disparity = o.disparities;
  p.levels = o.levels;
  p.background = background;
  p.warmup_frames = o.warmup;
  if (const std::string e = p.validate_for_size(o.width, o.height); !e.empty()) return e;
  levels_used = cs::resolve_levels(p, o.width, o.height);
  cs::Matcher m(p);
  const uint32_t seed = 5;
  if (background) {
    // Warm-up (and one settled frame) on the empty scene: height 0 parks the object away.
    for (int i = 0; i <= o.warmup; ++i) {
      const cs::SyntheticPair s = cs::make_sequence_frame(o.width, o.height, 0, o.d_background, o.d_object,
                                                          o.object_w, 0, 0, 0, seed);
      if (std::string e = frame(m, s, o, false, acc); !e.empty()) return e;
    }
  }
  for (int i = 1; i <= o.frames; ++i) {
    const cs::SyntheticPair s = cs::make_sequence_frame(o.width, o.height, i, o.d_background, o.d_object,
                                                        o.object_w, o.object_h, o.speed, 0, seed);
    if (std::string e = frame(m, s, o, true, acc); !e.empty()) return e;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error)) {
    std::fprintf(stderr, "cs-bench-foreground: %s\n%s", error.c_str(), usage);
    return 2;
  }
  if (o.header) {
    std::fputs(
        "| size | D | levels (used) | object, speed | mask IoU mean (min) | fg % found / true | tested ratio | "
        "bad-1 % in object | bad-2 % in object | disparities outside mask | ms/frame | full-frame: bad-1 % / bad-2 % in "
        "object, ms/frame |\n",
        stdout);
    std::fputs("| --- | ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n", stdout);
  }
  Accumulated bg, full;
  int levels_used = 0;
  if (!(error = run(o, true, levels_used, bg)).empty() || !(error = run(o, false, levels_used, full)).empty()) {
    std::fprintf(stderr, "cs-bench-foreground: %s\n", error.c_str());
    return 1;
  }
  const double f = bg.frames;
  char levels[32];
  if (o.levels) std::snprintf(levels, sizeof levels, "%d (%d)", o.levels, levels_used);
  else std::snprintf(levels, sizeof levels, "auto (%d)", levels_used);
  std::printf(
      "| %dx%d | %d | %s | %dx%d at d=%d over d=%d, %d px/frame | %.3f (%.3f) | %.2f / %.2f | %.3f | %.2f | %.2f | %ld | "
      "%.1f | %.2f / %.2f, %.1f |\n",
      o.width, o.height, o.disparities, levels, o.object_w, o.object_h, o.d_object, o.d_background, o.speed,
      bg.iou_sum / f, bg.iou_min, 100 * bg.fg_sum / f, 100 * bg.truth_sum / f, bg.tested_sum / f,
      100.0 * bg.bad1 / bg.inside, 100.0 * bg.bad2 / bg.inside, bg.outside_valid, bg.ms_sum / f,
      100.0 * full.bad1 / full.inside, 100.0 * full.bad2 / full.inside, full.ms_sum / full.frames);
  return 0;
}
