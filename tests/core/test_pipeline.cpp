// The whole CPU reference pipeline on synthetic scenes with exact ground truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "matcher_debug.h"
#include "moving_objects.h"
#include "pipeline_run.h"
#include "synthetic.h"

using namespace cs;

namespace {

using test::Result;
using test::run;

// Fraction of ground-truth pixels, at least `margin` from every image edge,
// whose estimate is within `tol` pixels (invalid counts as wrong).
double fraction_within(const Image<uint16_t>& q4, const Image<float>& gt, double tol, int margin) {
  long n = 0, good = 0;
  for (int y = margin; y < gt.height - margin; ++y)
    for (int x = margin; x < gt.width - margin; ++x) {
      if (gt.at(x, y) < 0) continue;
      ++n;
      const int q = q4.at(x, y);
      if (q != 0 && std::fabs(q / 16.0 - gt.at(x, y)) <= tol) ++good;
    }
  return n ? static_cast<double>(good) / n : 0.0;
}

// A view in YUV for the YUV input tests: Y is the luma of the synthetic
// colour; U and V, one pair per 2 pixels of a row, come from the colour of
// the pair's first pixel in the even row of its row pair, so that rows 2k
// and 2k + 1 share chroma and 4:2:2 and 4:2:0 carry the same samples.
struct Yuv {
  Image<uint8_t> y, u, v;  // u, v: ceil(w / 2) x h
};

Yuv yuv_of(const Image<uint32_t>& rgba) {
  const int w = rgba.width, h = rgba.height, cw = (w + 1) / 2;
  Yuv o{Image<uint8_t>(w, h), Image<uint8_t>(cw, h), Image<uint8_t>(cw, h)};
  auto luma = [&](int x, int y) {
    const uint32_t p = rgba.at(x, y);
    return luma_from_rgb(p & 255, (p >> 8) & 255, (p >> 16) & 255);
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) o.y.at(x, y) = luma(x, y);
    for (int m = 0; m < cw; ++m) {
      const uint32_t p = rgba.at(2 * m, y & ~1);
      const int l = luma(2 * m, y & ~1);
      o.u.at(m, y) = static_cast<uint8_t>(std::clamp(128 + (static_cast<int>((p >> 16) & 255) - l) / 2, 0, 255));
      o.v.at(m, y) = static_cast<uint8_t>(std::clamp(128 + (static_cast<int>(p & 255) - l) / 2, 0, 255));
    }
  }
  return o;
}

// The planes of one view in `format` (GRAY8, I420, YUY2 or UYVY), rows
// padded with junk; view() points into them.
struct YuvFrame {
  PixelFormat format;
  int width, height;
  std::vector<uint8_t> planes[3];
  std::ptrdiff_t pitch[3] = {0, 0, 0};

  YuvFrame(const Yuv& in, PixelFormat f) : format(f), width(in.y.width), height(in.y.height) {
    const int w = width, h = height, cw = (w + 1) / 2;
    if (f == PixelFormat::YUY2 || f == PixelFormat::UYVY) {
      pitch[0] = 4 * cw + 6;
      planes[0].assign(pitch[0] * h, 0xC3);
      const bool uyvy = f == PixelFormat::UYVY;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          uint8_t* m = &planes[0][y * pitch[0] + 4 * (x / 2)];
          m[(uyvy ? 1 : 0) + 2 * (x % 2)] = in.y.at(x, y);
          m[uyvy ? 0 : 1] = in.u.at(x / 2, y);
          m[uyvy ? 2 : 3] = in.v.at(x / 2, y);
        }
      return;
    }
    pitch[0] = w + 3;
    planes[0].assign(pitch[0] * h, 0xC3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) planes[0][y * pitch[0] + x] = in.y.at(x, y);
    if (f != PixelFormat::I420) return;
    const int ch = (h + 1) / 2;
    for (int c = 1; c <= 2; ++c) {
      const Image<uint8_t>& src = c == 1 ? in.u : in.v;
      pitch[c] = cw + 1;
      planes[c].assign(pitch[c] * ch, 0xC3);
      for (int y = 0; y < ch; ++y)
        for (int x = 0; x < cw; ++x) planes[c][y * pitch[c] + x] = src.at(x, 2 * y);
    }
  }
  YuvFrame(const YuvFrame&) = delete;
  YuvFrame& operator=(const YuvFrame&) = delete;

  FrameView view() const {
    FrameView v;
    v.format = format;
    v.width = width;
    v.height = height;
    for (int i = 0; i < 3; ++i) {
      v.plane[i] = planes[i].empty() ? nullptr : planes[i].data();
      v.pitch[i] = pitch[i];
    }
    return v;
  }
};

Result run_views(Matcher& m, const FrameView& l, const FrameView& r) {
  Result o;
  o.q4 = Image<uint16_t>(l.width, l.height);
  o.fg = Image<uint8_t>(l.width, l.height);
  Outputs out;
  out.disparity_q4 = o.q4.view();
  out.foreground = o.fg.view();
  o.error = m.process(l, r, out);
  return o;
}

}  // namespace

TEST(Pipeline, TexturedPlanesAtKnownDisparities) {
  for (int d : {1, 7, 20, 45}) {
    const SyntheticPair s = make_plane_pair(160, 96, d, 100 + d);
    Params p;
    p.max_disparity = 64;
    Matcher m(p);
    Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    // Before sub-pixel: the integer maps of level 0.
    const Image<int16_t>& dl = m.debug().levels[0].disparity_left;
    long n = 0, exact = 0;
    for (int y = 8; y < 88; ++y)
      for (int x = d + 8; x < 152; ++x) {
        ++n;
        exact += dl.at(x, y) == d;
      }
    EXPECT_GE(static_cast<double>(exact) / n, 0.99) << "d " << d;
    // Sub-pixel on an integer plane stays within 1/16 pixel.
    EXPECT_GE(fraction_within(r.q4, s.disparity, 1.0 / 16, 8), 0.99) << "d " << d;
    EXPECT_EQ(m.stats().levels, resolve_levels(p, 160, 96));
  }
}

TEST(Pipeline, StepEdge) {
  const SyntheticPair s = make_step_pair(200, 100, 10, 30, 5);
  Params p;
  p.max_disparity = 48;
  Matcher m(p);
  Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  // Away from the edge (by the window's reach) every pixel is right.
  long n = 0, good = 0;
  for (int y = 10; y < 90; ++y)
    for (int x = 40; x < 190; ++x) {
      if (std::abs(x - 100) < 12 || s.disparity.at(x, y) < 0) continue;
      ++n;
      good += r.q4.at(x, y) != 0 && std::fabs(r.q4.at(x, y) / 16.0 - s.disparity.at(x, y)) <= 0.5;
    }
  EXPECT_GE(static_cast<double>(good) / n, 0.99);
  // Including the edge region the error stays small.
  EXPECT_GE(fraction_within(r.q4, s.disparity, 1.0, 8), 0.93);
}

TEST(Pipeline, SlantedPlaneBad1Bound) {
  const SyntheticPair s = make_slanted_pair(240, 120, 8.0f, 0.1f, 9);  // 8 .. 32
  Params p;
  p.max_disparity = 48;
  Matcher m(p);
  Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  const double good = fraction_within(r.q4, s.disparity, 1.0, 8);
  EXPECT_GE(good, 0.95) << "bad-1 " << 1 - good;
}

TEST(Pipeline, OddWidthsAndPitchedRowsGiveTheSameResult) {
  for (int w : {61, 77, 90, 103}) {
    const int h = 37;
    const SyntheticPair s = make_plane_pair(w, h, 9, w);
    Params p;
    p.max_disparity = 32;
    Matcher m(p);
    Result packed = run(m, s);
    ASSERT_EQ(packed.error, "");
    EXPECT_GE(fraction_within(packed.q4, s.disparity, 1.0 / 16, 8), 0.98) << "width " << w;
    // The same pair as RGB with padded rows, into a padded output.
    const int pitch = w * 3 + 13;
    std::vector<uint8_t> l(pitch * h, 0x77), rr(pitch * h, 0x77);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c) {
          l[y * pitch + x * 3 + c] = (s.left_rgba.at(x, y) >> (8 * c)) & 255;
          rr[y * pitch + x * 3 + c] = (s.right_rgba.at(x, y) >> (8 * c)) & 255;
        }
    FrameView lv;
    lv.format = PixelFormat::RGB;
    lv.width = w;
    lv.height = h;
    lv.plane[0] = l.data();
    lv.pitch[0] = pitch;
    FrameView rv = lv;
    rv.plane[0] = rr.data();
    const int opitch = w + 5;
    std::vector<uint16_t> out(opitch * h, 0xbeef);
    Outputs o;
    o.disparity_q4 = {out.data(), w, h, static_cast<std::ptrdiff_t>(opitch * 2)};
    Matcher m2(p);
    ASSERT_EQ(m2.process(lv, rv, o), "");
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) ASSERT_EQ(out[y * opitch + x], packed.q4.at(x, y)) << x << "," << y;
      EXPECT_EQ(out[y * opitch + w], 0xbeef);
    }
  }
}

TEST(Pipeline, SearchRangeCloseToTheImageWidth) {
  const SyntheticPair s = make_plane_pair(96, 48, 70, 4);
  Params p;
  p.max_disparity = 96;
  Matcher m(p);
  Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  long n = 0, good = 0;
  for (int y = 8; y < 40; ++y)
    for (int x = 80; x < 90; ++x) {
      ++n;
      good += r.q4.at(x, y) == 70 * 16;
    }
  EXPECT_GE(static_cast<double>(good) / n, 0.95);
  // Pixels left of the disparity have no match and must not claim one far off.
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 40; ++x) EXPECT_TRUE(r.q4.at(x, y) == 0 || r.q4.at(x, y) <= (x + 1) * 16);
}

TEST(Pipeline, TinyImage) {
  const SyntheticPair s = make_plane_pair(16, 16, 3, 8);
  Params p;
  p.max_disparity = 8;
  p.subwindow_radius = 1;
  Matcher m(p);
  Result r = run(m, s);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(m.stats().levels, 1);
  int exact = 0;
  for (int y = 4; y < 12; ++y)
    for (int x = 6; x < 12; ++x) exact += std::abs(r.q4.at(x, y) - 3 * 16) <= 1;  // within 1/16
  EXPECT_GE(exact, 46);  // of 48
}

TEST(Pipeline, ErrorsAreSentencesAndNothingIsWritten) {
  const SyntheticPair s = make_plane_pair(64, 32, 4, 1);
  Params p;
  p.max_disparity = 16;
  Matcher m(p);
  Image<uint16_t> q4(64, 32, 1234);
  Outputs o;
  o.disparity_q4 = q4.view();
  FrameView l = rgba_view(s.left_rgba), r = rgba_view(s.right_rgba);
  FrameView narrow = r;
  narrow.width = 60;
  EXPECT_NE(m.process(l, narrow, o).find("64x32"), std::string::npos);
  FrameView gray = r;
  gray.format = PixelFormat::GRAY8;
  EXPECT_NE(m.process(l, gray, o).find("GRAY8"), std::string::npos);
  FrameView null_plane = r;
  null_plane.plane[0] = nullptr;
  EXPECT_NE(m.process(l, null_plane, o).find("null"), std::string::npos);
  FrameView short_pitch = r;
  short_pitch.pitch[0] = 100;
  EXPECT_NE(m.process(l, short_pitch, o).find("pitch"), std::string::npos);
  FrameView device = r;
  device.memory = Memory::Device;
  EXPECT_NE(m.process(l, device, o).find("device memory"), std::string::npos);
  FrameView i420 = l;
  i420.format = PixelFormat::I420;
  i420.pitch[0] = 64;
  i420.pitch[1] = 32;
  i420.plane[1] = l.plane[0];
  i420.plane[2] = nullptr;
  EXPECT_NE(m.process(i420, i420, o).find("plane 2"), std::string::npos);
  Outputs wrong = o;
  wrong.disparity_q4.width = 10;
  EXPECT_NE(m.process(l, r, wrong).find("disparity output"), std::string::npos);
  Outputs dev = o;
  dev.memory = Memory::Device;
  EXPECT_NE(m.process(l, r, dev).find("device memory"), std::string::npos);
  for (uint16_t v : q4.pixels) ASSERT_EQ(v, 1234);
  p.max_disparity = 100;
  Matcher too_wide(p);
  EXPECT_EQ(too_wide.process(l, r, o), "max-disparity (100) must not exceed the view width (64)");
}

// The surveillance case the paper targets: a static background, a moving
// textured object, a global light change.
TEST(Pipeline, MovingObjectSequence) {
  const int w = 192, h = 128, dbg = 6, dobj = 20, ow = 48, oh = 40, speed = 4;
  Params p;
  p.max_disparity = 32;
  p.levels = 3;
  p.background = true;
  p.warmup_frames = 10;
  Matcher m(p);
  // Warm-up on the empty scene (the object parked outside: height 0).
  for (int i = 0; i < p.warmup_frames; ++i) {
    const SyntheticPair s = make_sequence_frame(w, h, 0, dbg, dobj, ow, 0, 0, 0, 3);
    Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    EXPECT_TRUE(m.stats().warming_up);
    EXPECT_EQ(m.stats().background_tests, 0u);
    EXPECT_EQ(m.stats().foreground_fraction, 1.0);
  }
  // Static scene after warm-up: (almost) no foreground.
  {
    const SyntheticPair s = make_sequence_frame(w, h, 0, dbg, dobj, ow, 0, 0, 0, 3);
    Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    EXPECT_FALSE(m.stats().warming_up);
    EXPECT_LT(m.stats().foreground_fraction, 0.01);
  }
  // The object enters and moves.
  double worst_iou = 1.0, ratio = 0.0;
  for (int i = 1; i <= 12; ++i) {
    const SyntheticPair s = make_sequence_frame(w, h, i, dbg, dobj, ow, oh, speed, 0, 3);
    Result r = run(m, s);
    ASSERT_EQ(r.error, "");
    long inter = 0, uni = 0, outside = 0, inside_good = 0, inside = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const bool truth = s.moving.at(x, y) != 0, got = r.fg.at(x, y) != 0;
        inter += truth && got;
        uni += truth || got;
        if (!got && r.q4.at(x, y) != 0) ++outside;
        if (truth && got) {
          ++inside;
          inside_good += std::abs(r.q4.at(x, y) - dobj * 16) <= 8;
        }
      }
    const double iou = static_cast<double>(inter) / uni;
    worst_iou = std::min(worst_iou, iou);
    EXPECT_EQ(outside, 0) << "frame " << i << ": disparities outside the mask";
    EXPECT_GE(static_cast<double>(inside_good) / inside, 0.9) << "frame " << i;
    // The matching work follows the foreground: the object's pixels (and
    // their parents) over the levels, against a full frame's.
    // The cells and the object's edge are tested, not every pixel.
    EXPECT_GT(m.stats().background_tests, 0u);
    EXPECT_LT(m.stats().background_tests, m.stats().background_tests_full / 2);
    ratio = static_cast<double>(m.stats().matched_pixels) / m.stats().matched_pixels_full;
    EXPECT_GT(ratio, 0.0) << "frame " << i;
    EXPECT_LT(ratio, std::max(0.05, 2.0 * m.stats().foreground_fraction)) << "frame " << i;
  }
  EXPECT_GE(worst_iou, 0.95);
  std::printf("matched pixels / a full frame's: %.3f; worst IoU %.3f\n", ratio, worst_iou);
}

// Issue 35's mask: textured objects crossing a textured scene with camera
// noise (sigma 2). On every frame with an object the mask's IoU with the
// truth is at least 0.95, the background shows (almost) no false foreground,
// the background an object uncovers is background again at once (the object
// covers a pixel for fewer than absorb_delay frames), the object's
// disparities are right, and the matching work follows the foreground.
TEST(Pipeline, MovingObjectsMaskFollowsTheTruth) {
  const int w = 200, h = 120, d_object = 24;
  const SyntheticPair scene = make_slanted_pair(w, h, 6.0f, 0.02f, 41);
  MovingObjectsSpec spec = crossing_objects_spec(w, h, 2, d_object, 20, 7, 5.0);
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.warmup_frames = spec.warmup_frames;
  Matcher m(p);
  MovingObjectsFrame f;
  double worst_iou = 1.0;
  long worst_false = 0, object_pixels = 0, object_good = 0;
  for (int i = 0; i < spec.frames(); ++i) {
    ASSERT_EQ(render_moving_objects(scene.left_rgba, scene.right_rgba, spec, i, &f), "");
    Image<uint16_t> q4(w, h);
    Image<uint8_t> fg(w, h);
    Outputs o;
    o.disparity_q4 = q4.view();
    o.foreground = fg.view();
    ASSERT_EQ(m.process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), o), "");
    if (i < spec.warmup_frames) continue;
    long inter = 0, uni = 0, truth = 0, false_fg = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const bool t = f.mask_left.at(x, y) != 0, g = fg.at(x, y) != 0;
        inter += t && g;
        uni += t || g;
        truth += t;
        false_fg += g && !t;
        if (!g) EXPECT_EQ(q4.at(x, y), 0) << "a disparity outside the mask at " << x << "," << y;
        if (t && x - d_object >= 0) {
          ++object_pixels;
          object_good += q4.at(x, y) != 0 && std::abs(q4.at(x, y) - 16 * d_object) <= 32;
        }
      }
    // Frames with a sliver of an object at an edge are left out of the IoU.
    if (truth >= 200) {
      const double iou = static_cast<double>(inter) / uni;
      worst_iou = std::min(worst_iou, iou);
      EXPECT_GE(iou, 0.95) << "frame " << i;
    }
    worst_false = std::max(worst_false, false_fg);
    const double work = static_cast<double>(m.stats().matched_pixels) / m.stats().matched_pixels_full;
    EXPECT_LE(work, 1.6 * truth / (w * h) + 0.02) << "frame " << i;
  }
  EXPECT_LE(worst_false, w * h / 200) << "false foreground (pixels)";
  ASSERT_GT(object_pixels, 0);
  EXPECT_GE(static_cast<double>(object_good) / object_pixels, 0.9);
  std::printf("worst IoU %.4f, worst false foreground %ld px, object within 2 px %.4f\n", worst_iou, worst_false,
              static_cast<double>(object_good) / object_pixels);
}

// stages.h matches_whole_frame: where both views' masks hold at least 13/16 of
// the frame, method progressive matches as with the model off and keeps the
// left mask's foreground: its output is the model-off output where the mask
// is foreground and 0 elsewhere, and the work counted is a full frame's.
// Below that share the masks restrict the matching and the work.
TEST(Pipeline, MostlyForegroundFramesMatchTheWholeFrame) {
  const int w = 192, h = 120;
  const SyntheticPair scene = make_slanted_pair(w, h, 6.0f, 0.02f, 41);
  for (double fraction : {0.5, 0.95}) {
    SCOPED_TRACE(::testing::Message() << "objects over " << fraction << " of the frame");
    const MovingObjectsSpec spec = fraction_objects_spec(w, h, fraction, 16, 6, 8, 5);
    Params p;
    p.max_disparity = 48;
    p.coarse_range_factor = 2;  // the probe reads the masks: the same factor in both
    p.warmup_frames = spec.warmup_frames;
    Params off = p;
    p.background = true;
    Matcher model(p), plain(off);
    MovingObjectsFrame f;
    int whole = 0, masked = 0;
    for (int i = 0; i < spec.frames(); ++i) {
      SCOPED_TRACE(::testing::Message() << "frame " << i);
      ASSERT_EQ(render_moving_objects(scene.left_rgba, scene.right_rgba, spec, i, &f), "");
      Image<uint16_t> q4(w, h), q4_off(w, h);
      Image<uint8_t> fg(w, h);
      Outputs o, o_off;
      o.disparity_q4 = q4.view();
      o.foreground = fg.view();
      o_off.disparity_q4 = q4_off.view();
      ASSERT_EQ(model.process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), o), "");
      ASSERT_EQ(plain.process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), o_off), "");
      if (i < spec.warmup_frames) continue;
      uint64_t left = 0, right = 0;
      for (uint8_t v : fg.pixels) left += v != 0;
      for (uint8_t v : model.debug().levels[0].mask_right.pixels) right += v != 0;
      const FrameStats st = model.stats();
      if (!matches_whole_frame(left, right, w, h)) {
        ++masked;
        EXPECT_LT(st.matched_pixels, st.matched_pixels_full);
        continue;
      }
      ++whole;
      EXPECT_LT(left, static_cast<uint64_t>(w) * h) << "a frame with some background";
      EXPECT_EQ(st.matched_pixels, st.matched_pixels_full);
      long differ = 0, valid = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          differ += q4.at(x, y) != (fg.at(x, y) ? q4_off.at(x, y) : 0);
          valid += fg.at(x, y) && q4.at(x, y) != 0;
        }
      EXPECT_EQ(differ, 0) << "pixels unlike the model-off output under the mask";
      EXPECT_GT(valid, static_cast<long>(left) / 2);
    }
    if (fraction < 0.75)
      EXPECT_GT(masked, 0) << "frames matched with the masks";
    else
      EXPECT_GT(whole, 0) << "frames matched whole";
  }
}

// stages.h stage 3: a global change that moves a model channel by at most
// delta (8-bit units) is absorbed after absorb_delay +
// ceil(ln(k min_sigma / delta) / ln(1 - learning_rate / 4)) frames rounded
// up to whole turns, at most a turn late.
TEST(Pipeline, GlobalBrightnessChangeIsAbsorbed) {
  const int w = 128, h = 96, offset = 25;
  Params p;
  p.max_disparity = 16;
  p.levels = 2;
  p.background = true;
  p.warmup_frames = 5;
  p.learning_rate = 0.2f;
  Matcher m(p);
  auto frame = [&](int brightness) {
    const SyntheticPair s = make_sequence_frame(w, h, 0, 4, 8, 20, 0, 0, brightness, 21);
    Result r = run(m, s);
    EXPECT_EQ(r.error, "");
  };
  for (int i = 0; i <= p.warmup_frames; ++i) frame(0);
  EXPECT_LT(m.stats().foreground_fraction, 0.01);
  // The largest change of any model channel (V moves by the offset; S can
  // move further for dark saturated colours) over both views.
  const Image<uint32_t> before[2] = {m.debug().levels[0].rgb_left, m.debug().levels[0].rgb_right};
  frame(offset);
  EXPECT_GT(m.stats().foreground_fraction, 0.5) << "the change must first be seen";
  int delta = 0;
  for (int v = 0; v < 2; ++v) {
    const Image<uint32_t>& after = v ? m.debug().levels[0].rgb_right : m.debug().levels[0].rgb_left;
    for (size_t k = 0; k < after.pixels.size(); ++k) {
      int h0, s0, v0, h1, s1, v1;
      const uint32_t a = before[v].pixels[k], b = after.pixels[k];
      hsv_from_rgb(a & 255, (a >> 8) & 255, (a >> 16) & 255, &h0, &s0, &v0);
      hsv_from_rgb(b & 255, (b >> 8) & 255, (b >> 16) & 255, &h1, &s1, &v1);
      int dh = h1 - h0;  // hue's deviation is circular and weighted by saturation
      if (dh >= 90) dh -= 180;
      if (dh < -90) dh += 180;
      delta = std::max({delta, std::abs(dh) * s1 / 255 + 1, std::abs(s1 - s0), std::abs(v1 - v0)});
    }
  }
  // stages.h stage 3: absorbed on the pixels' turns, so the frames the rate
  // needs are rounded up to whole turns, the first at most a turn late.
  const double fg_rate = background_params(p).absorb_alpha_q16 / 65536.0;
  const int needed =
      static_cast<int>(std::ceil(std::log(p.foreground_threshold * p.min_sigma / delta) / std::log(1.0 - fg_rate)));
  const int bound = p.absorb_delay + kBackgroundTurns * ((needed + kBackgroundTurns - 1) / kBackgroundTurns + 1) + 1;
  int frames = 1;
  while (m.stats().foreground_fraction >= 0.01 && frames < 4 * bound) {
    frame(offset);
    ++frames;
  }
  std::printf("largest channel change %d: absorbed after %d frames (bound %d)\n", delta, frames, bound);
  EXPECT_LT(m.stats().foreground_fraction, 0.01);
  EXPECT_LE(frames, bound);
}

// The matcher reads Y only: YUY2 and UYVY give exactly the GRAY8 result of
// the same Y, at an odd width; and the answer is the scene's disparity.
TEST(Pipeline, PackedYuv422MatchesGray8OfItsLuma) {
  const int w = 101, h = 61, d = 9;
  const SyntheticPair s = make_plane_pair(w, h, d, 31);
  const Yuv l = yuv_of(s.left_rgba), r = yuv_of(s.right_rgba);
  Params p;
  p.max_disparity = 32;
  const YuvFrame gl(l, PixelFormat::GRAY8), gr(r, PixelFormat::GRAY8);
  Matcher mg(p);
  const Result gray = run_views(mg, gl.view(), gr.view());
  ASSERT_EQ(gray.error, "");
  EXPECT_GE(fraction_within(gray.q4, s.disparity, 1.0 / 16, 8), 0.95);
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY}) {
    SCOPED_TRACE(pixel_format_name(f));
    const YuvFrame pl(l, f), pr(r, f);
    Matcher m(p);
    const Result got = run_views(m, pl.view(), pr.view());
    ASSERT_EQ(got.error, "");
    EXPECT_EQ(got.q4.pixels, gray.q4.pixels);
  }
}

// With the background model the colour counts: YUY2/UYVY, whose row pairs
// carry the same chroma as the I420 frame's samples, give the I420 result
// frame for frame (disparity and foreground), and the model's colour at
// every pixel is rgb_from_yuv of its Y and its macropixel's U and V.
TEST(Pipeline, PackedYuv422BackgroundUsesTheMacropixelsChroma) {
  const int w = 97, h = 64;
  Params p;
  p.max_disparity = 32;
  p.levels = 3;
  p.background = true;
  p.warmup_frames = 3;
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY}) {
    SCOPED_TRACE(pixel_format_name(f));
    Matcher packed(p), planar(p);
    double most_foreground = 0.0;
    for (int i = 0; i < 8; ++i) {
      SCOPED_TRACE(::testing::Message() << "frame " << i);
      const SyntheticPair s = make_sequence_frame(w, h, i < 4 ? 0 : i, 6, 20, 24, i < 4 ? 0 : 20, 5, 0, 41);
      const Yuv l = yuv_of(s.left_rgba), r = yuv_of(s.right_rgba);
      const YuvFrame pl(l, f), pr(r, f), il(l, PixelFormat::I420), ir(r, PixelFormat::I420);
      const Result a = run_views(packed, pl.view(), pr.view());
      const Result b = run_views(planar, il.view(), ir.view());
      ASSERT_EQ(a.error, "");
      ASSERT_EQ(b.error, "");
      EXPECT_EQ(a.q4.pixels, b.q4.pixels);
      EXPECT_EQ(a.fg.pixels, b.fg.pixels);
      EXPECT_EQ(packed.stats().foreground_fraction, planar.stats().foreground_fraction);
      most_foreground = std::max(most_foreground, packed.stats().warming_up ? 0.0 : packed.stats().foreground_fraction);
      const Image<uint32_t>& rgb = packed.debug().levels[0].rgb_left;
      ASSERT_EQ(rgb.width, w);
      size_t wrong = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          uint8_t c[3];
          rgb_from_yuv(l.y.at(x, y), l.u.at(x / 2, y), l.v.at(x / 2, y), c);
          const uint32_t want = c[0] | (c[1] << 8) | (c[2] << 16);
          wrong += rgb.at(x, y) != want;
        }
      EXPECT_EQ(wrong, 0u);
    }
    // The object entered after the warm-up: the comparison covered a model
    // that tests and finds foreground, not only warm-up frames.
    EXPECT_GT(most_foreground, 0.02);
    EXPECT_LT(most_foreground, 0.5);
  }
}

namespace cs {
namespace {

// Params::coarse_range_factor = 2: the levels above 0 of a range D are those
// of the range 2 D with the factor 1 (same levels: the level rule reads the
// asked range), and level 0 searches D only; content beyond D (a plane at
// 40 with D = 32) then leaves level 0 invalid where it lies instead of
// matched at random, while content inside D keeps its disparity.
TEST(Pipeline, CoarseLevelsSearchTwiceTheRange) {
  const SyntheticPair near_far = make_step_pair(160, 96, 40, 12, 21);  // left half at 12, right half at 40
  Params wide;
  wide.max_disparity = 32;
  wide.levels = 3;
  wide.coarse_range_factor = 2;
  Params twice = wide;
  twice.max_disparity = 64;
  twice.coarse_range_factor = 1;
  Matcher a(wide), b(twice);
  const test::Result ra = test::run(a, near_far), rb = test::run(b, near_far);
  ASSERT_EQ(ra.error, "");
  ASSERT_EQ(rb.error, "");
  const Matcher::Debug& da = a.debug();
  const Matcher::Debug& db = b.debug();
  ASSERT_EQ(da.levels.size(), 3u);
  ASSERT_EQ(db.levels.size(), 3u);
  for (size_t l = 1; l < 3; ++l) {
    EXPECT_EQ(da.levels[l].range.hi, db.levels[l].range.hi) << "level " << l;
    EXPECT_EQ(da.levels[l].disparity_left.pixels, db.levels[l].disparity_left.pixels) << "level " << l;
    EXPECT_EQ(da.levels[l].disparity_right.pixels, db.levels[l].disparity_right.pixels) << "level " << l;
  }
  EXPECT_EQ(da.levels[0].range.hi, 32);
  // Level 0: the near half keeps 12, the far half (40, beyond D) is invalid.
  int near_ok = 0, far_invalid = 0, near_n = 0, far_n = 0;
  for (int y = 8; y < 88; ++y)
    for (int x = 0; x < 160; ++x) {
      const int d = da.levels[0].disparity_left.at(x, y);
      const float t = near_far.disparity.at(x, y);
      if (t < 0 || x < 48) continue;  // unknown; the left border, where nothing matches
      if (x >= 88 && x < 152 && t > 39) {
        ++far_n;
        far_invalid += d < 0;
      } else if (x >= 56 && x < 72) {
        ++near_n;
        near_ok += d == 12;
      }
    }
  ASSERT_GT(near_n, 0);
  ASSERT_GT(far_n, 0);
  EXPECT_GE(near_ok, near_n * 9 / 10);
  EXPECT_GE(far_invalid, far_n * 9 / 10);
}

// Automatic coarse range (stages.h 6b): the factor from a probe's map.
TEST(Pipeline, CoarseFactorFromProbeCoversThe99thPercentile) {
  Image<int16_t> map(10, 10, -1);
  EXPECT_EQ(coarse_factor_from_probe(map, 2, 16), 1);  // nothing valid
  for (int i = 0; i < 100; ++i) map.pixels[i] = static_cast<int16_t>(i);
  // index 99 of 0..99: d = 99, p = 99 << 1 = 198: 16 -> 256 covers it.
  EXPECT_EQ(coarse_factor_from_probe(map, 1, 16), 16);
  EXPECT_EQ(coarse_factor_from_probe(map, 1, 100), 2);
  EXPECT_EQ(coarse_factor_from_probe(map, 1, 200), 1);
  EXPECT_EQ(coarse_factor_from_probe(map, 1, 198), 1);  // content at D itself: covered
  EXPECT_EQ(coarse_factor_from_probe(map, 1, 197), 2);
  EXPECT_EQ(coarse_factor_from_probe(map, 3, 10), 16);  // 792 > 16 x 10: capped
  Image<int16_t> big(200, 1, 5);
  big.pixels[199] = 90;  // one outlier in 200: index 198 is 5, p = 20
  EXPECT_EQ(coarse_factor_from_probe(big, 2, 8), 4);
  EXPECT_EQ(probe_range(Params(), 2, 1000).hi, std::min(1000, (Params().max_disparity * 16 + 3) / 4));
}

// The histogram form (what the CUDA engine reads back) and the map form
// give the sorted rule's factor on maps of every shape: few valid pixels, ties at the percentile,
// values beyond any factor.
TEST(Pipeline, CoarseFactorFromHistogramEqualsTheMapRule) {
  uint32_t seed = 7;
  auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  for (int trial = 0; trial < 200; ++trial) {
    const int w = 1 + static_cast<int>(next() % 60), h = 1 + static_cast<int>(next() % 40);
    const int spread = 1 + static_cast<int>(next() % 300);
    const int invalid_pct = static_cast<int>(next() % 101);
    Image<int16_t> map(w, h, -1);
    for (int16_t& d : map.pixels)
      if (static_cast<int>(next() % 100) >= invalid_pct) d = static_cast<int16_t>(next() % spread);
    std::vector<uint32_t> counts(static_cast<size_t>(spread), 0);
    for (int16_t d : map.pixels)
      if (d >= 0) ++counts[static_cast<size_t>(d)];
    const int level = static_cast<int>(next() % 4), dmax = 1 + static_cast<int>(next() % 200);
    // The specification's words, sorting: the valid values ascending, the
    // one at floor(99 n / 100), p = d << level, the smallest power of
    // two f <= 16 with f * dmax >= p.
    std::vector<int> valid;
    for (int16_t d : map.pixels)
      if (d >= 0) valid.push_back(d);
    std::sort(valid.begin(), valid.end());
    int want = 1;
    if (!valid.empty()) {
      const int64_t p = static_cast<int64_t>(valid[valid.size() * 99 / 100]) << level;
      while (want < kMaxCoarseRangeFactor && static_cast<int64_t>(want) * dmax < p) want *= 2;
    }
    EXPECT_EQ(coarse_factor_from_histogram(counts.data(), spread, level, dmax), want) << "trial " << trial;
    EXPECT_EQ(coarse_factor_from_probe(map, level, dmax), want) << "trial " << trial;
  }
}

// The schedule both engines keep: a probe on a configuration's first frame
// and every kCoarseProbeInterval frames; a probe's factor serves until the
// configuration changes, when the factor is 1 again until the next probe.
TEST(Pipeline, CoarseProbeSchedule) {
  Params p;
  p.max_disparity = 32;
  CoarseProbeSchedule s;
  EXPECT_EQ(s.begin_frame(160, 96, 3, p), 1);
  EXPECT_TRUE(s.probe_due(160, 96, 3, p));
  s.set_factor(4);
  s.probe_made(160, 96, 3, p);
  s.frame_done();
  for (int i = 2; i <= kCoarseProbeInterval; ++i) {
    EXPECT_EQ(s.begin_frame(160, 96, 3, p), 4) << "frame " << i;
    EXPECT_FALSE(s.probe_due(160, 96, 3, p)) << "frame " << i;
    s.frame_done();
  }
  EXPECT_EQ(s.begin_frame(160, 96, 3, p), 4);
  EXPECT_TRUE(s.probe_due(160, 96, 3, p));  // frame kCoarseProbeInterval + 1
  s.set_factor(2);
  s.probe_made(160, 96, 3, p);
  s.frame_done();
  EXPECT_EQ(s.begin_frame(160, 96, 3, p), 2);
  s.frame_done();
  Params q = p;
  q.min_disparity = 4;
  EXPECT_EQ(s.begin_frame(160, 96, 3, q), 1);  // another range: 1 until its probe
  EXPECT_TRUE(s.probe_due(160, 96, 3, q));
  EXPECT_TRUE(s.probe_due(160, 96, 2, p));     // other levels
  EXPECT_TRUE(s.probe_due(161, 96, 3, p));     // another size
}

// The first frame matches with factor 1; its probe finds content at 40
// beyond D = 32 and the next frames use 2, exactly as a matcher fixed at 2;
// content inside D keeps 1.
TEST(Pipeline, AutomaticCoarseRangeFollowsTheContent) {
  const SyntheticPair near_far = make_step_pair(160, 96, 40, 12, 21);
  Params automatic;
  automatic.max_disparity = 32;
  automatic.levels = 3;
  automatic.coarse_range_factor = kAutoCoarseRangeFactor;
  ASSERT_EQ(automatic.validate(), "");
  Params one = automatic, two = automatic;
  one.coarse_range_factor = 1;
  two.coarse_range_factor = 2;
  Matcher a(automatic), m1(one), m2(two);
  const test::Result a1 = test::run(a, near_far);
  ASSERT_EQ(a1.error, "");
  EXPECT_EQ(a.stats().coarse_range_factor, 1);
  EXPECT_EQ(a1.q4.pixels, test::run(m1, near_far).q4.pixels);
  const test::Result a2 = test::run(a, near_far);
  EXPECT_EQ(a.stats().coarse_range_factor, 2);
  EXPECT_EQ(a2.q4.pixels, test::run(m2, near_far).q4.pixels);
  EXPECT_EQ(a.debug().levels[1].range.hi, 32);  // 2 x 32 / 2
  EXPECT_EQ(a.debug().levels[0].range.hi, 32);

  // A new range starts again from 1; its probe finds 40 inside 64.
  Params wider = automatic;
  wider.max_disparity = 64;
  ASSERT_EQ(a.set_params(wider), "");
  test::run(a, near_far);
  EXPECT_EQ(a.stats().coarse_range_factor, 1);
  test::run(a, near_far);
  EXPECT_EQ(a.stats().coarse_range_factor, 1);

  // Content inside D from the start: 1 throughout.
  const SyntheticPair near = make_step_pair(160, 96, 12, 10, 22);
  Matcher b(automatic);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(test::run(b, near).error, "");
    EXPECT_EQ(b.stats().coarse_range_factor, 1) << "frame " << i;
  }
}

// A probe every kCoarseProbeInterval frames: content that moves beyond D
// after the first probe changes the factor only after the next one.
TEST(Pipeline, AutomaticCoarseRangeProbesAgainAfterTheInterval) {
  const SyntheticPair near = make_step_pair(96, 48, 12, 10, 23);
  const SyntheticPair far = make_step_pair(96, 48, 40, 10, 23);
  Params p;
  p.max_disparity = 32;
  p.levels = 2;
  p.coarse_range_factor = kAutoCoarseRangeFactor;
  Matcher m(p);
  ASSERT_EQ(test::run(m, near).error, "");  // frame 1: probe, content inside 32
  for (int i = 2; i <= kCoarseProbeInterval; ++i) test::run(m, far);
  EXPECT_EQ(m.stats().coarse_range_factor, 1) << "frame " << kCoarseProbeInterval;
  test::run(m, far);  // frame 257 uses 1 and probes
  EXPECT_EQ(m.stats().coarse_range_factor, 1);
  test::run(m, far);
  EXPECT_EQ(m.stats().coarse_range_factor, 2);
}

}  // namespace
}  // namespace cs
