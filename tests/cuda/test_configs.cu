// Kernel configurations chosen from the device's limits (device_limits.h,
// matching.h choose_match_config): the occupancy arithmetic agrees with the
// driver's, every choice fits the GPU it is made for (each target
// architecture's limits, emulated here), and the whole pipeline run in each
// architecture's configurations equals the CPU reference bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_engine.h"
#include "device_limits.h"
#include "gpu_test_util.h"
#include "matcher_debug.h"
#include "matching.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

struct Target {
  int cc, sms;
  const char* gpu;
};
// Each architecture the default build carries, with the SM count of one of
// its GPUs.
const Target kTargets[] = {{75, 40, "T4"},         {80, 108, "A100"},    {86, 28, "RTX 3060"},
                           {87, 16, "Jetson AGX Orin"}, {89, 58, "L4"}, {90, 132, "H100 SXM"}};

DeviceLimits target_limits(const Target& t) {
  DeviceLimits l;
  EXPECT_TRUE(architecture_limits(t.cc, t.sms, &l)) << t.cc;
  return l;
}

// A GPU too small for any radius-2 tile (21 KB of shared memory a block and
// an SM): only the generic tile kernel fits it.
DeviceLimits tiny_limits() {
  DeviceLimits l;
  EXPECT_TRUE(architecture_limits(75, 4, &l));
  l.shared_per_block_optin = 21 * 1024;
  l.shared_per_sm = 21 * 1024;
  return l;
}

__global__ void __launch_bounds__(256) probe_kernel(int* out) {
  __shared__ int stage[3000];
  extern __shared__ int more[];
  stage[threadIdx.x] = threadIdx.x;
  more[threadIdx.x] = 1;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = stage[255 - threadIdx.x] + more[threadIdx.x ^ 1];
}

TEST(DeviceLimits, OccupancyAgreesWithTheDriver) {
  int device = 0;
  ASSERT_CUDA(cudaGetDevice(&device));
  DeviceLimits own;
  ASSERT_CUDA(query_device_limits(device, &own));
  EXPECT_GT(own.sm_count, 0);
  EXPECT_GT(own.shared_per_block_optin, 0u);
  cudaFuncAttributes attr{};
  ASSERT_CUDA(cudaFuncGetAttributes(&attr, probe_kernel));
  ASSERT_CUDA(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(own.shared_per_block_optin - attr.sharedSizeBytes)));
  for (int threads : {64, 128, 256})
    for (size_t dynamic : {size_t{1024}, size_t{8} << 10, size_t{40} << 10, size_t{60} << 10, size_t{100} << 10,
                           own.shared_per_block_optin - attr.sharedSizeBytes}) {
      if (attr.sharedSizeBytes + dynamic > own.shared_per_block_optin) continue;
      int driver = -1;
      ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&driver, probe_kernel, threads, dynamic));
      EXPECT_EQ(blocks_per_sm(own, reinterpret_cast<const void*>(probe_kernel), threads, dynamic), driver)
          << threads << " threads, " << dynamic << " bytes";
    }
  // Beyond the opt-in maximum nothing fits.
  EXPECT_EQ(blocks_per_sm(own, reinterpret_cast<const void*>(probe_kernel), 256, own.shared_per_block_optin), 0);
}

// A level's views for choose_match_config: only sizes and which optional
// parts are present matter, so the pointers are never read.
struct Shape {
  int w, h;
  Range range;
  bool refine, subpixel, masks, pair, scratch;
  int best, radius;
  // The rival forms: a uniqueness ratio, the first view's sweep costs.
  int uniqueness_ratio = 0;
  bool costs = false;
  // Refinement with a tile schedule (longest tiles first, tile_order.h).
  bool schedule = false;
};

std::vector<MatchViews> shape_views(const Shape& s) {
  static uint32_t dummy_words[4];
  static uint8_t dummy_bytes[4];
  static int16_t dummy_map[4];
  static int8_t dummy_offsets[4];
  static int32_t dummy_costs[4];
  std::vector<MatchViews> views(s.pair ? 2 : 1);
  for (size_t i = 0; i < views.size(); ++i) {
    MatchViews& v = views[i];
    v.census_ref = {dummy_words, s.w, s.h, 4 * s.w};
    v.census_other = v.census_ref;
    v.disparity = {dummy_map, s.w, s.h, 2 * s.w};
    if (s.masks) {
      v.mask_ref = {dummy_bytes, s.w, s.h, s.w};
      v.mask_other = v.mask_ref;
    }
    if (s.refine) v.coarser = {dummy_map, (s.w + 1) / 2, (s.h + 1) / 2, s.w};
    if (s.subpixel && i == 0) v.subpixel_offset = {dummy_offsets, s.w, s.h, s.w};
    if (s.costs && i == 0) {
      v.best_cost = {dummy_costs, s.w, s.h, 4 * s.w};
      v.rival_cost = v.best_cost;
    }
    if (s.scratch) {
      if (s.refine) {
        v.scratch.wide_pixels = dummy_words;
        v.scratch.wide_capacity = 4096;
        v.scratch.wide_counters = reinterpret_cast<unsigned*>(dummy_words);
        if (s.schedule) {
          v.scratch.schedule.costs = dummy_words;
          v.scratch.schedule.order = dummy_words;
          v.scratch.schedule.counts = reinterpret_cast<unsigned*>(dummy_words);
          v.scratch.schedule.capacity = refine_tile_capacity(s.w, s.h);
        }
        // The right view's keys: its map is the one the left view offers
        // (the engine's refinement: the left view's grid alone).
        if (i == 1) v.scratch.best_keys = {dummy_words, s.w, s.h, 4 * s.w};
      } else {
        v.scratch.best_keys = {dummy_words, s.w, s.h, 4 * s.w};
        v.scratch.tiles_done = reinterpret_cast<unsigned*>(dummy_words);
      }
    }
  }
  return views;
}

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  const int sizes[][2] = {{1024, 768}, {512, 384}, {256, 192}, {1920, 1080}, {97, 23}, {4096, 2160}};
  const Range ranges[] = {{0, 64}, {0, 256}, {3, 130}, {0, 1024}, {0, 4096}};
  for (const auto& sz : sizes)
    for (const Range& r : ranges)
      for (int best : {0, 1, 2})
        for (int form = 0; form < 8; ++form) {
          Shape s{sz[0], sz[1], r, (form & 1) != 0, (form & 2) != 0, (form & 4) != 0, true, true, best, 2};
          out.push_back(s);
          s.pair = false;
          s.scratch = form < 4;
          out.push_back(s);
        }
  for (int radius : {0, 1, 3, 5, 8})
    for (int best : {0, 1, 2, 4}) out.push_back({640, 480, {0, 128}, false, true, false, false, false, best, radius});
  out.push_back({640, 480, {0, 128}, true, false, true, false, false, 4, 2});
  // The rival forms (uniqueness, the confidence's costs): the engine's level
  // 0 with the confidence (a pair, the left view's costs and sub-pixel) and a
  // level with uniqueness alone, either view.
  for (const auto& sz : sizes)
    for (const Range& r : ranges)
      for (int best : {0, 1, 2})
        for (int form = 0; form < 4; ++form) {
          const bool refine = (form & 1) != 0, masks = (form & 2) != 0;
          out.push_back({sz[0], sz[1], r, refine, true, masks, true, true, best, 2, 0, true});
          out.push_back({sz[0], sz[1], r, refine, false, masks, false, true, best, 2, 25, false});
        }
  for (int radius : {1, 3})
    for (int best : {2, 4}) out.push_back({640, 480, {0, 128}, false, true, false, false, false, best, radius, 10, true});
  return out;
}

::testing::AssertionResult fits(const MatchConfig& c, const DeviceLimits& l) {
  const size_t shared = c.static_shared + c.dynamic_shared;
  if (c.threads <= 0 || c.threads > l.max_threads_per_block) return ::testing::AssertionFailure() << "threads " << c.threads;
  if (shared > l.shared_per_block_optin)
    return ::testing::AssertionFailure() << "shared " << shared << " > opt-in " << l.shared_per_block_optin;
  if (c.blocks_per_sm < 1) return ::testing::AssertionFailure() << "no block fits an SM";
  if (static_cast<long long>(c.blocks_per_sm) * c.threads > l.max_threads_per_sm)
    return ::testing::AssertionFailure() << c.blocks_per_sm << " blocks of " << c.threads << " threads";
  if (c.blocks_per_sm * (shared + l.reserved_shared_per_block) > l.shared_per_sm)
    return ::testing::AssertionFailure() << c.blocks_per_sm << " blocks of " << shared << " bytes";
  // Registers go to warps in units of 256.
  const long long per_warp = (c.registers * 32 + 255) / 256 * 256;
  if (per_warp * ((c.threads + 31) / 32) * c.blocks_per_sm > l.registers_per_sm)
    return ::testing::AssertionFailure() << c.blocks_per_sm << " blocks at " << c.registers << " registers";
  if (c.wide_grid > 0) {
    if (c.wide_shared > l.shared_per_block_optin) return ::testing::AssertionFailure() << "wide kernel's shared";
    if (c.wide_grid > 4 * l.sm_count) return ::testing::AssertionFailure() << "wide grid " << c.wide_grid;
  }
  return ::testing::AssertionSuccess();
}

const char* kernel_name(MatchConfig::Kernel k) {
  return k == MatchConfig::FullRange ? "full-range" : k == MatchConfig::Refine ? "refine" : "generic";
}

TEST(MatchConfig, EveryChoiceFitsTheGpuItIsMadeFor) {
  std::vector<std::pair<std::string, DeviceLimits>> gpus;
  for (const Target& t : kTargets) gpus.push_back({std::string("sm_") + std::to_string(t.cc) + " " + t.gpu,
                                                   target_limits(t)});
  gpus.push_back({"tiny", tiny_limits()});
  ASSERT_CUDA(prepare_match(2));
  for (const auto& [name, limits] : gpus) {
    int counts[3] = {0, 0, 0};
    for (const Shape& s : shapes()) {
      SCOPED_TRACE(::testing::Message() << name << ": " << s.w << "x" << s.h << " [" << s.range.lo << ", "
                                        << s.range.hi << ") refine=" << s.refine << " subpixel=" << s.subpixel
                                        << " masks=" << s.masks << " pair=" << s.pair << " best=" << s.best
                                        << " r=" << s.radius << " ratio=" << s.uniqueness_ratio
                                        << " costs=" << s.costs);
      const std::vector<MatchViews> views = shape_views(s);
      MatchParams p;
      p.range = s.range;
      p.radius = s.radius;
      p.best = s.best;
      p.uniqueness_ratio = s.uniqueness_ratio;
      p.limits = &limits;
      p.offer_right = true;  // as the engine matches its pairs
      MatchConfig c;
      const cudaError_t e = choose_match_config(views.data(), static_cast<int>(views.size()), p, &c);
      // Refused only where nothing fits: the generic kernel of a wide
      // sub-window on a small GPU (prepare_match refuses it there too).
      if (e == cudaErrorInvalidConfiguration) {
        EXPECT_GT(match_shared_bytes(s.radius), limits.shared_per_block_optin);
        continue;
      }
      ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
      EXPECT_TRUE(fits(c, limits)) << kernel_name(c.kernel) << " rows " << c.tile_rows;
      ++counts[c.kernel];
      const bool rival = s.uniqueness_ratio > 0 || s.costs;
      EXPECT_EQ(c.rival, rival);
      // The rival forms run the refine kernel at every level, in their own
      // tile heights.
      if (s.radius == 2 && s.best != 4 && c.kernel != MatchConfig::Generic)
        EXPECT_EQ(c.kernel, s.refine || rival ? MatchConfig::Refine : MatchConfig::FullRange);
      if (rival && c.kernel == MatchConfig::Refine) EXPECT_TRUE(c.tile_rows == 28 || c.tile_rows == 24) << c.tile_rows;
    }
    std::printf("%-22s generic %d, full-range %d, refine %d\n", name.c_str(), counts[MatchConfig::Generic],
                counts[MatchConfig::FullRange], counts[MatchConfig::Refine]);
  }
}

TEST(MatchConfig, SmallerGpusTakeSmallerTilesOrTheGenericKernel) {
  ASSERT_CUDA(prepare_match(2));
  const DeviceLimits turing = target_limits(kTargets[0]);
  const DeviceLimits hopper = target_limits(kTargets[5]);
  // Refinement at 256 disparities: a 32-row tile needs about 70 KB of
  // shared memory, more than a Turing block has (64 KB).
  Shape s{1024, 768, {0, 256}, true, true, false, true, true, 2, 2};
  std::vector<MatchViews> views = shape_views(s);
  MatchParams p;
  p.range = s.range;
  p.limits = &turing;
  MatchConfig c;
  ASSERT_CUDA(choose_match_config(views.data(), 2, p, &c));
  EXPECT_EQ(c.kernel, MatchConfig::Refine);
  EXPECT_NE(c.tile_rows, 32);
  EXPECT_LE(c.static_shared + c.dynamic_shared, 64u * 1024);
  p.tile_rows = 32;  // forced: refused on Turing, taken on Hopper
  EXPECT_EQ(choose_match_config(views.data(), 2, p, &c), cudaErrorInvalidConfiguration);
  p.limits = &hopper;
  ASSERT_CUDA(choose_match_config(views.data(), 2, p, &c));
  EXPECT_EQ(c.tile_rows, 32);

  // The coarsest level with the sub-pixel cost slots and 4096 disparities:
  // no streaming tile fits Turing, the generic kernel does.
  s = {4096, 64, {0, 4096}, false, true, false, false, false, 2, 2};
  views = shape_views(s);
  p = MatchParams{};
  p.range = s.range;
  p.limits = &turing;
  ASSERT_CUDA(choose_match_config(views.data(), 1, p, &c));
  EXPECT_EQ(c.kernel, MatchConfig::Generic);
  p.limits = &hopper;
  ASSERT_CUDA(choose_match_config(views.data(), 1, p, &c));
  EXPECT_EQ(c.kernel, MatchConfig::FullRange);

  // Radius 8's generic tile needs about 71 KB: none on Turing.
  p.radius = 8;
  p.limits = &turing;
  EXPECT_EQ(choose_match_config(views.data(), 1, p, &c), cudaErrorInvalidConfiguration);
  p.limits = &hopper;
  ASSERT_CUDA(choose_match_config(views.data(), 1, p, &c));
  EXPECT_EQ(c.kernel, MatchConfig::Generic);
}

// The configuration chosen on the H100's limits (132 SMs) for a pair of
// views of shape s, with the given hole span.
MatchConfig hopper_config(const Shape& s, int hole_span = kDefaultHoleSpan) {
  static const DeviceLimits hopper = target_limits(kTargets[5]);
  const std::vector<MatchViews> views = shape_views(s);
  MatchParams p;
  p.range = s.range;
  p.best = s.best;
  p.hole_span = hole_span;
  p.limits = &hopper;
  p.offer_right = true;  // as the engine matches its pairs
  MatchConfig c;
  EXPECT_EQ(choose_match_config(views.data(), static_cast<int>(views.size()), p, &c), cudaSuccess);
  return c;
}

// The low refine tiles (16 rows) go where the grid leaves most block slots
// empty, and nowhere they would add a wave (the H100's limits: 132 SMs).
TEST(MatchConfig, LowRefineTilesOnlyWhereTheGridLeavesSlotsEmpty) {
  ASSERT_CUDA(prepare_match(2));
  const DeviceLimits hopper = target_limits(kTargets[5]);
  // The tile height chosen for a refined level, or (refine false) a coarsest one.
  auto rows_of = [&](int w, int h, int d, bool refine = true) {
    const MatchConfig c = hopper_config({w, h, {0, d}, refine, false, false, true, true, 1, 2});
    EXPECT_EQ(c.kernel, refine ? MatchConfig::Refine : MatchConfig::FullRange);
    return c.tile_rows;
  };
  // A refined level's grid is the left view's tiles alone (the right map is
  // offered). 320x240 (level 1 of 640x480 x 256): 105 blocks of 16 rows on
  // 396 slots, less than a wave: the tiny tiles (210 of 8).
  EXPECT_EQ(rows_of(320, 240, 128), 8);
  // 640x480 (level 0): 390 blocks of 16 rows, one wave; without a tile
  // schedule 780 of 8 would make two.
  EXPECT_EQ(rows_of(640, 480, 128), 16);
  EXPECT_NE(rows_of(1920, 1080, 256), 16);
  // The coarsest level's low tiles (24 rows, no cost slots) likewise: 160x120
  // x 64 (640x480 x 256) makes 128 blocks of 32 rows, 160 of 24; 480x270 x 64
  // (1920x1080 x 256) would take a third wave with them.
  EXPECT_EQ(rows_of(160, 120, 64, false), 24);
  EXPECT_NE(rows_of(480, 270, 64, false), 24);
  // With a tile schedule (the engine's refinement) a grid of one wave costs
  // its slowest tile, which tiny tiles shorten: every grid whose 16-row tiles
  // make less than a wave takes them (640x480: 390 blocks, 400x300: 152,
  // 512x384: 264, 320x240: 105). Fuller grids keep taller tiles: level 0 of
  // 1024x768 (1008 blocks of 16 rows, the register-capped form's 528
  // slots) and level 1 of 1920x1080 (680).
  auto scheduled_rows = [&](int w, int h, int d) {
    const MatchConfig c = hopper_config({w, h, {0, d}, true, true, false, true, true, 1, 2, 0, false, true});
    EXPECT_TRUE(c.scheduled);
    return c.tile_rows;
  };
  EXPECT_EQ(scheduled_rows(640, 480, 128), 8);
  EXPECT_EQ(scheduled_rows(320, 240, 128), 8);
  EXPECT_EQ(scheduled_rows(400, 300, 128), 8);
  EXPECT_EQ(scheduled_rows(512, 384, 128), 8);
  EXPECT_EQ(scheduled_rows(1024, 768, 128), 16);
  EXPECT_EQ(scheduled_rows(960, 540, 64), 16);
  EXPECT_NE(scheduled_rows(1920, 1080, 128), 8);
  EXPECT_FALSE(hopper_config({640, 480, {0, 128}, true, true, false, true, true, 1, 2}).scheduled);
  // Forced, in both forms.
  Shape s{320, 240, {0, 128}, true, false, false, true, true, 1, 2};
  const std::vector<MatchViews> views = shape_views(s);
  MatchParams p;
  p.range = s.range;
  p.best = 1;
  p.limits = &hopper;
  p.tile_rows = 16;
  for (int form : {MatchParams::kPlainForm, MatchParams::kDenseForm}) {
    p.kernel_form = form;
    MatchConfig c;
    ASSERT_CUDA(choose_match_config(views.data(), 2, p, &c));
    EXPECT_EQ(c.tile_rows, 16);
    EXPECT_EQ(c.dense, form == MatchParams::kDenseForm);
  }
  // Tiny tiles forced: the plain form, anywhere; no register-capped form.
  p.tile_rows = 8;
  p.kernel_form = MatchParams::kPlainForm;
  MatchConfig tiny;
  ASSERT_CUDA(choose_match_config(views.data(), 2, p, &tiny));
  EXPECT_EQ(tiny.tile_rows, 8);
  EXPECT_FALSE(tiny.dense);
  p.kernel_form = MatchParams::kDenseForm;
  EXPECT_EQ(choose_match_config(views.data(), 2, p, &tiny), cudaErrorInvalidConfiguration);
}

// The coarsest level's search takes four warps a pair (twice the blocks)
// where its grid of two would fill at most half the block slots and a
// tile's range is at least 16 pairs (the H100's limits: 132 SMs, 264 slots
// of the plain form); elsewhere two, and what a test forces.
TEST(MatchConfig, CoarsestSearchSpreadsWhereItsGridLeavesHalfTheSlots) {
  ASSERT_CUDA(prepare_match(2));
  auto coarsest = [](int w, int h, int d) {
    return hopper_config({w, h, {0, d}, false, false, false, true, true, 1, 2});
  };
  // 240x135 x 32 (1080p x 256): 30 tiles of 24 rows, 4 slices, 120 blocks.
  MatchConfig c = coarsest(240, 135, 32);
  EXPECT_EQ(c.kernel, MatchConfig::FullRange);
  EXPECT_EQ(c.segments, 4);
  EXPECT_EQ(c.tile_rows, 24);
  EXPECT_FALSE(c.dense);
  EXPECT_EQ(coarsest(200, 150, 32).segments, 4);  // 800x600 x 128: 112 blocks
  EXPECT_EQ(coarsest(80, 60, 64).segments, 4);    // 640x480 x 512: 48 blocks
  // Twice the blocks would not fit one wave: 240x135 x 64 (240 blocks),
  // 480x270 x 32 (the capped form's 360).
  EXPECT_EQ(coarsest(240, 135, 64).segments, 2);
  EXPECT_EQ(coarsest(480, 270, 32).segments, 2);
  // Ranges under 16 pairs: 320x180 x 8 and x 16 (1280x720 x 32 / 64).
  EXPECT_EQ(coarsest(320, 180, 8).segments, 2);
  EXPECT_EQ(coarsest(320, 180, 16).segments, 2);
  // A range whose slices are capped already does not double them.
  EXPECT_EQ(coarsest(97, 23, 256).segments, 2);
  // The sub-pixel's cost slots (a single level) keep theirs.
  EXPECT_EQ(hopper_config({240, 135, {0, 32}, false, true, false, true, true, 1, 2}).segments, 2);
  // Forced.
  const DeviceLimits hopper = target_limits(kTargets[5]);
  const std::vector<MatchViews> views = shape_views({240, 135, {0, 64}, false, false, false, true, true, 1, 2});
  MatchParams p;
  p.range = {0, 64};
  p.best = 1;
  p.limits = &hopper;
  p.offer_right = true;
  for (int seg : {1, 2, 4}) {
    p.segments = seg;
    ASSERT_CUDA(choose_match_config(views.data(), 2, p, &c));
    EXPECT_EQ(c.segments, seg);
  }
}

// The pipeline in each architecture's configurations (and the tiny GPU's,
// which takes the generic kernel everywhere) against the CPU reference:
// every level's raw and checked maps, the final Q4 and the statistics.
void expect_engine_matches_reference(const Params& p, const SyntheticPair& pair, const DeviceLimits& limits) {
  Matcher cpu(p);
  std::string err;
  auto gpu = CudaEngine::create(p, -1, &err);
  ASSERT_TRUE(gpu) << err;
  ASSERT_EQ(gpu->emulate_device_limits(limits), "");
  const FrameView left = rgba_view(pair.left_rgba), right = rgba_view(pair.right_rgba);
  const int w = left.width, h = left.height;
  Image<uint16_t> cq4(w, h);
  Image<uint8_t> cmask(w, h), cconf(w, h);
  Outputs co;
  co.disparity_q4 = cq4.view();
  co.foreground = cmask.view();
  if (p.confidence) co.confidence = cconf.view();
  ASSERT_EQ(cpu.process(left, right, co), "");
  for (int frame = 0; frame < 2; ++frame) {  // the second replays the captured graph
    std::vector<uint8_t> out(static_cast<size_t>(w) * 2 * h, 0xEE);
    OutputFrame of;
    of.data = out.data();
    of.pitch = w * 2;
    of.width = w;
    of.height = h;
    EncodeParams ep;
    ep.format = OutputFormat::DisparityQ4;
    ASSERT_EQ(gpu->process(left, right, ep, of), "");
    Image<uint16_t> gq4(w, h);
    std::memcpy(gq4.pixels.data(), out.data(), out.size());
    EXPECT_TRUE(same_image(cq4, gq4)) << "final Q4, frame " << frame;
  }
  Matcher::Debug gd;
  ASSERT_EQ(gpu->download_debug(&gd), "");
  const Matcher::Debug& cd = cpu.debug();
  ASSERT_EQ(cd.levels.size(), gd.levels.size());
  for (size_t l = 0; l < cd.levels.size(); ++l) {
    EXPECT_TRUE(same_image(cd.levels[l].raw_left, gd.levels[l].raw_left)) << "raw left, level " << l;
    EXPECT_TRUE(same_image(cd.levels[l].raw_right, gd.levels[l].raw_right)) << "raw right, level " << l;
    EXPECT_TRUE(same_image(cd.levels[l].disparity_left, gd.levels[l].disparity_left)) << "checked left, level " << l;
  }
  if (p.confidence) {
    EXPECT_TRUE(same_image(cd.costs.best, gd.costs.best)) << "level-0 left best costs";
    EXPECT_TRUE(same_image(cd.costs.rival, gd.costs.rival)) << "level-0 left rival costs";
    EXPECT_TRUE(same_image(cconf, gd.confidence)) << "confidence";
  }
  EXPECT_DOUBLE_EQ(cpu.stats().valid_fraction, gpu->stats().valid_fraction);
}

// The wide kernel is launched only where a pixel can be wide: a hole's
// candidates are bounded by hole_span (0: no bound), a parent's are 5, and a
// pixel is wide beyond 24 disparities with its two sub-pixel neighbours.
TEST(MatchConfig, WideKernelOnlyWhereAPixelCanBeWide) {
  ASSERT_CUDA(prepare_match(2));
  auto wide_grid = [&](int hole_span, bool subpixel) {
    const MatchConfig c = hopper_config({1024, 768, {0, 256}, true, subpixel, false, true, true, 1, 2}, hole_span);
    EXPECT_EQ(c.kernel, MatchConfig::Refine);
    return c.wide_grid;
  };
  for (bool subpixel : {true, false}) {
    SCOPED_TRACE(subpixel ? "sub-pixel" : "no sub-pixel");
    EXPECT_GT(wide_grid(0, subpixel), 0);  // unbounded holes
    EXPECT_EQ(wide_grid(1, subpixel), 0);
    EXPECT_EQ(wide_grid(kDefaultHoleSpan, subpixel), 0);
    EXPECT_EQ(wide_grid(kMaxNarrowHoleSpan, subpixel), 0);
    EXPECT_GT(wide_grid(kMaxNarrowHoleSpan + 1, subpixel), 0);
    EXPECT_GT(wide_grid(64, subpixel), 0);
  }
  // The coarsest level (no coarser map) never lists wide pixels.
  EXPECT_EQ(hopper_config({512, 384, {0, 64}, false, true, false, true, true, 1, 2}, 0).wide_grid, 0);
}

TEST(MatchConfig, EveryArchitecturesConfigurationsMatchTheReference) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    Params p;
  };
  std::vector<Case> cases;
  {
    Params p;
    p.max_disparity = 96;
    cases.push_back({"step 259x141 x 96", make_step_pair(259, 141, 10, 60, 5), p});
  }
  {
    Params p;
    p.max_disparity = 128;
    p.window = WindowVariant::Best1;
    p.hole_search_radius = 4;
    cases.push_back({"slanted 333x121 best1 x 128", make_slanted_pair(333, 121, 6.0f, 0.2f, 6), p});
  }
  {
    Params p;  // one level: the coarsest is the finest, with the sub-pixel cost slots
    p.max_disparity = 72;
    p.levels = 1;
    p.window = WindowVariant::Box;
    cases.push_back({"plane 181x67 one level box", make_plane_pair(181, 67, 23, 7), p});
  }
  {
    Params p;  // the rival forms at every level, the level-0 costs and the confidence
    p.max_disparity = 96;
    p.uniqueness_ratio = 25;
    p.confidence = true;
    p.hole_span = 0;
    cases.push_back({"step 259x141 x 96 uniqueness 25 confidence", make_step_pair(259, 141, 10, 60, 5), p});
  }
  {
    Params p;  // one level: the coarsest level's rival form gives the confidence's costs
    p.max_disparity = 72;
    p.levels = 1;
    p.window = WindowVariant::Best1;
    p.uniqueness_ratio = 10;
    p.confidence = true;
    cases.push_back({"plane 181x67 one level best1 uniqueness 10 confidence", make_plane_pair(181, 67, 23, 7), p});
  }
  std::vector<std::pair<std::string, DeviceLimits>> gpus;
  for (const Target& t : kTargets) gpus.push_back({std::string("sm_") + std::to_string(t.cc), target_limits(t)});
  gpus.push_back({"tiny", tiny_limits()});
  for (const auto& [name, limits] : gpus)
    for (const Case& c : cases) {
      SCOPED_TRACE(name + ", " + c.name);
      expect_engine_matches_reference(c.p, c.pair, limits);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace
}  // namespace cs::cuda::test
