// Method elas on the GPU against the CPU reference (common/elas_dense.h E1
// .. E8), bit for bit through the engine: every step's result
// (descriptors, support grid, both priors, dense winners, best and rival,
// the checked maps, the final map, confidence), Q4 and stats, on scenes with
// colour and grey input, ranges with min-disparity > 0, uniqueness, no
// check, short gaps only, odd sizes, the background model, every output
// format, switching methods, and degenerate input (flat and black frames,
// D as wide as the view, 1-pixel-high and the smallest views).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_engine.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "stages.h"
#include "stereo_math.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

Params elas_params_for(int max_disparity) {
  Params p;
  p.method = Method::Elas;
  p.max_disparity = max_disparity;
  return p;
}

std::unique_ptr<CudaEngine> make(const Params& p) {
  std::string err;
  auto e = CudaEngine::create(p, -1, &err);
  EXPECT_TRUE(e) << err;
  return e;
}

// The descriptors as bytes (same_image compares numbers).
Image<uint8_t> bytes_of(const Image<ElasDescriptor>& d) {
  Image<uint8_t> b(d.width * 16, d.height);
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x) std::memcpy(&b.at(16 * x, y), d.at(x, y).data(), 16);
  return b;
}

void expect_same_elas_debug(const Matcher::Debug& cpu, const Matcher::Debug& gpu, bool background) {
  ASSERT_EQ(cpu.levels.size(), 1u);
  ASSERT_EQ(gpu.levels.size(), 1u);
  const LevelDebug& c = cpu.levels[0];
  const LevelDebug& g = gpu.levels[0];
  EXPECT_EQ(c.range.lo, g.range.lo);
  EXPECT_EQ(c.range.hi, g.range.hi);
  EXPECT_TRUE(same_image(c.gray_left, g.gray_left)) << "gray left";
  EXPECT_TRUE(same_image(c.gray_right, g.gray_right)) << "gray right";
  if (background) {
    EXPECT_TRUE(same_image(c.mask_left, g.mask_left)) << "mask left";
    EXPECT_TRUE(same_image(c.mask_right, g.mask_right)) << "mask right";
  }
  const ElasDebug& ce = cpu.elas;
  const ElasDebug& ge = gpu.elas;
  EXPECT_TRUE(same_image(bytes_of(ce.descriptors[0]), bytes_of(ge.descriptors[0]))) << "E1 descriptors left";
  EXPECT_TRUE(same_image(bytes_of(ce.descriptors[1]), bytes_of(ge.descriptors[1]))) << "E1 descriptors right";
  EXPECT_TRUE(same_image(ce.support.d, ge.support.d)) << "E2 support grid";
  EXPECT_TRUE(same_image(ce.mu_q4[0], ge.mu_q4[0])) << "E4 prior left";
  EXPECT_TRUE(same_image(ce.mu_q4[1], ge.mu_q4[1])) << "E4 prior right";
  EXPECT_TRUE(same_image(ce.raw[0], ge.raw[0])) << "E5 left";
  EXPECT_TRUE(same_image(ce.raw[1], ge.raw[1])) << "E5 right";
  EXPECT_TRUE(same_image(ce.best, ge.best)) << "E5 best";
  EXPECT_TRUE(same_image(ce.rival, ge.rival)) << "E5 rival";
  EXPECT_TRUE(same_image(ce.checked[0], ge.checked[0])) << "E6 left";
  EXPECT_TRUE(same_image(ce.checked[1], ge.checked[1])) << "E6 right";
  EXPECT_TRUE(same_image(ce.disparity, ge.disparity)) << "E7 final";
  EXPECT_TRUE(same_image(c.disparity_left, g.disparity_left)) << "level 0 left";
  EXPECT_TRUE(same_image(c.raw_left, g.raw_left)) << "raw left";
  EXPECT_TRUE(same_image(c.raw_right, g.raw_right)) << "raw right";
  EXPECT_TRUE(same_image(cpu.confidence, gpu.confidence)) << "E8 confidence";
}

void compare_elas_frame(Matcher& cpu, CudaEngine& gpu, const FrameView& left, const FrameView& right) {
  FrameBoth f;
  ASSERT_TRUE(run_frame_both(cpu, gpu, left, right, &f));
  expect_same_elas_debug(cpu.debug(), f.gpu_debug, cpu.params().background);
  EXPECT_TRUE(same_image(f.cpu_q4, f.gpu_q4)) << "final Q4";
  EXPECT_TRUE(same_image(f.cpu_confidence, f.gpu_debug.confidence)) << "confidence output";
  const FrameStats cs = cpu.stats(), gs = gpu.stats();
  EXPECT_EQ(cs.levels, gs.levels);
  EXPECT_EQ(cs.warming_up, gs.warming_up);
  EXPECT_EQ(cs.matched_pixels, gs.matched_pixels);
  EXPECT_EQ(cs.matched_pixels_full, gs.matched_pixels_full);
  EXPECT_DOUBLE_EQ(cs.valid_fraction, gs.valid_fraction);
  EXPECT_DOUBLE_EQ(cs.foreground_fraction, gs.foreground_fraction);
}

TEST(CudaEngineElas, PipelineMatchesReferenceOnScenes) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    Params p;
  };
  std::vector<Case> cases;
  cases.push_back({"defaults, step 203x131", make_step_pair(203, 131, 6, 30, 1), elas_params_for(48)});
  {
    Params p = elas_params_for(70);
    p.min_disparity = 5;
    cases.push_back({"min 5, slanted 160x97", make_slanted_pair(160, 97, 8.0f, 0.12f, 2), p});
  }
  {
    Params p = elas_params_for(40);
    p.uniqueness_ratio = 15;
    p.lr_check = false;
    p.elas_fill_gaps = false;
    cases.push_back({"ratio 15, no check, short gaps, plane 97x61", make_plane_pair(97, 61, 17, 3), p});
  }
  {
    Params p = elas_params_for(96);
    p.lr_tolerance = 0;
    cases.push_back({"tolerance 0, step 257x120", make_step_pair(257, 120, 10, 60, 4), p});
  }
  {
    Params p = elas_params_for(200);
    p.min_disparity = 33;
    cases.push_back({"min 33 max 200, step 333x77", make_step_pair(333, 77, 40, 90, 5), p});
  }
  {
    Params p = elas_params_for(128);
    cases.push_back({"640x480 x 128, slanted", make_slanted_pair(640, 480, 20.0f, 0.05f, 6), p});
  }
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Matcher cpu(c.p);
    auto gpu = make(c.p);
    ASSERT_TRUE(gpu);
    compare_elas_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
    // The same engine again (graph replay).
    compare_elas_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
    const Image<uint8_t> gl = grey_of(c.pair.left_rgba), gr = grey_of(c.pair.right_rgba);
    compare_elas_frame(cpu, *gpu, gray_view(gl), gray_view(gr));
  }
}

TEST(CudaEngineElas, DegenerateInputs) {
  for (uint8_t v : {uint8_t{0}, uint8_t{128}}) {
    SCOPED_TRACE(::testing::Message() << "flat frames " << int(v));
    Image<uint8_t> flat(64, 40, v);
    Params p = elas_params_for(16);
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_elas_frame(cpu, *gpu, gray_view(flat), gray_view(flat));
  }
  {
    SCOPED_TRACE("D = width, smallest view");
    const SyntheticPair pair = make_plane_pair(16, 16, 3, 9);
    Params p = elas_params_for(16);
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_elas_frame(cpu, *gpu, rgba_view(pair.left_rgba), rgba_view(pair.right_rgba));
  }
  {
    SCOPED_TRACE("a textured box on a flat frame: few support points");
    const SyntheticPair pair = make_plane_pair(64, 48, 4, 5);
    Image<uint32_t> l(64, 48, 0xff646464u), r(64, 48, 0xff646464u);
    for (int y = 18; y < 30; ++y)
      for (int x = 20; x < 32; ++x) l.at(x, y) = pair.left_rgba.at(x, y), r.at(x - 4, y) = pair.left_rgba.at(x, y);
    Params p = elas_params_for(32);
    Matcher cpu(p);
    auto gpu = make(p);
    ASSERT_TRUE(gpu);
    compare_elas_frame(cpu, *gpu, rgba_view(l), rgba_view(r));
  }
}

TEST(CudaEngineElas, BackgroundSequenceMatchesReference) {
  Params p = elas_params_for(48);
  p.background = true;
  p.warmup_frames = 3;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    const SyntheticPair f = make_sequence_frame(173, 117, i, 8, 28, 40, 30, 5, 0, 77);
    compare_elas_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    if (::testing::Test::HasFailure()) return;
  }
  const FrameStats st = gpu->stats();
  EXPECT_FALSE(st.warming_up);
  EXPECT_GT(st.foreground_fraction, 0.0);
  EXPECT_LT(st.foreground_fraction, 0.5);
}

TEST(CudaEngineElas, EveryOutputFormatMatchesCpuEngine) {
  Params p = elas_params_for(64);
  p.background = true;
  p.warmup_frames = 1;
  expect_every_format_matches_cpu_engine(p);
}

// One engine through progressive -> elas -> cross -> elas (a range change):
// each frame equals the reference of its method.
TEST(CudaEngineElas, SwitchingMethodsKeepsEachExact) {
  const SyntheticPair pair = make_step_pair(160, 96, 6, 28, 12);
  Params prog;
  prog.max_disparity = 48;
  Params elas = elas_params_for(48);
  Params elas2 = elas;
  elas2.max_disparity = 80;
  Params cross = elas;
  cross.method = Method::Cross;
  auto gpu = make(prog);
  ASSERT_TRUE(gpu);
  for (const Params* p : {&prog, &elas, &cross, &elas2, &prog, &elas}) {
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
