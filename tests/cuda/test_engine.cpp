// The whole CUDA pipeline against the CPU reference (cs::Matcher and the CPU
// engine): per-level intermediates, final Q4, background sequences, every
// output encoding, device-resident frames, several engines at once, frames
// uploaded ahead from another thread, host memory page-locked in place, and
// the frame graph's nodes following each frame's buffers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "cuda_engine.h"
#include "cuda_util.h"
#include "error_text.h"
#include "host_register.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "moving_objects.h"
#include "rectify.h"
#include "rig_scene.h"
#include "stereo_math.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

// Where census codes differ: the first such pixel and the foreground pixels
// of either view's mask within 9 pixels of it (the census apron is 8).
std::string census_context(const LevelDebug& c, const LevelDebug& g) {
  std::ostringstream s;
  if (c.mask_left.pixels.empty()) return {};
  for (int y = 0; y < c.census_left.height; ++y)
    for (int x = 0; x < c.census_left.width; ++x) {
      if (c.census_left.at(x, y) == g.census_left.at(x, y) && c.census_right.at(x, y) == g.census_right.at(x, y))
        continue;
      s << " [first differing census at " << x << "," << y << " of " << c.census_left.width << "x"
        << c.census_left.height << "; foreground near it:";
      int shown = 0;
      for (int j = std::max(0, y - 9); j <= std::min(c.census_left.height - 1, y + 9); ++j)
        for (int i = std::max(0, x - 9); i <= std::min(c.census_left.width - 1, x + 9); ++i)
          if ((c.mask_left.at(i, j) || c.mask_right.at(i, j)) && shown++ < 6)
            s << " (" << i << "," << j << (c.mask_left.at(i, j) ? " L" : "") << (c.mask_right.at(i, j) ? " R" : "")
              << (g.mask_left.at(i, j) != c.mask_left.at(i, j) ? " gpu-mask-differs" : "") << ")";
      s << " gpu census " << g.census_left.at(x, y) << " cpu " << c.census_left.at(x, y) << "]";
      return s.str();
    }
  return {};
}

void expect_same_debug(const Matcher::Debug& cpu, const Matcher::Debug& gpu, bool background) {
  ASSERT_EQ(cpu.levels.size(), gpu.levels.size());
  for (size_t l = 0; l < cpu.levels.size(); ++l) {
    SCOPED_TRACE(::testing::Message() << "level " << l);
    const LevelDebug& c = cpu.levels[l];
    const LevelDebug& g = gpu.levels[l];
    EXPECT_EQ(c.range.lo, g.range.lo);
    EXPECT_EQ(c.range.hi, g.range.hi);
    EXPECT_TRUE(same_image(c.gray_left, g.gray_left)) << "gray left";
    EXPECT_TRUE(same_image(c.gray_right, g.gray_right)) << "gray right";
    EXPECT_TRUE(same_image(c.census_left, g.census_left)) << "census left" << census_context(c, g);
    EXPECT_TRUE(same_image(c.census_right, g.census_right)) << "census right" << census_context(c, g);
    if (background) {
      EXPECT_TRUE(same_image(c.mask_left, g.mask_left)) << "mask left";
      EXPECT_TRUE(same_image(c.mask_right, g.mask_right)) << "mask right";
      EXPECT_EQ(c.tests_left, g.tests_left);
      EXPECT_EQ(c.tests_right, g.tests_right);
    }
    EXPECT_TRUE(same_image(c.raw_left, g.raw_left)) << "raw left";
    EXPECT_TRUE(same_image(c.raw_right, g.raw_right)) << "raw right";
    EXPECT_TRUE(same_image(c.disparity_left, g.disparity_left)) << "checked left";
    EXPECT_TRUE(same_image(c.disparity_right, g.disparity_right)) << "checked right";
  }
}

// One frame through both; compares intermediates, Q4, foreground and stats;
// with the confidence on (Params::confidence), the confidence map and the
// level-0 left sweep's costs behind it.
void compare_frame(Matcher& cpu, CudaEngine& gpu, const FrameView& left, const FrameView& right) {
  const int w = left.width, h = left.height;
  Image<uint16_t> cq4(w, h), cfg(w, h);
  Image<uint8_t> cmask(w, h), cconf(w, h);
  Outputs co;
  co.disparity_q4 = cq4.view();
  co.foreground = cmask.view();
  if (cpu.params().confidence) co.confidence = cconf.view();
  ASSERT_EQ(cpu.process(left, right, co), "");

  // GPU: Q4 through the engine's encoder, into a pitched host buffer.
  std::vector<uint8_t> out(static_cast<size_t>(w * 2 + 6) * h, 0xEE);
  OutputFrame of;
  of.data = out.data();
  of.pitch = w * 2 + 6;
  of.width = w;
  of.height = h;
  EncodeParams ep;
  ep.format = OutputFormat::DisparityQ4;
  ASSERT_EQ(gpu.process(left, right, ep, of), "");
  Image<uint16_t> gq4(w, h);
  for (int y = 0; y < h; ++y) std::memcpy(&gq4.at(0, y), out.data() + y * of.pitch, w * 2);

  Matcher::Debug gd;
  ASSERT_EQ(gpu.download_debug(&gd), "");
  expect_same_debug(cpu.debug(), gd, cpu.params().background);
  EXPECT_TRUE(same_image(cq4, gq4)) << "final Q4";
  if (cpu.params().confidence) {
    EXPECT_TRUE(same_image(cpu.debug().costs.best, gd.costs.best)) << "level-0 left best costs";
    EXPECT_TRUE(same_image(cpu.debug().costs.rival, gd.costs.rival)) << "level-0 left rival costs";
    EXPECT_TRUE(same_image(cconf, gd.confidence)) << "confidence";
  }

  const FrameStats cs = cpu.stats(), gs = gpu.stats();
  EXPECT_EQ(cs.levels, gs.levels);
  EXPECT_EQ(cs.warming_up, gs.warming_up);
  EXPECT_EQ(cs.background_tests, gs.background_tests);
  EXPECT_EQ(cs.background_tests_full, gs.background_tests_full);
  EXPECT_EQ(cs.matched_pixels, gs.matched_pixels);
  EXPECT_EQ(cs.matched_pixels_full, gs.matched_pixels_full);
  EXPECT_DOUBLE_EQ(cs.valid_fraction, gs.valid_fraction);
  EXPECT_DOUBLE_EQ(cs.foreground_fraction, gs.foreground_fraction);
  EXPECT_EQ(cs.coarse_range_factor, gs.coarse_range_factor);
}

// The frames of `phase` over `scene` through both engines (compare_frame,
// each frame rendered into *f): how many of them the GPU's stats say
// `counts`; stops at the first failure. state (optional): what
// frame_graph_state() must say of every frame.
template <typename Counts>
int frames_where(Matcher& cpu, CudaEngine& gpu, const SyntheticPair& scene, const MovingObjectsSpec& phase,
                 const char* what, MovingObjectsFrame* f, Counts&& counts, const char* state = nullptr) {
  int n = 0;
  for (int i = 0; i < phase.frames(); ++i) {
    SCOPED_TRACE(::testing::Message() << what << ", frame " << i);
    EXPECT_EQ(render_moving_objects(scene.left_rgba, scene.right_rgba, phase, i, f), "");
    if (::testing::Test::HasFailure()) break;
    compare_frame(cpu, gpu, rgba_view(f->left_rgba), rgba_view(f->right_rgba));
    if (::testing::Test::HasFailure()) break;
    if (state) EXPECT_EQ(gpu.frame_graph_state(), state);
    n += counts(gpu.stats());
  }
  return n;
}

std::unique_ptr<CudaEngine> make(const Params& p) {
  std::string err;
  auto e = CudaEngine::create(p, -1, &err);
  EXPECT_TRUE(e) << err;
  return e;
}

TEST(CudaEngine, PipelineMatchesReferenceOnScenes) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    Params p;
  };
  std::vector<Case> cases;
  {
    Params p;
    p.max_disparity = 48;
    cases.push_back({"step 203x131", make_step_pair(203, 131, 6, 30, 1), p});
  }
  {
    Params p;
    p.max_disparity = 64;
    p.window = WindowVariant::Best4;
    p.subwindow_radius = 1;
    cases.push_back({"slanted 160x97 best4 r1", make_slanted_pair(160, 97, 8.0f, 0.12f, 2), p});
  }
  {
    Params p;
    p.min_disparity = 4;
    p.max_disparity = 40;
    p.window = WindowVariant::Box;
    p.lr_check = false;
    p.subpixel = false;
    p.levels = 2;
    cases.push_back({"plane 77x45 box no-check", make_plane_pair(77, 45, 17, 3), p});
  }
  {
    Params p;
    p.max_disparity = 96;
    p.window = WindowVariant::Best1;
    p.lr_tolerance = 0;
    p.hole_search_radius = 4;
    cases.push_back({"step 257x120 best1 tol0", make_step_pair(257, 120, 10, 60, 4), p});
  }
  {
    // Every neighbour must agree above level 0, holes search their whole
    // span (the wide-pixel paths), three levels.
    Params p;
    p.max_disparity = 120;
    p.levels = 3;
    p.window = WindowVariant::Best2;
    p.min_support = 8;
    p.hole_span = 0;
    cases.push_back({"slanted 230x140 best2 support 8 unbounded holes", make_slanted_pair(230, 140, 12.0f, 0.2f, 5), p});
  }
  {
    // No support filter, the shortest hole span.
    Params p;
    p.max_disparity = 100;
    p.levels = 3;
    p.min_support = 0;
    p.hole_span = 1;
    cases.push_back({"step 190x101 support off hole span 1", make_step_pair(190, 101, 8, 44, 6), p});
  }
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Matcher cpu(c.p);
    auto gpu = make(c.p);
    ASSERT_TRUE(gpu);
    compare_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
  }
}

TEST(CudaEngine, RandomImagesAndYuvInputs) {
  const int w = 131, h = 67;
  Image<uint8_t> l = random_gray(w, h, 21), r = random_gray(w, h, 22);
  // Y planes of I420 with constant chroma: random texture everywhere.
  std::vector<uint8_t> chroma(static_cast<size_t>((w + 1) / 2) * ((h + 1) / 2), 128);
  auto view = [&](const Image<uint8_t>& y, PixelFormat f) {
    FrameView v;
    v.format = f;
    v.width = w;
    v.height = h;
    v.plane[0] = y.pixels.data();
    v.pitch[0] = w;
    v.plane[1] = chroma.data();
    v.pitch[1] = f == PixelFormat::NV12 ? (w + 1) / 2 : (w + 1) / 2;
    v.plane[2] = chroma.data();
    v.pitch[2] = (w + 1) / 2;
    return v;
  };
  Params p;
  p.max_disparity = 32;
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::I420}) {
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_frame(cpu, *gpu, view(l, f), view(r, f));
  }
}

// A synthetic RGBA view as YUY2 or UYVY: Y is its luma, each macropixel's
// U and V come from its first pixel's colour (any values do: the test
// compares with the reference). Rows padded with junk.
std::vector<uint8_t> pack_yuv422(const Image<uint32_t>& rgba, PixelFormat f, int pitch) {
  std::vector<uint8_t> out(static_cast<size_t>(pitch) * rgba.height, 0x3C);
  const bool uyvy = f == PixelFormat::UYVY;
  for (int y = 0; y < rgba.height; ++y)
    for (int x = 0; x < rgba.width; ++x) {
      const uint32_t p = rgba.at(x, y);
      const int r = p & 255, g = (p >> 8) & 255, b = (p >> 16) & 255, luma = luma_from_rgb(r, g, b);
      uint8_t* m = &out[static_cast<size_t>(y) * pitch + 4 * (x / 2)];
      m[(uyvy ? 1 : 0) + 2 * (x % 2)] = static_cast<uint8_t>(luma);
      if (x % 2 == 0) {
        m[uyvy ? 0 : 1] = static_cast<uint8_t>(std::clamp(128 + (b - luma) / 2, 0, 255));
        m[uyvy ? 2 : 3] = static_cast<uint8_t>(std::clamp(128 + (r - luma) / 2, 0, 255));
      }
    }
  return out;
}

// YUY2 and UYVY through the whole pipeline, with the background model (the
// colour path) over a moving-object sequence, at an odd width with padded
// rows: every intermediate and the result equal the reference's.
TEST(CudaEngine, PackedYuv422SequenceMatchesReference) {
  const int w = 141, h = 77, pitch = 4 * ((w + 1) / 2) + 10;
  Params p;
  p.max_disparity = 40;
  p.background = true;
  p.levels = 3;
  p.warmup_frames = 3;
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY}) {
    SCOPED_TRACE(pixel_format_name(f));
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    for (int i = 0; i < 7; ++i) {
      SCOPED_TRACE(::testing::Message() << "frame " << i);
      const SyntheticPair s = make_sequence_frame(w, h, i, 6, 24, 30, i < 3 ? 0 : 24, 5, 0, 91);
      const std::vector<uint8_t> l = pack_yuv422(s.left_rgba, f, pitch), r = pack_yuv422(s.right_rgba, f, pitch);
      FrameView lv;
      lv.format = f;
      lv.width = w;
      lv.height = h;
      lv.plane[0] = l.data();
      lv.pitch[0] = pitch;
      FrameView rv = lv;
      rv.plane[0] = r.data();
      compare_frame(cpu, *gpu, lv, rv);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_FALSE(gpu->stats().warming_up);
    EXPECT_GT(gpu->stats().foreground_fraction, 0.0);
  }
}

TEST(CudaEngine, BackgroundSequenceMatchesReference) {
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.levels = 3;
  p.warmup_frames = 4;
  p.morph_radius = 1;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  for (int i = 0; i < 14; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    const SyntheticPair f = make_sequence_frame(173, 117, i, 8, 28, 40, 30, 5, i >= 10 ? 12 : 0, 77);
    compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    if (::testing::Test::HasFailure()) break;
    if (i == 9) {
      // Static background and one moving object, after the warm-up: the
      // matching covers the object, a part of the frame.
      const FrameStats st = gpu->stats();
      EXPECT_FALSE(st.warming_up);
      EXPECT_GT(st.background_tests, 0u);
      EXPECT_LT(st.background_tests, st.background_tests_full / 2);
      EXPECT_GT(st.foreground_fraction, 0.0);
      EXPECT_LT(st.foreground_fraction, 0.5);
      EXPECT_GT(st.matched_pixels, 0u);
      EXPECT_LT(st.matched_pixels, st.matched_pixels_full / 2);
    }
  }
  // A reset restarts the warm-up on both.
  cpu.reset_background();
  gpu->reset_background();
  const SyntheticPair f = make_sequence_frame(173, 117, 20, 8, 28, 40, 30, 5, 0, 77);
  compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
  EXPECT_TRUE(gpu->stats().warming_up);
}

// Frames whose foreground comes and goes (issue 35): the graph skips the
// matching where no level has foreground and runs it over the foreground's
// tiles elsewhere, which leaves each level's maps unwritten away from the
// foreground: every frame's result, intermediates and counts still equal
// the reference's, through the captured graph, at several sizes and ranges
// (one level, several, a coarsest level searched by either kernel form)
// and with every radius-2 window (and the generic kernel's radius 3); then
// a large foreground, then most of the frame (the body without the masks,
// in the graph and in line), then a scene change.
TEST(CudaEngine, ForegroundThatComesAndGoesMatchesReference) {
  struct Case {
    int w, h, d, levels, radius;
    bool confidence;
  };
  const Case cases[] = {{200, 120, 48, 0, 2, false}, {331, 190, 96, 3, 2, true}, {160, 96, 32, 1, 2, false},
                        {190, 110, 40, 2, 3, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " x " << c.d << ", levels " << c.levels << ", radius "
                                      << c.radius);
    const SyntheticPair scene = make_slanted_pair(c.w, c.h, 4.0f, 0.03f, 17);
    MovingObjectsSpec spec = crossing_objects_spec(c.w, c.h, 2, c.d / 2, 5, 3, 9.0, 6);
    Params p;
    p.max_disparity = c.d;
    p.levels = c.levels;
    p.subwindow_radius = c.radius;
    p.background = true;
    p.warmup_frames = spec.warmup_frames;
    p.confidence = c.confidence;
    p.uniqueness_ratio = c.confidence ? 5 : -1;
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    MovingObjectsFrame f;
    int empty = 0, partial = 0;
    for (int i = 0; i < spec.frames(); ++i) {
      SCOPED_TRACE(::testing::Message() << "frame " << i);
      ASSERT_EQ(render_moving_objects(scene.left_rgba, scene.right_rgba, spec, i, &f), "");
      compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
      if (::testing::Test::HasFailure()) return;
      const FrameStats st = gpu->stats();
      if (!st.warming_up && st.matched_pixels == 0) ++empty;
      if (st.matched_pixels > 0 && st.matched_pixels < st.matched_pixels_full / 2) ++partial;
      // One graph launch a frame from the second on, whose IF node skips
      // the matching where there is no foreground.
      bool skips = false;
      if (i > 0) {
        EXPECT_EQ(gpu->frame_graph_state(&skips), "graph");
        EXPECT_TRUE(skips);
      }
    }
    EXPECT_GT(empty, 0) << "frames without foreground";
    EXPECT_GT(partial, 0) << "frames with some";
    auto phase_where = [&](const MovingObjectsSpec& phase, const char* what, auto&& counts) {
      return frames_where(cpu, *gpu, scene, phase, what, &f, counts);
    };
    // Then a large foreground (half the frame): the graph's other body.
    const int many = phase_where(fraction_objects_spec(c.w, c.h, 0.5, c.d / 2, 0, 6, 5), "large foreground",
                                 [](const FrameStats& st) { return st.foreground_fraction > 0.3; });
    if (::testing::Test::HasFailure()) return;
    EXPECT_GT(many, 0) << "frames with a large foreground";
    // Then objects over most of the frame: both masks past
    // whole_frame_foreground (stages.h) but not whole, the body without the
    // masks, its output kept where the left mask is foreground.
    // (The objects' disparity is small: the right view's mask misses the
    // strip of that width the objects leave uncovered at its left edge.)
    const int mostly = phase_where(fraction_objects_spec(c.w, c.h, 0.95, c.d / 6, 0, 6, 8), "mostly foreground",
                                   [](const FrameStats& st) {
                                     return st.foreground_fraction < 1.0 &&
                                            st.matched_pixels == st.matched_pixels_full;
                                   });
    if (::testing::Test::HasFailure()) return;
    EXPECT_GT(mostly, 0) << "frames mostly foreground, matched whole";
    // The same choice in line, from the counts read back (profile_stages
    // runs the last frame again without the graph): the reference given
    // that frame again makes the same intermediates.
    {
      std::vector<StageTime> times;
      ASSERT_EQ(gpu->profile_stages(&times), "");
      Image<uint16_t> q4(c.w, c.h);
      Outputs o;
      o.disparity_q4 = q4.view();
      ASSERT_EQ(cpu.process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), o), "");
      EXPECT_LT(cpu.stats().foreground_fraction, 1.0);
      EXPECT_EQ(cpu.stats().matched_pixels, cpu.stats().matched_pixels_full) << "matched whole";
      Matcher::Debug gd;
      ASSERT_EQ(gpu->download_debug(&gd), "");
      SCOPED_TRACE("in line, profile_stages");
      expect_same_debug(cpu.debug(), gd, true);
      if (::testing::Test::HasFailure()) return;
    }
    // Then a scene change (one object over both views): where both masks
    // hold every pixel the graph's body without the masks and lists runs,
    // with the same results.
    const int whole = phase_where(fraction_objects_spec(c.w, c.h, 1.0, c.d / 2, 0, 4, 7), "scene change",
                                  [](const FrameStats& st) { return st.foreground_fraction == 1.0; });
    if (::testing::Test::HasFailure()) return;
    EXPECT_GT(whole, 0) << "frames foreground everywhere";
  }
}

// The same kinds of frames with the frame graphs off (set_frame_graphs:
// every frame's launches straight on the stream, its body chosen from the
// counts read back), as compute-sanitizer's racecheck runs the engine
// (gpu-tests.sh: the tool faults on graphs with the SWITCH node,
// bench/RESULTS.md): a small foreground, a large one, most of the frame and
// a scene change, each frame equal to the reference.
TEST(CudaEngine, ForegroundFramesWithoutGraphsMatchReference) {
  const int w = 331, h = 190, d = 96;
  const SyntheticPair scene = make_slanted_pair(w, h, 4.0f, 0.03f, 17);
  const MovingObjectsSpec crossing = crossing_objects_spec(w, h, 2, d / 2, 5, 3, 9.0, 6);
  Params p;
  p.max_disparity = d;
  p.levels = 3;
  p.background = true;
  p.warmup_frames = crossing.warmup_frames;
  p.confidence = true;
  p.uniqueness_ratio = 5;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  ASSERT_EQ(gpu->set_frame_graphs(false), "");
  MovingObjectsFrame f;
  auto phase_where = [&](const MovingObjectsSpec& phase, const char* what, auto&& counts) {
    return frames_where(cpu, *gpu, scene, phase, what, &f, counts, "graphs off");
  };
  const int small = phase_where(crossing, "small foreground", [](const FrameStats& st) {
    return st.matched_pixels > 0 && st.matched_pixels < st.matched_pixels_full / 5;
  });
  EXPECT_GT(small, 0) << "frames with a small foreground";
  const int large = phase_where(fraction_objects_spec(w, h, 0.5, d / 2, 0, 6, 5), "large foreground",
                                [](const FrameStats& st) { return st.foreground_fraction > 0.3; });
  EXPECT_GT(large, 0) << "frames with a large foreground";
  const int mostly = phase_where(fraction_objects_spec(w, h, 0.95, d / 6, 0, 6, 8), "mostly foreground",
                                 [](const FrameStats& st) {
                                   return st.foreground_fraction < 1.0 && st.matched_pixels == st.matched_pixels_full;
                                 });
  EXPECT_GT(mostly, 0) << "frames mostly foreground, matched whole";
  const int whole = phase_where(fraction_objects_spec(w, h, 1.0, d / 2, 0, 4, 7), "scene change",
                                [](const FrameStats& st) { return st.foreground_fraction == 1.0; });
  EXPECT_GT(whole, 0) << "frames foreground everywhere";
}

// set_frame_graphs: off, frames run straight (and equal the reference); on
// again, the next frame runs straight and the one after is a graph launch.
TEST(CudaEngine, FrameGraphsOffAndOnAgain) {
  Params p;
  p.max_disparity = 32;
  p.background = true;
  p.warmup_frames = 2;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  const char* want[] = {"not yet captured", "graph", "graphs off", "graphs off", "not yet captured", "graph", "graph"};
  for (int i = 0; i < 7; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    if (i == 2) ASSERT_EQ(gpu->set_frame_graphs(false), "");
    if (i == 4) ASSERT_EQ(gpu->set_frame_graphs(true), "");
    const SyntheticPair f = make_sequence_frame(120, 80, i, 6, 20, 24, i < 2 ? 0 : 20, 4, 0, 5);
    compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    if (::testing::Test::HasFailure()) return;
    EXPECT_EQ(gpu->frame_graph_state(), want[i]);
  }
}

TEST(CudaEngine, EveryOutputFormatMatchesCpuEngine) {
  Params p;
  p.max_disparity = 64;
  p.background = true;
  p.warmup_frames = 1;
  const SyntheticPair f0 = make_sequence_frame(120, 80, 0, 10, 30, 30, 20, 4, 0, 5);
  const SyntheticPair f1 = make_sequence_frame(120, 80, 3, 10, 30, 30, 20, 4, 0, 5);
  const OutputFormat formats[] = {OutputFormat::DisparityQ4, OutputFormat::DepthMm, OutputFormat::Gray8,
                                  OutputFormat::RGBA, OutputFormat::BGRA, OutputFormat::RGBx, OutputFormat::BGRx};
  for (OutputFormat fmt : formats) {
    SCOPED_TRACE(output_format_name(fmt));
    auto cpu = make_cpu_engine(p);
    std::string err;
    auto gpu = make_cuda_engine(p, -1, &err);
    ASSERT_TRUE(gpu) << err;
    EXPECT_STREQ(gpu->backend_name(), "cuda");
    EncodeParams ep;
    ep.format = fmt;
    ep.colormap = Colormap::Jet;
    ep.alpha_from_mask = true;
    ep.max_disparity = 64;
    ep.baseline_mm = 100.0;
    ep.focal_px = 700.0;
    const int row = 120 * output_bytes_per_pixel(fmt);
    std::vector<uint8_t> a(static_cast<size_t>(row + 8) * 80, 1), b(a.size(), 2);
    OutputFrame oa{a.data(), row + 8, 120, 80, Memory::Host}, ob{b.data(), row + 8, 120, 80, Memory::Host};
    for (const SyntheticPair* f : {&f0, &f1}) {
      ASSERT_EQ(cpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, oa), "");
      ASSERT_EQ(gpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, ob), "");
    }
    size_t diffs = 0;
    for (int y = 0; y < 80; ++y)
      for (int x = 0; x < row; ++x) diffs += a[y * (row + 8) + x] != b[y * (row + 8) + x];
    EXPECT_EQ(diffs, 0u);
  }
}

// What a failing CUDA call says: the user's sentence (the CUDA message and
// error name), with the call, file and line apart as the detail that the
// element puts in the debug string only.
TEST(CudaEngine, ErrorTextKeepsSourceLocationsInTheDetail) {
  const ErrorParts parts = split_error_text(
      "backend=cuda was requested but " +
      cuda_error_text(cudaErrorMemoryAllocation, "cudaMalloc(&m.buf[0], n)", "../cuda/cuda_engine.cu", 812));
  EXPECT_EQ(parts.message, std::string("backend=cuda was requested but the GPU reported an error: ") +
                               cudaGetErrorString(cudaErrorMemoryAllocation) + " (cudaErrorMemoryAllocation)");
  EXPECT_EQ(parts.detail, "../cuda/cuda_engine.cu:812: cudaMalloc(&m.buf[0], n) failed");
}

TEST(CudaEngine, DeviceFramesOnCallerStream) {
  Params p;
  p.max_disparity = 48;
  const SyntheticPair pair = make_step_pair(150, 90, 5, 25, 8);
  auto dl = upload(pair.left_rgba), dr = upload(pair.right_rgba);
  FrameView lv = rgba_view(pair.left_rgba), rv = rgba_view(pair.right_rgba);
  lv.memory = rv.memory = Memory::Device;
  lv.plane[0] = reinterpret_cast<const uint8_t*>(dl.view().data);
  lv.pitch[0] = dl.view().pitch;
  rv.plane[0] = reinterpret_cast<const uint8_t*>(dr.view().data);
  rv.pitch[0] = dr.view().pitch;
  auto q4 = make_device<uint16_t>(150, 90);
  auto fg = make_device<uint8_t>(150, 90);
  cudaStream_t caller;
  ASSERT_CUDA(cudaStreamCreate(&caller));
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  Outputs o;
  o.memory = Memory::Device;
  o.disparity_q4 = q4.view();
  o.foreground = fg.view();
  ASSERT_EQ(gpu->enqueue(lv, rv, o, caller), "");
  ASSERT_CUDA(cudaStreamSynchronize(caller));  // the caller's stream alone orders the result
  Matcher cpu(p);
  Image<uint16_t> cq4(150, 90);
  Outputs co;
  co.disparity_q4 = cq4.view();
  ASSERT_EQ(cpu.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), co), "");
  EXPECT_TRUE(same_image(cq4, download(q4)));
  EXPECT_TRUE(same_image(Image<uint8_t>(150, 90, 255), download(fg)));
  // Host views are refused by the asynchronous call, with a reason.
  EXPECT_NE(gpu->enqueue(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), o, caller), "");
  cudaStreamDestroy(caller);
}

// Two frames in flight: a run of different frames, each into its own
// output and all into one shared output, against the CPU reference; the
// shared output must hold the last frame (outputs in enqueue order), and
// stats and intermediates speak of the last frame.
// Device copies of the pairs' views, and views of them in device memory.
void upload_pairs(const std::vector<SyntheticPair>& pairs, std::vector<DeviceImage<uint32_t>>* planes,
                  std::vector<FrameView>* lefts, std::vector<FrameView>* rights) {
  for (const SyntheticPair& pair : pairs)
    for (const auto* img : {&pair.left_rgba, &pair.right_rgba}) {
      planes->push_back(upload(*img));
      FrameView v = rgba_view(*img);
      v.memory = Memory::Device;
      v.plane[0] = reinterpret_cast<const uint8_t*>(planes->back().view().data);
      v.pitch[0] = planes->back().view().pitch;
      (img == &pair.left_rgba ? lefts : rights)->push_back(v);
    }
}

TEST(CudaEngine, TwoFramesInFlightMatchTheReference) {
  Params p;
  p.max_disparity = 64;
  constexpr int kW = 211, kH = 97, kFrames = 7;
  std::vector<SyntheticPair> pairs;
  for (int i = 0; i < kFrames; ++i)
    pairs.push_back(i % 2 ? make_step_pair(kW, kH, 4 + i, 30 + 2 * i, 11 + i)
                          : make_slanted_pair(kW, kH, 6.0f + i, 0.12f, 21 + i));
  std::vector<DeviceImage<uint32_t>> planes;
  std::vector<FrameView> lefts, rights;
  upload_pairs(pairs, &planes, &lefts, &rights);
  std::vector<Image<uint16_t>> want;
  Matcher cpu(p);
  FrameStats last_cpu;
  for (int i = 0; i < kFrames; ++i) {
    want.emplace_back(kW, kH);
    Outputs co;
    co.disparity_q4 = want.back().view();
    ASSERT_EQ(cpu.process(rgba_view(pairs[i].left_rgba), rgba_view(pairs[i].right_rgba), co), "");
    last_cpu = cpu.stats();
  }

  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  EXPECT_NE(gpu->set_frames_in_flight(3), "");
  ASSERT_EQ(gpu->set_frames_in_flight(2), "");
  EXPECT_EQ(gpu->frames_in_flight(), 2);
  std::vector<DeviceImage<uint16_t>> own;
  auto shared = make_device<uint16_t>(kW, kH);
  for (int round = 0; round < 2; ++round) {  // the second round runs on built graphs
    own.clear();
    for (int i = 0; i < kFrames; ++i) {
      own.push_back(make_device<uint16_t>(kW, kH));
      for (auto* q4 : {&own.back(), &shared}) {
        Outputs o;
        o.memory = Memory::Device;
        o.disparity_q4 = q4->view();
        ASSERT_EQ(gpu->enqueue(lefts[i], rights[i], o, nullptr), "");
      }
    }
    ASSERT_EQ(gpu->synchronize(), "");
    for (int i = 0; i < kFrames; ++i) EXPECT_TRUE(same_image(want[i], download(own[i]))) << "round " << round << ", frame " << i;
    EXPECT_TRUE(same_image(want[kFrames - 1], download(shared))) << "round " << round << ": the shared output";
  }
  const FrameStats gs = gpu->stats();
  EXPECT_EQ(gs.frame_index, 4u * kFrames);
  EXPECT_DOUBLE_EQ(gs.valid_fraction, last_cpu.valid_fraction);
  Matcher::Debug gd;
  ASSERT_EQ(gpu->download_debug(&gd), "");
  expect_same_debug(cpu.debug(), gd, false);

  // Blocking calls and calls with a caller stream use the first set, after
  // what is queued; dropping the twin keeps the engine working.
  compare_frame(cpu, *gpu, rgba_view(pairs[2].left_rgba), rgba_view(pairs[2].right_rgba));
  EXPECT_EQ(gpu->stats().frame_index, 4u * kFrames + 1);
  ASSERT_EQ(gpu->set_frames_in_flight(1), "");
  EXPECT_EQ(gpu->frames_in_flight(), 1);
  compare_frame(cpu, *gpu, rgba_view(pairs[3].left_rgba), rgba_view(pairs[3].right_rgba));
  EXPECT_EQ(gpu->stats().frame_index, 4u * kFrames + 2);
}

// Two frames in flight with the background model: both sets run one model,
// each frame's model passes after the previous frame's on the other set.
// Every frame's disparities and mask equal the reference's, through a
// sequence whose foreground comes and goes, then covers half the frame,
// most of it and all of it (every body of the graph's SWITCH); then at
// another size (the first set's model made again for it, from a frame on
// either set), and after dropping the twin (the first set's model goes on).
TEST(CudaEngine, TwoFramesInFlightRunOneBackgroundModel) {
  std::vector<SyntheticPair> pairs;
  std::vector<int> phase_start;
  auto add_phase = [&](int w, int h, const MovingObjectsSpec& spec) {
    const SyntheticPair scene = make_slanted_pair(w, h, 4.0f, 0.03f, 17);
    phase_start.push_back(static_cast<int>(pairs.size()));
    MovingObjectsFrame f;
    for (int i = 0; i < spec.frames(); ++i) {
      ASSERT_EQ(render_moving_objects(scene.left_rgba, scene.right_rgba, spec, i, &f), "");
      SyntheticPair pair;
      pair.left_rgba = f.left_rgba;
      pair.right_rgba = f.right_rgba;
      pairs.push_back(std::move(pair));
    }
  };
  constexpr int kW = 200, kH = 120, kD = 48;
  const MovingObjectsSpec crossing = crossing_objects_spec(kW, kH, 2, kD / 2, 5, 3, 9.0, 6);
  add_phase(kW, kH, crossing);
  add_phase(kW, kH, fraction_objects_spec(kW, kH, 0.5, kD / 2, 0, 6, 5));
  add_phase(kW, kH, fraction_objects_spec(kW, kH, 0.95, kD / 6, 0, 6, 8));
  add_phase(kW, kH, fraction_objects_spec(kW, kH, 1.0, kD / 2, 0, 4, 7));
  // Another size: an odd number of frames before it, so that its first
  // frame lands on the twin.
  if (pairs.size() % 2 == 0) pairs.push_back(pairs.back());
  add_phase(151, 93, crossing_objects_spec(151, 93, 1, kD / 2, 5, 8, 6.0, 3));
  if (::testing::Test::HasFailure()) return;
  const int frames = static_cast<int>(pairs.size());
  std::vector<DeviceImage<uint32_t>> planes;
  std::vector<FrameView> lefts, rights;
  upload_pairs(pairs, &planes, &lefts, &rights);

  Params p;
  p.max_disparity = kD;
  p.background = true;
  p.warmup_frames = crossing.warmup_frames;
  Matcher cpu(p);
  std::vector<Image<uint16_t>> want_q4;
  std::vector<Image<uint8_t>> want_fg;
  std::vector<FrameStats> want_stats;
  for (int i = 0; i < frames; ++i) {
    const int w = pairs[i].left_rgba.width, h = pairs[i].left_rgba.height;
    want_q4.emplace_back(w, h);
    want_fg.emplace_back(w, h);
    Outputs co;
    co.disparity_q4 = want_q4.back().view();
    co.foreground = want_fg.back().view();
    ASSERT_EQ(cpu.process(rgba_view(pairs[i].left_rgba), rgba_view(pairs[i].right_rgba), co), "");
    want_stats.push_back(cpu.stats());
  }

  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  ASSERT_EQ(gpu->set_frames_in_flight(2), "");
  std::vector<DeviceImage<uint16_t>> q4;
  std::vector<DeviceImage<uint8_t>> fg;
  int partial = 0, empty = 0, whole = 0;
  for (int i = 0; i < frames; ++i) {
    const int w = pairs[i].left_rgba.width, h = pairs[i].left_rgba.height;
    q4.push_back(make_device<uint16_t>(w, h));
    fg.push_back(make_device<uint8_t>(w, h));
    Outputs o;
    o.memory = Memory::Device;
    o.disparity_q4 = q4.back().view();
    o.foreground = fg.back().view();
    ASSERT_EQ(gpu->enqueue(lefts[i], rights[i], o, nullptr), "") << "frame " << i;
    const FrameStats& c = want_stats[i];
    if (!c.warming_up && c.matched_pixels == 0) ++empty;
    if (c.matched_pixels > 0 && c.matched_pixels < c.matched_pixels_full / 2) ++partial;
    if (c.foreground_fraction == 1.0) ++whole;
  }
  ASSERT_EQ(gpu->synchronize(), "");
  EXPECT_GT(empty, 0) << "frames without foreground";
  EXPECT_GT(partial, 0) << "frames with a little";
  EXPECT_GT(whole, 0) << "frames foreground everywhere";
  for (int i = 0; i < frames; ++i) {
    EXPECT_TRUE(same_image(want_q4[i], download(q4[i]))) << "frame " << i << ": Q4";
    EXPECT_TRUE(same_image(want_fg[i], download(fg[i]))) << "frame " << i << ": foreground";
  }
  const FrameStats gs = gpu->stats();
  EXPECT_EQ(gs.frame_index, static_cast<uint64_t>(frames));
  EXPECT_EQ(gs.warming_up, want_stats.back().warming_up);
  EXPECT_FALSE(gs.warming_up);
  EXPECT_EQ(gs.background_tests, want_stats.back().background_tests);
  EXPECT_DOUBLE_EQ(gs.foreground_fraction, want_stats.back().foreground_fraction);
  EXPECT_EQ(gs.matched_pixels, want_stats.back().matched_pixels);

  // One set again: the first set's model goes on, frame for frame.
  ASSERT_EQ(gpu->set_frames_in_flight(1), "");
  for (int i = phase_start.back(); i < phase_start.back() + 4 && i < frames; ++i) {
    SCOPED_TRACE(::testing::Message() << "one set, frame " << i);
    compare_frame(cpu, *gpu, rgba_view(pairs[i].left_rgba), rgba_view(pairs[i].right_rgba));
  }
}

TEST(CudaEngine, BadInputGivesReasons) {
  Params p;
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  const SyntheticPair a = make_plane_pair(64, 48, 4, 1), b = make_plane_pair(80, 48, 4, 1);
  std::vector<uint8_t> out(64 * 48 * 2);
  OutputFrame of{out.data(), 128, 64, 48, Memory::Host};
  EncodeParams ep;
  EXPECT_NE(gpu->process(rgba_view(a.left_rgba), rgba_view(b.right_rgba), ep, of), "");
  FrameView missing = rgba_view(a.left_rgba);
  missing.plane[0] = nullptr;
  EXPECT_NE(gpu->process(missing, rgba_view(a.right_rgba), ep, of), "");
  Params bad;
  bad.max_disparity = -3;
  std::string err;
  EXPECT_FALSE(make_cuda_engine(bad, -1, &err));
  EXPECT_NE(err, "");
  EXPECT_FALSE(make_cuda_engine(p, 1000, &err));
  EXPECT_NE(gpu->set_params(bad), "");
  // Wider than the kernels' 32-bit row offsets and packed wide-pixel
  // coordinates allow: refused by name, before anything is allocated.
  const SyntheticPair huge = make_plane_pair(16385, 32, 4, 1);
  std::vector<uint8_t> huge_out(16385 * 32 * 2);
  OutputFrame huge_of{huge_out.data(), 16385 * 2, 16385, 32, Memory::Host};
  const std::string refused = gpu->process(rgba_view(huge.left_rgba), rgba_view(huge.right_rgba), ep, huge_of);
  EXPECT_NE(refused.find("up to 16384 x 16384"), std::string::npos) << refused;
  // Still works after the refusals.
  EXPECT_EQ(gpu->process(rgba_view(a.left_rgba), rgba_view(a.right_rgba), ep, of), "");
}

TEST(CudaEngine, SeveralEnginesConcurrently) {
  constexpr int kThreads = 4, kFrames = 6;
  std::vector<std::vector<Image<uint16_t>>> expected(kThreads);
  std::vector<Params> params(kThreads);
  auto scene = [](int t, int i) { return make_sequence_frame(140 + 8 * t, 90, i, 6 + t, 30, 30, 24, 3 + t, 0, 40 + t); };
  for (int t = 0; t < kThreads; ++t) {
    params[t].max_disparity = 48 + 16 * t;
    params[t].background = t % 2 == 1;
    params[t].warmup_frames = 2;
    params[t].subwindow_radius = 1 + t % 3;
    Matcher cpu(params[t]);
    for (int i = 0; i < kFrames; ++i) {
      const SyntheticPair f = scene(t, i);
      Image<uint16_t> q4(f.left_rgba.width, f.left_rgba.height);
      Outputs o;
      o.disparity_q4 = q4.view();
      ASSERT_EQ(cpu.process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), o), "");
      expected[t].push_back(std::move(q4));
    }
  }
  std::vector<int> mismatched(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::string err;
      auto gpu = CudaEngine::create(params[t], -1, &err);
      if (!gpu) return;
      int bad = 0;
      for (int i = 0; i < kFrames; ++i) {
        const SyntheticPair f = scene(t, i);
        const int w = f.left_rgba.width, h = f.left_rgba.height;
        std::vector<uint16_t> out(static_cast<size_t>(w) * h);
        OutputFrame of{reinterpret_cast<uint8_t*>(out.data()), w * 2, w, h, Memory::Host};
        EncodeParams ep;
        if (gpu->process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), ep, of) != "") {
          ++bad;
          continue;
        }
        if (out != expected[t][i].pixels) ++bad;
      }
      mismatched[t] = bad;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatched[t], 0) << "engine " << t;
}

// ---- upload ahead

// Host memory from alloc_pinned, freed on scope exit.
struct PinnedBytes {
  uint8_t* data = nullptr;
  explicit PinnedBytes(size_t n) {
    std::string err;
    data = static_cast<uint8_t*>(alloc_pinned(n, &err));
    EXPECT_NE(data, nullptr) << err;
  }
  ~PinnedBytes() { free_pinned(data); }
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
};

// A copy of an RGBA view in pinned memory, rows padded by `pad` bytes.
FrameView pinned_copy(const Image<uint32_t>& img, PinnedBytes* store, int pad) {
  const std::ptrdiff_t pitch = img.width * 4 + pad;
  for (int y = 0; y < img.height; ++y) std::memcpy(store->data + y * pitch, &img.at(0, y), img.width * 4);
  FrameView v = rgba_view(img);
  v.plane[0] = store->data;
  v.pitch[0] = pitch;
  return v;
}

std::vector<uint16_t> process_q4(CudaEngine& gpu, const FrameView& l, const FrameView& r, std::string* err) {
  std::vector<uint16_t> out(static_cast<size_t>(l.width) * l.height, 0xBEEF);
  OutputFrame of{reinterpret_cast<uint8_t*>(out.data()), l.width * 2, l.width, l.height, Memory::Host};
  EncodeParams ep;
  *err = gpu.process(l, r, ep, of);
  return out;
}

// profile_graph runs the last frame as its graph does: the marks come in
// the graph's dependency order (the branch's census of a level before the
// frame's stream takes that level up, a level's refinement after it, the
// finish last), every level has its marks, and the frames around it give
// the reference's result.
TEST(CudaEngine, ProfileGraphMarksTheGraphedFrame) {
  Params p;
  p.max_disparity = 256;  // 320x240: three levels (80x60 x 64 at the coarsest)
  const SyntheticPair pair = make_step_pair(320, 240, 20, 140, 5);
  const FrameView l = rgba_view(pair.left_rgba), r = rgba_view(pair.right_rgba);
  Matcher cpu(p);
  Image<uint16_t> cq4(320, 240);
  Outputs co;
  co.disparity_q4 = cq4.view();
  ASSERT_EQ(cpu.process(l, r, co), "");
  const std::vector<uint16_t> want(cq4.pixels.begin(), cq4.pixels.end());
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::vector<TimelineMark> marks;
  EXPECT_NE(gpu->profile_graph(&marks), "");  // no frame yet
  std::string err;
  for (int frame = 0; frame < 3; ++frame) {  // eager, captured, replayed
    EXPECT_TRUE(process_q4(*gpu, l, r, &err) == want) << "frame " << frame;
    ASSERT_EQ(err, "");
  }
  const int levels = gpu->stats().levels;
  ASSERT_EQ(levels, 3);
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(gpu->profile_graph(&marks), "");
    ASSERT_GE(marks.size(), 2u);
    EXPECT_EQ(marks.front().name, "convert");
    EXPECT_EQ(marks.back().name, "finish");
    auto find = [&](const std::string& name, int level, bool side) -> const TimelineMark* {
      for (const TimelineMark& m : marks)
        if (m.name == name && m.level == level && m.side == side) return &m;
      return nullptr;
    };
    const float end = marks.back().ms;
    for (const TimelineMark& m : marks) {
      EXPECT_GE(m.ms, 0.0f) << m.name;
      EXPECT_LE(m.ms, end) << m.name << " after the finish";
    }
    const TimelineMark* coarsest = find("match coarsest", levels - 1, false);
    ASSERT_NE(coarsest, nullptr);
    EXPECT_GE(coarsest->ms, find("census", levels - 1, false)->ms);
    for (int lv = 0; lv + 1 < levels; ++lv) {
      SCOPED_TRACE(::testing::Message() << "level " << lv);
      const TimelineMark* census = find("census", lv, true);
      const TimelineMark* tiles = find("tile order", lv, true);
      const TimelineMark* joined = find("joined", lv, false);
      const TimelineMark* refine = find("refine", lv, false);
      ASSERT_TRUE(census && tiles && joined && refine);
      EXPECT_LE(tiles->ms, census->ms);
      EXPECT_LE(census->ms, joined->ms);
      EXPECT_LE(joined->ms, refine->ms);
      EXPECT_LE(find("refine", lv + 1, false) ? find("refine", lv + 1, false)->ms : coarsest->ms, joined->ms);
    }
  }
  // The profile leaves the engine's own graph and buffers as they were.
  EXPECT_TRUE(process_q4(*gpu, l, r, &err) == want) << "after the profile";
  std::vector<StageTime> times;
  EXPECT_EQ(gpu->profile_stages(&times), "");
  EXPECT_TRUE(process_q4(*gpu, l, r, &err) == want) << "after both profiles";
}

// A second thread uploads frame i + 1.. while the main thread processes
// frame i from upload slots; every result must be the one process() gives
// for the host views. Pageable and pinned (padded) sources alternate, the
// scene moves and the background model carries state from frame to frame.
TEST(CudaEngine, UploadAheadFromAnotherThreadMatchesHostFrames) {
  constexpr int kFrames = 10, w = 150, h = 90;
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.warmup_frames = 3;
  std::vector<SyntheticPair> frames;
  for (int i = 0; i < kFrames; ++i) frames.push_back(make_sequence_frame(w, h, i, 6, 26, 36, 28, 7, 0, 91));
  std::vector<std::vector<uint16_t>> expected;
  {
    auto ref = make(p);
    ASSERT_TRUE(ref);
    for (const SyntheticPair& f : frames) {
      std::string err;
      expected.push_back(process_q4(*ref, rgba_view(f.left_rgba), rgba_view(f.right_rgba), &err));
      ASSERT_EQ(err, "");
    }
  }
  std::vector<std::unique_ptr<PinnedBytes>> pinned;  // outlive every upload that reads them
  std::vector<FrameView> sources[2];
  for (int i = 0; i < kFrames; ++i)
    for (int v = 0; v < 2; ++v) {
      const Image<uint32_t>& img = v == 0 ? frames[i].left_rgba : frames[i].right_rgba;
      if (i % 2 == 0) {
        sources[v].push_back(rgba_view(img));
      } else {
        pinned.push_back(std::make_unique<PinnedBytes>(static_cast<size_t>(w * 4 + 12) * h));
        sources[v].push_back(pinned_copy(img, pinned.back().get(), 12));
        ASSERT_TRUE(is_pinned(sources[v].back().plane[0]));
      }
    }

  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::mutex lock;
  std::condition_variable ready;
  std::deque<std::pair<FrameView, FrameView>> uploaded;
  std::string producer_error;
  int busy_answers = 0;
  std::thread producer([&] {
    for (int i = 0; i < kFrames; ++i) {
      FrameView d[2];
      for (int v = 0; v < 2; ++v) {
        // Slots come back as the main thread finishes frames: retry.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (;;) {
          const std::string e = gpu->upload_ahead(sources[v][i], &d[v]);
          if (e.empty()) break;
          std::lock_guard<std::mutex> g(lock);
          ++busy_answers;
          if (std::chrono::steady_clock::now() > give_up) {
            producer_error = "frame " + std::to_string(i) + ": " + e;
            ready.notify_all();
            return;
          }
          std::this_thread::yield();
        }
      }
      std::lock_guard<std::mutex> g(lock);
      uploaded.emplace_back(d[0], d[1]);
      ready.notify_all();
    }
  });
  for (int i = 0; i < kFrames; ++i) {
    std::pair<FrameView, FrameView> views;
    {
      std::unique_lock<std::mutex> g(lock);
      ready.wait(g, [&] { return !uploaded.empty() || !producer_error.empty(); });
      if (uploaded.empty()) break;
      views = uploaded.front();
      uploaded.pop_front();
    }
    EXPECT_EQ(views.first.memory, Memory::Device);
    std::string err;
    const std::vector<uint16_t> got = process_q4(*gpu, views.first, views.second, &err);
    ASSERT_EQ(err, "") << "frame " << i;
    EXPECT_TRUE(got == expected[i]) << "frame " << i << " differs from the host-memory result";
  }
  producer.join();
  EXPECT_EQ(producer_error, "");
  ::testing::Test::RecordProperty("upload_slots_busy_answers", busy_answers);
  // The profiler refuses a frame whose inputs the engine may refill.
  std::vector<StageTime> times;
  EXPECT_NE(gpu->profile_stages(&times), "");
  std::vector<TimelineMark> marks;
  EXPECT_NE(gpu->profile_graph(&marks), "");
}

// A packed frame uploaded whole, its halves processed as the two views
// (what the element does for side-by-side input): I420 with odd chroma
// offsets and RGBA, against the host halves.
TEST(CudaEngine, UploadAheadPackedFrameHalves) {
  const int w = 96, h = 70;  // one view; the frame is 2w x h
  Params p;
  p.max_disparity = 32;
  const Image<uint8_t> yl = random_gray(w, h, 5), yr = random_gray(w, h, 6);
  const Image<uint8_t> chroma = random_gray(w, (h + 1) / 2, 7);  // both views' chroma side by side
  std::vector<uint8_t> y_plane(static_cast<size_t>(2 * w) * h);
  for (int y = 0; y < h; ++y) {
    std::memcpy(&y_plane[y * 2 * w], &yl.at(0, y), w);
    std::memcpy(&y_plane[y * 2 * w + w], &yr.at(0, y), w);
  }
  FrameView whole;
  whole.format = PixelFormat::I420;
  whole.width = 2 * w;
  whole.height = h;
  whole.plane[0] = y_plane.data();
  whole.pitch[0] = 2 * w;
  whole.plane[1] = whole.plane[2] = chroma.pixels.data();
  whole.pitch[1] = whole.pitch[2] = w;
  auto half = [&](const FrameView& f, int which) {
    FrameView v = f;
    v.width = w;
    if (which == 1) {
      v.plane[0] += w;
      v.plane[1] += w / 2;
      v.plane[2] += w / 2;
    }
    return v;
  };
  auto ref = make(p);
  auto gpu = make(p);
  ASSERT_TRUE(ref && gpu);
  std::string err;
  const auto expected = process_q4(*ref, half(whole, 0), half(whole, 1), &err);
  ASSERT_EQ(err, "");
  FrameView dev;
  ASSERT_EQ(gpu->upload_ahead(whole, &dev), "");
  // The host frame may change as soon as upload_ahead returns (pageable: staged).
  std::fill(y_plane.begin(), y_plane.end(), 0);
  const auto got = process_q4(*gpu, half(dev, 0), half(dev, 1), &err);
  ASSERT_EQ(err, "");
  EXPECT_TRUE(got == expected) << "I420 halves of an uploaded frame differ";

  // RGBA side by side, same engine (the slots take a new shape).
  const SyntheticPair pair = make_step_pair(w, h, 4, 20, 9);
  std::vector<uint32_t> packed(static_cast<size_t>(2 * w) * h);
  for (int y = 0; y < h; ++y) {
    std::memcpy(&packed[y * 2 * w], &pair.left_rgba.at(0, y), w * 4);
    std::memcpy(&packed[y * 2 * w + w], &pair.right_rgba.at(0, y), w * 4);
  }
  const auto expected_rgba = process_q4(*ref, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), &err);
  ASSERT_EQ(err, "");
  FrameView rgba;
  rgba.format = PixelFormat::RGBA;
  rgba.width = 2 * w;
  rgba.height = h;
  rgba.plane[0] = reinterpret_cast<const uint8_t*>(packed.data());
  rgba.pitch[0] = 2 * w * 4;
  ASSERT_EQ(gpu->upload_ahead(rgba, &dev), "");
  FrameView right_half = dev;
  right_half.width = w;
  right_half.plane[0] += w * 4;
  FrameView left_half = dev;
  left_half.width = w;
  EXPECT_TRUE(process_q4(*gpu, left_half, right_half, &err) == expected_rgba);
  EXPECT_EQ(err, "");
}

// Every slot taken: upload_ahead says so at once instead of waiting. A
// released slot, and the slots of a processed frame, take uploads again.
TEST(CudaEngine, UploadAheadSlotsRunOutAndComeBack) {
  Params p;
  p.max_disparity = 32;
  const SyntheticPair pair = make_plane_pair(80, 48, 5, 3);
  const FrameView l = rgba_view(pair.left_rgba), r = rgba_view(pair.right_rgba);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::string err;
  const auto expected = process_q4(*gpu, l, r, &err);
  ASSERT_EQ(err, "");

  std::vector<FrameView> taken(CudaEngine::kUploadSlots);
  for (int k = 0; k < CudaEngine::kUploadSlots; ++k)
    ASSERT_EQ(gpu->upload_ahead(k % 2 == 0 ? l : r, &taken[k]), "") << "slot " << k;
  FrameView extra;
  const std::string full = gpu->upload_ahead(l, &extra);
  EXPECT_NE(full, "") << "a seventh upload must be refused while six slots are taken";

  // Released: reusable at once.
  gpu->release_upload(taken[0]);
  EXPECT_EQ(gpu->upload_ahead(l, &taken[0]), "");
  EXPECT_NE(gpu->upload_ahead(l, &extra), "");
  // Releasing a view twice, or one of no slot, changes nothing.
  gpu->release_upload(taken[2]);
  gpu->release_upload(taken[2]);
  FrameView stranger = l;
  stranger.memory = Memory::Device;
  gpu->release_upload(stranger);
  ASSERT_EQ(gpu->upload_ahead(l, &taken[2]), "");
  EXPECT_NE(gpu->upload_ahead(l, &extra), "");

  // Processing a pair of slots frees both (process() is synchronous).
  EXPECT_TRUE(process_q4(*gpu, taken[0], taken[1], &err) == expected);
  EXPECT_EQ(err, "");
  FrameView again[2];
  EXPECT_EQ(gpu->upload_ahead(l, &again[0]), "");
  EXPECT_EQ(gpu->upload_ahead(r, &again[1]), "");
  EXPECT_NE(gpu->upload_ahead(l, &extra), "");
  // A failing call gives its slots back too.
  OutputFrame bad{nullptr, 0, 80, 48, Memory::Host};
  EXPECT_NE(gpu->process(again[0], again[1], EncodeParams(), bad), "");
  ASSERT_EQ(gpu->synchronize(), "");  // they come back in stream order
  EXPECT_EQ(gpu->upload_ahead(l, &extra), "");
  EXPECT_EQ(gpu->upload_ahead(r, &again[1]), "");
  gpu->release_upload(again[1]);
  gpu->release_upload(extra);
  for (int k = 2; k < CudaEngine::kUploadSlots; ++k) gpu->release_upload(taken[k]);

  // Refusals with reasons.
  EXPECT_NE(gpu->upload_ahead(stranger, &extra), "") << "device views are not uploaded";
  FrameView empty;
  EXPECT_NE(gpu->upload_ahead(empty, &extra), "");
  FrameView no_plane = l;
  no_plane.plane[0] = nullptr;
  EXPECT_NE(gpu->upload_ahead(no_plane, &extra), "");
}

// ---- host memory page-locked in place (register_host)

// Page-aligned pageable host memory, freed on scope exit.
struct PageBytes {
  uint8_t* data = nullptr;
  size_t size = 0;
  explicit PageBytes(size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size = (n + page - 1) / page * page;
    data = static_cast<uint8_t*>(std::aligned_alloc(page, size));
    EXPECT_NE(data, nullptr);
  }
  ~PageBytes() { std::free(data); }
  PageBytes(const PageBytes&) = delete;
  PageBytes& operator=(const PageBytes&) = delete;
};

// Ordinary memory registered where it lies (what the element's pin in place
// does with system memory that comes back): every byte of the range reads
// as pinned, not only its start (is_pinned() is how the engine decides that
// a plane, e.g. the right half of a side-by-side frame, goes up by DMA where
// it lies); the engine's results from it, direct and uploaded ahead, equal
// those from the same pixels in pageable memory and change with the
// memory's contents; a second registration is answered as pinned already
// and leaves no CUDA error behind; unregistered, the memory is pageable
// again.
TEST(CudaEngine, HostMemoryRegisteredInPlace) {
  const int w = 150, h = 90, pad = 12;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Params p;
  p.max_disparity = 40;
  const SyntheticPair a = make_plane_pair(w, h, 7, 31), b = make_step_pair(w, h, 5, 25, 32);
  const std::ptrdiff_t pitch = w * 4 + pad;
  PageBytes mem(static_cast<size_t>(pitch) * h * 2);
  auto put = [&](const SyntheticPair& pair, FrameView* l, FrameView* r) {
    for (int v = 0; v < 2; ++v) {
      const Image<uint32_t>& img = v == 0 ? pair.left_rgba : pair.right_rgba;
      uint8_t* base = mem.data + v * pitch * h;
      for (int y = 0; y < h; ++y) std::memcpy(base + y * pitch, &img.at(0, y), w * 4);
      FrameView& view = v == 0 ? *l : *r;
      view = rgba_view(img);
      view.plane[0] = base;
      view.pitch[0] = pitch;
    }
  };
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::string err;
  const auto expected_a = process_q4(*gpu, rgba_view(a.left_rgba), rgba_view(a.right_rgba), &err);
  ASSERT_EQ(err, "");
  const auto expected_b = process_q4(*gpu, rgba_view(b.left_rgba), rgba_view(b.right_rgba), &err);
  ASSERT_EQ(err, "");

  EXPECT_FALSE(is_pinned(mem.data));
  ASSERT_EQ(register_host(mem.data, mem.size, &err), HostRegistration::Registered) << err;
  for (size_t at : {size_t{0}, size_t{1}, page - 1, page, mem.size / 2 + 3, mem.size - 1})
    EXPECT_TRUE(is_pinned(mem.data + at)) << "byte " << at << " of " << mem.size;
  EXPECT_EQ(register_host(mem.data, mem.size, &err), HostRegistration::AlreadyPinned) << err;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  FrameView l, r;
  put(a, &l, &r);
  EXPECT_TRUE(is_pinned(r.plane[0]));
  EXPECT_TRUE(process_q4(*gpu, l, r, &err) == expected_a) << "direct from registered memory";
  EXPECT_EQ(err, "");
  put(b, &l, &r);
  FrameView dl, dr;
  ASSERT_EQ(gpu->upload_ahead(l, &dl), "");
  ASSERT_EQ(gpu->upload_ahead(r, &dr), "");
  EXPECT_TRUE(process_q4(*gpu, dl, dr, &err) == expected_b) << "uploaded ahead from registered memory";
  EXPECT_EQ(err, "");

  EXPECT_TRUE(unregister_host(mem.data, &err)) << err;
  EXPECT_FALSE(is_pinned(mem.data));
  EXPECT_FALSE(is_pinned(mem.data + mem.size - 1));
  EXPECT_FALSE(unregister_host(mem.data, &err)) << "unregistered twice";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // For the record, not asserted (the driver's business, which the element
  // does not rely on): whether the bytes next to a range that begins and
  // ends inside pages read as pinned, and whether a second range sharing a
  // page with it can be registered (GStreamer's small system memories share
  // pages with their neighbours).
  const size_t off = 100, len = page + 1000;
  ASSERT_EQ(register_host(mem.data + off, len, &err), HostRegistration::Registered) << err;
  const bool before = is_pinned(mem.data + off - 1), after = is_pinned(mem.data + off + len);
  std::string neighbour_err;
  const HostRegistration neighbour = register_host(mem.data + off + len + 8, 500, &neighbour_err);
  std::printf("[ note ] a range inside pages: the byte before it reads as %s, the byte after it as %s; a range "
              "sharing its last page: %s%s%s\n",
              before ? "pinned" : "pageable", after ? "pinned" : "pageable",
              neighbour == HostRegistration::Registered      ? "registered"
              : neighbour == HostRegistration::AlreadyPinned ? "already pinned"
                                                             : "refused",
              neighbour_err.empty() ? "" : ": ", neighbour_err.c_str());
  if (neighbour == HostRegistration::Registered) {
    EXPECT_TRUE(unregister_host(mem.data + off + len + 8, &err)) << err;
  }
  EXPECT_TRUE(unregister_host(mem.data + off, &err)) << err;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// ---- frames in flight (Engine::submit/finish)

// Up to three frames in flight of a background sequence, their views in
// pageable host memory, pinned host memory or device memory (also over two
// sets of frames in flight) and their outputs in pinned host or device
// memory: each frame's output and statistics are those of the same engine's
// process() one frame at a time, and the outputs equal the CPU engine's.
TEST(CudaEngine, FramesInFlightMatchProcess) {
  constexpr int kFrames = 10, w = 150, h = 90;
  Params p;
  p.max_disparity = 40;
  p.background = true;
  p.warmup_frames = 3;
  std::vector<SyntheticPair> seq;
  for (int i = 0; i < kFrames; ++i) seq.push_back(make_sequence_frame(w, h, i, 6, 22, 36, 26, 6, 0, 31));
  const size_t bytes = static_cast<size_t>(w) * h * 2;

  // Expected: process() one at a time, and the CPU engine.
  auto sync = make(p);
  ASSERT_TRUE(sync);
  auto cpu = make_cpu_engine(p);
  std::vector<std::vector<uint16_t>> want(kFrames);
  std::vector<FrameStats> want_stats(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    std::string err;
    want[i] = process_q4(*sync, rgba_view(seq[i].left_rgba), rgba_view(seq[i].right_rgba), &err);
    ASSERT_EQ(err, "");
    want_stats[i] = sync->stats();
    std::vector<uint16_t> c(static_cast<size_t>(w) * h);
    OutputFrame of{reinterpret_cast<uint8_t*>(c.data()), w * 2, w, h, Memory::Host};
    ASSERT_EQ(cpu->process(rgba_view(seq[i].left_rgba), rgba_view(seq[i].right_rgba), EncodeParams(), of), "");
    ASSERT_EQ(c, want[i]) << "frame " << i << ": the GPU's process() differs from the CPU engine";
  }
  EXPECT_GT(want_stats.back().foreground_fraction, 0.0);
  EXPECT_LT(want_stats.back().foreground_fraction, 0.5);

  // Device views also with two sets of frames in flight (one background
  // model), their outputs in device or pinned host memory.
  enum class Views { Pageable, Pinned, Device, DeviceTwoSets, DeviceTwoSetsPinnedOut };
  for (Views views : {Views::Pageable, Views::Pinned, Views::Device, Views::DeviceTwoSets,
                      Views::DeviceTwoSetsPinnedOut}) {
    SCOPED_TRACE(views == Views::Pageable                 ? "pageable views"
                 : views == Views::Pinned                 ? "pinned views"
                 : views == Views::Device                 ? "device views"
                 : views == Views::DeviceTwoSets          ? "device views, two sets"
                                                          : "device views, two sets, pinned outputs");
    const bool device_views = views != Views::Pageable && views != Views::Pinned;
    const bool device_outs = views == Views::Device || views == Views::DeviceTwoSets;
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    if (views == Views::DeviceTwoSets || views == Views::DeviceTwoSetsPinnedOut)
      ASSERT_EQ(gpu->set_frames_in_flight(2), "");
    // Every frame's inputs and outputs stay valid until it finished.
    std::vector<std::unique_ptr<PinnedBytes>> pinned_in, pinned_out;
    std::vector<DeviceImage<uint8_t>> device_in(2 * kFrames), device_out(kFrames);
    std::vector<FrameView> lv(kFrames), rv(kFrames);
    std::vector<OutputFrame> outs(kFrames);
    for (int i = 0; i < kFrames; ++i) {
      lv[i] = rgba_view(seq[i].left_rgba);
      rv[i] = rgba_view(seq[i].right_rgba);
      if (views == Views::Pinned) {
        pinned_in.push_back(std::make_unique<PinnedBytes>(static_cast<size_t>(w * 4 + 12) * h));
        lv[i] = pinned_copy(seq[i].left_rgba, pinned_in.back().get(), 12);
        pinned_in.push_back(std::make_unique<PinnedBytes>(static_cast<size_t>(w * 4 + 12) * h));
        rv[i] = pinned_copy(seq[i].right_rgba, pinned_in.back().get(), 12);
      } else if (device_views) {
        FrameView* v[2] = {&lv[i], &rv[i]};
        const Image<uint32_t>* img[2] = {&seq[i].left_rgba, &seq[i].right_rgba};
        for (int k = 0; k < 2; ++k) {
          DeviceImage<uint8_t>& d = device_in[2 * i + k];
          ASSERT_EQ(d.allocate(w * 4, h), cudaSuccess);
          ASSERT_EQ(cudaMemcpy2D(d.view().data, d.view().pitch, &img[k]->at(0, 0), w * 4, w * 4, h,
                                 cudaMemcpyHostToDevice),
                    cudaSuccess);
          v[k]->plane[0] = d.view().data;
          v[k]->pitch[0] = d.view().pitch;
          v[k]->memory = Memory::Device;
        }
      }
      if (device_outs) {
        ASSERT_EQ(device_out[i].allocate(w * 2, h), cudaSuccess);
        outs[i] = OutputFrame{device_out[i].view().data, device_out[i].view().pitch, w, h, Memory::Device};
      } else {
        pinned_out.push_back(std::make_unique<PinnedBytes>(bytes));
        std::memset(pinned_out.back()->data, 0xEE, bytes);
        outs[i] = OutputFrame{pinned_out.back()->data, w * 2, w, h, Memory::Host};
      }
    }
    int finished = 0;
    auto finish_one = [&] {
      const Engine::FrameResult r = gpu->finish();
      ASSERT_EQ(r.error, "") << "frame " << finished;
      EXPECT_EQ(r.stats.frame_index, want_stats[finished].frame_index) << "frame " << finished;
      EXPECT_EQ(r.stats.warming_up, want_stats[finished].warming_up) << "frame " << finished;
      EXPECT_EQ(r.stats.foreground_fraction, want_stats[finished].foreground_fraction) << "frame " << finished;
      EXPECT_EQ(r.stats.valid_fraction, want_stats[finished].valid_fraction) << "frame " << finished;
      EXPECT_EQ(r.stats.background_tests, want_stats[finished].background_tests) << "frame " << finished;
      std::vector<uint16_t> got(static_cast<size_t>(w) * h);
      if (device_outs)
        ASSERT_EQ(cudaMemcpy2D(got.data(), w * 2, outs[finished].data, outs[finished].pitch, w * 2, h,
                               cudaMemcpyDeviceToHost),
                  cudaSuccess);
      else
        std::memcpy(got.data(), outs[finished].data, bytes);
      EXPECT_EQ(got, want[finished]) << "frame " << finished;
      ++finished;
    };
    for (int i = 0; i < kFrames; ++i) {
      ASSERT_EQ(gpu->submit(lv[i], rv[i], EncodeParams(), outs[i]), "");
      if (gpu->in_flight() == 3) finish_one();
      if (::testing::Test::HasFatalFailure()) return;
    }
    while (gpu->in_flight() > 0) {
      finish_one();
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_EQ(finished, kFrames);
  }
}

// A pageable output runs inside submit(); it still finishes in order with
// the frames queued before it.
TEST(CudaEngine, FramesInFlightWithAPageableOutput) {
  constexpr int w = 120, h = 80;
  Params p;
  p.max_disparity = 32;
  const SyntheticPair f = make_plane_pair(w, h, 9, 4);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::string err;
  const std::vector<uint16_t> want = process_q4(*gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba), &err);
  ASSERT_EQ(err, "");
  PinnedBytes pinned(static_cast<size_t>(w) * h * 2);
  std::vector<uint16_t> pageable(static_cast<size_t>(w) * h, 0xBEEF);
  const OutputFrame a{pinned.data, w * 2, w, h, Memory::Host};
  const OutputFrame b{reinterpret_cast<uint8_t*>(pageable.data()), w * 2, w, h, Memory::Host};
  ASSERT_EQ(gpu->submit(rgba_view(f.left_rgba), rgba_view(f.right_rgba), EncodeParams(), a), "");
  ASSERT_EQ(gpu->submit(rgba_view(f.left_rgba), rgba_view(f.right_rgba), EncodeParams(), b), "");
  EXPECT_EQ(gpu->in_flight(), 2u);
  const Engine::FrameResult ra = gpu->finish(), rb = gpu->finish();
  ASSERT_EQ(ra.error, "");
  ASSERT_EQ(rb.error, "");
  EXPECT_EQ(rb.stats.frame_index, ra.stats.frame_index + 1);
  std::vector<uint16_t> got(static_cast<size_t>(w) * h);
  std::memcpy(got.data(), pinned.data, got.size() * 2);
  EXPECT_EQ(got, want);
  EXPECT_EQ(pageable, want);
  EXPECT_NE(gpu->finish().error, "");  // nothing left
}

// The frame's graph holds the conversion and the finish, whose arguments
// each frame sets: a node left with another frame's arguments would read
// that frame's input or write its output. Frames alternate between two
// scenes (A B A B ...), each in device buffers of its own, into outputs
// that alternate between two device buffers, two frames queued at a time
// (the second's nodes set while the first may still run). Midway the output
// changes form (the Q4 map, then false colour: another finish kernel; then
// 8-bit: the same kernel with other arguments) and so does the input (RGBA,
// then GRAY8: another conversion kernel); last come frames in flight whose
// outputs alternate between device memory (the finish in the graph) and
// pinned memory (the finish after the graph, waiting for the copy that last
// read its buffer). The background model carries state from frame to frame
// and the counters (valid and foreground pixels, background tests) are
// those of each frame. Every output and every count equals the CPU
// engine's over the same sequence.
TEST(CudaEngine, GraphNodesFollowEachFramesBuffers) {
  constexpr int w = 150, h = 90;
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.warmup_frames = 2;
  const SyntheticPair scenes[2] = {make_step_pair(w, h, 5, 25, 8), make_slanted_pair(w, h, 8.0f, 0.1f, 21)};
  // Each scene's views as RGBA and as GRAY8 (their luma), on the host for
  // the CPU engine and in device buffers of their own for the GPU.
  struct SceneViews {
    Image<uint8_t> gray[2];
    DeviceImage<uint8_t> device_rgba[2], device_gray[2];
    FrameView host(PixelFormat f, const SyntheticPair& s, int v) const {
      if (f == PixelFormat::RGBA) return rgba_view(v == 0 ? s.left_rgba : s.right_rgba);
      return gray_view(gray[v]);
    }
    FrameView device(PixelFormat f, const SyntheticPair& s, int v) const {
      FrameView d = host(f, s, v);
      const ImageView<uint8_t>& plane = (f == PixelFormat::RGBA ? device_rgba : device_gray)[v].view();
      d.memory = Memory::Device;
      d.plane[0] = plane.data;
      d.pitch[0] = plane.pitch;
      return d;
    }
  };
  SceneViews views[2];
  for (int k = 0; k < 2; ++k)
    for (int v = 0; v < 2; ++v) {
      const Image<uint32_t>& rgba = v == 0 ? scenes[k].left_rgba : scenes[k].right_rgba;
      Image<uint8_t>& g = views[k].gray[v];
      g = Image<uint8_t>(w, h);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const uint32_t px = rgba.at(x, y);
          g.at(x, y) = luma_from_rgb(px & 255, (px >> 8) & 255, (px >> 16) & 255);
        }
      DeviceImage<uint8_t>& dr = views[k].device_rgba[v];
      ASSERT_EQ(dr.allocate(w * 4, h), cudaSuccess);
      ASSERT_EQ(cudaMemcpy2D(dr.view().data, dr.view().pitch, &rgba.at(0, 0), w * 4, w * 4, h, cudaMemcpyHostToDevice),
                cudaSuccess);
      views[k].device_gray[v] = upload(g);
    }

  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  auto cpu = make_cpu_engine(p);
  int frame = 0;
  // The CPU engine's output and statistics of the sequence's next frame.
  auto expected = [&](PixelFormat in, const EncodeParams& ep, std::vector<uint8_t>* out, FrameStats* st) {
    const int k = frame % 2, row = w * output_bytes_per_pixel(ep.format);
    out->assign(static_cast<size_t>(row) * h, 0);
    const OutputFrame of{out->data(), row, w, h, Memory::Host};
    ASSERT_EQ(cpu->process(views[k].host(in, scenes[k], 0), views[k].host(in, scenes[k], 1), ep, of), "");
    *st = cpu->stats();
  };
  auto same_stats = [](const FrameStats& want, const FrameStats& got) {
    EXPECT_EQ(want.valid_fraction, got.valid_fraction);
    EXPECT_EQ(want.foreground_fraction, got.foreground_fraction);
    EXPECT_EQ(want.background_tests, got.background_tests);
    EXPECT_EQ(want.warming_up, got.warming_up);
  };
  auto differing_bytes = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    size_t n = a.size() == b.size() ? 0 : std::max(a.size(), b.size());
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i];
    return n;
  };

  struct Segment {
    PixelFormat input;
    OutputFormat output;
  };
  const Segment segments[] = {{PixelFormat::RGBA, OutputFormat::DisparityQ4},
                              {PixelFormat::RGBA, OutputFormat::RGBA},
                              {PixelFormat::RGBA, OutputFormat::Gray8},
                              {PixelFormat::GRAY8, OutputFormat::Gray8},
                              {PixelFormat::GRAY8, OutputFormat::DisparityQ4}};
  for (const Segment& seg : segments) {
    EncodeParams ep;
    ep.format = seg.output;
    ep.colormap = Colormap::Turbo;
    ep.max_disparity = p.max_disparity;
    const int row = w * output_bytes_per_pixel(seg.output);
    DeviceImage<uint8_t> outs[2];
    for (auto& o : outs) ASSERT_EQ(o.allocate(row, h), cudaSuccess);
    for (int pair = 0; pair < 4; ++pair) {
      SCOPED_TRACE(::testing::Message() << pixel_format_name(seg.input) << " in, " << output_format_name(seg.output)
                                        << " out, frames " << frame << " and " << frame + 1);
      for (auto& o : outs) ASSERT_CUDA(cudaMemset2D(o.view().data, o.view().pitch, 0xA5, row, h));
      ASSERT_CUDA(cudaDeviceSynchronize());
      std::vector<uint8_t> want[2];
      FrameStats want_stats;
      for (int j = 0; j < 2; ++j, ++frame) {
        expected(seg.input, ep, &want[j], &want_stats);
        const SceneViews& v = views[frame % 2];
        const OutputFrame of{outs[j].view().data, outs[j].view().pitch, w, h, Memory::Device};
        ASSERT_EQ(gpu->enqueue(v.device(seg.input, scenes[frame % 2], 0), v.device(seg.input, scenes[frame % 2], 1),
                               ep, of, nullptr),
                  "");
      }
      ASSERT_EQ(gpu->synchronize(), "");
      for (int j = 0; j < 2; ++j) {
        std::vector<uint8_t> got(static_cast<size_t>(row) * h);
        ASSERT_CUDA(cudaMemcpy2D(got.data(), row, outs[j].view().data, outs[j].view().pitch, row, h,
                                 cudaMemcpyDeviceToHost));
        EXPECT_EQ(differing_bytes(want[j], got), 0u) << "frame " << frame - 2 + j;
      }
      same_stats(want_stats, gpu->stats());  // the pair's second frame
      if (::testing::Test::HasFailure()) return;
    }
  }

  // Frames in flight (the element's way), RGBA in again (another conversion
  // kernel), 8-bit out: device and pinned outputs, each frame its own.
  EncodeParams ep;
  ep.format = OutputFormat::Gray8;
  ep.max_disparity = p.max_disparity;
  const bool pinned[] = {false, false, true, true, false, true, false, true, false, false, true, false};
  constexpr int kFrames = sizeof(pinned) / sizeof(pinned[0]);
  std::vector<std::unique_ptr<PinnedBytes>> pinned_out;
  std::vector<DeviceImage<uint8_t>> device_out(kFrames);
  std::vector<OutputFrame> outs(kFrames);
  std::vector<std::vector<uint8_t>> want(kFrames);
  std::vector<FrameStats> want_stats(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    if (pinned[i]) {
      pinned_out.push_back(std::make_unique<PinnedBytes>(static_cast<size_t>(w) * h));
      std::memset(pinned_out.back()->data, 0xA5, static_cast<size_t>(w) * h);
      outs[i] = OutputFrame{pinned_out.back()->data, w, w, h, Memory::Host};
    } else {
      device_out[i] = make_device<uint8_t>(w, h);
      outs[i] = OutputFrame{device_out[i].view().data, device_out[i].view().pitch, w, h, Memory::Device};
    }
  }
  int finished = 0;
  auto finish_one = [&] {
    SCOPED_TRACE(::testing::Message() << "in flight, frame " << finished << (pinned[finished] ? ", pinned" : ", device")
                                      << " output");
    const Engine::FrameResult r = gpu->finish();
    ASSERT_EQ(r.error, "");
    same_stats(want_stats[finished], r.stats);
    std::vector<uint8_t> got(static_cast<size_t>(w) * h);
    ASSERT_CUDA(cudaMemcpy2D(got.data(), w, outs[finished].data, outs[finished].pitch, w, h, cudaMemcpyDefault));
    EXPECT_EQ(differing_bytes(want[finished], got), 0u);
    ++finished;
  };
  for (int i = 0; i < kFrames; ++i, ++frame) {
    expected(PixelFormat::RGBA, ep, &want[i], &want_stats[i]);
    const SceneViews& v = views[frame % 2];
    ASSERT_EQ(gpu->submit(v.device(PixelFormat::RGBA, scenes[frame % 2], 0),
                          v.device(PixelFormat::RGBA, scenes[frame % 2], 1), ep, outs[i]),
              "");
    if (gpu->in_flight() == 3) finish_one();
    if (::testing::Test::HasFailure()) return;
  }
  while (gpu->in_flight() > 0) {
    finish_one();
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(finished, kFrames);
  EXPECT_FALSE(gpu->stats().warming_up);
}

// The scenes of PipelineMatchesReferenceOnScenes (every kernel: the radius-2
// ones, the generic one at radius 1 and best 4, masks aside; several take one
// level, where the coarsest level is level 0, whose costs the confidence
// reads), one more of one level and the generic kernel over two levels, with
// uniqueness ratios 0, 10 and 25 and the confidence on: every level's raw
// and checked maps (uniqueness at every level, in both views), the Q4 map,
// the level-0 left sweep's costs and the confidence equal the reference's.
// Then uniqueness alone (no costs kept). Each frame twice: the second
// replays the captured graph.
std::vector<std::pair<std::string, std::pair<SyntheticPair, Params>>> uniqueness_scenes() {
  std::vector<std::pair<std::string, std::pair<SyntheticPair, Params>>> out;
  {
    Params p;
    p.max_disparity = 48;
    out.push_back({"step 203x131", {make_step_pair(203, 131, 6, 30, 1), p}});
  }
  {
    Params p;
    p.max_disparity = 64;
    p.window = WindowVariant::Best4;
    p.subwindow_radius = 1;
    out.push_back({"slanted 160x97 best4 r1", {make_slanted_pair(160, 97, 8.0f, 0.12f, 2), p}});
  }
  {
    Params p;
    p.min_disparity = 4;
    p.max_disparity = 40;
    p.window = WindowVariant::Box;
    p.lr_check = false;
    p.subpixel = false;
    p.levels = 2;
    out.push_back({"plane 77x45 box no-check", {make_plane_pair(77, 45, 17, 3), p}});
  }
  {
    Params p;
    p.max_disparity = 96;
    p.window = WindowVariant::Best1;
    p.lr_tolerance = 0;
    p.hole_search_radius = 4;
    out.push_back({"step 257x120 best1 tol0", {make_step_pair(257, 120, 10, 60, 4), p}});
  }
  {
    Params p;
    p.max_disparity = 120;
    p.levels = 3;
    p.window = WindowVariant::Best2;
    p.min_support = 8;
    p.hole_span = 0;
    out.push_back({"slanted 230x140 best2 support 8 unbounded holes", {make_slanted_pair(230, 140, 12.0f, 0.2f, 5), p}});
  }
  {
    Params p;
    p.max_disparity = 100;
    p.levels = 3;
    p.min_support = 0;
    p.hole_span = 1;
    out.push_back({"step 190x101 support off hole span 1", {make_step_pair(190, 101, 8, 44, 6), p}});
  }
  {
    Params p;
    p.max_disparity = 72;
    p.levels = 1;
    out.push_back({"plane 181x67 one level", {make_plane_pair(181, 67, 23, 7), p}});
  }
  {
    Params p;  // the generic kernel at both levels
    p.max_disparity = 56;
    p.levels = 2;
    p.subwindow_radius = 3;
    out.push_back({"step 150x90 two levels r3 (generic)", {make_step_pair(150, 90, 5, 25, 8), p}});
  }
  return out;
}

TEST(CudaEngine, ProgressiveUniquenessAndConfidenceMatchReference) {
  for (auto& [name, scene] : uniqueness_scenes()) {
    const SyntheticPair& pair = scene.first;
    for (int ratio : {0, 10, 25})
      for (bool confidence : {true, false}) {
        if (!confidence && ratio != 25) continue;
        Params p = scene.second;
        p.uniqueness_ratio = ratio;
        p.confidence = confidence;
        SCOPED_TRACE(::testing::Message() << name << ", ratio " << ratio << (confidence ? ", confidence" : ""));
        Matcher cpu(p);
        auto gpu = make(p);
        ASSERT_TRUE(gpu);
        for (int frame = 0; frame < 2; ++frame) {
          compare_frame(cpu, *gpu, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba));
          if (::testing::Test::HasFailure()) return;
        }
        // Not vacuous: the scene has confident pixels, and uniqueness
        // rejects some at 25 %.
        if (confidence) {
          size_t confident = 0;
          for (uint8_t c : cpu.debug().confidence.pixels) confident += c > 0;
          EXPECT_GT(confident, 0u);
        }
      }
    Params off = scene.second;
    off.uniqueness_ratio = 0;
    Params strict = off;
    strict.uniqueness_ratio = 25;
    Matcher a(off), b(strict);
    Image<uint16_t> qa(pair.left_rgba.width, pair.left_rgba.height), qb(qa.width, qa.height);
    Outputs oa, ob;
    oa.disparity_q4 = qa.view();
    ob.disparity_q4 = qb.view();
    ASSERT_EQ(a.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), oa), "");
    ASSERT_EQ(b.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), ob), "");
    EXPECT_LT(b.stats().valid_fraction, a.stats().valid_fraction) << name << ": ratio 25 rejects nothing";
  }
}

// Uniqueness and the confidence with the background model (masks in every
// kernel form) over a moving-object sequence.
TEST(CudaEngine, ProgressiveUniquenessAndConfidenceBackgroundSequence) {
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.levels = 3;
  p.warmup_frames = 3;
  p.uniqueness_ratio = 10;
  p.confidence = true;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  for (int i = 0; i < 7; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    const SyntheticPair f = make_sequence_frame(173, 117, i, 8, 28, 40, 30, 5, 0, 77);
    compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(gpu->stats().foreground_fraction, 0.0);
  EXPECT_LT(gpu->stats().foreground_fraction, 0.5);
}

// The confidence through the engine's outputs, progressive: the encoder's
// Confidence frame and every other format (CPU engine against CUDA engine,
// two frames with the background model), and the raw confidence output of
// device frames on a caller's stream.
TEST(CudaEngine, ProgressiveConfidenceOutputsMatchCpuEngine) {
  Params p;
  p.max_disparity = 64;
  p.background = true;
  p.warmup_frames = 1;
  p.confidence = true;
  p.uniqueness_ratio = 10;
  const SyntheticPair f0 = make_sequence_frame(120, 80, 0, 10, 30, 30, 20, 4, 0, 5);
  const SyntheticPair f1 = make_sequence_frame(120, 80, 3, 10, 30, 30, 20, 4, 0, 5);
  const OutputFormat formats[] = {OutputFormat::Confidence, OutputFormat::DisparityQ4, OutputFormat::Gray8,
                                  OutputFormat::RGBA};
  for (OutputFormat fmt : formats) {
    SCOPED_TRACE(output_format_name(fmt));
    auto cpu = make_cpu_engine(p);
    std::string err;
    auto gpu = make_cuda_engine(p, -1, &err);
    ASSERT_TRUE(gpu) << err;
    EncodeParams ep;
    ep.format = fmt;
    ep.colormap = Colormap::Jet;
    ep.alpha_from_mask = true;
    ep.max_disparity = 64;
    const int row = 120 * output_bytes_per_pixel(fmt);
    std::vector<uint8_t> a(static_cast<size_t>(row + 8) * 80, 1), b(a.size(), 2);
    OutputFrame oa{a.data(), row + 8, 120, 80, Memory::Host}, ob{b.data(), row + 8, 120, 80, Memory::Host};
    for (const SyntheticPair* f : {&f0, &f1}) {
      ASSERT_EQ(cpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, oa), "");
      ASSERT_EQ(gpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, ob), "");
    }
    size_t diffs = 0, nonzero = 0;
    for (int y = 0; y < 80; ++y)
      for (int x = 0; x < row; ++x) {
        diffs += a[y * (row + 8) + x] != b[y * (row + 8) + x];
        nonzero += b[y * (row + 8) + x] != 0;
      }
    EXPECT_EQ(diffs, 0u);
    EXPECT_GT(nonzero, 0u);
  }

  Params q;
  q.max_disparity = 48;
  q.confidence = true;
  q.uniqueness_ratio = 25;
  const SyntheticPair pair = make_step_pair(150, 90, 5, 25, 8);
  auto dl = upload(pair.left_rgba), dr = upload(pair.right_rgba);
  FrameView lv = rgba_view(pair.left_rgba), rv = rgba_view(pair.right_rgba);
  lv.memory = rv.memory = Memory::Device;
  lv.plane[0] = reinterpret_cast<const uint8_t*>(dl.view().data);
  lv.pitch[0] = dl.view().pitch;
  rv.plane[0] = reinterpret_cast<const uint8_t*>(dr.view().data);
  rv.pitch[0] = dr.view().pitch;
  auto q4 = make_device<uint16_t>(150, 90);
  auto conf = make_device<uint8_t>(150, 90);
  cudaStream_t caller;
  ASSERT_CUDA(cudaStreamCreate(&caller));
  auto gpu = make(q);
  ASSERT_TRUE(gpu);
  Outputs o;
  o.memory = Memory::Device;
  o.disparity_q4 = q4.view();
  o.confidence = conf.view();
  ASSERT_EQ(gpu->enqueue(lv, rv, o, caller), "");
  ASSERT_CUDA(cudaStreamSynchronize(caller));
  Matcher cpu(q);
  Image<uint16_t> cq4(150, 90);
  Image<uint8_t> cconf(150, 90);
  Outputs co;
  co.disparity_q4 = cq4.view();
  co.confidence = cconf.view();
  ASSERT_EQ(cpu.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), co), "");
  EXPECT_TRUE(same_image(cq4, download(q4)));
  EXPECT_TRUE(same_image(cconf, download(conf)));
  cudaStreamDestroy(caller);
}

// One engine switched between the plain configuration and uniqueness with
// the confidence, and back (set_params keeps the frame size: the
// confidence map and the costs come and go without a new pipeline); each
// frame equals the reference of its parameters. A confidence asked of an
// engine whose parameters do not say so is refused by name.
TEST(CudaEngine, ProgressiveConfidenceComesAndGoesWithTheParameters) {
  const SyntheticPair pair = make_step_pair(160, 96, 6, 28, 12);
  Params plain;
  plain.max_disparity = 48;
  Params unique = plain;
  unique.uniqueness_ratio = 10;
  unique.confidence = true;
  Params unique_only = plain;
  unique_only.uniqueness_ratio = 25;
  auto gpu = make(plain);
  ASSERT_TRUE(gpu);
  for (const Params* p : {&plain, &unique, &unique_only, &unique, &plain}) {
    SCOPED_TRACE(::testing::Message() << "ratio " << p->uniqueness_ratio << ", confidence " << p->confidence);
    ASSERT_EQ(gpu->set_params(*p), "");
    Matcher cpu(*p);
    compare_frame(cpu, *gpu, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba));
    if (::testing::Test::HasFailure()) return;
    std::vector<uint8_t> out(160 * 96);
    OutputFrame of{out.data(), 160, 160, 96, Memory::Host};
    EncodeParams ep;
    ep.format = OutputFormat::Confidence;
    const std::string err = gpu->process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), ep, of);
    if (p->confidence) {
      EXPECT_EQ(err, "");
      Image<uint8_t> got(160, 96);
      got.pixels = out;
      EXPECT_TRUE(same_image(cpu.debug().confidence, got)) << "the Confidence frame";
    } else {
      EXPECT_NE(err.find("output-mode=confidence"), std::string::npos) << err;
    }
  }
}

// The automatic coarse range (Params::coarse_range_factor 0, stages.h 6b):
// the GPU's probe chooses the CPU reference's factor frame by frame, so
// every level and the output stay bit-exact. Content at 40 beyond D = 32:
// the first frame uses 1, the rest 2 (and 2 matches differently from 1).
TEST(CudaEngine, AutomaticCoarseRangeMatchesReference) {
  const SyntheticPair far = make_step_pair(160, 96, 40, 12, 21);
  const SyntheticPair near = make_step_pair(160, 96, 12, 10, 22);
  Params p;
  p.max_disparity = 32;
  p.levels = 3;
  p.coarse_range_factor = kAutoCoarseRangeFactor;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::vector<int> factors;
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    compare_frame(cpu, *gpu, rgba_view(far.left_rgba), rgba_view(far.right_rgba));
    factors.push_back(gpu->stats().coarse_range_factor);
  }
  EXPECT_EQ(factors, (std::vector<int>{1, 2, 2, 2}));
  EXPECT_EQ(cpu.debug().levels[1].range.hi, 32);  // 2 x 32 at half size

  // A new range starts from 1 again; content inside 64 keeps it.
  Params wider = p;
  wider.max_disparity = 64;
  ASSERT_EQ(cpu.set_params(wider), "");
  ASSERT_EQ(gpu->set_params(wider), "");
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(::testing::Message() << "wider, frame " << i);
    compare_frame(cpu, *gpu, rgba_view(far.left_rgba), rgba_view(far.right_rgba));
    EXPECT_EQ(gpu->stats().coarse_range_factor, 1);
  }
  // Back to 32 on content inside it: 1 throughout.
  ASSERT_EQ(cpu.set_params(p), "");
  ASSERT_EQ(gpu->set_params(p), "");
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(::testing::Message() << "near, frame " << i);
    compare_frame(cpu, *gpu, rgba_view(near.left_rgba), rgba_view(near.right_rgba));
    EXPECT_EQ(gpu->stats().coarse_range_factor, 1);
  }
  // One level: no coarse level, no probe, 1.
  Params one_level = p;
  one_level.levels = 1;
  ASSERT_EQ(cpu.set_params(one_level), "");
  ASSERT_EQ(gpu->set_params(one_level), "");
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(::testing::Message() << "one level, frame " << i);
    compare_frame(cpu, *gpu, rgba_view(far.left_rgba), rgba_view(far.right_rgba));
    EXPECT_EQ(gpu->stats().coarse_range_factor, 1);
  }
}

// The factor 2 that the probe chooses changes the output (else the test
// above could not tell the factors apart).
TEST(CudaEngine, AutomaticCoarseRangeFactorChangesTheOutput) {
  const SyntheticPair far = make_step_pair(160, 96, 40, 12, 21);
  Params p;
  p.max_disparity = 32;
  p.levels = 3;
  Params two = p;
  two.coarse_range_factor = 2;
  std::string err;
  auto g1 = make(p), g2 = make(two);
  ASSERT_TRUE(g1 && g2);
  const auto a = process_q4(*g1, rgba_view(far.left_rgba), rgba_view(far.right_rgba), &err);
  ASSERT_EQ(err, "");
  const auto b = process_q4(*g2, rgba_view(far.left_rgba), rgba_view(far.right_rgba), &err);
  ASSERT_EQ(err, "");
  EXPECT_NE(a, b);
}

// With the background model the probe matches the foreground only, as the
// reference does (its masks at the coarsest level): the first probe runs
// while everything is foreground (warm-up), the one after the range change
// on frame 5 with the model's masks.
TEST(CudaEngine, AutomaticCoarseRangeBackgroundSequence) {
  constexpr int kFrames = 9, w = 150, h = 90;
  Params p;
  p.max_disparity = 16;
  p.levels = 3;
  p.background = true;
  p.warmup_frames = 3;
  p.coarse_range_factor = kAutoCoarseRangeFactor;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::vector<int> factors;
  for (int i = 0; i < kFrames; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    if (i == 5) {
      Params q = p;
      q.max_disparity = 20;
      ASSERT_EQ(cpu.set_params(q), "");
      ASSERT_EQ(gpu->set_params(q), "");
    }
    const SyntheticPair f = make_sequence_frame(w, h, i, 24, 8, 50, 40, 6, 0, 31);
    compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    factors.push_back(gpu->stats().coarse_range_factor);
  }
  // The reference's choices: the first probe sees everything (the
  // background at 24 beyond 16: 2); the one on frame 5 only the moving
  // object at 8 (1), where the background alone, without the masks, would
  // have given 2 again.
  EXPECT_EQ(factors, (std::vector<int>{1, 2, 2, 2, 2, 1, 1, 1, 1}));
}

// Two frames in flight share one automatic coarse range: frame by frame the
// reference's maps, whichever set of buffers ran the probe.
TEST(CudaEngine, AutomaticCoarseRangeWithTwoFramesInFlight) {
  constexpr int kW = 160, kH = 96, kFrames = 7;
  Params p;
  p.max_disparity = 32;
  p.levels = 3;
  p.coarse_range_factor = kAutoCoarseRangeFactor;
  std::vector<SyntheticPair> pairs;
  for (int i = 0; i < kFrames; ++i) pairs.push_back(make_step_pair(kW, kH, i < 4 ? 40 : 44, 12 + i, 21 + i));
  std::vector<DeviceImage<uint32_t>> planes;
  std::vector<FrameView> lefts, rights;
  upload_pairs(pairs, &planes, &lefts, &rights);
  std::vector<Image<uint16_t>> want;
  std::vector<int> want_factor;
  Matcher cpu(p);
  for (int i = 0; i < kFrames; ++i) {
    want.emplace_back(kW, kH);
    Outputs co;
    co.disparity_q4 = want.back().view();
    ASSERT_EQ(cpu.process(rgba_view(pairs[i].left_rgba), rgba_view(pairs[i].right_rgba), co), "");
    want_factor.push_back(cpu.stats().coarse_range_factor);
  }
  EXPECT_EQ(want_factor.front(), 1);
  EXPECT_EQ(want_factor.back(), 2);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  ASSERT_EQ(gpu->set_frames_in_flight(2), "");
  std::vector<DeviceImage<uint16_t>> own;
  for (int i = 0; i < kFrames; ++i) {
    own.push_back(make_device<uint16_t>(kW, kH));
    Outputs o;
    o.memory = Memory::Device;
    o.disparity_q4 = own.back().view();
    ASSERT_EQ(gpu->enqueue(lefts[i], rights[i], o, nullptr), "");
  }
  ASSERT_EQ(gpu->synchronize(), "");
  for (int i = 0; i < kFrames; ++i) EXPECT_TRUE(same_image(want[i], download(own[i]))) << "frame " << i;
  EXPECT_EQ(gpu->stats().coarse_range_factor, want_factor.back());
}

// A probe every kCoarseProbeInterval frames: content that moves beyond D
// after the first probe changes the factor after the next one, on the same
// frame as the reference.
TEST(CudaEngine, AutomaticCoarseRangeProbesAgainAfterTheInterval) {
  const SyntheticPair near = make_step_pair(96, 48, 12, 10, 23);
  const SyntheticPair far = make_step_pair(96, 48, 40, 10, 23);
  Params p;
  p.max_disparity = 32;
  p.levels = 2;
  p.coarse_range_factor = kAutoCoarseRangeFactor;
  auto gpu = make(p);
  auto cpu = make_cpu_engine(p);
  ASSERT_TRUE(gpu && cpu);
  std::string err;
  for (int i = 1; i <= kCoarseProbeInterval + 2; ++i) {
    const SyntheticPair& f = i == 1 ? near : far;
    const auto g = process_q4(*gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba), &err);
    ASSERT_EQ(err, "");
    std::vector<uint16_t> c(static_cast<size_t>(96) * 48);
    OutputFrame of{reinterpret_cast<uint8_t*>(c.data()), 96 * 2, 96, 48, Memory::Host};
    ASSERT_EQ(cpu->process(rgba_view(f.left_rgba), rgba_view(f.right_rgba), EncodeParams(), of), "");
    ASSERT_EQ(g, c) << "frame " << i;
    ASSERT_EQ(gpu->stats().coarse_range_factor, cpu->stats().coarse_range_factor) << "frame " << i;
    const int want = i <= kCoarseProbeInterval + 1 ? 1 : 2;
    ASSERT_EQ(gpu->stats().coarse_range_factor, want) << "frame " << i;
  }
}

// Stage 0: a plane seen through a distorted, turned rig (rig_scene.h),
// rectified by both engines bit for bit (the rectification's output through
// everything after it: debug levels, Q4, stats), in colour and grey, with
// and without the background model; and found at its true disparity.
TEST(CudaEngine, RectificationMatchesReference) {
  const int w = 320, h = 240;
  const StereoCalibration rig = example_rig(w, h);
  StereoRectification r;
  ASSERT_EQ(stereo_rectify(rig, w, h, 0.0, &r), "");
  const RigScene scene = render_plane_through_rig(rig, r, r.focal() * r.baseline() / 21.0, 5);
  Image<uint8_t> grey[2];
  for (int v = 0; v < 2; ++v) {
    const Image<uint32_t>& c = v ? scene.right : scene.left;
    grey[v] = Image<uint8_t>(w, h);
    for (size_t i = 0; i < c.pixels.size(); ++i)
      grey[v].pixels[i] = luma_from_rgb(c.pixels[i] & 255, c.pixels[i] >> 8 & 255, c.pixels[i] >> 16 & 255);
  }
  Params p;
  p.max_disparity = 48;
  p.rectification = make_rectification_maps(rig, r);
  for (bool background : {false, true}) {
    p.background = background;
    p.warmup_frames = 2;
    for (bool colour : {true, false}) {
      SCOPED_TRACE(std::string(colour ? "RGBA" : "GRAY8") + (background ? ", background" : ""));
      const FrameView l = colour ? rgba_view(scene.left) : gray_view(grey[0]);
      const FrameView rv = colour ? rgba_view(scene.right) : gray_view(grey[1]);
      Matcher cpu(p);
      auto gpu = make(p);
      ASSERT_TRUE(gpu);
      for (int frame = 0; frame < 4; ++frame) compare_frame(cpu, *gpu, l, rv);
    }
  }
  // The plane's disparity: 21 pixels where both views see it.
  p.background = false;
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  std::string err;
  const std::vector<uint16_t> q4 = process_q4(*gpu, rgba_view(scene.left), rgba_view(scene.right), &err);
  ASSERT_EQ(err, "");
  size_t n = 0, good = 0;
  for (int y = 12; y < h - 12; ++y)
    for (int x = 12 + 21; x < w - 12; ++x) {
      ++n;
      good += std::abs(q4[static_cast<size_t>(y) * w + x] / 16.0 - 21.0) <= 2.0;
    }
  EXPECT_GT(good, n * 99 / 100);
  // Views of another size than the maps are refused by name.
  Image<uint32_t> small(160, 120);
  EXPECT_NE(process_q4(*gpu, rgba_view(small), rgba_view(small), &err).size(), 1u);
  EXPECT_NE(err.find("rectification maps are for 320x240"), std::string::npos) << err;
}

// output-mode=rectified's engine side: both views rectified (or as read,
// without maps) into the output, beside or above each other, the same bytes
// as the CPU engine, from host frames (process) and device frames into
// device memory (enqueue); frames of views and of disparity alternate on
// one engine without disturbing each other.
TEST(CudaEngine, ViewsOutputMatchesCpuEngine) {
  const int w = 320, h = 240;
  const StereoCalibration rig = example_rig(w, h);
  StereoRectification r;
  ASSERT_EQ(stereo_rectify(rig, w, h, 0.0, &r), "");
  SyntheticPair pair;
  const RigScene scene = render_plane_through_rig(rig, r, r.focal() * r.baseline() / 21.0, 6);
  pair.left_rgba = scene.left;
  pair.right_rgba = scene.right;
  std::vector<DeviceImage<uint32_t>> planes;
  std::vector<FrameView> lefts, rights;
  upload_pairs({pair}, &planes, &lefts, &rights);
  const FrameView l = rgba_view(scene.left), rv = rgba_view(scene.right);
  Params p;
  p.max_disparity = 48;
  p.rectification = make_rectification_maps(rig, r);
  for (bool maps : {true, false}) {
    Params q = p;
    if (!maps) q.rectification.reset();
    auto cpu = make_cpu_engine(q);
    auto gpu = make(q);
    ASSERT_TRUE(gpu);
    for (ViewsOutput layout : {ViewsOutput::SideBySide, ViewsOutput::TopBottom})
      for (OutputFormat f : {OutputFormat::RGBA, OutputFormat::BGRx}) {
        SCOPED_TRACE(std::string(maps ? "rectified " : "as read ") +
                     (layout == ViewsOutput::SideBySide ? "side by side " : "top-bottom ") + output_format_name(f));
        EncodeParams ep;
        ep.format = f;
        ep.views = layout;
        int ow, oh;
        output_frame_size(layout, w, h, &ow, &oh);
        Image<uint32_t> want(ow, oh, 1), got(ow, oh, 2);
        OutputFrame wo{reinterpret_cast<uint8_t*>(want.pixels.data()), ow * 4, ow, oh, Memory::Host};
        OutputFrame go{reinterpret_cast<uint8_t*>(got.pixels.data()), ow * 4, ow, oh, Memory::Host};
        ASSERT_EQ(cpu->process(l, rv, ep, wo), "");
        ASSERT_EQ(gpu->process(l, rv, ep, go), "");
        EXPECT_TRUE(same_image(want, got)) << "process";
        EXPECT_EQ(gpu->stats().matched_pixels, 0u);
        // A disparity frame between (the reference's), then the views from
        // device memory.
        std::string err;
        const std::vector<uint16_t> q4 = process_q4(*gpu, l, rv, &err);
        ASSERT_EQ(err, "");
        std::vector<uint16_t> q4_cpu(q4.size());
        OutputFrame qo{reinterpret_cast<uint8_t*>(q4_cpu.data()), w * 2, w, h, Memory::Host};
        ASSERT_EQ(cpu->process(l, rv, EncodeParams(), qo), "");
        EXPECT_TRUE(q4 == q4_cpu) << "the disparity frame between";
        auto dev = make_device<uint32_t>(ow, oh);
        OutputFrame d{reinterpret_cast<uint8_t*>(dev.view().data), dev.view().pitch, ow, oh, Memory::Device};
        ASSERT_EQ(gpu->enqueue(lefts[0], rights[0], ep, d, nullptr), "");
        ASSERT_EQ(gpu->synchronize(), "");
        EXPECT_TRUE(same_image(want, download(dev))) << "enqueue";
      }
  }
}

}  // namespace
}  // namespace cs::cuda::test
