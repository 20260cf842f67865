// Method cross on the GPU against the CPU reference (stages.h C1 .. C8),
// bit for bit through the engine: every step's result (colour, arms, words,
// winners, costs, offered right map, reliable estimates, votes, final map,
// confidence), Q4 and stats, on scenes with colour and grey input, every
// sample-restore factor, arm lengths, thresholds, truncations, ranges with
// min-disparity > 0, uniqueness, no check, odd sizes, the background model,
// every output format, switching methods, and degenerate input (flat
// frames, D as wide as the view, the smallest view).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cross_matching.h"
#include "cuda_engine.h"
#include "device_limits.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "stages.h"
#include "stereo_math.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

Params cross_params(int max_disparity) {
  Params p;
  p.method = Method::Cross;
  p.max_disparity = max_disparity;
  return p;
}

std::unique_ptr<CudaEngine> make(const Params& p) {
  std::string err;
  auto e = CudaEngine::create(p, -1, &err);
  EXPECT_TRUE(e) << err;
  return e;
}

// The sums and sizes of a map of costs, apart (same_image compares numbers).
void split_costs(const Image<CrossCost>& c, Image<int32_t>* sums, Image<int32_t>* pixels) {
  *sums = Image<int32_t>(c.width, c.height);
  *pixels = Image<int32_t>(c.width, c.height);
  for (size_t i = 0; i < c.pixels.size(); ++i) {
    sums->pixels[i] = c.pixels[i].sum;
    pixels->pixels[i] = c.pixels[i].sum < 0 ? 0 : c.pixels[i].pixels;
  }
}

void expect_same_cross_debug(const Matcher::Debug& cpu, const Matcher::Debug& gpu, bool background) {
  ASSERT_EQ(cpu.levels.size(), 1u);
  ASSERT_EQ(gpu.levels.size(), 1u);
  const LevelDebug& c = cpu.levels[0];
  const LevelDebug& g = gpu.levels[0];
  EXPECT_EQ(c.range.lo, g.range.lo);
  EXPECT_EQ(c.range.hi, g.range.hi);
  EXPECT_TRUE(same_image(c.gray_left, g.gray_left)) << "gray left";
  EXPECT_TRUE(same_image(c.rgb_left, g.rgb_left)) << "colour left";
  EXPECT_TRUE(same_image(c.rgb_right, g.rgb_right)) << "colour right";
  if (background) {
    EXPECT_TRUE(same_image(c.mask_left, g.mask_left)) << "mask left";
    EXPECT_TRUE(same_image(c.mask_right, g.mask_right)) << "mask right";
  }
  const CrossDebug& cc = cpu.cross;
  const CrossDebug& gc = gpu.cross;
  EXPECT_TRUE(same_image(cc.arms_left, gc.arms_left)) << "C1 arms left";
  EXPECT_TRUE(same_image(cc.arms_right, gc.arms_right)) << "C1 arms right";
  EXPECT_TRUE(same_image(cc.words_left, gc.words_left)) << "C1b words left";
  EXPECT_TRUE(same_image(cc.words_right, gc.words_right)) << "C1b words right";
  EXPECT_TRUE(same_image(cc.winners.raw, gc.winners.raw)) << "C4 winners";
  EXPECT_TRUE(same_image(cc.winners.disparity, gc.winners.disparity)) << "C4 after uniqueness";
  Image<int32_t> cs, cn, gs, gn;
  split_costs(cc.winners.best, &cs, &cn);
  split_costs(gc.winners.best, &gs, &gn);
  EXPECT_TRUE(same_image(cs, gs)) << "C4 best sums";
  EXPECT_TRUE(same_image(cn, gn)) << "C4 best sizes";
  split_costs(cc.winners.rival, &cs, &cn);
  split_costs(gc.winners.rival, &gs, &gn);
  EXPECT_TRUE(same_image(cs, gs)) << "C4 rival sums";
  EXPECT_TRUE(same_image(cn, gn)) << "C4 rival sizes";
  EXPECT_TRUE(same_image(cc.winners.right, gc.winners.right)) << "C4 offered right map";
  EXPECT_TRUE(same_image(cc.reliable, gc.reliable)) << "C5 reliable";
  EXPECT_TRUE(same_image(cc.voted, gc.voted)) << "C6 voted";
  EXPECT_TRUE(same_image(cc.disparity, gc.disparity)) << "C7 final";
  EXPECT_TRUE(same_image(c.disparity_left, g.disparity_left)) << "level 0 left";
  EXPECT_TRUE(same_image(c.raw_left, g.raw_left)) << "raw left";
  EXPECT_TRUE(same_image(c.raw_right, g.raw_right)) << "raw right";
  EXPECT_TRUE(same_image(cpu.confidence, gpu.confidence)) << "C8 confidence";
}

// One frame through both: every step, Q4 (through the encoder, pitched host
// output), the confidence output, stats.
void compare_cross_frame(Matcher& cpu, CudaEngine& gpu, const FrameView& left, const FrameView& right) {
  FrameBoth f;
  ASSERT_TRUE(run_frame_both(cpu, gpu, left, right, &f));
  expect_same_cross_debug(cpu.debug(), f.gpu_debug, cpu.params().background);
  EXPECT_TRUE(same_image(f.cpu_q4, f.gpu_q4)) << "final Q4";
  EXPECT_TRUE(same_image(f.cpu_confidence, f.gpu_debug.confidence)) << "confidence output";

  const FrameStats cs = cpu.stats(), gs = gpu.stats();
  EXPECT_EQ(cs.levels, gs.levels);
  EXPECT_EQ(cs.warming_up, gs.warming_up);
  EXPECT_DOUBLE_EQ(cs.valid_fraction, gs.valid_fraction);
  EXPECT_DOUBLE_EQ(cs.foreground_fraction, gs.foreground_fraction);
}

TEST(CudaEngineCross, PipelineMatchesReferenceOnScenes) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    Params p;
  };
  std::vector<Case> cases;
  cases.push_back({"defaults, step 203x131", make_step_pair(203, 131, 6, 30, 1), cross_params(48)});
  {
    Params p = cross_params(48);
    p.sample_restore = 2;
    cases.push_back({"sample-restore 2, step 203x131", make_step_pair(203, 131, 6, 30, 1), p});
  }
  {
    Params p = cross_params(70);
    p.sample_restore = 3;
    p.min_disparity = 5;
    p.cross_arm_length = 9;
    cases.push_back({"sample-restore 3, min 5, arm 9, slanted 160x97", make_slanted_pair(160, 97, 8.0f, 0.12f, 2), p});
  }
  {
    Params p = cross_params(64);
    p.cross_vote_arm_length = 4;
    cases.push_back({"voting arms 4, slanted 180x110", make_slanted_pair(180, 110, 8.0f, 0.12f, 3), p});
    p.sample_restore = 2;
    p.cross_vote_arm_length = 3;
    cases.push_back({"sample-restore 2, voting arms 3, slanted 180x110", make_slanted_pair(180, 110, 8.0f, 0.12f, 3), p});
  }
  {
    Params p = cross_params(40);
    p.cross_tau = 0;
    p.cross_truncation = 765;
    p.cross_census_weight = kMaxCrossCensusWeight;
    p.uniqueness_ratio = 15;
    p.lr_check = false;
    cases.push_back(
        {"tau 0, truncation 765, census 24, ratio 15, no check, plane 97x61", make_plane_pair(97, 61, 17, 3), p});
  }
  {
    Params p = cross_params(96);
    p.cross_tau = 60;
    p.cross_arm_length = 1;
    p.cross_truncation = 7;
    p.cross_census_weight = 0;
    p.lr_tolerance = 0;
    cases.push_back({"tau 60, arm 1, truncation 7, no census, tolerance 0, step 257x120",
                     make_step_pair(257, 120, 10, 60, 4), p});
  }
  {
    Params p = cross_params(200);
    p.min_disparity = 33;
    p.sample_restore = 2;
    cases.push_back({"min 33 max 200, sample-restore 2, step 333x77", make_step_pair(333, 77, 40, 90, 5), p});
  }
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Matcher cpu(c.p);
    auto gpu = make(c.p);
    ASSERT_TRUE(gpu);
    compare_cross_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
    // The same engine again (graph replay, the offers' keys reset).
    compare_cross_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
    // Grey input: the three channels equal.
    const Image<uint8_t> gl = grey_of(c.pair.left_rgba), gr = grey_of(c.pair.right_rgba);
    compare_cross_frame(cpu, *gpu, gray_view(gl), gray_view(gr));
  }
}

// The aggregation's layouts (cross_layout: 64- or 32-row tiles, with
// sample-restore 48 or 16 rows, the range in 1 to 4 parts; 32 rows only
// where shared memory is short) against the reference on a view several
// tiles high and wide, through engines that emulate GPUs of various SM
// counts. The scene's planes lie at 15 and 31, the last disparities of the
// first two of four parts of 0 .. 64, so that winners at a part's end meet
// the next part's winner at its start (the join's one direct cost).
TEST(CudaEngineCross, TileHeightsAndRangePartsMatchReference) {
  struct Target {
    int cc, sms, rows, parts, rows2, parts2;  // the layouts at sample-restore 1 and 2
  };
  for (const Target t : {Target{75, 1, 32, 1, 48, 1}, Target{75, 4000, 32, 4, 16, 4}, Target{86, 28, 32, 1, 48, 4},
                         Target{90, 1, 64, 1, 48, 1}, Target{90, 48, 64, 3, 16, 3}, Target{90, 4000, 32, 4, 16, 4}}) {
    DeviceLimits limits;
    ASSERT_TRUE(architecture_limits(t.cc, t.sms, &limits));
    EXPECT_EQ(cross_tile_rows(limits, 1), t.cc == 75 ? 32 : 64) << "sm_" << t.cc;
    EXPECT_EQ(cross_tile_rows(limits, 2), 48) << "sm_" << t.cc;
    const CrossLayout layout = cross_layout(211, 203, 1, Range{0, 64}, limits);
    EXPECT_EQ(layout.tile_rows, t.rows) << "sm_" << t.cc << ", " << t.sms << " SMs";
    EXPECT_EQ(layout.parts, t.parts) << "sm_" << t.cc << ", " << t.sms << " SMs";
    const CrossLayout sampled = cross_layout(211, 203, 2, Range{0, 64}, limits);
    EXPECT_EQ(sampled.tile_rows, t.rows2) << "sm_" << t.cc << ", " << t.sms << " SMs, sample-restore 2";
    EXPECT_EQ(sampled.parts, t.parts2) << "sm_" << t.cc << ", " << t.sms << " SMs, sample-restore 2";
    for (int s : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "sm_" << t.cc << " with " << t.sms << " SMs, sample-restore " << s);
      Params p = cross_params(64);
      p.sample_restore = s;
      const SyntheticPair pair = make_step_pair(211, 203, 15, 31, 6);
      Matcher cpu(p);
      auto gpu = make(p);
      ASSERT_TRUE(gpu);
      ASSERT_EQ(gpu->emulate_device_limits(limits), "");
      compare_cross_frame(cpu, *gpu, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba));
    }
  }
}

TEST(CudaEngineCross, DegenerateInputs) {
  {
    SCOPED_TRACE("flat frames");
    Image<uint8_t> flat(64, 40, 128);
    Params p = cross_params(16);
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_cross_frame(cpu, *gpu, gray_view(flat), gray_view(flat));
  }
  for (int s = 1; s <= 3; ++s) {
    SCOPED_TRACE(::testing::Message() << "D = width, smallest view, sample-restore " << s);
    const SyntheticPair pair = make_plane_pair(16, 16, 3, 9);
    Params p = cross_params(16);
    p.sample_restore = s;
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_cross_frame(cpu, *gpu, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba));
  }
}

TEST(CudaEngineCross, BackgroundSequenceMatchesReference) {
  for (int s : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << "sample-restore " << s);
    Params p = cross_params(48);
    p.background = true;
    p.warmup_frames = 3;
    p.sample_restore = s;
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    for (int i = 0; i < 8; ++i) {
      SCOPED_TRACE(::testing::Message() << "frame " << i);
      const SyntheticPair f = make_sequence_frame(173, 117, i, 8, 28, 40, 30, 5, 0, 77);
      compare_cross_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
      if (::testing::Test::HasFailure()) return;
    }
    const FrameStats st = gpu->stats();
    EXPECT_FALSE(st.warming_up);
    EXPECT_GT(st.foreground_fraction, 0.0);
    EXPECT_LT(st.foreground_fraction, 0.5);
  }
}

TEST(CudaEngineCross, EveryOutputFormatMatchesCpuEngine) {
  Params p = cross_params(64);
  p.background = true;
  p.warmup_frames = 1;
  expect_every_format_matches_cpu_engine(p);
}

// One engine through progressive -> cross -> block -> cross (a factor and
// range change): each frame equals the reference of its method; the colour
// buffers come and go with the method.
TEST(CudaEngineCross, SwitchingMethodsKeepsEachExact) {
  const SyntheticPair pair = make_step_pair(160, 96, 6, 28, 12);
  Params prog;
  prog.max_disparity = 48;
  Params cross = cross_params(48);
  Params cross2 = cross;
  cross2.sample_restore = 2;
  cross2.max_disparity = 80;
  Params block = cross;
  block.method = Method::Block;
  auto gpu = make(prog);
  ASSERT_TRUE(gpu);
  for (const Params* p : {&prog, &cross, &block, &cross2, &prog, &cross}) {
    SCOPED_TRACE(static_cast<int>(p->method));
    ASSERT_EQ(gpu->set_params(*p), "");
    Matcher cpu(*p);
    Image<uint16_t> cq4(160, 96);
    Outputs co;
    co.disparity_q4 = cq4.view();
    ASSERT_EQ(cpu.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), co), "");
    std::vector<uint16_t> out(160 * 96, 0xBEEF);
    OutputFrame of{reinterpret_cast<uint8_t*>(out.data()), 320, 160, 96, Memory::Host};
    ASSERT_EQ(gpu->process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), EncodeParams(), of), "");
    EXPECT_TRUE(out == cq4.pixels);
  }
}

}  // namespace
}  // namespace cs::cuda::test
