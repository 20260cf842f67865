// The radius-2 kernels' plan and cost model (cuda/match_plan.h) on a GPU
// given by its limits and kernels given by their attributes: runs without a
// GPU. The kernels here have made-up registers and no static shared memory,
// so that the blocks an SM are the registers' (115 a thread: 2 blocks of 256
// threads; 80: 3; 64: 4), and each expected choice follows by hand from the
// rule match_plan.cpp states: the fewest waves times row steps a pass (tile
// rows plus 14 margin rows), ties to the taller tile.
#include <gtest/gtest.h>

#include <cstdint>

#include "device_limits.h"
#include "match_args.h"
#include "match_plan.h"

namespace cs::cuda::streaming {
namespace {

cudaFuncAttributes attributes(int registers, int max_threads) {
  cudaFuncAttributes a{};
  a.numRegs = registers;
  a.maxThreadsPerBlock = max_threads;
  return a;
}

bool full_range_of(int, bool, int, bool dense, cudaFuncAttributes* out) {
  *out = attributes(dense ? 80 : 115, kThreads);
  return true;
}
bool refine_of(int, bool, int, bool, bool dense, cudaFuncAttributes* out) {
  *out = attributes(dense ? 64 : 80, kThreads);
  return true;
}
bool wide_of(int, bool, cudaFuncAttributes* out) {
  *out = attributes(40, kWideThreads);
  return true;
}
bool none_full_range(int, bool, int, bool, cudaFuncAttributes*) { return false; }
bool none_refine(int, bool, int, bool, bool, cudaFuncAttributes*) { return false; }
bool none_wide(int, bool, cudaFuncAttributes*) { return false; }

constexpr KernelAttributes kKernels{full_range_of, refine_of, wide_of};
constexpr KernelAttributes kNoCode{none_full_range, none_refine, none_wide};

// Stand-ins for device buffers: the plan reads only whether they are there.
uint32_t g_word;
int16_t g_map;
unsigned g_counter;

DeviceLimits h100() {
  DeviceLimits l;
  EXPECT_TRUE(architecture_limits(90, 132, &l));
  return l;
}

MatchViews view(int width, int height) {
  MatchViews v;
  v.census_ref = {&g_word, width, height, width * 4};
  v.census_other = v.census_ref;
  v.disparity = {&g_map, width, height, width * 2};
  return v;
}

// A view of the coarsest level with the full range's scratch (keys and
// tile counters: the range's pairs may be split over several blocks).
MatchViews coarsest(int width, int height) {
  MatchViews v = view(width, height);
  v.scratch.best_keys = {&g_word, width, height, width * 4};
  v.scratch.tiles_done = &g_counter;
  return v;
}

// A view of a refined level (its coarser map present).
MatchViews refined(int width, int height) {
  MatchViews v = view(width, height);
  v.coarser = {&g_map, (width + 1) / 2, (height + 1) / 2, width};
  return v;
}

MatchParams params(int range_hi) {
  MatchParams p;
  p.range = {0, range_hi};
  return p;
}

bool choose_pair(const MatchViews& l, const MatchViews& r, const MatchParams& p, const KernelAttributes& kernels,
                 MatchConfig* c, Plan* out_plan = nullptr) {
  const MatchViews views[2] = {l, r};
  const bool left[2] = {true, false};
  Plan pl = plan(views, left, 2, p);
  const bool ok = choose(&pl, p, h100(), kernels, c);
  if (out_plan) *out_plan = pl;
  return ok;
}

// matching.h's example: 1024x768 x 256 matches its coarsest level at
// 256x192 x 64 with both views sharing the left view's tiles, the 32 pairs
// split over 8 blocks a tile. 48 rows: 6 x 4 x 8 = 192 blocks, one wave of
// 264 slots, 62 row steps; 40 rows: 240 blocks, one wave, 54; 32 rows: 288
// blocks, two waves, 92; 24 rows: 384, two waves, 76. 40 rows.
TEST(MatchPlan, CoarsestLevelTakesTheHeightOfFewestRowSteps) {
  MatchParams p = params(64);
  p.kernel_form = MatchParams::kPlainForm;
  MatchConfig c;
  Plan pl;
  ASSERT_TRUE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kKernels, &c, &pl));
  EXPECT_EQ(c.kernel, MatchConfig::FullRange);
  EXPECT_TRUE(pl.shared_costs);
  EXPECT_EQ(pl.grid_views, 1);
  EXPECT_EQ(pl.a.slices, 8);
  EXPECT_EQ(c.tile_rows, 40);
  EXPECT_EQ(c.tile_width, kTileW);
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_FALSE(c.dense);
  EXPECT_EQ(c.segments, 2);
  EXPECT_EQ(c.dynamic_shared, dynamic_bytes(false, 40, 2, 64, right_key_columns(4)));
}

// 1080p x 256's coarsest level, 240x135 x 32: every height is one wave, so
// the low tiles (24 rows, 6 x 5 tiles x 4 slices = 120 blocks) cost least;
// twice that fills at most the 264 slots, so four warps share a pair (16
// pairs >= kSpreadPairs) over twice the slices.
TEST(MatchPlan, HalfEmptyGridSpreadsEachPairOverFourWarps) {
  MatchParams p = params(32);
  p.kernel_form = MatchParams::kPlainForm;
  MatchConfig c;
  Plan pl;
  ASSERT_TRUE(choose_pair(coarsest(240, 135), coarsest(240, 135), p, kKernels, &c, &pl));
  EXPECT_EQ(c.tile_rows, kLowTileH);
  EXPECT_EQ(c.segments, 4);
  EXPECT_EQ(pl.a.segments, 4);
  EXPECT_EQ(pl.a.slices, 8);
  EXPECT_EQ(pl.a.pairs_per_slice, 2);
  // Forced to two warps a pair, it stays there.
  p.segments = 2;
  ASSERT_TRUE(choose_pair(coarsest(240, 135), coarsest(240, 135), p, kKernels, &c, &pl));
  EXPECT_EQ(c.segments, 2);
  EXPECT_EQ(pl.a.slices, 4);
}

// match_plan.cpp's example: level 0 of 1024x768 x 256, both views refined
// (21 tile columns): 32 rows make 1008 blocks, 3 waves of 396 slots x 46 =
// 138; 28 rows 1176, 3 x 42 = 126; 24 rows 1344, 4 x 38 = 152; 16 rows 2016,
// 6 x 30 = 180. The plain form takes 28 rows.
TEST(MatchPlan, RefinementTakesTheHeightOfFewestRowSteps) {
  MatchParams p = params(256);
  p.kernel_form = MatchParams::kPlainForm;
  MatchConfig c;
  ASSERT_TRUE(choose_pair(refined(1024, 768), refined(1024, 768), p, kKernels, &c));
  EXPECT_EQ(c.kernel, MatchConfig::Refine);
  EXPECT_EQ(c.tile_rows, phased::kMiddleTileH);
  EXPECT_EQ(c.blocks_per_sm, 3);
  EXPECT_FALSE(c.dense);
  EXPECT_EQ(c.dynamic_shared, phased::dynamic_bytes(phased::kMiddleTileH, 8, 256, false, false));
  // The default hole span leaves no pixel wide: no wide kernel.
  EXPECT_EQ(c.wide_grid, 0);
}

// The same level where the register-capped form may compete: its 4 blocks an
// SM make 528 slots, and 32 rows cost 2 waves x 46 = 92 < 126.
TEST(MatchPlan, RegisterCappedFormWhereItsGridCostsLess) {
  MatchParams p = params(256);
  MatchConfig c;
  ASSERT_TRUE(choose_pair(refined(1024, 768), refined(1024, 768), p, kKernels, &c));
  EXPECT_TRUE(c.dense);
  EXPECT_EQ(c.tile_rows, kTileH);
  EXPECT_EQ(c.blocks_per_sm, 4);
  EXPECT_EQ(c.dynamic_shared, phased::dynamic_bytes(kTileH, 8, 256, false, true));
}

// A level whose low-tile grid is less than one wave (320x240, one view: 7 x
// 15 = 105 blocks of 16 rows on 396 slots) also offers the tiny tiles: every
// height is one wave, so the tiny ones (8 rows, 22 row steps) win.
TEST(MatchPlan, TinyTilesOnlyWhereTheLowGridIsUnderOneWave) {
  MatchParams p = params(64);
  p.kernel_form = MatchParams::kPlainForm;
  const MatchViews v = refined(320, 240);
  const bool left = true;
  Plan pl = plan(&v, &left, 1, p);
  MatchConfig c;
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_EQ(c.tile_rows, phased::kTinyTileH);
  // At 1024x768 (21 x 48 = 1008 blocks of 16 rows) they are not offered.
  const MatchViews big = refined(1024, 768);
  pl = plan(&big, &left, 1, p);
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_NE(c.tile_rows, phased::kTinyTileH);
}

// Uniqueness needs each pixel's rival: the coarsest level runs the refine
// kernel over the full range, each view its own tiles, in the rival forms'
// heights (28 or 24 rows) and never the register-capped form.
TEST(MatchPlan, RivalFormsRunTheRefineKernelInTheirOwnHeights) {
  MatchParams p = params(64);
  p.uniqueness_ratio = 10;
  MatchConfig c;
  Plan pl;
  ASSERT_TRUE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kKernels, &c, &pl));
  EXPECT_EQ(c.kernel, MatchConfig::Refine);
  EXPECT_TRUE(c.rival);
  EXPECT_TRUE(pl.a.full_range);
  EXPECT_FALSE(pl.shared_costs);
  EXPECT_EQ(pl.grid_views, 2);
  EXPECT_FALSE(c.dense);
  EXPECT_TRUE(c.tile_rows == phased::kMiddleTileH || c.tile_rows == phased::kShortTileH) << c.tile_rows;
  p.kernel_form = MatchParams::kDenseForm;
  EXPECT_FALSE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kKernels, &c));
}

// A few foreground tiles (the background model): the level lasts as long as
// its slowest tile, so the shortest tiles of the form are taken.
TEST(MatchPlan, FewForegroundTilesTakeTheShortestTiles) {
  const unsigned list[1] = {0}, count = 1;
  MatchParams p = params(64);
  p.sparse_tiles = true;
  const bool left = true;
  MatchViews v = refined(1024, 768);
  v.scratch.tiles = TileList{list, &count};
  Plan pl = plan(&v, &left, 1, p);
  EXPECT_TRUE(pl.sparse);
  MatchConfig c;
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_EQ(c.tile_rows, phased::kTinyTileH);
  MatchViews top = coarsest(256, 192);
  top.scratch.tiles = TileList{list, &count};
  pl = plan(&top, &left, 1, p);
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_EQ(c.kernel, MatchConfig::FullRange);
  EXPECT_EQ(c.tile_rows, kLowTileH);
  // The coarsest level of 640x480 x 128 (320x240 x 64, one view): its whole
  // grid takes the register-capped form (3 blocks an SM), a few of its
  // tiles the plain one. A few tiles' search lasts as long as one block's
  // warps, which the capped form's extra blocks an SM do not shorten and
  // its spills lengthen. Forced, the capped form runs over a list too.
  MatchViews level = coarsest(320, 240);
  pl = plan(&level, &left, 1, p);
  EXPECT_FALSE(pl.sparse);
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_TRUE(c.dense);
  level.scratch.tiles = TileList{list, &count};
  pl = plan(&level, &left, 1, p);
  EXPECT_TRUE(pl.sparse);
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_FALSE(c.dense);
  EXPECT_EQ(c.tile_rows, kLowTileH);
  EXPECT_EQ(c.blocks_per_sm, 2);
  p.kernel_form = MatchParams::kDenseForm;
  pl = plan(&level, &left, 1, p);
  ASSERT_TRUE(choose(&pl, p, h100(), kKernels, &c));
  EXPECT_TRUE(c.dense);
}

// A hole span beyond kMaxNarrowHoleSpan lets pixels be wide: the wide
// kernel gets up to kWideBlocksPerSm blocks an SM (40 registers x 128
// threads: 12 fit), so 4 x 132.
TEST(MatchPlan, WideKernelOnlyWhereAPixelCanBeWide) {
  uint32_t list[8];
  unsigned counters[2];
  MatchParams p = params(256);
  MatchViews l = refined(1024, 768), r = refined(1024, 768);
  for (MatchViews* v : {&l, &r}) {
    v->scratch.wide_pixels = list;
    v->scratch.wide_capacity = 8;
    v->scratch.wide_counters = counters;
  }
  MatchConfig c;
  Plan pl;
  ASSERT_TRUE(choose_pair(l, r, p, kKernels, &c, &pl));
  EXPECT_FALSE(pl.wide_list);
  EXPECT_EQ(c.wide_grid, 0);
  p.hole_span = kMaxNarrowHoleSpan + 1;
  ASSERT_TRUE(choose_pair(l, r, p, kKernels, &c, &pl));
  EXPECT_TRUE(pl.wide_list);
  EXPECT_EQ(pl.a.wide_capacity, 4u);  // entries of two words
  EXPECT_EQ(c.wide_blocks_per_sm, 12);
  EXPECT_EQ(c.wide_grid, kWideBlocksPerSm * 132);
  EXPECT_EQ(c.wide_shared, wide_dynamic_bytes(256));
}

// No configuration where the height asked for does not exist or no form has
// code for the GPU: the caller takes the generic kernel (or refuses a forced
// height).
TEST(MatchPlan, NothingFitsNoConfiguration) {
  MatchParams p = params(64);
  MatchConfig c;
  p.tile_rows = 36;
  EXPECT_FALSE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kKernels, &c));
  EXPECT_FALSE(choose_pair(refined(256, 192), refined(256, 192), p, kKernels, &c));
  p.tile_rows = 0;
  EXPECT_FALSE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kNoCode, &c));
  EXPECT_FALSE(choose_pair(refined(256, 192), refined(256, 192), p, kNoCode, &c));
  // A forced height that exists is taken as it is.
  p.tile_rows = kMiddleTileH;
  ASSERT_TRUE(choose_pair(coarsest(256, 192), coarsest(256, 192), p, kKernels, &c));
  EXPECT_EQ(c.tile_rows, kMiddleTileH);
}

}  // namespace
}  // namespace cs::cuda::streaming
