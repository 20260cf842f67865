// The CPU reference pipeline (stereo.h, Matcher): runs the stages of
// stages.h in order and keeps every intermediate for tests and tools.
#include <algorithm>
#include <climits>
#include <cstring>
#include <sstream>

#include "frame_checks.h"
#include "matcher_debug.h"
#include "rectify.h"
#include "synthetic.h"

namespace cs {

namespace {

std::string check_view(const FrameView& v, const char* name) {
  if (v.memory != Memory::Host) {
    std::ostringstream s;
    s << "the " << name << " view is in device memory; the CPU reference needs host memory";
    return s.str();
  }
  return check_view_planes(v, name);
}

template <typename T>
std::string check_output(const ImageView<T>& v, int width, int height, const char* name) {
  if (v.data == nullptr) return {};
  std::ostringstream s;
  if (v.width != width || v.height != height) {
    s << "the " << name << " output is " << v.width << "x" << v.height << " but the views are " << width << "x"
      << height;
    return s.str();
  }
  if (v.pitch < static_cast<std::ptrdiff_t>(width * sizeof(T))) {
    s << "the " << name << " output's row pitch (" << v.pitch << " bytes) is less than one row ("
      << width * sizeof(T) << " bytes)";
    return s.str();
  }
  return {};
}

// Whether method progressive matches this frame's levels without the
// model's masks (stages.h matches_whole_frame), from the level-0 masks in dbg.
bool whole_frame(const Params& p, const Matcher::Debug& dbg) {
  if (!p.background || p.method != Method::Progressive) return false;
  const LevelDebug& l0 = dbg.levels[0];
  auto count = [](const Image<uint8_t>& m) {
    return static_cast<uint64_t>(std::count_if(m.pixels.begin(), m.pixels.end(), [](uint8_t v) { return v != 0; }));
  };
  return matches_whole_frame(count(l0.mask_left), count(l0.mask_right), l0.mask_left.width, l0.mask_left.height);
}

// The matching of each method, from the views (grey; method cross: colour)
// and masks in dbg.
void match_progressive(const Params& p, int levels, Matcher::Debug& dbg, ImageView<uint16_t> q4) {
  for (int l = 0; l < levels; ++l) {
    LevelDebug& ld = dbg.levels[l];
    census_transform(ld.gray_left, ld.census_left);
    census_transform(ld.gray_right, ld.census_right);
    ld.range = level_range(p, l, ld.gray_left.width);
  }

  const int best = static_cast<int>(p.window);
  const int unique = resolve_uniqueness_ratio(p);
  // With the model, the masks unless both views are mostly foreground
  // (stages.h matches_whole_frame).
  const bool masks = p.background && !whole_frame(p, dbg);
  for (int l = levels - 1; l >= 0; --l) {
    LevelDebug& ld = dbg.levels[l];
    const Image<uint8_t>* mask_l = masks ? &ld.mask_left : nullptr;
    const Image<uint8_t>* mask_r = masks ? &ld.mask_right : nullptr;
    // Level 0's left sweep keeps its costs for the confidence.
    SweepCosts* costs = l == 0 ? &dbg.costs : nullptr;
    if (l == levels - 1) {
      // The right map from the left view's winners (stages.h, stages 6 and 7).
      match_full_range(ld.census_left, ld.census_right, Reference::Left, mask_l, mask_r, ld.range,
                       p.subwindow_radius, best, ld.raw_left, unique, costs, &ld.raw_right);
    } else {
      const LevelDebug& lc = dbg.levels[l + 1];
      refine_level(ld.census_left, ld.census_right, Reference::Left, mask_l, mask_r, lc.disparity_left, ld.range,
                   p.subwindow_radius, best, p.hole_search_radius, p.hole_span, ld.raw_left, unique, costs,
                   &ld.raw_right);
    }
    ld.disparity_left = ld.raw_left;
    ld.disparity_right = ld.raw_right;
    if (p.lr_check) cross_check(ld.disparity_left, ld.disparity_right, resolve_lr_tolerance(p));
    if (l > 0) {
      support_filter(ld.disparity_left, p.min_support);
      support_filter(ld.disparity_right, p.min_support);
    }
  }

  LevelDebug& l0 = dbg.levels[0];
  // Matched without masks: nothing where the left view is background.
  if (p.background && !masks)
    for (size_t i = 0; i < l0.disparity_left.pixels.size(); ++i)
      if (!l0.mask_left.pixels[i]) l0.disparity_left.pixels[i] = -1;
  finish_disparity(l0.census_left, l0.census_right, l0.disparity_left, l0.range, p.subwindow_radius, best,
                   p.subpixel, q4);
  confidence_map(dbg.costs, l0.disparity_left, dbg.confidence);
}

void match_block(const Params& p, Matcher::Debug& dbg, ImageView<uint16_t> q4) {
  LevelDebug& l0 = dbg.levels[0];
  BlockDebug& b = dbg.block;
  // Every level states its range (as the CUDA engine's debug copy does),
  // though block matches level 0 only; the others serve the background model.
  for (LevelDebug& ld : dbg.levels) ld.range = level_range(p, static_cast<int>(&ld - dbg.levels.data()), ld.gray_left.width);
  const Image<uint8_t>* mask_l = p.background ? &l0.mask_left : nullptr;
  const Image<uint8_t>* mask_r = p.background ? &l0.mask_right : nullptr;
  block_match(l0.gray_left, l0.gray_right, mask_l, mask_r, l0.range, p.match_block_size, b.winners, l0.raw_right);
  l0.raw_left = b.winners.disparity;
  l0.disparity_left = l0.raw_left;
  l0.disparity_right = l0.raw_right;
  apply_uniqueness(b.winners, resolve_uniqueness_ratio(p), l0.disparity_left);
  if (p.lr_check) cross_check(l0.disparity_left, l0.disparity_right, resolve_lr_tolerance(p));
  finish_block_disparity(b.winners, l0.disparity_left, l0.range, p.subpixel, q4);
  dbg.costs.best = b.winners.best;
  dbg.costs.rival = b.winners.rival;
  block_confidence(b.winners, l0.disparity_left, dbg.confidence);
}

// Method cross (stages.h C1 .. C8) on the colour views in levels[0].
void match_cross(const Params& p, Matcher::Debug& dbg, ImageView<uint16_t> q4) {
  LevelDebug& l0 = dbg.levels[0];
  CrossDebug& c = dbg.cross;
  const int S = p.sample_restore;
  l0.range = level_range(p, 0, l0.rgb_left.width);
  const Image<uint8_t>* mask_l = p.background ? &l0.mask_left : nullptr;
  const Image<uint8_t>* mask_r = p.background ? &l0.mask_right : nullptr;
  cross_arms(l0.rgb_left, p.cross_tau, p.cross_arm_length, c.arms_left);
  cross_arms(l0.rgb_right, p.cross_tau, p.cross_arm_length, c.arms_right, S);  // C2: the sampled rows
  cross_census(l0.rgb_left, S, c.words_left);
  cross_census(l0.rgb_right, S, c.words_right);
  cross_match(c.words_left, c.words_right, c.arms_left, c.arms_right, mask_l, mask_r, l0.range, p.cross_truncation,
              p.cross_census_weight, S, resolve_uniqueness_ratio(p), c.winners);
  cross_reliable(c.winners, S, p.lr_check, resolve_lr_tolerance(p), c.reliable);
  cross_vote(c.arms_left, c.reliable, S, l0.range, mask_l, c.voted, p.cross_vote_arm_length);
  cross_median(c.voted, mask_l, c.disparity);
  // The samples' maps are level 0's only where the samples are its pixels.
  if (S == 1) {
    l0.raw_left = c.winners.raw;
    l0.raw_right = c.winners.right;
    l0.disparity_right = l0.raw_right;
  }
  l0.disparity_left = c.disparity;
  finish_cross_disparity(l0.disparity_left, q4);
  cross_confidence(c.winners, l0.disparity_left, S, dbg.confidence);
}

// Method elas (elas_dense.h E1 .. E8) on the grey views in levels[0].
void match_elas(const Params& p, Matcher::Debug& dbg, ImageView<uint16_t> q4) {
  LevelDebug& l0 = dbg.levels[0];
  l0.range = level_range(p, 0, l0.gray_left.width);
  const ElasParams e = elas_params(p, l0.range);
  Image<int16_t> unused;
  elas_match(l0.gray_left, l0.gray_right, e, unused, nullptr, p.background ? &l0.mask_left : nullptr,
             p.background ? &l0.mask_right : nullptr, &dbg.elas);
  const ElasDebug& g = dbg.elas;
  l0.raw_left = g.raw[0];
  l0.raw_right = g.raw[1];
  l0.disparity_right = g.checked[1];
  l0.disparity_left = g.disparity;
  finish_cross_disparity(l0.disparity_left, q4);  // whole pixels as method cross's (E8)
  dbg.costs.best = g.best;
  dbg.costs.rival = g.rival;
  elas_confidence(g.raw[0], g.best, g.rival, g.disparity, dbg.confidence);
}

}  // namespace

void mask_debug_to_foreground(Matcher::Debug& dbg, int radius) {
  const int a = census_apron(radius);
  // The level-0 left sweep's costs (the confidence's): none off the foreground.
  if (!dbg.levels.empty() && !dbg.levels[0].mask_left.pixels.empty())
    for (Image<int32_t>* c : {&dbg.costs.best, &dbg.costs.rival})
      if (c->pixels.size() == dbg.levels[0].mask_left.pixels.size())
        for (size_t i = 0; i < c->pixels.size(); ++i)
          if (!dbg.levels[0].mask_left.pixels[i]) c->pixels[i] = kNoCost;
  for (LevelDebug& ld : dbg.levels) {
    if (ld.mask_left.pixels.empty()) continue;
    const int w = ld.mask_left.width, h = ld.mask_left.height;
    auto maps = [&](Image<int16_t>& map, const Image<uint8_t>& mask) {
      if (map.width != w || map.height != h) return;
      for (size_t i = 0; i < map.pixels.size(); ++i)
        if (!mask.pixels[i]) map.pixels[i] = -1;
    };
    maps(ld.raw_left, ld.mask_left);
    maps(ld.disparity_left, ld.mask_left);
    maps(ld.raw_right, ld.mask_right);
    maps(ld.disparity_right, ld.mask_right);
    if (ld.census_left.pixels.empty()) continue;
    // Either view's foreground, grown by the apron.
    Image<uint8_t> either(w, h), near;
    for (size_t i = 0; i < either.pixels.size(); ++i)
      either.pixels[i] = ld.mask_left.pixels[i] || ld.mask_right.pixels[i] ? 255 : 0;
    dilate_mask(either, a, near);
    for (Image<uint32_t>* c : {&ld.census_left, &ld.census_right})
      for (size_t i = 0; i < c->pixels.size(); ++i)
        if (!near.pixels[i]) c->pixels[i] = 0;
  }
}

struct Matcher::Impl {
  Params params;
  FrameStats stats;
  Debug debug;
  BackgroundModel model[2];  // left, right: full size (stages.h stage 3)
  int model_width = 0, model_height = 0;
  int frames_seen = 0;
  CoarseProbeSchedule coarse;  // the automatic coarse range (stages.h 6b)
  Image<uint32_t> rectified[2];  // stage 0's views (Params::rectification)

  void restart_background() {
    for (BackgroundModel& v : model) v = BackgroundModel();
    model_width = model_height = 0;
    frames_seen = 0;
  }
};

Matcher::Matcher(const Params& params) : impl_(new Impl) {
  // An invalid configuration is reported by process(); keep it as given.
  impl_->params = params;
}

Matcher::~Matcher() = default;

std::string Matcher::set_params(const Params& params) {
  std::string e = params.validate();
  if (!e.empty()) return e;
  const Params& old = impl_->params;
  if (params.background != old.background || params.min_sigma != old.min_sigma ||
      params.warmup_frames != old.warmup_frames)
    impl_->restart_background();
  impl_->params = params;
  return {};
}

const Params& Matcher::params() const { return impl_->params; }

void Matcher::reset_background() { impl_->restart_background(); }

const FrameStats& Matcher::stats() const { return impl_->stats; }

const Matcher::Debug& Matcher::debug() const { return impl_->debug; }

std::string Matcher::process(const FrameView& in_left, const FrameView& in_right, const Outputs& out) {
  Impl& m = *impl_;
  const Params& p = m.params;
  std::string e = check_view_pair(in_left, in_right);
  if (e.empty()) e = p.validate_for_size(in_left.width, in_left.height);
  if (e.empty()) e = check_view(in_left, "left");
  if (e.empty()) e = check_view(in_right, "right");
  if (e.empty() && out.memory != Memory::Host)
    e = "the outputs are in device memory; the CPU reference writes host memory";
  if (e.empty()) e = check_output(out.disparity_q4, in_left.width, in_left.height, "disparity");
  if (e.empty()) e = check_output(out.foreground, in_left.width, in_left.height, "foreground");
  if (e.empty()) e = check_output(out.confidence, in_left.width, in_left.height, "confidence");
  if (!e.empty()) return e;

  // Stage 0: the views rectified (RGBA from here on).
  FrameView left = in_left, right = in_right;
  if (p.rectification) {
    rectify_view(in_left, p.rectification->map[0], m.rectified[0]);
    rectify_view(in_right, p.rectification->map[1], m.rectified[1]);
    left = rgba_view(m.rectified[0]);
    right = rgba_view(m.rectified[1]);
  }
  const int w = left.width, h = left.height;
  // Methods block and cross match level 0 alone (pipeline_levels).
  const bool single_level = p.method != Method::Progressive;
  const int levels = pipeline_levels(p, w, h);
  Debug& dbg = m.debug;
  dbg.levels.assign(levels, LevelDebug());

  convert_to_gray(left, dbg.levels[0].gray_left);
  convert_to_gray(right, dbg.levels[0].gray_right);
  for (int l = 1; l < levels; ++l) {
    downsample(dbg.levels[l - 1].gray_left, dbg.levels[l].gray_left);
    downsample(dbg.levels[l - 1].gray_right, dbg.levels[l].gray_right);
  }

  FrameStats st;
  st.levels = levels;
  st.frame_index = m.stats.frame_index + 1;
  // The colour of both views: the background model's input and method cross's.
  if (p.background || p.method == Method::Cross) {
    convert_to_rgb(left, dbg.levels[0].rgb_left);
    convert_to_rgb(right, dbg.levels[0].rgb_right);
  }
  if (p.background) {
    if (m.model_width != w || m.model_height != h) {
      m.restart_background();
      m.model_width = w;
      m.model_height = h;
    }
    const BackgroundParams bp = background_params(p);
    LevelDebug& l0 = dbg.levels[0];
    Image<uint8_t> raw;
    l0.tests_left = background_view(m.model[0], l0.rgb_left, bp, m.frames_seen, 0, raw);
    clean_mask(raw, p.morph_radius, l0.mask_left);
    l0.tests_right = background_view(m.model[1], l0.rgb_right, bp, m.frames_seen, 1, raw);
    clean_mask(raw, p.morph_radius, l0.mask_right);
    for (int l = 1; l < levels; ++l) {
      pool_mask(l0.mask_left, l, dbg.levels[l].mask_left);
      pool_mask(l0.mask_right, l, dbg.levels[l].mask_right);
    }
    st.background_tests = l0.tests_left + l0.tests_right;
    st.background_tests_full = 2ull * w * h;
    st.warming_up = m.frames_seen < p.warmup_frames || m.frames_seen == 0;
    if (m.frames_seen < INT_MAX) ++m.frames_seen;
  }
  // The matching work: left pixels given candidates at the levels matched.
  const bool whole = whole_frame(p, dbg);
  for (int l = 0; l < (single_level ? 1 : levels); ++l) {
    const LevelDebug& ld = dbg.levels[l];
    const uint64_t full = static_cast<uint64_t>(ld.gray_left.width) * ld.gray_left.height;
    st.matched_pixels_full += full;
    st.matched_pixels += p.background && !whole ? static_cast<uint64_t>(std::count_if(ld.mask_left.pixels.begin(),
                                                                            ld.mask_left.pixels.end(),
                                                                            [](uint8_t v) { return v != 0; }))
                                      : full;
  }

  Image<uint16_t> q4_owned;
  ImageView<uint16_t> q4 = out.disparity_q4;
  if (q4.data == nullptr) {
    q4_owned = Image<uint16_t>(w, h);
    q4 = q4_owned.view();
  }
  dbg.block = BlockDebug();
  dbg.cross = CrossDebug();
  dbg.elas = ElasDebug();
  dbg.costs = SweepCosts();
  const bool auto_coarse = !single_level && p.coarse_range_factor == kAutoCoarseRangeFactor && levels > 1;
  Params pe = p;  // the factor this frame uses
  if (auto_coarse) pe.coarse_range_factor = m.coarse.begin_frame(w, h, levels, p);
  switch (p.method) {
    case Method::Block: match_block(pe, dbg, q4); break;
    case Method::Cross: match_cross(pe, dbg, q4); break;
    case Method::Elas: match_elas(pe, dbg, q4); break;
    case Method::Progressive: match_progressive(pe, levels, dbg, q4); break;
  }
  st.coarse_range_factor = single_level ? 1 : std::max(pe.coarse_range_factor, 1);
  if (auto_coarse) {
    if (m.coarse.probe_due(w, h, levels, p)) {
      const LevelDebug& top = dbg.levels[levels - 1];
      m.coarse.set_factor(probe_coarse_factor(top.census_left, top.census_right,
                                              p.background ? &top.mask_left : nullptr,
                                              p.background ? &top.mask_right : nullptr, p, levels - 1));
      m.coarse.probe_made(w, h, levels, p);
    }
    m.coarse.frame_done();
  }
  if (p.background) mask_debug_to_foreground(dbg, p.subwindow_radius);
  const LevelDebug& l0 = dbg.levels[0];
  if (out.confidence.data)
    for (int y = 0; y < h; ++y) std::memcpy(out.confidence.row(y), &dbg.confidence.at(0, y), w);

  uint64_t valid = 0, foreground = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (l0.disparity_left.at(x, y) >= 0) ++valid;
      const bool fg = !p.background || l0.mask_left.at(x, y) != 0;
      if (fg) ++foreground;
      if (out.foreground.data) out.foreground.at(x, y) = fg ? 255 : 0;
    }
  const double n = static_cast<double>(w) * h;
  st.valid_fraction = valid / n;
  st.foreground_fraction = foreground / n;
  m.stats = st;
  return {};
}

}  // namespace cs
