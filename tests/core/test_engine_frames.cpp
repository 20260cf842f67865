// Frames in flight through the Engine interface (engine.h): submit() and
// finish() give, frame for frame and in order, exactly what process() gives,
// for the synchronous default and for the CPU engine that overlaps frames
// on a worker thread; parameters and background resets apply from the next
// frame submitted; an engine destroyed with frames in flight neither hangs
// nor touches them.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine.h"
#include "synthetic.h"

namespace cs {
namespace {

constexpr int kW = 96, kH = 64;

Params background_params() {
  Params p;
  p.max_disparity = 32;
  p.background = true;
  p.warmup_frames = 2;
  return p;
}

// A moving object over a static background: each frame differs, and the
// background model makes every frame depend on the ones before it.
std::vector<SyntheticPair> sequence(int frames) {
  std::vector<SyntheticPair> s;
  for (int i = 0; i < frames; ++i) s.push_back(make_sequence_frame(kW, kH, i, 6, 14, 24, 20, 5, 0, 11));
  return s;
}

struct Out {
  std::vector<uint16_t> q4 = std::vector<uint16_t>(kW * kH, 0xFFFF);
  OutputFrame frame() {
    OutputFrame o;
    o.data = reinterpret_cast<uint8_t*>(q4.data());
    o.pitch = kW * 2;
    o.width = kW;
    o.height = kH;
    return o;
  }
};

// Every frame through process() on a fresh engine: the expected outputs.
std::vector<Out> expected(const Params& params, const std::vector<SyntheticPair>& s, int reset_before = -1) {
  auto e = make_cpu_engine(params);
  std::vector<Out> outs(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (static_cast<int>(i) == reset_before) e->reset_background();
    EXPECT_EQ(e->process(rgba_view(s[i].left_rgba), rgba_view(s[i].right_rgba), EncodeParams(), outs[i].frame()), "");
  }
  return outs;
}

class EngineFrames : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Engine> make(const Params& p) { return make_cpu_engine(p, GetParam()); }
};

TEST_P(EngineFrames, InFlightEqualsProcessFrameForFrame) {
  const auto s = sequence(8);
  const auto want = expected(background_params(), s);
  auto e = make(background_params());
  std::vector<Out> got(s.size());
  // Up to three frames in flight, finished in order.
  size_t finished = 0;
  uint64_t last_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(e->submit(rgba_view(s[i].left_rgba), rgba_view(s[i].right_rgba), EncodeParams(), got[i].frame()), "");
    EXPECT_EQ(e->in_flight(), i + 1 - finished);
    if (e->in_flight() == 3) {
      const Engine::FrameResult r = e->finish();
      ASSERT_EQ(r.error, "");
      EXPECT_EQ(r.stats.frame_index, last_index + 1);
      last_index = r.stats.frame_index;
      ++finished;
    }
  }
  while (e->in_flight() > 0) {
    const Engine::FrameResult r = e->finish();
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.stats.frame_index, last_index + 1);
    last_index = r.stats.frame_index;
    ++finished;
  }
  EXPECT_EQ(finished, s.size());
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(got[i].q4, want[i].q4) << "frame " << i;
  // The sequence has foreground once the model has warmed up.
  EXPECT_NE(want.back().q4, want.front().q4);
}

TEST_P(EngineFrames, ResetAndParamsApplyFromTheNextFrameSubmitted) {
  const auto s = sequence(6);
  const auto want = expected(background_params(), s, 4);
  auto e = make(background_params());
  std::vector<Out> got(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4) e->reset_background();  // frames 0..3 still in flight
    ASSERT_EQ(e->submit(rgba_view(s[i].left_rgba), rgba_view(s[i].right_rgba), EncodeParams(), got[i].frame()), "");
  }
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(e->finish().error, "");
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(got[i].q4, want[i].q4) << "frame " << i;

  // A new range from the third frame on: the first two keep the old one.
  Params narrow = background_params();
  narrow.background = false;
  Params wide = narrow;
  wide.max_disparity = 16;
  auto a = make_cpu_engine(narrow), b = make_cpu_engine(wide);
  Out want0, want2;
  ASSERT_EQ(a->process(rgba_view(s[0].left_rgba), rgba_view(s[0].right_rgba), EncodeParams(), want0.frame()), "");
  ASSERT_EQ(b->process(rgba_view(s[2].left_rgba), rgba_view(s[2].right_rgba), EncodeParams(), want2.frame()), "");
  ASSERT_NE(want0.q4, want2.q4);
  auto f = make(narrow);
  Out got0, got1, got2;
  ASSERT_EQ(f->submit(rgba_view(s[0].left_rgba), rgba_view(s[0].right_rgba), EncodeParams(), got0.frame()), "");
  ASSERT_EQ(f->submit(rgba_view(s[1].left_rgba), rgba_view(s[1].right_rgba), EncodeParams(), got1.frame()), "");
  ASSERT_EQ(f->set_params(wide), "");
  ASSERT_EQ(f->submit(rgba_view(s[2].left_rgba), rgba_view(s[2].right_rgba), EncodeParams(), got2.frame()), "");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(f->finish().error, "");
  EXPECT_EQ(got0.q4, want0.q4);
  EXPECT_EQ(got2.q4, want2.q4);
}

TEST_P(EngineFrames, ErrorsArriveWithTheirFrame) {
  const auto s = sequence(3);
  auto e = make(background_params());
  Out a, b, c;
  EncodeParams depth;
  depth.format = OutputFormat::DepthMm;  // no calibration: refused, for this frame only
  ASSERT_EQ(e->submit(rgba_view(s[0].left_rgba), rgba_view(s[0].right_rgba), EncodeParams(), a.frame()), "");
  ASSERT_EQ(e->submit(rgba_view(s[1].left_rgba), rgba_view(s[1].right_rgba), depth, b.frame()), "");
  ASSERT_EQ(e->submit(rgba_view(s[2].left_rgba), rgba_view(s[2].right_rgba), EncodeParams(), c.frame()), "");
  EXPECT_EQ(e->finish().error, "");
  const std::string error = e->finish().error;
  EXPECT_NE(error.find("baseline"), std::string::npos) << error;
  EXPECT_EQ(e->finish().error, "");
  EXPECT_EQ(e->in_flight(), 0u);
  EXPECT_NE(e->finish().error, "");  // nothing submitted
}

TEST_P(EngineFrames, DestroyedWithFramesInFlight) {
  const auto s = sequence(1);
  std::vector<Out> outs(6);
  {
    auto e = make(background_params());
    for (auto& o : outs)
      ASSERT_EQ(e->submit(rgba_view(s[0].left_rgba), rgba_view(s[0].right_rgba), EncodeParams(), o.frame()), "");
  }  // neither hangs nor crashes; frames never started are dropped
  SUCCEED();
}

INSTANTIATE_TEST_SUITE_P(Cpu, EngineFrames, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Overlapping" : "Synchronous"; });

}  // namespace
}  // namespace cs
