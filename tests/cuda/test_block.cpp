// Method block on the GPU against the CPU reference (stages.h B1 .. B4),
// bit for bit: each stage (B1/B2 winners of both views, B3 uniqueness,
// stage 8 on the block maps, B4 finish and confidence) on random and
// structured views, odd sizes, unaligned pitched views, masks, block sizes
// 3 .. 31, ranges with min-disparity > 0 and several slabs, every tile
// configuration and every target GPU's choice; then the whole engine with
// method=block: intermediates, Q4, stats, every output format (confidence
// included), device outputs, the background model, switching methods, and
// what the engine refuses by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "block_matching.h"
#include "cross_check.h"
#include "cuda_engine.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "stages.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

// ---------------------------------------------------------------- inputs

using test_scenes::random_mask;
using test_scenes::structured_pair;

// A device copy whose view starts `offset` bytes into a wider pitched
// allocation: an unaligned, pitched view.
struct OffsetImage {
  DeviceImage<uint8_t> store;
  ImageView<const uint8_t> view;
};
std::unique_ptr<OffsetImage> upload_offset(const Image<uint8_t>& img, int offset) {
  auto o = std::make_unique<OffsetImage>();
  EXPECT_EQ(o->store.allocate(img.width + offset + 5, img.height), cudaSuccess);
  EXPECT_EQ(cudaMemset2D(o->store.view().data, o->store.view().pitch, 0xC3, img.width + offset + 5, img.height),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpy2D(o->store.view().data + offset, o->store.view().pitch, img.pixels.data(), img.width, img.width,
                         img.height, cudaMemcpyHostToDevice),
            cudaSuccess);
  o->view = {o->store.view().data + offset, img.width, img.height, o->store.view().pitch};
  return o;
}

struct MatchCase {
  std::string name;
  Image<uint8_t> left, right, mask_left, mask_right;  // masks empty: none
  Range range;
  int block_size = 9;
};

// ---------------------------------------------------------------- B1, B2

// The GPU's winners of one launch (or of several on one scratch).
struct GpuBlock {
  DeviceImage<int16_t> disparity, right;
  DeviceImage<int32_t> best, rival, below, above;
  DeviceImage<unsigned long long> keys;
  void* state = nullptr;
  size_t state_bytes = 0;

  GpuBlock(int w, int h, Range range) {
    disparity = make_device<int16_t>(w, h);
    right = make_device<int16_t>(w, h);
    best = make_device<int32_t>(w, h);
    rival = make_device<int32_t>(w, h);
    below = make_device<int32_t>(w, h);
    above = make_device<int32_t>(w, h);
    keys = make_device<unsigned long long>(w, h, 0xFF);
    state_bytes = block_sweep_state_bytes(w, h, range);
    if (state_bytes) {
      EXPECT_EQ(cudaMalloc(&state, state_bytes), cudaSuccess);
      EXPECT_EQ(cudaMemset(state, 0x5A, state_bytes), cudaSuccess);  // the first slab must not read it
    }
  }
  ~GpuBlock() {
    if (state) cudaFree(state);
  }
  BlockWinnerViews winners() const {
    return {disparity.view(), best.view(), rival.view(), below.view(), above.view()};
  }
};

// Runs enqueue_block_match and compares every output with block_match.
void expect_match(const MatchCase& c, BlockParams bp, GpuBlock* reuse = nullptr) {
  SCOPED_TRACE(::testing::Message() << c.name << ", block " << c.block_size << ", range " << c.range.lo << ".."
                                    << c.range.hi << ", tile " << bp.tile_width << "x" << bp.tile_rows);
  const int w = c.left.width, h = c.left.height;
  const bool masks = c.mask_left.width > 0;
  BlockWinners want;
  Image<int16_t> want_right;
  block_match(c.left, c.right, masks ? &c.mask_left : nullptr, masks ? &c.mask_right : nullptr, c.range,
              c.block_size, want, want_right);

  const auto gl = upload_offset(c.left, 1), gr = upload_offset(c.right, 3);
  std::unique_ptr<OffsetImage> ml, mr;
  if (masks) {
    ml = upload_offset(c.mask_left, 2);
    mr = upload_offset(c.mask_right, 0);
  }
  std::unique_ptr<GpuBlock> own;
  if (!reuse) own = std::make_unique<GpuBlock>(w, h, c.range);
  GpuBlock& g = reuse ? *reuse : *own;
  BlockMatchViews v;
  v.gray_left = gl->view;
  v.gray_right = gr->view;
  if (masks) {
    v.mask_left = ml->view;
    v.mask_right = mr->view;
  }
  v.left = g.winners();
  v.right = g.right.view();
  v.scratch.right_keys = g.keys.view();
  v.scratch.sweep_state = g.state;
  v.scratch.sweep_state_bytes = g.state_bytes;
  bp.range = c.range;
  bp.block_size = c.block_size;
  ASSERT_CUDA(enqueue_block_match(v, bp, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(same_image(want.disparity, download(g.disparity))) << "left disparity";
  EXPECT_TRUE(same_image(want.best, download(g.best))) << "best";
  EXPECT_TRUE(same_image(want.rival, download(g.rival))) << "rival";
  EXPECT_TRUE(same_image(want.below, download(g.below))) << "below";
  EXPECT_TRUE(same_image(want.above, download(g.above))) << "above";
  EXPECT_TRUE(same_image(want_right, download(g.right))) << "right disparity";
  // Every launch leaves the keys clear for the next.
  const Image<unsigned long long> keys = download(g.keys);
  EXPECT_TRUE(std::all_of(keys.pixels.begin(), keys.pixels.end(), [](unsigned long long k) { return k == ~0ull; }))
      << "right keys left set";
}

TEST(CudaBlock, MatchEqualsReferenceEveryTileAndBlockSize) {
  MatchCase c;
  c.name = "random 141x53";
  c.left = random_gray(141, 53, 1);
  c.right = random_gray(141, 53, 2);
  c.range = {0, 40};  // two slabs
  for (int block : {3, 9, 31}) {
    c.block_size = block;
    for (int tile_width : {64, 128})
      for (int rows : {8, 16, 32, 64}) {
        BlockParams bp;
        bp.tile_width = tile_width;
        bp.tile_rows = rows;
        expect_match(c, bp);
      }
  }
  for (int block = 3; block <= 31; block += 2) {
    c.block_size = block;
    expect_match(c, BlockParams());
  }
}

TEST(CudaBlock, StructuredPairsRangesMasksAndOddSizes) {
  struct Shape {
    int w, h, shift;
    Range range;
    int block;
    bool masks;
  };
  const Shape shapes[] = {
      {97, 61, 7, {0, 20}, 5, false},     // one slab
      {130, 45, 12, {3, 67}, 7, true},    // min-disparity, three slabs, the last short
      {77, 33, 30, {28, 77}, 11, false},  // up to the width; tiles left of the range have no candidates
      {200, 19, 40, {0, 96}, 15, true},   // a block taller than a tile of 8 rows
      {65, 70, 5, {1, 33}, 3, false},     // one column past a 64-column tile
      {129, 17, 9, {32, 65}, 31, true},   // a slab starting at 32
      {300, 90, 20, {0, 160}, 9, false},  // five slabs
  };
  for (const Shape& s : shapes) {
    MatchCase c;
    structured_pair(s.w, s.h, s.shift, s.w * 7 + s.h, &c.left, &c.right);
    if (s.masks) {
      c.mask_left = random_mask(s.w, s.h, s.w);
      c.mask_right = random_mask(s.w, s.h, s.h);
    }
    c.range = s.range;
    c.block_size = s.block;
    c.name = std::to_string(s.w) + "x" + std::to_string(s.h) + (s.masks ? " masks" : "");
    expect_match(c, BlockParams());
    BlockParams bp;
    bp.tile_width = 64;
    bp.tile_rows = 8;
    expect_match(c, bp);
  }
}

TEST(CudaBlock, ScratchServesTheNextFrame) {
  const int w = 180, h = 60;
  MatchCase a, b;
  structured_pair(w, h, 10, 3, &a.left, &a.right);
  structured_pair(w, h, 25, 4, &b.left, &b.right);
  a.range = b.range = {2, 80};
  a.name = "first";
  b.name = "second, same scratch";
  GpuBlock g(w, h, a.range);
  expect_match(a, BlockParams(), &g);
  expect_match(b, BlockParams(), &g);
  b.mask_left = random_mask(w, h, 5);
  b.mask_right = random_mask(w, h, 6);
  b.name = "third, masks";
  expect_match(b, BlockParams(), &g);
}

// ---------------------------------------------------------------- configurations

struct Target {
  int cc, sms;
};
const Target kTargets[] = {{75, 40}, {80, 108}, {86, 28}, {87, 16}, {89, 58}, {90, 132}};

TEST(CudaBlock, EveryTargetsConfigurationFitsAndMatches) {
  MatchCase c;
  structured_pair(150, 70, 14, 9, &c.left, &c.right);
  c.range = {0, 64};
  c.block_size = 31;  // the most shared memory any block size needs
  c.name = "targets";
  for (const Target& t : kTargets) {
    DeviceLimits limits;
    ASSERT_TRUE(architecture_limits(t.cc, t.sms, &limits));
    SCOPED_TRACE(::testing::Message() << "sm_" << t.cc);
    for (int size : {640, 1920}) {
      BlockParams bp;
      bp.range = {0, 128};
      bp.block_size = 31;
      bp.limits = &limits;
      BlockConfig config;
      ASSERT_CUDA(choose_block_config(size, size * 9 / 16, bp, &config));
      EXPECT_GT(config.blocks_per_sm, 0);
      EXPECT_LE(config.static_shared, 48u * 1024u);
      EXPECT_EQ(config.threads, config.tile_width);
      ::testing::Test::RecordProperty("sm_" + std::to_string(t.cc) + "_" + std::to_string(size),
                                      std::to_string(config.tile_width) + "x" + std::to_string(config.tile_rows));
    }
    BlockParams bp;
    bp.limits = &limits;
    expect_match(c, bp);
  }
  BlockParams bad;
  bad.range = {0, 64};
  bad.tile_rows = 12;
  BlockConfig config;
  EXPECT_EQ(choose_block_config(100, 100, bad, &config), cudaErrorInvalidConfiguration);
}

// ---------------------------------------------------------------- B3, stage 8, B4

TEST(CudaBlock, FinishAndCrossCheckEqualTheReferenceStages) {
  const int w = 143, h = 57;
  Image<uint8_t> left, right;
  structured_pair(w, h, 9, 8, &left, &right);
  const Image<uint8_t> mask = random_mask(w, h, 9);
  for (Range range : {Range{0, 48}, Range{4, 40}}) {
    BlockWinners win;
    Image<int16_t> right_map;
    block_match(left, right, nullptr, nullptr, range, 7, win, right_map);
    auto d = upload(win.disparity), r = upload(right_map);
    auto best = upload(win.best), rival = upload(win.rival), below = upload(win.below), above = upload(win.above);
    auto m = upload(mask);
    for (int ratio : {0, 80, 300})
      for (bool check : {false, true})
        for (bool subpixel : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "range " << range.lo << ".." << range.hi << " ratio " << ratio
                                            << (check ? " check" : "") << (subpixel ? " subpixel" : ""));
          Image<int16_t> unique = win.disparity;
          apply_uniqueness(win, ratio, unique);
          Image<int16_t> final_left = unique, final_right = right_map;
          if (check) cross_check(final_left, final_right, 1);
          Image<uint16_t> q4(w, h);
          finish_block_disparity(win, final_left, range, subpixel, q4.view());
          Image<uint8_t> conf;
          block_confidence(win, final_left, conf);
          unsigned long long want_valid = 0, want_fg = 0;
          for (size_t p = 0; p < final_left.pixels.size(); ++p) {
            want_valid += final_left.pixels[p] >= 0;
            want_fg += mask.pixels[p] != 0;
          }

          auto got_unique = make_device<int16_t>(w, h), got_final = make_device<int16_t>(w, h);
          auto got_q4 = make_device<uint16_t>(w, h);
          auto got_conf = make_device<uint8_t>(w, h);
          FrameCounters* counters = nullptr;
          ASSERT_CUDA(cudaMalloc(&counters, sizeof(FrameCounters)));
          ASSERT_CUDA(cudaMemset(counters, 0, sizeof(FrameCounters)));
          BlockFinishViews v;
          v.winners = {d.cview(), best.cview(), rival.cview(), below.cview(), above.cview()};
          if (check) v.right = r.cview();
          v.mask = m.cview();
          v.unique = got_unique.view();
          v.final_map = got_final.view();
          v.disparity_q4 = got_q4.view();
          v.confidence = got_conf.view();
          v.counters = counters;
          BlockFinishParams p;
          p.range = range;
          p.uniqueness_ratio = ratio;
          p.tolerance = 1;
          p.subpixel = subpixel;
          ASSERT_CUDA(enqueue_block_finish(v, p, nullptr));
          FrameCounters c{};
          ASSERT_CUDA(cudaMemcpy(&c, counters, sizeof(c), cudaMemcpyDeviceToHost));
          cudaFree(counters);
          EXPECT_TRUE(same_image(unique, download(got_unique))) << "B3";
          EXPECT_TRUE(same_image(final_left, download(got_final))) << "after stage 8";
          EXPECT_TRUE(same_image(q4, download(got_q4))) << "B4 Q4";
          EXPECT_TRUE(same_image(conf, download(got_conf))) << "confidence";
          EXPECT_EQ(c.valid_pixels, want_valid);
          EXPECT_EQ(c.foreground_pixels, want_fg);

          // The same finish encoding its Q4 values (false colour with the
          // mask's alpha) instead of writing the map: encode_output's pixels.
          {
            EncodeParams ep;
            ep.format = OutputFormat::BGRA;
            ep.colormap = Colormap::Turbo;
            ep.max_disparity = range.hi;
            ep.alpha_from_mask = true;
            const DeviceLuts luts;
            auto enc = make_device<uint8_t>(4 * w, h);
            BlockFinishViews ev;
            ev.winners = v.winners;
            ev.right = v.right;
            ev.mask = v.mask;
            ev.encode.args = encode_args(ep, luts.data);
            ev.encode.dst = enc.view().data;
            ev.encode.pitch = enc.view().pitch;
            ASSERT_CUDA(enqueue_block_finish(ev, p, nullptr));
            Image<uint8_t> want(4 * w, h);
            const ImageView<const uint8_t> mv = mask.view();
            encode_output(static_cast<const Image<uint16_t>&>(q4).view(), &mv, ep, want.pixels.data(), 4 * w);
            EXPECT_TRUE(same_image(want, download(enc))) << "B4 encoded";
          }

          // Stage 8's kernel on the block maps: both checked maps.
          if (check) {
            auto cl = make_device<int16_t>(w, h), cr = make_device<int16_t>(w, h);
            ASSERT_CUDA(enqueue_cross_check(got_unique.cview(), r.cview(), 1, cl.view(), cr.view(), nullptr));
            EXPECT_TRUE(same_image(final_left, download(cl))) << "stage 8 left";
            EXPECT_TRUE(same_image(final_right, download(cr))) << "stage 8 right";
          }
        }
  }
}

// ---------------------------------------------------------------- the engine

Params block_params(int max_disparity) {
  Params p;
  p.method = Method::Block;
  p.max_disparity = max_disparity;
  return p;
}

std::unique_ptr<CudaEngine> make(const Params& p) {
  std::string err;
  auto e = CudaEngine::create(p, -1, &err);
  EXPECT_TRUE(e) << err;
  return e;
}

void expect_same_block_debug(const Matcher::Debug& cpu, const Matcher::Debug& gpu, bool background) {
  ASSERT_EQ(cpu.levels.size(), gpu.levels.size());
  for (size_t l = 0; l < cpu.levels.size(); ++l) {
    SCOPED_TRACE(::testing::Message() << "level " << l);
    const LevelDebug& c = cpu.levels[l];
    const LevelDebug& g = gpu.levels[l];
    EXPECT_EQ(c.range.lo, g.range.lo);
    EXPECT_EQ(c.range.hi, g.range.hi);
    EXPECT_TRUE(same_image(c.gray_left, g.gray_left)) << "gray left";
    EXPECT_TRUE(same_image(c.gray_right, g.gray_right)) << "gray right";
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
  const BlockWinners& c = cpu.block.winners;
  const BlockWinners& g = gpu.block.winners;
  EXPECT_TRUE(same_image(c.disparity, g.disparity)) << "winners";
  EXPECT_TRUE(same_image(c.best, g.best)) << "best";
  EXPECT_TRUE(same_image(c.rival, g.rival)) << "rival";
  EXPECT_TRUE(same_image(c.below, g.below)) << "below";
  EXPECT_TRUE(same_image(c.above, g.above)) << "above";
  EXPECT_TRUE(same_image(cpu.costs.best, gpu.costs.best)) << "costs best";
  EXPECT_TRUE(same_image(cpu.costs.rival, gpu.costs.rival)) << "costs rival";
  EXPECT_TRUE(same_image(cpu.confidence, gpu.confidence)) << "confidence";
}

// One frame through both: intermediates, Q4 (through the encoder, pitched
// host output), confidence, stats.
void compare_block_frame(Matcher& cpu, CudaEngine& gpu, const FrameView& left, const FrameView& right) {
  FrameBoth f;
  ASSERT_TRUE(run_frame_both(cpu, gpu, left, right, &f));
  expect_same_block_debug(cpu.debug(), f.gpu_debug, cpu.params().background);
  EXPECT_TRUE(same_image(f.cpu_q4, f.gpu_q4)) << "final Q4";
  EXPECT_TRUE(same_image(f.cpu_confidence, f.gpu_debug.confidence)) << "confidence output";

  const FrameStats cs = cpu.stats(), gs = gpu.stats();
  EXPECT_EQ(cs.levels, gs.levels);
  EXPECT_EQ(cs.warming_up, gs.warming_up);
  EXPECT_EQ(cs.background_tests, gs.background_tests);
  EXPECT_DOUBLE_EQ(cs.valid_fraction, gs.valid_fraction);
  EXPECT_DOUBLE_EQ(cs.foreground_fraction, gs.foreground_fraction);
}

TEST(CudaEngineBlock, PipelineMatchesReferenceOnScenes) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    Params p;
  };
  std::vector<Case> cases;
  cases.push_back({"defaults: block 9, ratio 80, step 203x131", make_step_pair(203, 131, 6, 30, 1), block_params(48)});
  {
    Params p = block_params(70);
    p.match_block_size = 3;
    p.uniqueness_ratio = 0;
    p.min_disparity = 5;
    cases.push_back({"block 3, ratio 0, min 5, slanted 160x97", make_slanted_pair(160, 97, 8.0f, 0.12f, 2), p});
  }
  {
    Params p = block_params(40);
    p.match_block_size = 31;
    p.uniqueness_ratio = 300;
    p.lr_check = false;
    cases.push_back({"block 31, ratio 300, no check, plane 97x61", make_plane_pair(97, 61, 17, 3), p});
  }
  {
    Params p = block_params(96);
    p.match_block_size = 15;
    p.subpixel = false;
    p.lr_tolerance = 0;
    cases.push_back({"block 15, no subpixel, tolerance 0, step 257x120", make_step_pair(257, 120, 10, 60, 4), p});
  }
  {
    Params p = block_params(200);
    p.min_disparity = 33;
    p.match_block_size = 7;
    cases.push_back({"min 33 max 200, step 333x77", make_step_pair(333, 77, 40, 90, 5), p});
  }
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    Matcher cpu(c.p);
    auto gpu = make(c.p);
    ASSERT_TRUE(gpu);
    compare_block_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
    // The same engine again (graph replay, keys and state reused).
    compare_block_frame(cpu, *gpu, rgba_view(c.pair.left_rgba), rgba_view(c.pair.right_rgba));
  }
}

TEST(CudaEngineBlock, RandomAndPitchedYuvInputs) {
  const int w = 131, h = 67;
  Image<uint8_t> l = random_gray(w, h, 21), r = random_gray(w, h, 22);
  // I420 with padded luma rows and constant chroma.
  const int pitch = w + 9;
  std::vector<uint8_t> yl(static_cast<size_t>(pitch) * h, 0x11), yr(yl.size(), 0x22);
  for (int y = 0; y < h; ++y) {
    std::memcpy(&yl[static_cast<size_t>(y) * pitch], &l.at(0, y), w);
    std::memcpy(&yr[static_cast<size_t>(y) * pitch], &r.at(0, y), w);
  }
  std::vector<uint8_t> chroma(static_cast<size_t>((w + 1) / 2) * ((h + 1) / 2), 128);
  auto view = [&](const std::vector<uint8_t>& y, PixelFormat f) {
    FrameView v;
    v.format = f;
    v.width = w;
    v.height = h;
    v.plane[0] = y.data();
    v.pitch[0] = pitch;
    v.plane[1] = chroma.data();
    v.pitch[1] = (w + 1) / 2;
    v.plane[2] = chroma.data();
    v.pitch[2] = (w + 1) / 2;
    return v;
  };
  for (int ratio : {0, 80, 300}) {
    Params p = block_params(48);
    p.uniqueness_ratio = ratio;
    p.match_block_size = 5;
    SCOPED_TRACE(::testing::Message() << "ratio " << ratio);
    for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::I420}) {
      Matcher cpu(p);
      auto gpu = make(p);
      ASSERT_TRUE(gpu);
      compare_block_frame(cpu, *gpu, view(yl, f), view(yr, f));
    }
  }
}

TEST(CudaEngineBlock, BackgroundSequenceMatchesReference) {
  Params p = block_params(48);
  p.background = true;
  p.levels = 3;
  p.warmup_frames = 3;
  p.match_block_size = 7;
  Matcher cpu(p);
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  for (int i = 0; i < 9; ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    const SyntheticPair f = make_sequence_frame(173, 117, i, 8, 28, 40, 30, 5, 0, 77);
    compare_block_frame(cpu, *gpu, rgba_view(f.left_rgba), rgba_view(f.right_rgba));
    if (::testing::Test::HasFailure()) break;
  }
  const FrameStats st = gpu->stats();
  EXPECT_FALSE(st.warming_up);
  EXPECT_GT(st.foreground_fraction, 0.0);
  EXPECT_LT(st.foreground_fraction, 0.5);
}

TEST(CudaEngineBlock, EveryOutputFormatMatchesCpuEngine) {
  Params p = block_params(64);
  p.background = true;
  p.warmup_frames = 1;
  p.confidence = true;
  expect_every_format_matches_cpu_engine(p);
}

// Device-resident frames with the raw outputs (Q4, foreground, confidence)
// on a caller's stream.
TEST(CudaEngineBlock, DeviceOutputsOnCallerStream) {
  const Params p = block_params(48);
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
  auto conf = make_device<uint8_t>(150, 90);
  cudaStream_t caller;
  ASSERT_CUDA(cudaStreamCreate(&caller));
  auto gpu = make(p);
  ASSERT_TRUE(gpu);
  Outputs o;
  o.memory = Memory::Device;
  o.disparity_q4 = q4.view();
  o.foreground = fg.view();
  o.confidence = conf.view();
  ASSERT_EQ(gpu->enqueue(lv, rv, o, caller), "");
  ASSERT_CUDA(cudaStreamSynchronize(caller));
  Matcher cpu(p);
  Image<uint16_t> cq4(150, 90);
  Image<uint8_t> cconf(150, 90);
  Outputs co;
  co.disparity_q4 = cq4.view();
  co.confidence = cconf.view();
  ASSERT_EQ(cpu.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), co), "");
  EXPECT_TRUE(same_image(cq4, download(q4)));
  EXPECT_TRUE(same_image(cconf, download(conf)));
  EXPECT_TRUE(same_image(Image<uint8_t>(150, 90, 255), download(fg)));
  cudaStreamDestroy(caller);
}

// One engine through progressive -> block -> progressive (and a block size
// and range change): each frame equals the reference of its method.
TEST(CudaEngineBlock, SwitchingMethodsKeepsEachExact) {
  const SyntheticPair pair = make_step_pair(160, 96, 6, 28, 12);
  Params prog;
  prog.max_disparity = 48;
  Params block = block_params(48);
  Params block2 = block;
  block2.match_block_size = 13;
  block2.max_disparity = 80;  // three slabs: the sweep state grows
  auto gpu = make(prog);
  ASSERT_TRUE(gpu);
  for (const Params* p : {&prog, &block, &block2, &prog, &block}) {
    SCOPED_TRACE(p->method == Method::Block ? "block" : "progressive");
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

// Switching an engine between the methods with a uniqueness ratio and the
// confidence: both methods have them on the GPU (progressive:
// tests/cuda/test_engine.cpp), each frame equals its method's reference.
// A progressive engine asked for the confidence frame without
// Params::confidence refuses by name (it keeps no costs for it).
TEST(CudaEngineBlock, UniquenessAndConfidenceAcrossMethods) {
  const SyntheticPair pair = make_plane_pair(64, 48, 4, 1);
  Params block = block_params(32);
  block.uniqueness_ratio = 10;
  block.confidence = true;
  Params prog = block;
  prog.method = Method::Progressive;
  auto engine = make(block);
  ASSERT_TRUE(engine);
  std::vector<uint8_t> out(64 * 48);
  OutputFrame of{out.data(), 64, 64, 48, Memory::Host};
  EncodeParams ep;
  ep.format = OutputFormat::Confidence;
  ep.max_disparity = 32;
  for (const Params* p : {&block, &prog, &block}) {
    SCOPED_TRACE(p->method == Method::Block ? "block" : "progressive");
    ASSERT_EQ(engine->set_params(*p), "");
    Matcher cpu(*p);
    Image<uint8_t> cconf(64, 48);
    Outputs co;
    co.confidence = cconf.view();
    ASSERT_EQ(cpu.process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), co), "");
    ASSERT_EQ(engine->process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), ep, of), "");
    Image<uint8_t> got(64, 48);
    got.pixels = out;
    EXPECT_TRUE(same_image(cconf, got));
  }
  Params plain;
  plain.max_disparity = 32;
  auto prog_engine = make(plain);
  ASSERT_TRUE(prog_engine);
  const std::string err = prog_engine->process(rgba_view(pair.left_rgba), rgba_view(pair.right_rgba), ep, of);
  EXPECT_NE(err.find("output-mode=confidence"), std::string::npos) << err;
}

}  // namespace
}  // namespace cs::cuda::test
