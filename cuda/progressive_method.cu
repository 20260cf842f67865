// Method progressive on the GPU (stages 4 .. 9): census, full-range
// matching at the coarsest level, refinement level by level with the
// left-right check, and the finish with the sub-pixel offset; uniqueness
// (B3) in the matching at every level, and the confidence in the finish
// from the level-0 left sweep's costs.
#include <algorithm>
#include <memory>

#include "auto_coarse.h"
#include "census.h"
#include "coarse_probe.h"
#include "cross_check.h"
#include "cuda_util.h"
#include "finish.h"
#include "foreground_tiles.h"
#include "frame_switch.h"
#include "graph_condition.h"
#include "matching.h"
#include "method.h"
#include "stages.h"

namespace cs::cuda {
namespace {

// The foreground tile lists of a level (FrameCounters::tiles): census, the
// matching's for a large foreground and for a small one, check.
constexpr int kCensusList = 0, kMatchList = 1, kCheckList = 2, kFewMatchList = 3;
static_assert(kFewMatchList < kFrameTileLists, "finish.h");
// Below this share of the frame's pixels (the full-size left mask) a frame
// runs the configurations for a few tiles (MatchParams::sparse_tiles): the
// SWITCH's condition in a graph (the mask pass's choice, takes_frame_switch),
// MethodFrame::last_foreground_pixels outside one.
constexpr double kFewTilesBelow = 0.2;
// The matching's smallest tiles (match_args.h: 50 columns, 8 rows at least),
// for the room of a level's list whatever height the matching takes.
constexpr int kMatchTileMinW = 50, kMatchTileMinH = 8;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

class ProgressiveMethod final : public MatchingMethod {
 public:
  std::string unsupported(const Params&) const override { return {}; }

  std::string prepare(const Params& p) override {
    // The confidence needs the level-0 left sweep's costs kept and a form
    // of the kernels that tracks the rival: made only when asked for.
    confidence_ = p.confidence;
    const cudaError_t pe = prepare_match(p.subwindow_radius);
    if (pe == cudaErrorInvalidConfiguration) return "the sub-window radius needs more shared memory than the GPU has";
    if (pe != cudaSuccess) return cuda_error_text(pe, "prepare_match", __FILE__, __LINE__);
    return {};
  }

  std::string allocate(const MethodFrame& f, cudaStream_t stream) override {
    const int nl = static_cast<int>(f.levels.size());
    const int w = f.levels[0].width, h = f.levels[0].height;
    if (w == width_ && h == height_ && nl == static_cast<int>(lv_.size())) return allocate_costs();
    width_ = height_ = 0;
    lv_.clear();
    lv_.resize(nl);
    for (int l = 0; l < nl; ++l) {
      Level& L = lv_[l];
      for (int v = 0; v < 2; ++v) {
        CS_CUDA_TRY(L.census[v].allocate(f.levels[l].width, f.levels[l].height));
        CS_CUDA_TRY(L.raw[v].allocate(f.levels[l].width, f.levels[l].height));
        CS_CUDA_TRY(L.checked[v].allocate(f.levels[l].width, f.levels[l].height));
      }
    }
    const MethodLevel& C = f.levels[nl - 1];
    for (int v = 0; v < 2; ++v) {
      CS_CUDA_TRY(match_keys_[v].allocate(C.width, C.height));
      CS_CUDA_TRY(match_tiles_[v].allocate(match_tile_count(C.width, C.height), 1));
      const auto& k = match_keys_[v].view();
      CS_CUDA_TRY(cudaMemset2DAsync(k.data, k.pitch, 0xFF, C.width * sizeof(uint32_t), C.height, stream));
      CS_CUDA_TRY(cudaMemsetAsync(match_tiles_[v].view().data, 0, match_tiles_[v].bytes(), stream));
    }
    // Wide pixels (holes beside outliers), two words an entry (matching.h).
    // The room is also the list's budget: a tile that does not fit matches
    // its own, which is cheaper where wide pixels are everywhere. On the
    // H100 (bench/RESULTS.md) room for w * h / 32 entries lists all of
    // 1024x768 x 512's (18k at level 0: 1.29 ms; streaming any of them in
    // place, 1.6-2.0 ms) and a fraction of 640x480 x 512's 77k, where a
    // third of the left view is occluded (2.42 ms; w * h / 8: 3.24, all
    // of them: 3.62).
    for (int v = 0; v < 2; ++v) {
      probe_raw_[v].release();  // made by the first probe of these sizes
      probe_checked_[v].release();
    }
    // Each refined level's tile schedule (tile_order.h), empty until its
    // first launch has run, and the right map's keys (offered by the left
    // view, stages.h stage 7).
    for (int l = 0; l + 1 < nl; ++l) {
      Level& L = lv_[l];
      CS_CUDA_TRY(L.right_keys.allocate(f.levels[l].width, f.levels[l].height));
      const auto& k = L.right_keys.view();
      CS_CUDA_TRY(cudaMemset2DAsync(k.data, k.pitch, 0xFF, k.width * sizeof(uint32_t), k.height, stream));
      const unsigned cap = refine_tile_capacity(f.levels[l].width, f.levels[l].height);
      CS_CUDA_TRY(L.tile_costs.allocate(static_cast<int>(cap), 1));
      CS_CUDA_TRY(L.tile_order.allocate(static_cast<int>(cap), 1));
      CS_CUDA_TRY(L.tile_counts.allocate(2, 1));
      CS_CUDA_TRY(cudaMemsetAsync(L.tile_counts.view().data, 0, L.tile_counts.bytes(), stream));
    }
    // The background model's foreground tile lists (foreground_tiles.h),
    // room for every tile of the level's grids: census tiles, matching tiles
    // of the lowest height the matching takes, check tiles.
    for (int l = 0; l < nl; ++l) {
      const int lw = f.levels[l].width, lh = f.levels[l].height;
      Level& L = lv_[l];
      const int match_tiles = ceil_div(lw, kMatchTileMinW) * ceil_div(lh, kMatchTileMinH);
      CS_CUDA_TRY(L.tile_lists[kCensusList].allocate(ceil_div(lw, kCensusTileW) * ceil_div(lh, kCensusTileH), 1));
      CS_CUDA_TRY(L.tile_lists[kMatchList].allocate(match_tiles, 1));
      CS_CUDA_TRY(L.tile_lists[kFewMatchList].allocate(match_tiles, 1));
      CS_CUDA_TRY(L.tile_lists[kCheckList].allocate(ceil_div(lw, kCheckTileW) * ceil_div(lh, kCheckTileH), 1));
    }
    CS_CUDA_TRY(match_wide_.allocate(2 * std::max(4096, w * h / 32), 1));
    CS_CUDA_TRY(match_wide_counters_.allocate(2, 1));
    CS_CUDA_TRY(cudaMemsetAsync(match_wide_counters_.view().data, 0, match_wide_counters_.bytes(), stream));
    CS_CUDA_TRY(subpixel_offset_.allocate(w, h));
    width_ = w;
    height_ = h;
    return allocate_costs();
  }

  // The level-0 left sweep's costs while the confidence is on.
  std::string allocate_costs() {
    for (DeviceImage<int32_t>* c : {&best_cost_, &rival_cost_}) {
      if (!confidence_)
        c->release();
      else if (c->view().width != width_ || c->view().height != height_)
        CS_CUDA_TRY(c->allocate(width_, height_));
    }
    return {};
  }

  // Level l's matching views and parameters as the frame runs them (lists:
  // the background model's foreground tiles; few: those of a small
  // foreground, with the configurations for a few tiles; masks: the model's
  // masks, off where they hold every pixel).
  void level_match(const MethodFrame& f, int l, bool lists, bool few, bool masks, MatchViews mv[2], MatchParams* mp) {
    const Params& p = *f.params;
    const int levels = static_cast<int>(f.levels.size());
    Level& L = lv_[l];
    for (int v = 0; v < 2; ++v) {
      mv[v] = MatchViews{};
      mv[v].census_ref = L.census[v].cview();
      mv[v].census_other = L.census[1 - v].cview();
      if (masks) {
        mv[v].mask_ref = f.levels[l].mask[v];
        mv[v].mask_other = f.levels[l].mask[1 - v];
      }
      if (l < levels - 1) {
        // The right view is matched only through the left view's offers.
        if (v == 1) mv[v].scratch.best_keys = L.right_keys.view();
        mv[v].coarser = lv_[l + 1].final_view(v, p.lr_check || p.min_support > 0);
        if (masks) mv[v].coarser_mask = f.levels[l + 1].mask[v];
        mv[v].scratch.wide_pixels = match_wide_.view().data;
        mv[v].scratch.wide_capacity = static_cast<unsigned>(match_wide_.view().width);
        mv[v].scratch.wide_counters = match_wide_counters_.view().data;
        mv[v].scratch.schedule = L.schedule();
      } else {
        mv[v].scratch.best_keys = match_keys_[v].view();
        mv[v].scratch.tiles_done = match_tiles_[v].view().data;
      }
      mv[v].disparity = L.raw[v].view();
      if (l == 0 && v == 0 && p.subpixel) mv[v].subpixel_offset = subpixel_offset_.view();
      if (l == 0 && v == 0 && confidence_) {
        mv[v].best_cost = best_cost_.view();
        mv[v].rival_cost = rival_cost_.view();
      }
    }
    if (lists) mv[0].scratch.tiles = list_of(f, l, few ? kFewMatchList : kMatchList, true);
    *mp = MatchParams{};
    mp->range = f.levels[l].range;
    mp->radius = p.subwindow_radius;
    mp->best = static_cast<int>(p.window);
    mp->hole_radius = p.hole_search_radius;
    mp->hole_span = p.hole_span;
    mp->uniqueness_ratio = resolve_uniqueness_ratio(p);
    mp->limits = f.limits;
    mp->offer_right = true;  // the right map from the left view's winners (stages.h 6, 7)
    mp->sparse_tiles = lists && few;
  }

  // The full-size left foreground pixels below which a frame runs the
  // configurations for a few tiles.
  static unsigned long long few_below(const MethodFrame& f) {
    return static_cast<unsigned long long>(kFewTilesBelow * f.levels[0].width * f.levels[0].height);
  }

  // Whether level l runs its check (level 0's is part of the finish).
  static bool checks(const Params& p, int l) { return (p.lr_check || p.min_support > 0) && l > 0; }

  // The background model's foreground tile lists of every level's grids
  // (foreground_tiles.h) that `body` (kFewTiles or kManyTiles) reads, made
  // by one launch on `s`.
  std::string enqueue_tile_lists(const MethodFrame& f, cudaStream_t s, unsigned body) {
    const Params& p = *f.params;
    const int levels = static_cast<int>(f.levels.size());
    TilePlan plan;
    plan.width = f.levels[0].width;
    plan.height = f.levels[0].height;
    plan.levels = levels;
    for (int k = 0; k < kOccupancyLevels; ++k)
      for (int v = 0; v < 2; ++v) plan.occupancy[k][v] = f.occupancy[k][v];
    for (int l = 0; l < levels; ++l) {
      Level& L = lv_[l];
      const int lw = f.levels[l].width, lh = f.levels[l].height;
      unsigned* counts = f.counters->tiles[l];
      TileGrid census = tile_grid(l, lw, lh, kCensusTileW, kCensusTileH,
                                  L.tile_lists[kCensusList].view().data, &counts[kCensusList]);
      census.apron = census_apron(p.subwindow_radius);
      census.either_view = true;  // both views' census; the right view's keys cleared where it is offered
      add_tile_grid(&plan, census);
      // The matching's tiles, in the configuration the body runs (none for
      // the generic kernel).
      const bool few = body == kFewTiles;
      MatchViews mv[2];
      MatchParams mp;
      level_match(f, l, true, few, true, mv, &mp);
      MatchConfig config;
      CS_CUDA_TRY(choose_match_config(mv, 2, mp, &config));
      if (config.tile_width != 0) {
        const int which = few ? kFewMatchList : kMatchList;
        TileGrid match = tile_grid(l, lw, lh, config.tile_width, config.tile_rows,
                                   L.tile_lists[which].view().data, &counts[which]);
        if (match.tiles_x * match.tiles_y > L.tile_lists[which].view().width)
          return "a level's matching tiles outgrew their list";
        add_tile_grid(&plan, match);
      }
      if (checks(p, l)) {
        TileGrid check = tile_grid(l, lw, lh, kCheckTileW, kCheckTileH, L.tile_lists[kCheckList].view().data,
                                   &counts[kCheckList]);
        check.either_view = true;  // both views' checked maps where their foreground is
        add_tile_grid(&plan, check);
      }
    }
    plan.foreground = &f.counters->matched[0];
    plan.right_foreground = &f.counters->right_foreground;
    CS_CUDA_TRY(enqueue_foreground_tiles(plan, s));
    return {};
  }

  // A list of level l (kCensusList, ...), or none without the model.
  TileList list_of(const MethodFrame& f, int l, int which, bool lists) {
    if (!lists) return {};
    return {lv_[l].tile_lists[which].view().data, &f.counters->tiles[l][which]};
  }

  std::string enqueue(const MethodFrame& f, cudaStream_t frame_stream, StageTimer* timer) override {
    const Params& p = *f.params;
    // With the background model every kernel runs over the tiles that hold
    // foreground (foreground_tiles.h). In a captured graph (not the
    // timeline's: its marks are event nodes, which a conditional body
    // cannot hold) the work is one of three bodies of a SWITCH node whose
    // condition the mask pass sets (takes_frame_switch, frame_switch.h):
    // the configurations for a few tiles where the foreground is small (the
    // level takes its slowest tile's time), those for the whole grid where
    // it is large, each after its own lists; the whole grid without lists
    // or masks where both views are mostly foreground (stages.h
    // matches_whole_frame: the warm-up, a scene change); none where neither
    // view has any, so that a still frame runs no kernel between its masks
    // and its finish. In line, the frame's counts are read back first (a
    // wait: the first frame of a configuration, profiling); in the
    // timeline's graph the last frame's.
    const bool lists = p.background;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CS_CUDA_TRY(cudaStreamIsCapturing(frame_stream, &capture));
    const bool captured = capture != cudaStreamCaptureStatusNone;
    if (lists && captured && !f.graph_conditions && !timer->in_graph)
      return "the background model's frame graph needs conditional nodes (CUDA 12.4 or later)";
    const GraphCondition condition = lists ? f.frame_switch : GraphCondition{};
    if (!condition.on) {
      // In line the counts come first, so that a frame matched whole makes
      // no lists (the timeline's graph makes them, its marks the same on
      // every frame).
      unsigned long long fg = f.last_foreground_pixels, fg_right = f.last_right_foreground;
      if (lists && !captured) {
        unsigned long long counts[2] = {0, 0};
        CS_CUDA_TRY(cudaMemcpyAsync(&counts[0], &f.counters->matched[0], sizeof(counts[0]), cudaMemcpyDeviceToHost,
                                    frame_stream));
        CS_CUDA_TRY(cudaMemcpyAsync(&counts[1], &f.counters->right_foreground, sizeof(counts[1]),
                                    cudaMemcpyDeviceToHost, frame_stream));
        CS_CUDA_TRY(cudaStreamSynchronize(frame_stream));
        fg = counts[0];
        fg_right = counts[1];
      }
      const bool masks = lists && !matches_whole_frame(fg, fg_right, f.levels[0].width, f.levels[0].height);
      const bool few = masks && fg < few_below(f);
      if (lists && (masks || captured)) {
        std::string e = enqueue_tile_lists(f, frame_stream, few ? kFewTiles : kManyTiles);
        if (!e.empty()) return e;
        timer->mark("tile lists");
      }
      return enqueue_levels(f, frame_stream, timer, masks, few, masks);
    }
    cudaGraph_t bodies[kFrameBodies] = {nullptr, nullptr, nullptr};
    static_assert(kFewTiles == 0 && kManyTiles == 1 && kAllForeground == 2 && kNoTiles == 3, "the bodies' order");
    CS_CUDA_TRY(add_graph_switch(frame_stream, condition, kFrameBodies, bodies));
    for (unsigned k = 0; k < kFrameBodies; ++k) {
      const bool all = k == kAllForeground;
      CS_CUDA_TRY(begin_graph_body(f.body_stream, bodies[k]));
      std::string e = all ? std::string() : enqueue_tile_lists(f, f.body_stream, k);
      if (e.empty()) e = enqueue_levels(f, f.body_stream, timer, !all, k == kFewTiles, !all);
      const cudaError_t ended = end_graph_body(f.body_stream);
      if (!e.empty()) return e;
      CS_CUDA_TRY(ended);
    }
    return {};
  }

  bool takes_frame_switch(const MethodFrame& f, unsigned long long* few) const override {
    *few = few_below(f);
    return true;
  }

  // The frame's census and levels on `s` (the frame's stream, or a SWITCH
  // body's); lists, few and masks as level_match takes them.
  std::string enqueue_levels(const MethodFrame& f, cudaStream_t s, StageTimer* timer, bool lists, bool few,
                             bool masks) {
    const Params& p = *f.params;
    const int levels = static_cast<int>(f.levels.size());
    // Census, both views of levels [first, end) in one launch.
    // Each level's right census also sets the right view's match keys to
    // all ones (the left view's winners fill them), for the check and the
    // finish that read them (right_keys_kept).
    auto census = [&](int first, int end, cudaStream_t st) -> std::string {
      ImageView<const uint8_t> gray[2 * kMaxLevels];
      ImageView<uint32_t> census[2 * kMaxLevels];
      ImageView<uint32_t> clear[2 * kMaxLevels];
      TileList tiles[2 * kMaxLevels];
      int count = 0;
      for (int l = first; l < end; ++l)
        for (int v = 0; v < 2; ++v, ++count) {
          gray[count] = f.levels[l].gray[v];
          census[count] = lv_[l].census[v].view();
          tiles[count] = list_of(f, l, kCensusList, lists);
          if (v == 1) clear[count] = right_keys_of(l).view();
        }
      CS_CUDA_TRY(enqueue_census_batch(gray, census, count, st, clear, tiles));
      return {};
    };
    // In the graph, the finer levels' census runs on a branch beside the
    // coarsest level's matching, which leaves most of the GPU idle; so do
    // the refined levels' tile orders (from the last frame's times). The
    // branch takes the levels coarse to fine, each joining the frame's stream
    // just before that level's refinement (join[l]), so that a large level-0
    // census holds up level 0 alone (H100, Aloe: 4K -3 to -4 %, 1080p x 512
    // -4 %, against one join before the first refinement; 1080p x 256 about
    // +1 %). Timed stage by stage, in order.
    // The branch forks after the coarsest level's census, so that the
    // coarsest search (the frame's stream, the greatest priority) and the
    // branch (the least) become ready together and the search's blocks are
    // placed first, evenly over the SMs. Forked before it, the branch's
    // census blocks were resident when the search launched and some SMs took
    // fewer of its blocks: on the H100 (Aloe, bench/RESULTS.md, fifteenth
    // session) 640x480 x 128 took 0.0875 to 0.0920 ms from run to run, 0.0842
    // to 0.0846 forked after.
    const bool branch = levels > 1 && !timer->on;
    std::string e;
    if (branch) {
      e = census(levels - 1, levels, s);
      if (!e.empty()) return e;
      CS_CUDA_TRY(cudaEventRecord(f.fork, s));
      CS_CUDA_TRY(cudaStreamWaitEvent(f.side_stream, f.fork, 0));
      for (int l = levels - 2; l >= 0; --l) {
        // (With the foreground tiles the schedule is off: nothing to order.)
        if (!lists) {
          CS_CUDA_TRY(enqueue_tile_order(lv_[l].schedule(), f.side_stream));
          timer->mark_side(f.side_stream, "tile order", l);
        }
        e = census(l, l + 1, f.side_stream);
        if (!e.empty()) return e;
        timer->mark_side(f.side_stream, "census", l);
        CS_CUDA_TRY(cudaEventRecord(f.join[l], f.side_stream));
      }
    } else {
      if (!lists) {
        for (int l = 0; l + 1 < levels; ++l) CS_CUDA_TRY(enqueue_tile_order(lv_[l].schedule(), s));
        if (levels > 1) timer->mark("tile order");
      }
      e = census(0, levels, s);
    }
    if (!e.empty()) return e;
    timer->mark("census", branch ? levels - 1 : -1);
    for (int l = levels - 1; l >= 0; --l) {
      Level& L = lv_[l];
      if (branch && l < levels - 1) {
        CS_CUDA_TRY(cudaStreamWaitEvent(s, f.join[l], 0));
        timer->mark("joined", l);  // in the graph: when level l could start
      }
      MatchViews mv[2];
      MatchParams mp;
      level_match(f, l, lists, few, masks, mv, &mp);
      // Level 0's check is part of the finish (its left map alone is used;
      // download_debug makes the checked maps when asked). The right map,
      // offered by the left view's winners, stays as its match keys (the
      // coarsest level's where the check reads them; every refined
      // level's), which the check and the finish read (the check writing
      // out the raw right map) without a launch of their own to turn them
      // into the map.
      const bool check = checks(p, l);
      const bool coarsest = l == levels - 1;
      // With offer_right the keys are always kept where asked for.
      bool kept = false;
      CS_CUDA_TRY(enqueue_match_pair(mv[0], mv[1], mp, s, check || !coarsest ? &kept : nullptr));
      timer->mark(coarsest ? "match coarsest" : "refine", l);
      if (check) {
        CS_CUDA_TRY(enqueue_check_and_support_keys(L.raw[0].cview(), right_keys_of(l).cview(), p.lr_check,
                                                   resolve_lr_tolerance(p), p.min_support, L.raw[1].view(),
                                                   L.checked[0].view(), L.checked[1].view(), s,
                                                   masks ? f.levels[l].mask[0] : ImageView<const uint8_t>{},
                                                   masks ? f.levels[l].mask[1] : ImageView<const uint8_t>{},
                                                   list_of(f, l, kCheckList, lists)));
        timer->mark("cross-check", l);
      }
    }
    return {};
  }

  std::string finish_call(const MethodFrame& f, ImageView<uint16_t> disparity_q4, const EncodeTarget& encode,
                          KernelCall* call) override {
    const Params& p = *f.params;
    FinishConfidence fc;
    if (confidence_) fc = {best_cost_.cview(), rival_cost_.cview(), f.confidence};
    CS_CUDA_TRY(cuda::finish_call(lv_[0].raw[0].cview(),
                                  p.subpixel ? as_const(subpixel_offset_.view()) : ImageView<const int8_t>{},
                                  f.levels[0].mask[0], disparity_q4, f.counters, call,
                                  p.lr_check && lv_.size() == 1 ? lv_[0].raw[1].cview() : ImageView<const int16_t>{},
                                  resolve_lr_tolerance(p), fc, encode,
                                  p.lr_check && lv_.size() > 1 ? lv_[0].right_keys.cview()
                                                               : ImageView<const uint32_t>{},
                                  f.mask_pixels()));
    return {};
  }

  std::string begin_frame(const Params& p, int width, int height, int levels, int* coarse_factor) override {
    return coarse_->begin_frame(p, width, height, levels, coarse_factor);
  }

  std::string end_frame(const MethodFrame& f, cudaStream_t s) override {
    const int nl = static_cast<int>(f.levels.size());
    return coarse_->end_frame(
        *f.params, f.levels[0].width, f.levels[0].height, nl, f.levels[nl - 1].width,
        [&](Range range, unsigned* counts, int bins) { return enqueue_coarse_probe(f, range, counts, bins, s); }, s);
  }

  void share_frames_with(MatchingMethod& other) override {
    if (auto* o = dynamic_cast<ProgressiveMethod*>(&other)) o->coarse_ = coarse_;
  }

  // The automatic coarse range's probe (stages.h 6b) after the frame just
  // enqueued: the coarsest level matched over `range` in both views with
  // the frame's census and masks, cross-checked and support-filtered as
  // stages.h 6b says, and the histogram of the left map in counts[0, bins)
  // (enqueue_disparity_histogram), in stream order.
  std::string enqueue_coarse_probe(const MethodFrame& f, Range range, unsigned* counts, int bins, cudaStream_t s) {
    const Params& p = *f.params;
    const int l = static_cast<int>(f.levels.size()) - 1;
    Level& L = lv_[l];
    const int w = f.levels[l].width, h = f.levels[l].height;
    // Not read by queued work: the engine waits for a probe's counts before
    // the next frame, and sizes change only between frames.
    for (int v = 0; v < 2; ++v)
      if (probe_raw_[v].view().width != w || probe_raw_[v].view().height != h) {
        CS_CUDA_TRY(probe_raw_[v].allocate(w, h));
        CS_CUDA_TRY(probe_checked_[v].allocate(w, h));
      }
    MatchViews mv[2];
    for (int v = 0; v < 2; ++v) {
      mv[v].census_ref = L.census[v].cview();
      mv[v].census_other = L.census[1 - v].cview();
      if (p.background) {
        mv[v].mask_ref = f.levels[l].mask[v];
        mv[v].mask_other = f.levels[l].mask[1 - v];
      }
      mv[v].scratch.best_keys = match_keys_[v].view();
      mv[v].scratch.tiles_done = match_tiles_[v].view().data;
      mv[v].disparity = probe_raw_[v].view();
    }
    MatchParams mp;
    mp.range = range;
    mp.radius = p.subwindow_radius;
    mp.best = static_cast<int>(p.window);
    mp.uniqueness_ratio = kProbeUniquenessRatio;
    mp.limits = f.limits;  // no sub-pixel: the winners only
    CS_CUDA_TRY(enqueue_match_pair(mv[0], mv[1], mp, s));
    // The cross-check and the support filter in one pass (its left map is
    // cross_check then support_filter of the reference).
    CS_CUDA_TRY(enqueue_check_and_support(probe_raw_[0].cview(), probe_raw_[1].cview(), true, resolve_lr_tolerance(p),
                                          kProbeMinSupport, probe_checked_[0].view(), probe_checked_[1].view(), s));
    CS_CUDA_TRY(enqueue_disparity_histogram(probe_checked_[0].cview(), counts, bins, s));
    return {};
  }

  std::string download_debug(const MethodFrame& f, Matcher::Debug* out, cudaStream_t stream) override {
    const Params& p = *f.params;
    for (size_t l = 0; l < lv_.size(); ++l) {
      Level& L = lv_[l];
      LevelDebug& d = out->levels[l];
      // A refined level's right map is still its keys (the check, where it
      // ran, wrote the same map; the next frame's census clears them).
      if (l + 1 < lv_.size()) {
        CS_CUDA_TRY(enqueue_resolve_keys(L.right_keys.view(), L.raw[1].view(), stream));
        CS_CUDA_TRY(cudaStreamSynchronize(stream));
      }
      std::string errs[] = {download(L.census[0], &d.census_left), download(L.census[1], &d.census_right),
                            download(L.raw[0], &d.raw_left), download(L.raw[1], &d.raw_right)};
      for (auto& s : errs)
        if (!s.empty()) return s;
      std::string e;
      // Level 0's check runs in the finish: made here when asked for. Above
      // it, the checked (and supported) maps are the frame's own.
      if (p.lr_check || (l > 0 && p.min_support > 0)) {
        if (l == 0) {
          CS_CUDA_TRY(enqueue_cross_check(L.raw[0].cview(), L.raw[1].cview(), resolve_lr_tolerance(p),
                                          L.checked[0].view(), L.checked[1].view(), stream));
          CS_CUDA_TRY(cudaStreamSynchronize(stream));
        }
        e = download(L.checked[0], &d.disparity_left);
        if (e.empty()) e = download(L.checked[1], &d.disparity_right);
      } else {
        d.disparity_left = d.raw_left;
        d.disparity_right = d.raw_right;
      }
      if (!e.empty()) return e;
    }
    // The confidence and the costs behind it, when on.
    if (confidence_) {
      std::string errs[] = {download(best_cost_, &out->costs.best), download(rival_cost_, &out->costs.rival),
                            download(as_const(f.confidence), &out->confidence)};
      for (auto& s : errs)
        if (!s.empty()) return s;
    }
    return {};
  }

  bool has_confidence() const override { return confidence_; }

  size_t device_bytes() const override {
    size_t n = subpixel_offset_.bytes() + match_wide_.bytes() + match_wide_counters_.bytes() + best_cost_.bytes() +
               rival_cost_.bytes();
    for (int v = 0; v < 2; ++v)
      n += match_keys_[v].bytes() + match_tiles_[v].bytes() + probe_raw_[v].bytes() + probe_checked_[v].bytes();
    for (const Level& L : lv_) {
      n += L.tile_costs.bytes() + L.tile_order.bytes() + L.tile_counts.bytes() + L.right_keys.bytes();
      for (const DeviceImage<unsigned>& list : L.tile_lists) n += list.bytes();
      for (int v = 0; v < 2; ++v) n += L.census[v].bytes() + L.raw[v].bytes() + L.checked[v].bytes();
    }
    return n;
  }

 private:
  struct Level {
    DeviceImage<uint32_t> census[2];
    DeviceImage<int16_t> raw[2], checked[2];
    // Refined levels: the tile schedule's times, order and counts (tile_order.h).
    DeviceImage<uint32_t> tile_costs, tile_order;
    DeviceImage<unsigned> tile_counts;
    // Refined levels: the right map as the keys the left view offers.
    DeviceImage<uint32_t> right_keys;
    // The background model's foreground tiles of the level's grids, by list
    // (kCensusList, ...).
    DeviceImage<unsigned> tile_lists[kFrameTileLists];
    TileSchedule schedule() {
      TileSchedule t;
      t.costs = tile_costs.view().data;
      t.order = tile_order.view().data;
      t.counts = tile_counts.view().data;
      t.capacity = static_cast<unsigned>(tile_costs.view().width);
      return t;
    }
    // What the next finer level refines from: the checked and supported map
    // when either step runs (above level 0), else the raw one.
    ImageView<const int16_t> final_view(int v, bool filtered) const {
      return filtered ? checked[v].cview() : raw[v].cview();
    }
  };
  // The keys the right map of level l stays as (right_keys_kept).
  DeviceImage<uint32_t>& right_keys_of(int l) {
    return l + 1 == static_cast<int>(lv_.size()) ? match_keys_[1] : lv_[l].right_keys;
  }
  int width_ = 0, height_ = 0;
  bool confidence_ = false;  // Params::confidence, as prepare() saw it
  std::vector<Level> lv_;
  // Coarsest-level matching split over several blocks per tile meets here
  // (matching.h MatchScratch); per view.
  DeviceImage<uint32_t> match_keys_[2];
  DeviceImage<unsigned> match_tiles_[2];
  // Refinement's wide pixels (both views, any level) and their two counters.
  DeviceImage<uint32_t> match_wide_;
  DeviceImage<unsigned> match_wide_counters_;
  DeviceImage<int8_t> subpixel_offset_;
  // The automatic coarse range's probe maps (coarsest level size), raw and checked (and supported).
  DeviceImage<int16_t> probe_raw_[2], probe_checked_[2];
  // The level-0 left sweep's SweepCosts, for the confidence (when on).
  DeviceImage<int32_t> best_cost_, rival_cost_;
  // The automatic coarse range (shared with the other set of frames in flight).
  std::shared_ptr<AutoCoarseRange> coarse_ = std::make_shared<AutoCoarseRange>();
};

}  // namespace

std::unique_ptr<MatchingMethod> make_progressive_method() { return std::make_unique<ProgressiveMethod>(); }

}  // namespace cs::cuda
