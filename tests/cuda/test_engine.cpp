// The whole CUDA pipeline against the CPU reference (cs::Matcher and the CPU
// engine): per-level intermediates, final Q4, background sequences, every
// output encoding, device-resident frames, several engines at once.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "cuda_engine.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

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
    EXPECT_TRUE(same_image(c.census_left, g.census_left)) << "census left";
    EXPECT_TRUE(same_image(c.census_right, g.census_right)) << "census right";
    if (background) {
      EXPECT_TRUE(same_image(c.rgb_left, g.rgb_left)) << "rgb left";
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

// One frame through both; compares intermediates, Q4, foreground and stats.
void compare_frame(Matcher& cpu, CudaEngine& gpu, const FrameView& left, const FrameView& right) {
  const int w = left.width, h = left.height;
  Image<uint16_t> cq4(w, h), cfg(w, h);
  Image<uint8_t> cmask(w, h);
  Outputs co;
  co.disparity_q4 = cq4.view();
  co.foreground = cmask.view();
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

  const FrameStats cs = cpu.stats(), gs = gpu.stats();
  EXPECT_EQ(cs.levels, gs.levels);
  EXPECT_EQ(cs.warming_up, gs.warming_up);
  EXPECT_EQ(cs.background_tests, gs.background_tests);
  EXPECT_EQ(cs.background_tests_full, gs.background_tests_full);
  EXPECT_DOUBLE_EQ(cs.valid_fraction, gs.valid_fraction);
  EXPECT_DOUBLE_EQ(cs.foreground_fraction, gs.foreground_fraction);
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

TEST(CudaEngine, BackgroundSequenceMatchesReference) {
  Params p;
  p.max_disparity = 48;
  p.background = true;
  p.levels = 3;  // blocks of levels 0 and 1 can copy their coarser label
  p.warmup_frames = 4;
  p.block_size = 6;
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
      // Static background and one moving object, after the warm-up: some
      // blocks must copy their coarser label, or the coarse-to-fine test
      // would go unexercised (the brightness change from frame 10 on makes
      // whole levels foreground-noisy).
      const FrameStats st = gpu->stats();
      EXPECT_FALSE(st.warming_up);
      EXPECT_GT(st.background_tests, 0u);
      EXPECT_LT(st.background_tests, st.background_tests_full);
      EXPECT_GT(st.foreground_fraction, 0.0);
      EXPECT_LT(st.foreground_fraction, 0.5);
    }
  }
  // A reset restarts the warm-up on both.
  cpu.reset_background();
  gpu->reset_background();
  const SyntheticPair f = make_sequence_frame(173, 117, 20, 8, 28, 40, 30, 5, 0, 77);
  compare_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
  EXPECT_TRUE(gpu->stats().warming_up);
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

}  // namespace
}  // namespace cs::cuda::test
