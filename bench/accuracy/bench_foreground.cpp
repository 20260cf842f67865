// cs-bench-foreground: the background-model mode (paper section 3.2) on a
// sequence with exact truth, through the CPU reference (cs::Matcher).
//
// Generated mode (the default): a textured object moving over a static
// textured background (common/synthetic.h, make_sequence_frame). The model
// first learns the empty scene for warmup_frames frames (the object parked
// outside, height 0), then sees the object move. Over the moving frames it
// reports:
//   - mask IoU: foreground mask vs the object's true pixels (left view);
//   - foreground fraction found, and the object's true fraction;
//   - matched work: the pixels given candidates over the levels against a
//     full frame's (FrameStats matched_pixels / matched_pixels_full), i.e.
//     the matching the model leaves;
//   - bad-1 / bad-2 inside the object (missing or off by more than 1 / 2 px);
//   - disparities reported outside the foreground mask (must be 0);
//   - ms per frame, and the same for full-frame matching (background off)
//     on the same frames, with its own bad-1 / bad-2 inside the object.
// One markdown row per run; --header prints the table header first.
//
// Real-content mode (--left/--right, or --flat): a static real pair (read in
// colour, area-averaged to --size) with textured objects crossing it from
// the left edge (common/moving_objects.h, crossing_objects_spec: patches of
// the pair itself, flipped, at --object-disparity) and camera noise. The
// warm-up frames show the pair and the noise alone; over the frames after
// them it reports:
//   - mask IoU per frame (left view) over the frames with an object in
//     view: mean and worst (--per-frame prints every frame);
//   - false foreground: mask pixels outside the objects, per frame, mean and
//     worst, as pixels and as a fraction of the frame (with --objects 0 the
//     false foreground of noise alone);
//   - object bad-2: object pixels whose match lies in the right view and
//     whose disparity is missing or off by more than 2 px, with the model on
//     and on the same frames with the model off (full-frame matching);
//   - uncovered recovery: for each pixel that an object stops covering at
//     frame t, the frames until the mask says background there again (0:
//     at once), mean and max; pixels covered again first, and pixels still
//     foreground at the end of the run, counted apart.
// A readable report, then one `result` line of key=value pairs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "moving_objects.h"
#include "stereo.h"
#include "synthetic.h"
#if CS_BENCH_FILES
#include "area_resize.h"
#endif

namespace {

struct Options {
  int width = 640, height = 480, disparities = 64, levels = 0;
  int object_w = 0, object_h = 0, speed = 6;
  int d_background = 0, d_object = 0;
  int frames = 60, warmup = 30;
  bool header = false;
  // Real-content mode.
  std::string left, right;
  int flat = -1;  // >= 0: a uniform grey pair of this level instead of files
  double noise = 2.0;
  int objects = 1, object_disparity = -1;  // -1: 3/4 of the range
  double object_speed = 0;                 // 0: the crossing spec's (width / 40)
  uint64_t seed = 1;
  bool per_frame = false, frames_given = false, speed_given = false, object_given = false;
  bool real() const { return !left.empty() || !right.empty() || flat >= 0; }
};

struct Accumulated {
  double iou_sum = 0, iou_min = 1, fg_sum = 0, truth_sum = 0, matched_sum = 0, ms_sum = 0;
  long inside = 0, bad1 = 0, bad2 = 0, outside_valid = 0;
  int frames = 0;
};

const char* usage =
    "usage: cs-bench-foreground [--size WxH] [--disparities D] [--levels L] [--object WxH]\n"
    "         [--speed PX] [--frames N] [--warmup N] [--header]\n"
    "  generated sequence; defaults: 640x480, 64 disparities, levels 0 (automatic), object a quarter\n"
    "  of each side, 6 px per frame, background at D/8 and object at 5D/8, 60 moving frames after 30 warm-up\n"
    "       cs-bench-foreground (--left FILE --right FILE | --flat LEVEL) [--size WxH] [--disparities D]\n"
    "         [--levels L] [--objects N] [--object-disparity D] [--speed PX] [--noise SIGMA] [--warmup N]\n"
    "         [--frames N] [--seed S] [--per-frame]\n"
    "  real content: the pair (colour, area-averaged to --size) with N objects crossing it from the left\n"
    "  edge; defaults: 640x480, 64 disparities, 1 object at 3D/4, width/40 px per frame, noise sigma 2,\n"
    "  30 warm-up frames, moving frames until the last object has left plus 10 (60 with --objects 0);\n"
    "  --flat LEVEL: a uniform grey pair instead of files (noise alone: needs --objects 0)\n";

bool parse(int argc, char** argv, Options& o, std::string& error) {
  std::string real_only;  // an option of the real-content mode, if one was given
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
    } else if (a == "--left" || a == "--right") {
      if (!need()) return false;
      (a == "--left" ? o.left : o.right) = argv[++i];
    } else if (a == "--per-frame") {
      o.per_frame = true;
    } else if (a == "--noise") {
      if (!need()) return false;
      char* end = nullptr;
      o.noise = std::strtod(argv[++i], &end);
      if (*end || !(o.noise >= 0 && o.noise <= cs::kMaxNoiseSigma)) {
        error = "--noise wants a sigma from 0 to 64, got '" + std::string(argv[i]) + "'";
        return false;
      }
    } else if (a == "--flat" || a == "--objects" || a == "--object-disparity" || a == "--seed") {
      if (!need()) return false;
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      const long hi = a == "--flat" ? 255 : a == "--objects" ? 64 : a == "--seed" ? 2147483647 : 100000;
      if (*end || v < 0 || v > hi) {
        error = a + " wants an integer from 0 to " + std::to_string(hi) + ", got '" + argv[i] + "'";
        return false;
      }
      if (a == "--flat") o.flat = static_cast<int>(v);
      if (a == "--objects") o.objects = static_cast<int>(v);
      if (a == "--object-disparity") o.object_disparity = static_cast<int>(v);
      if (a == "--seed") o.seed = static_cast<uint64_t>(v);
    } else {
      error = "unknown option '" + a + "'";
      return false;
    }
    if (a == "--frames") o.frames_given = true;
    if (a == "--speed") o.speed_given = true;
    if (a == "--object") o.object_given = true;
    if (a == "--noise" || a == "--objects" || a == "--object-disparity" || a == "--seed" || a == "--per-frame")
      real_only = a;
  }
  if (!o.real() && !real_only.empty()) {
    error = real_only + " belongs to the real-content mode (--left/--right or --flat)";
    return false;
  }
  if (o.real()) {
    if (o.flat < 0 && (o.left.empty() || o.right.empty())) {
      error = "--left and --right go together";
      return false;
    }
    if (o.flat >= 0 && !o.left.empty()) {
      error = "--flat replaces --left/--right: give one or the other";
      return false;
    }
    if (o.flat >= 0 && o.objects > 0) {
      error = "--flat gives the objects the background's own flat texture: use it with --objects 0";
      return false;
    }
    if (o.object_given || o.header) {
      error = "--object and --header belong to the generated sequence";
      return false;
    }
    if (o.object_disparity < 0) o.object_disparity = o.disparities * 3 / 4;
    if (o.speed_given) o.object_speed = o.speed;
    return true;
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
  acc.matched_sum += st.matched_fraction();
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

// ---------------------------------------------------------------- real content

// The background pair at the benchmark's size, packed RGBA.
std::string load_background(const Options& o, cs::Image<uint32_t>& left, cs::Image<uint32_t>& right,
                            std::string& described) {
  if (o.flat >= 0) {
    const uint32_t v = static_cast<uint32_t>(o.flat);
    left = right = cs::Image<uint32_t>(o.width, o.height, v | v << 8 | v << 16 | 0xff000000u);
    described = "flat grey " + std::to_string(o.flat);
    return "";
  }
#if CS_BENCH_FILES
  cs::Image<uint32_t> l, r;
  if (std::string e = cs::tools::read_rgba(o.left, l); !e.empty()) return e;
  if (std::string e = cs::tools::read_rgba(o.right, r); !e.empty()) return e;
  if (l.width != r.width || l.height != r.height)
    return "the left view is " + std::to_string(l.width) + "x" + std::to_string(l.height) + " but the right view is " +
           std::to_string(r.width) + "x" + std::to_string(r.height);
  left = cs::tools::area_resize(l, o.width, o.height);
  right = cs::tools::area_resize(r, o.width, o.height);
  described = o.left + " / " + o.right + " (" + std::to_string(l.width) + "x" + std::to_string(l.height) +
              ", area-averaged in colour)";
  return "";
#else
  (void)left;
  (void)right;
  (void)described;
  return "this build reads no image files (built without libpng): use --flat or the generated mode";
#endif
}

struct FrameScore {
  int t = 0;                    // moving frame
  long truth = 0, found = 0;    // object pixels, mask pixels (left view)
  long inter = 0, false_fg = 0;
  double iou = 1;
  long matchable = 0, bad2_on = 0, bad2_off = 0;  // object pixels whose match is in the right view
  double matched = 1;
};

struct Recovery {
  std::vector<int> uncovered_at;  // per pixel: the moving frame an object left it, -1: none pending
  std::vector<uint8_t> covered;   // per pixel: covered on the previous frame
  long events = 0, recovered = 0, covered_again = 0;
  long frames_sum = 0;
  int frames_max = 0;
  long never() const { return events - recovered - covered_again; }
};

// Object pixels whose match lies in the right view, and how many of them
// have a missing or more-than-2-px-off disparity.
void object_bad2(const cs::MovingObjectsFrame& f, const cs::Image<uint16_t>& q4, long& matchable, long& bad2) {
  matchable = bad2 = 0;
  for (int y = 0; y < f.mask_left.height; ++y)
    for (int x = 0; x < f.mask_left.width; ++x) {
      const int d = f.disparity_left.at(x, y);
      if (d < 0 || x - d < 0) continue;
      ++matchable;
      const uint16_t got = q4.at(x, y);
      bad2 += got == 0 || std::fabs(got / 16.0 - d) > 2.0;
    }
}

// Runs the model over the whole sequence and scores the moving frames; then
// the same moving frames with the model off for their bad-2.
std::string run_real(const Options& o, const cs::Image<uint32_t>& bg_left, const cs::Image<uint32_t>& bg_right,
                     const cs::MovingObjectsSpec& spec, std::vector<FrameScore>& scores, Recovery& rec,
                     double ms[2], int& levels_used) {
  const int W = o.width, H = o.height;
  cs::Params p;
  p.max_disparity = o.disparities;
  p.levels = o.levels;
  p.warmup_frames = o.warmup;
  if (const std::string e = p.validate_for_size(W, H); !e.empty()) return e;
  levels_used = cs::resolve_levels(p, W, H);
  cs::Image<uint16_t> q4(W, H);
  cs::Image<uint8_t> fg(W, H);
  cs::Outputs out;
  out.disparity_q4 = q4.view();
  out.foreground = fg.view();
  cs::MovingObjectsFrame f;
  rec.uncovered_at.assign(static_cast<size_t>(W) * H, -1);
  rec.covered.assign(static_cast<size_t>(W) * H, 0);
  ms[0] = ms[1] = 0;
  for (int model = 1; model >= 0; --model) {
    p.background = model != 0;
    cs::Matcher m(p);
    // Without the model the warm-up frames teach nothing: the moving frames alone.
    for (int i = model ? 0 : spec.warmup_frames; i < spec.frames(); ++i) {
      if (std::string e = cs::render_moving_objects(bg_left, bg_right, spec, i, &f); !e.empty()) return e;
      const auto t0 = std::chrono::steady_clock::now();
      if (std::string e = m.process(cs::rgba_view(f.left_rgba), cs::rgba_view(f.right_rgba), out); !e.empty())
        return e;
      const double frame_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i < spec.warmup_frames) continue;
      const int t = i - spec.warmup_frames;
      if (!model) {
        FrameScore& s = scores[t];
        long matchable = 0;
        object_bad2(f, q4, matchable, s.bad2_off);
        ms[1] += frame_ms;
        continue;
      }
      if (m.stats().warming_up && spec.warmup_frames > 0) return "the model still warms up on the first moving frame";
      ms[0] += frame_ms;
      FrameScore s;
      s.t = t;
      for (size_t k = 0; k < fg.pixels.size(); ++k) {
        const bool truth = f.mask_left.pixels[k] != 0, got = fg.pixels[k] != 0;
        s.truth += truth;
        s.found += got;
        s.inter += truth && got;
        s.false_fg += got && !truth;
        // Uncovered recovery: the clock starts on the frame the pixel is uncovered.
        if (rec.covered[k] && !truth) {
          rec.uncovered_at[k] = t;
          ++rec.events;
        }
        if (rec.uncovered_at[k] >= 0) {
          if (truth) {
            ++rec.covered_again;
            rec.uncovered_at[k] = -1;
          } else if (!got) {
            const int frames = t - rec.uncovered_at[k];
            ++rec.recovered;
            rec.frames_sum += frames;
            rec.frames_max = std::max(rec.frames_max, frames);
            rec.uncovered_at[k] = -1;
          }
        }
        rec.covered[k] = truth;
      }
      const long uni = s.truth + s.found - s.inter;
      s.iou = uni ? static_cast<double>(s.inter) / uni : 1.0;
      object_bad2(f, q4, s.matchable, s.bad2_on);
      const cs::FrameStats& st = m.stats();
      s.matched = st.matched_fraction();
      scores.push_back(s);
    }
  }
  return "";
}

int main_real(const Options& o) {
  cs::Image<uint32_t> bg_left, bg_right;
  std::string described;
  if (std::string e = load_background(o, bg_left, bg_right, described); !e.empty()) {
    std::fprintf(stderr, "cs-bench-foreground: %s\n", e.c_str());
    return 1;
  }
  cs::MovingObjectsSpec spec = cs::crossing_objects_spec(o.width, o.height, o.objects, o.object_disparity, o.warmup,
                                                         o.seed, o.object_speed);
  spec.noise_sigma = o.noise;
  if (o.frames_given) spec.moving_frames = o.frames;
  else if (o.objects == 0) spec.moving_frames = 60;
  std::vector<FrameScore> scores;
  Recovery rec;
  double ms[2] = {0, 0};
  int levels_used = 0;
  if (std::string e = run_real(o, bg_left, bg_right, spec, scores, rec, ms, levels_used); !e.empty()) {
    std::fprintf(stderr, "cs-bench-foreground: %s\n", e.c_str());
    return 1;
  }
  const double frame_px = static_cast<double>(o.width) * o.height;
  int with_object = 0, worst_iou_t = -1, worst_fg_t = 0;
  double iou_sum = 0, iou_min = 1, matched_sum = 0;
  long fg_sum = 0, fg_max = 0, matchable = 0, bad_on = 0, bad_off = 0, truth_sum = 0, found_sum = 0;
  for (const FrameScore& s : scores) {
    if (o.per_frame)
      std::printf("frame t=%d truth_px=%ld mask_px=%ld iou=%.4f false_fg_px=%ld false_fg_pct=%.3f matched=%.3f "
                  "object_px=%ld bad2_on_pct=%.2f bad2_off_pct=%.2f\n",
                  s.t, s.truth, s.found, s.truth ? s.iou : std::nan(""), s.false_fg, 100.0 * s.false_fg / frame_px,
                  s.matched, s.matchable, s.matchable ? 100.0 * s.bad2_on / s.matchable : 0.0,
                  s.matchable ? 100.0 * s.bad2_off / s.matchable : 0.0);
    if (s.truth) {
      ++with_object;
      iou_sum += s.iou;
      if (s.iou < iou_min || worst_iou_t < 0) iou_min = std::min(iou_min, s.iou), worst_iou_t = s.t;
    }
    fg_sum += s.false_fg;
    if (s.false_fg > fg_max) fg_max = s.false_fg, worst_fg_t = s.t;
    matchable += s.matchable;
    bad_on += s.bad2_on;
    bad_off += s.bad2_off;
    truth_sum += s.truth;
    found_sum += s.found;
    matched_sum += s.matched;
  }
  const double n = static_cast<double>(scores.size());
  const cs::MovingObject* obj = spec.objects.empty() ? nullptr : &spec.objects[0];
  std::printf("pair: %s at %dx%d, D=%d, levels %s (%d), noise sigma %.2f, seed %llu\n", described.c_str(), o.width,
              o.height, o.disparities, o.levels ? std::to_string(o.levels).c_str() : "auto", levels_used, o.noise,
              static_cast<unsigned long long>(o.seed));
  if (obj)
    std::printf("objects: %d of %dx%d at d=%d crossing from the left edge at %.2f px/frame\n", o.objects, obj->width,
                obj->height, obj->disparity, obj->speed);
  else
    std::printf("objects: none (noise alone)\n");
  std::printf("frames: %d warm-up, %d scored (%d with an object in view)\n", spec.warmup_frames, spec.moving_frames,
              with_object);
  if (with_object)
    std::printf("mask IoU (frames with an object): mean %.4f, worst %.4f (frame t=%d)\n", iou_sum / with_object,
                iou_min, worst_iou_t);
  std::printf("mask px found / true (mean a frame): %.0f / %.0f\n", found_sum / n, truth_sum / n);
  std::printf("false foreground outside the objects: mean %.0f px (%.3f %% of the frame), worst %ld px (%.3f %%, "
              "frame t=%d)\n",
              fg_sum / n, 100.0 * fg_sum / n / frame_px, fg_max, 100.0 * fg_max / frame_px, worst_fg_t);
  if (rec.events)
    std::printf("uncovered recovery: %ld pixel uncoverings; %ld recovered after mean %.2f, max %d frames; %ld covered "
                "again first; %ld never within the run\n",
                rec.events, rec.recovered, rec.recovered ? static_cast<double>(rec.frames_sum) / rec.recovered : 0.0,
                rec.frames_max, rec.covered_again, rec.never());
  if (matchable)
    std::printf("object bad-2 (of %ld object px with a match in view): model on %.2f %%, model off %.2f %%\n",
                matchable, 100.0 * bad_on / matchable, 100.0 * bad_off / matchable);
  std::printf("matched work, fraction of a full frame (mean): %.3f; ms/frame: model on %.1f, off %.1f\n", matched_sum / n, ms[0] / n, ms[1] / n);
  std::printf("result mode=real size=%dx%d D=%d levels=%d objects=%d object_d=%d speed=%.2f noise=%.2f warmup=%d "
              "frames=%d frames_with_object=%d iou_mean=%.4f iou_worst=%.4f false_fg_mean_px=%.1f "
              "false_fg_mean_pct=%.4f false_fg_worst_px=%ld false_fg_worst_pct=%.4f uncovered=%ld recovered=%ld "
              "recovery_mean=%.3f recovery_max=%d covered_again=%ld never_recovered=%ld object_px=%ld "
              "bad2_on_pct=%.3f bad2_off_pct=%.3f matched=%.4f ms_on=%.1f ms_off=%.1f\n",
              o.width, o.height, o.disparities, levels_used, o.objects, obj ? obj->disparity : -1,
              obj ? obj->speed : 0.0, o.noise, spec.warmup_frames, spec.moving_frames, with_object,
              with_object ? iou_sum / with_object : std::nan(""), with_object ? iou_min : std::nan(""), fg_sum / n,
              100.0 * fg_sum / n / frame_px, fg_max, 100.0 * fg_max / frame_px, rec.events, rec.recovered,
              rec.recovered ? static_cast<double>(rec.frames_sum) / rec.recovered : 0.0, rec.frames_max,
              rec.covered_again, rec.never(), matchable, matchable ? 100.0 * bad_on / matchable : std::nan(""),
              matchable ? 100.0 * bad_off / matchable : std::nan(""), matched_sum / n, ms[0] / n, ms[1] / n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error)) {
    std::fprintf(stderr, "cs-bench-foreground: %s\n%s", error.c_str(), usage);
    return 2;
  }
  if (o.real()) return main_real(o);
  if (o.header) {
    std::fputs(
        "| size | D | levels (used) | object, speed | mask IoU mean (min) | fg % found / true | matched work | "
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
      bg.iou_sum / f, bg.iou_min, 100 * bg.fg_sum / f, 100 * bg.truth_sum / f, bg.matched_sum / f,
      100.0 * bg.bad1 / bg.inside, 100.0 * bg.bad2 / bg.inside, bg.outside_valid, bg.ms_sum / f,
      100.0 * full.bad1 / full.inside, 100.0 * full.bad2 / full.inside, full.ms_sum / full.frames);
  return 0;
}
