#include "match_plan.h"

#include <algorithm>
#include <initializer_list>

namespace cs::cuda::streaming {
namespace {

// Of the tile heights a kernel comes in (`heights`, tallest first; `forced`
// alone when not 0), in one register form (`dense`: attributes_of(rows, dense, &attr)
// and dynamic_of(rows, dense) give its attributes and dynamic shared bytes), the
// one that fits the GPU and whose grid costs the
// fewest row steps per block slot: the grid's waves (blocks over the
// blocks one SM holds of that height, times the SMs, rounded up) times the
// row steps of a pass (tile rows plus the window margins); ties to the
// taller, which streams fewer margin rows a pixel. On the H100 (132 SMs)
// the coarsest level chooses among 48, 40, 32 and 24 rows (24 without cost
// slots, where the grid leaves slots empty): at 1024x768 x 256 (a
// 256x192 level) 32-row tiles make 288 blocks, a second wave of 24 on 264
// slots (2 a SM), 40-row tiles 240 (one wave). Refinement chooses among 32,
// 28, 24 and 16 (16 where the grid leaves most slots empty): level 1 of 1024x768 (512x384) makes 264 blocks of 32 rows, 2
// per SM where 3 fit, or 352 of 24 rows; level 0 makes 1008 blocks of 32
// rows, 2.55 waves of 396 slots, or 1176 of 28 rows, 2.97 waves (113
// against 116 us). On a smaller GPU a height whose shared memory does not
// fit is passed over, and the slots are that GPU's.
//
// A refinement that takes its tiles longest first (`scheduled`: a tile
// schedule, tile_order.h) is costed otherwise. Its tiles differ: on real
// content the slowest take about twice the average (kSlowestTile). Taken
// longest first over several waves they even out, so the grid costs its
// blocks' row steps over the slots, fractional waves and all; but a grid of
// one wave lasts as long as its slowest tile, whatever the order. So a
// scheduled grid costs the larger of its row steps over the slots and
// kSlowestTile times a block's row steps. On the H100 (Aloe, tiles longest
// first, bench/RESULTS.md) a 640x480 frame took 0.133 ms with 16-row tiles
// at level 0 (780 blocks, 1.5 waves) against 0.149 with 24 (520, one wave);
// with level 0 of 1024x768 and level 1 of 1920x1080 (2.5 and 1.7 waves of
// 24-row tiles) frames were faster with 24 rows than with 16, as this cost
// says.
// Returns false when no height fits.
constexpr int kSlowestTile = 2;

// Blocks of a grid of tiles `rows` high over width x height, blocks_per_tile
// a tile; and the block slots of a GPU that holds per_sm blocks an SM.
long long grid_blocks(int width, int height, int rows, int blocks_per_tile) {
  return static_cast<long long>((width + kTileW - 1) / kTileW) * ((height + rows - 1) / rows) * blocks_per_tile;
}
long long block_slots(const DeviceLimits& limits, int per_sm) {
  return static_cast<long long>(per_sm) * std::max(limits.sm_count, 1);
}

template <typename AttributesOf, typename SharedOf>
bool pick_tile_rows(const DeviceLimits& limits, int width, int height, int blocks_per_tile,
                    std::initializer_list<int> heights, int forced, bool scheduled, bool dense,
                    AttributesOf attributes_of, SharedOf dynamic_of, MatchConfig* out, long long* cost_out = nullptr) {
  bool found = false;
  long long best_cost = 0;
  for (int rows : heights) {
    if (forced != 0 && rows != forced) continue;
    const size_t dynamic = dynamic_of(rows, dense);
    cudaFuncAttributes attr{};
    const int per_sm = attributes_of(rows, dense, &attr) ? blocks_per_sm(limits, attr, kThreads, dynamic) : 0;
    if (per_sm <= 0) continue;
    const long long slots = block_slots(limits, per_sm);
    const long long blocks = grid_blocks(width, height, rows, blocks_per_tile);
    // In sixteenths of a row step, so that fractional waves compare.
    const long long steps = 16LL * (rows + 2 * kMargin);
    const long long cost = scheduled ? std::max((blocks * steps + slots - 1) / slots, kSlowestTile * steps)
                                     : (blocks + slots - 1) / slots * steps;
    if (!found || cost < best_cost) {
      found = true;
      best_cost = cost;
      out->tile_rows = rows;
      out->tile_width = kTileW;
      out->threads = kThreads;
      out->static_shared = attr.sharedSizeBytes;
      out->dynamic_shared = dynamic;
      out->registers = attr.numRegs;
      out->blocks_per_sm = per_sm;
    }
  }
  if (cost_out) *cost_out = best_cost;
  return found;
}

// Whether the register-capped form is worth considering after the plain
// form's choice `plain`: only where the plain grid fills at least half the
// GPU's block slots. Its smaller tiles stream more margin rows a pixel; that
// can pay where more blocks an SM hide latency, not where the SMs are half
// empty anyway. A guard, not a measured gain: on the H100 (Aloe, 2026-11-25)
// no time changed with it, and 640x480 x 256 takes 2.5 % longer with the
// register-capped forms than without them either way (cause not found),
// while every other size and range of the grid takes 4 to 9 % less.
bool dense_worth_trying(const MatchConfig& plain, const DeviceLimits& limits, int width, int height,
                        int blocks_per_tile) {
  return 2 * grid_blocks(width, height, plain.tile_rows, blocks_per_tile) >= block_slots(limits, plain.blocks_per_sm);
}

// A kernel's configuration in one of its register forms (MatchParams::
// kernel_form): the plain form's best tile height, or, where the kernel has a
// register-capped form (has_dense) and the plain grid makes it worth trying,
// the capped form's where its grid costs less; either form when forced.
// attributes_of(rows, dense, &attr) gives the kernel's attributes, dynamic_of(rows,
// dense) its dynamic shared bytes. False when the asked form does not exist or does not fit.
template <typename AttributesOf, typename SharedOf>
bool pick_form(const MatchParams& p, const DeviceLimits& limits, int width, int height, int blocks_per_tile,
               std::initializer_list<int> plain_heights, std::initializer_list<int> dense_heights, bool has_dense,
               bool scheduled, AttributesOf attributes_of, SharedOf dynamic_of, MatchConfig* out) {
  const bool forced_dense = p.kernel_form == MatchParams::kDenseForm;
  out->dense = false;
  long long cost = 0;
  if (!forced_dense && !pick_tile_rows(limits, width, height, blocks_per_tile, plain_heights, p.tile_rows, scheduled,
                                       false, attributes_of, dynamic_of, out, &cost))
    return false;
  if (!has_dense) return !forced_dense;
  if (p.kernel_form == MatchParams::kPlainForm ||
      (!forced_dense && !dense_worth_trying(*out, limits, width, height, blocks_per_tile)))
    return true;
  MatchConfig dense = *out;
  long long dense_cost = 0;
  const bool fits = pick_tile_rows(limits, width, height, blocks_per_tile, dense_heights, p.tile_rows, scheduled,
                                   true, attributes_of, dynamic_of, &dense, &dense_cost);
  if (fits && (forced_dense || dense_cost < cost)) {
    *out = dense;
    out->dense = true;
    return true;
  }
  return !forced_dense;
}

}  // namespace

Plan plan(const MatchViews* views, const bool* left, int count, const MatchParams& p) {
  Plan pl;
  Args& a = pl.a;
  bool scratch = true;
  for (int i = 0; i < count; ++i) {
    a.v[i] = views[i];
    a.left[i] = left[i];
    // The sub-pixel step is defined on the left-reference costs only.
    a.subpixel[i] = left[i] && views[i].subpixel_offset.data != nullptr;
    pl.slots = pl.slots || a.subpixel[i];
    scratch = scratch && views[i].scratch.best_keys.data != nullptr && views[i].scratch.tiles_done != nullptr;
    pl.masks = pl.masks || views[i].mask_other.data != nullptr;
    pl.rival = pl.rival || tracks_rival(views[i], p);
  }
  a.range = p.range;
  a.hole_radius = p.hole_radius;
  a.hole_span = p.hole_span;
  a.uniqueness_ratio = p.uniqueness_ratio;
  const int range_width = maxi(p.range.hi - p.range.lo, 0);
  a.mask_words = (range_width + 31) / 32;
  a.list_cap = range_width;
  pl.full_range = views[0].coarser.data == nullptr;
  pl.refine_kernel = !pl.full_range || pl.rival;
  a.full_range = pl.full_range && pl.rival;
  // Both views at the coarsest level: the left view's tiles serve the right
  // view too (Args::right_keys).
  pl.shared_costs = pl.full_range && !pl.rival && count == 2 && left[0] && !left[1] &&
                    views[1].scratch.best_keys.data != nullptr;
  if (pl.shared_costs) a.right_keys = views[1].scratch.best_keys;
  pl.grid_views = pl.shared_costs ? 1 : count;
  // With one view's tiles there are half the blocks: two warps share each
  // pair's rows, so that as many warps are in flight (likewise where the
  // left view's winners offer the right map: its tiles alone).
  const bool offering = count == 1 && views[0].offered_keys.data != nullptr;
  a.segments = pl.shared_costs || (pl.full_range && !pl.rival && offering) ? 2 : 1;
  if (p.segments > 0 && pl.full_range && !pl.rival && !pl.slots) a.segments = p.segments;
  a.slices = 1;
  const int pairs = (range_width + 1) / 2;
  if (pl.full_range && !pl.rival && scratch && !pl.slots) a.slices = full_range_slices(pairs, a.segments);
  a.pairs_per_slice = (pairs + a.slices - 1) / a.slices;
  const MatchScratch& sc = views[0].scratch;
  // No list, and so no wide kernel, where no pixel can be wide (the default
  // hole span): the launch cost 4 us a refined level on the H100.
  const bool may_be_wide = p.hole_span <= 0 || p.hole_span > kMaxNarrowHoleSpan;
  pl.wide_list = !pl.full_range && may_be_wide && sc.wide_pixels != nullptr && sc.wide_counters != nullptr;
  if (!pl.full_range) a.schedule = sc.schedule;
  // Foreground tiles: launches of one view's grid (the left view offering
  // the right map); the list takes the schedule's place.
  if (sc.tiles.on() && pl.grid_views == 1 && count == 1) {
    a.tiles = sc.tiles;
    a.schedule = TileSchedule{};
    pl.sparse = p.sparse_tiles;
  }
  if (pl.wide_list) {
    a.wide_list = sc.wide_pixels;
    a.wide_count = sc.wide_counters;
    a.wide_capacity = sc.wide_capacity / 2;
  }
  return pl;
}

namespace {

// The coarsest level's full search with four warps a pair instead of two,
// each streaming a quarter of the tile's rows (with the window's margins)
// instead of a half: twice the blocks, the same tile height and form. Taken
// where the grid of two warps a pair fills at most half the GPU's block
// slots (so that twice the blocks still start together and the search ends
// sooner) and a tile's range is at least kSpreadPairs pairs. On the H100
// (Aloe, bench/RESULTS.md, sixteenth session, forced everywhere against
// two): 1080p x 256 (240x135 x 32) -1.7 %, 800x600 x 128 (200x150 x 32)
// -2.5 %, 640x480 x 512 (80x60 x 64) -2.1 %, 1024x768 x 512 and 4K x 512
// within 0.2 %; with ranges of 8 and 16 disparities the frame took 3 to 12 %
// longer (1280x720 x 32: 320x180 x 8, +11.7 %; the search there is perhaps
// shorter than the finer census beside it on the graph's branch, whose SMs
// its extra blocks take: not measured); where the doubled grid no longer
// fits one wave of the chosen form, 2 to 18 % longer. The rule against two
// everywhere: 1080p x 256 -1.5 %, 800x600 x 128 -2.2 %, 640x480 x 512
// -2.6 %, 4K x 512 +0.5 %, the rest within 0.5 %.
constexpr int kSpreadPairs = 16;
void spread_rows(Plan* pl, const MatchParams& p, const DeviceLimits& limits, MatchConfig* c) {
  Args& a = pl->a;
  if (pl->refine_kernel || pl->slots || a.segments != 2 || p.segments != 0) return;
  const int pairs = (maxi(a.range.hi - a.range.lo, 0) + 1) / 2;
  const int slices = full_range_slices(pairs, 4);
  if (pairs < kSpreadPairs || slices != 2 * a.slices) return;
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  if (!pl->sparse &&
      2 * grid_blocks(width, height, c->tile_rows, pl->grid_views * a.slices) > block_slots(limits, c->blocks_per_sm))
    return;
  a.segments = 4;
  a.slices = slices;
  a.pairs_per_slice = (pairs + slices - 1) / slices;
  // Fewer pairs a block: fewer columns of shared right keys.
  c->dynamic_shared = dynamic_bytes(false, c->tile_rows, a.mask_words, a.list_cap, right_columns_of(a));
}

bool choose_wide(const Plan& pl, const MatchParams& p, const DeviceLimits& limits, const KernelAttributes& kernels,
                 MatchConfig* out);

}  // namespace

bool choose(Plan* plan, const MatchParams& p, const DeviceLimits& limits, const KernelAttributes& kernels,
            MatchConfig* out) {
  const Plan& pl = *plan;
  const Args& a = pl.a;
  const int width = a.v[0].census_ref.width, height = a.v[0].census_ref.height;
  out->rival = pl.rival;
  if (!pl.refine_kernel) {
    out->kernel = MatchConfig::FullRange;
    // The cost slots have no register-capped form.
    const std::initializer_list<int> heights = {kTallTileH, kMiddleTileH, kTileH};
    const std::initializer_list<int> low_heights = {kTallTileH, kMiddleTileH, kTileH, kLowTileH};
    // Sparse: the shortest tiles (the cost slots have none lower than kTileH)
    // in the plain form unless forced. A few tiles' search lasts as long as
    // one block's warps take, so the register-capped form's extra blocks an
    // SM buy nothing, and its spills (about 2.5 KB of local loads a thread
    // for Best1) lengthen every warp: 640x480 x 128 with 5 % moving, the
    // search 25.5 -> 21.0 us with the blocks in list order too (H200,
    // bench/RESULTS.md, issue 35).
    const std::initializer_list<int> sparse_heights = {kLowTileH}, sparse_slot_heights = {kTileH};
    const bool sparse = pl.sparse && p.tile_rows == 0;
    const bool dense_allowed = !pl.slots && (!sparse || p.kernel_form == MatchParams::kDenseForm);
    if (!pick_form(
            p, limits, width, height, pl.grid_views * a.slices,
            sparse ? (pl.slots ? sparse_slot_heights : sparse_heights) : pl.slots ? heights : low_heights,
            sparse ? sparse_heights : low_heights, dense_allowed, false,
            [&](int rows, bool dense, cudaFuncAttributes* attr) {
              return kernels.full_range(p.best, pl.slots, rows, dense, attr);
            },
            [&](int rows, bool) {
              return dynamic_bytes(pl.slots, rows, a.mask_words, a.list_cap, right_columns_of(a));
            },
            out))
      return false;
    spread_rows(plan, p, limits, out);
    out->segments = a.segments;
    return true;
  }
  out->kernel = MatchConfig::Refine;
  out->scheduled = a.schedule.on();
  const std::initializer_list<int> heights = {kTileH, phased::kMiddleTileH, phased::kShortTileH, phased::kLowTileH};
  const std::initializer_list<int> tiny_heights = {kTileH, phased::kMiddleTileH, phased::kShortTileH,
                                                   phased::kLowTileH, phased::kTinyTileH};
  const std::initializer_list<int> rival_heights = {phased::kMiddleTileH, phased::kShortTileH};
  // Sparse (a few foreground tiles): the shortest tiles of the form, whose
  // slowest tile ends soonest.
  const std::initializer_list<int> sparse_heights = {phased::kTinyTileH}, sparse_rival_heights = {phased::kShortTileH};
  if (pl.sparse && p.tile_rows == 0 && p.kernel_form != MatchParams::kDenseForm) {
    if (!pick_form(
            p, limits, width, height, pl.grid_views, pl.rival ? sparse_rival_heights : sparse_heights, heights, false,
            false, [&](int rows, bool dense, cudaFuncAttributes* attr) {
              return kernels.refine(p.best, pl.masks, rows, pl.rival, dense, attr);
            },
            [&](int rows, bool dense) { return phased::dynamic_bytes(rows, a.mask_words, a.list_cap, pl.rival, dense); },
            out))
      return false;
    return choose_wide(pl, p, limits, kernels, out);
  }
  // Tiny tiles (plain form) where the low tiles' plain grid is less than one
  // wave, or forced. Such a grid costs its slowest tile, which tiny tiles
  // shorten. On the H100 (Aloe, bench/RESULTS.md, fourteenth session, the
  // left view's grid alone): 640x480 x 128 -4 %, x 512 -7 %, 1024x768 -3
  // to -5 %, 1280x720 -6 to -10 %, the rest within 0.5 %, against two
  // thirds of a wave as the bound (the thirteenth session's, when both
  // views' tiles made the grid).
  bool tiny = p.tile_rows == phased::kTinyTileH && p.kernel_form != MatchParams::kDenseForm;
  if (!pl.rival && p.tile_rows == 0) {
    cudaFuncAttributes attr{};
    const int per_sm =
        kernels.refine(p.best, pl.masks, phased::kLowTileH, false, false, &attr)
            ? blocks_per_sm(limits, attr, kThreads,
                            phased::dynamic_bytes(phased::kLowTileH, a.mask_words, a.list_cap, false, false))
            : 0;
    tiny = per_sm > 0 && grid_blocks(width, height, phased::kLowTileH, pl.grid_views) < block_slots(limits, per_sm);
  }
  // The rival forms have no register-capped form, nor tiny tiles.
  if (!pick_form(
          p, limits, width, height, pl.grid_views, pl.rival ? rival_heights : tiny ? tiny_heights : heights, heights,
          !pl.rival,
          out->scheduled, [&](int rows, bool dense, cudaFuncAttributes* attr) {
              return kernels.refine(p.best, pl.masks, rows, pl.rival, dense, attr);
            },
          [&](int rows, bool dense) { return phased::dynamic_bytes(rows, a.mask_words, a.list_cap, pl.rival, dense); },
          out))
    return false;
  return choose_wide(pl, p, limits, kernels, out);
}

namespace {

// The wide kernel's part of a refinement's configuration.
bool choose_wide(const Plan& pl, const MatchParams& p, const DeviceLimits& limits, const KernelAttributes& kernels,
                 MatchConfig* out) {
  const Args& a = pl.a;
  if (pl.wide_list) {
    // Up to kWideBlocksPerSm blocks an SM, as many as fit: the list's
    // entries are spread over the grid, whatever its size.
    cudaFuncAttributes attr{};
    const size_t dynamic = wide_dynamic_bytes(a.list_cap);
    const int per_sm =
        kernels.wide(p.best, pl.rival, &attr) ? blocks_per_sm(limits, attr, kWideThreads, dynamic) : 0;
    // Without room for the wide kernel the tiles match their wide pixels
    // themselves (no list).
    out->wide_blocks_per_sm = per_sm;
    out->wide_grid = std::min(per_sm, kWideBlocksPerSm) * std::max(limits.sm_count, 1);
    out->wide_shared = attr.sharedSizeBytes + dynamic;
    if (per_sm <= 0) out->wide_grid = 0;
  }
  return true;
}

}  // namespace
}  // namespace cs::cuda::streaming
