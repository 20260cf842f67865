#include <algorithm>
// Parameter validation, level count and per-level search range.
#include <cmath>
#include <sstream>

#include "rectify.h"
#include "stages.h"

namespace cs {

const char* pixel_format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGBA: return "RGBA";
    case PixelFormat::BGRA: return "BGRA";
    case PixelFormat::RGBx: return "RGBx";
    case PixelFormat::BGRx: return "BGRx";
    case PixelFormat::xRGB: return "xRGB";
    case PixelFormat::xBGR: return "xBGR";
    case PixelFormat::ARGB: return "ARGB";
    case PixelFormat::ABGR: return "ABGR";
    case PixelFormat::RGB: return "RGB";
    case PixelFormat::BGR: return "BGR";
    case PixelFormat::GRAY8: return "GRAY8";
    case PixelFormat::I420: return "I420";
    case PixelFormat::NV12: return "NV12";
    case PixelFormat::YUY2: return "YUY2";
    case PixelFormat::UYVY: return "UYVY";
  }
  return "unknown";
}

namespace {

// Limits beyond which a value is certainly a mistake, for the parameters
// the element does not expose (stereo.h has those it does).
constexpr int kMaxSubwindowRadius = 8;
constexpr int kMaxHoleRadius = 16;
constexpr int kMaxMinSupport = 8;  // all the neighbours
constexpr float kMaxMinSigma = 128.0f;
constexpr int kMaxMorphRadius = 8;

// "NAME (VALUE) RULE...", the rule's numbers streamed from the limits so
// that the message states the bound the test applies.
template <typename T, typename... Rule>
std::string say(const char* name, T value, const Rule&... rule) {
  std::ostringstream s;
  s << name << " (" << value << ") ";
  (s << ... << rule);
  return s.str();
}

bool window_variant_known(WindowVariant w) {
  return w == WindowVariant::Box || w == WindowVariant::Best1 || w == WindowVariant::Best2 ||
         w == WindowVariant::Best4;
}

bool method_known(Method m) {
  return m == Method::Progressive || m == Method::Block || m == Method::Cross || m == Method::Elas;
}

}  // namespace

std::string Params::validate() const {
  if (!method_known(method))
    return say("method", static_cast<int>(method), "must be 0 (progressive), 1 (block), 2 (cross) or 3 (elas)");
  if (min_disparity < 0) return say("min-disparity", min_disparity, "must not be negative");
  if (max_disparity <= min_disparity) {
    std::ostringstream s;
    s << "max-disparity (" << max_disparity << ") must be greater than min-disparity (" << min_disparity << ")";
    return s.str();
  }
  if (max_disparity > kMaxDisparity) return say("max-disparity", max_disparity, "must not exceed ", kMaxDisparity);
  if (levels < 0 || levels > kMaxLevels)
    return say("levels", levels, "must be between 0 (automatic) and ", kMaxLevels);
  if (subwindow_radius < 0 || subwindow_radius > kMaxSubwindowRadius)
    return say("subwindow-radius", subwindow_radius, "must be between 0 and ", kMaxSubwindowRadius);
  if (!window_variant_known(window))
    return say("window", static_cast<int>(window), "must be 0 (box), 1, 2 or 4 best sub-windows");
  if (hole_search_radius < 0 || hole_search_radius > kMaxHoleRadius)
    return say("hole-search-radius", hole_search_radius, "must be between 0 and ", kMaxHoleRadius);
  if (hole_span < 0 || hole_span > kMaxHoleSpan)
    return say("hole-span", hole_span, "must be between 0 (no bound) and ", kMaxHoleSpan);
  if (coarse_range_factor < kAutoCoarseRangeFactor || coarse_range_factor > kMaxCoarseRangeFactor)
    return say("coarse-range-factor", coarse_range_factor, "must be between ", kAutoCoarseRangeFactor,
               " (automatic) and ", kMaxCoarseRangeFactor, " (1: the asked range at every level)");
  if (min_support < 0 || min_support > kMaxMinSupport)
    return say("min-support", min_support, "must be between 0 (off) and ", kMaxMinSupport);
  if (!(learning_rate > 0.0f && learning_rate <= 1.0f))
    return say("learning-rate", learning_rate, "must be greater than 0 and at most 1");
  if (!(foreground_threshold > 0.0f && foreground_threshold <= kMaxForegroundThreshold))
    return say("foreground-threshold", foreground_threshold, "must be greater than 0 and at most ",
               kMaxForegroundThreshold);
  if (!(min_sigma > 0.0f && min_sigma <= kMaxMinSigma))
    return say("min-sigma", min_sigma, "must be greater than 0 and at most ", kMaxMinSigma);
  if (warmup_frames < 0 || warmup_frames > kMaxWarmupFrames)
    return say("warmup-frames", warmup_frames, "must be between 0 and ", kMaxWarmupFrames);
  // Named apart from block-size, the element's SSD window of method block.
  if (absorb_delay < 0 || absorb_delay > kMaxAbsorbDelay)
    return say("absorb-delay", absorb_delay, "must be between 0 and ", kMaxAbsorbDelay);
  if (morph_radius < 0 || morph_radius > kMaxMorphRadius)
    return say("morph-radius", morph_radius, "must be between 0 and ", kMaxMorphRadius);
  if (lr_tolerance < -1 || lr_tolerance > max_disparity)
    return say("lr-tolerance", lr_tolerance, "must be -1 (the method's default) or between 0 and max-disparity");
  if (match_block_size < kMinMatchBlockSize || match_block_size > kMaxMatchBlockSize || match_block_size % 2 == 0)
    return say("block-size", match_block_size, "must be odd and between ", kMinMatchBlockSize, " and ",
               kMaxMatchBlockSize);
  if (cross_tau < 0 || cross_tau > kMaxCrossTau)
    return say("cross-tau", cross_tau, "must be between 0 and ", kMaxCrossTau);
  if (cross_arm_length < 1 || cross_arm_length > kMaxCrossArm)
    return say("cross-arm-length", cross_arm_length, "must be between 1 and ", kMaxCrossArm);
  if (cross_truncation < 1 || cross_truncation > kMaxCrossTruncation)
    return say("cross-truncation", cross_truncation, "must be between 1 and ", kMaxCrossTruncation);
  if (cross_census_weight < 0 || cross_census_weight > kMaxCrossCensusWeight)
    return say("cross-census-weight", cross_census_weight, "must be between 0 and ", kMaxCrossCensusWeight);
  if (cross_vote_arm_length < 1 || cross_vote_arm_length > kMaxCrossArm)
    return say("cross-vote-arm-length", cross_vote_arm_length, "must be between 1 and ", kMaxCrossArm);
  if (sample_restore < 1 || sample_restore > kMaxSampleRestore)
    return say("sample-restore", sample_restore, "must be 1 (off), 2 or ", kMaxSampleRestore);
  if (uniqueness_ratio < -1 || uniqueness_ratio > kMaxUniquenessRatio)
    return say("uniqueness-ratio", uniqueness_ratio,
               "must be -1 (the method's default), 0 (off) or a percentage up to ", kMaxUniquenessRatio);
  return {};
}

std::string Params::validate_for_size(int width, int height) const {
  std::string e = validate();
  if (!e.empty()) return e;
  if (width < kMinViewWidth || height < kMinViewHeight) {
    std::ostringstream s;
    s << "the view size (" << width << "x" << height << ") must be at least " << kMinViewWidth << "x"
      << kMinViewHeight;
    return s.str();
  }
  if (rectification && (rectification->width != width || rectification->height != height)) {
    std::ostringstream s;
    s << "the rectification maps are for " << rectification->width << "x" << rectification->height
      << " views, these are " << width << "x" << height;
    return s.str();
  }
  if (max_disparity > width) {
    std::ostringstream s;
    s << "max-disparity (" << max_disparity << ") must not exceed the view width (" << width << ")";
    return s.str();
  }
  if (levels > 0) {
    const int cw = width >> (levels - 1), ch = height >> (levels - 1);
    if (cw < kMinLevelSize || ch < kMinLevelSize) {
      std::ostringstream s;
      s << "levels (" << levels << ") would make the coarsest level " << cw << "x" << ch << ", smaller than "
        << kMinLevelSize << " pixels on a side, for a " << width << "x" << height << " view";
      return s.str();
    }
  }
  return {};
}

static Range asked_range(const Params& p, int level, int level_width);

int resolve_levels(const Params& p, int width, int height) {
  if (p.levels > 0) {
    // Never more than the size allows, even if validation was skipped.
    int n = 1;
    while (n < p.levels && (width >> n) >= kMinLevelSize && (height >> n) >= kMinLevelSize) ++n;
    return n;
  }
  int n = 1;
  for (;;) {
    const int l = n - 1;
    const Range r = asked_range(p, l, 1 << 30);
    const int64_t pixels = static_cast<int64_t>(width >> l) * (height >> l);
    if (r.hi - r.lo <= kAutoCoarseRange && pixels <= kAutoCoarsePixels && pixels * (r.hi - r.lo) <= kAutoCoarseWork)
      break;
    if (n >= kMaxLevels) break;
    if ((width >> n) < kMinLevelSize || (height >> n) < kMinLevelSize) break;
    ++n;
  }
  return n;
}

int pipeline_levels(const Params& p, int width, int height) {
  if (p.method != Method::Progressive) return 1;
  return resolve_levels(p, width, height);
}

int resolve_uniqueness_ratio(const Params& p) {
  if (p.uniqueness_ratio >= 0) return p.uniqueness_ratio;
  return p.method == Method::Block ? kBlockUniquenessRatio : 0;
}

int resolve_lr_tolerance(const Params& p) {
  if (p.lr_tolerance >= 0) return p.lr_tolerance;
  return p.method == Method::Cross ? kCrossLrTolerance : kDefaultLrTolerance;
}

static Range asked_range(const Params& p, int level, int level_width) {
  Range r;
  r.lo = p.min_disparity >> level;
  r.hi = (p.max_disparity + (1 << level) - 1) >> level;
  if (r.hi > level_width) r.hi = level_width;
  return r;
}

Range level_range(const Params& p, int level, int level_width) {
  Range r = asked_range(p, level, level_width);
  if (level > 0 && p.coarse_range_factor > 1) {
    const int64_t hi = (static_cast<int64_t>(p.max_disparity) * p.coarse_range_factor + (1 << level) - 1) >> level;
    r.hi = static_cast<int>(std::min<int64_t>(hi, level_width));
  }
  return r;
}

namespace {

// 1 - (1 - a)^kBackgroundTurns in Q16 for a rate a a frame in Q16, rounded
// at each product (a power of two: squared log2(kBackgroundTurns) times).
int32_t rate_over_turns(int32_t a_q16) {
  int64_t keep = 65536 - a_q16;
  for (int i = 1; i < kBackgroundTurns; i *= 2) keep = (keep * keep + 32768) >> 16;
  return static_cast<int32_t>(65536 - keep);
}

}  // namespace

BackgroundParams background_params(const Params& p) {
  BackgroundParams bp;
  const long a = std::lround(static_cast<double>(p.learning_rate) * 65536.0);
  bp.alpha_q16 = static_cast<int32_t>(a < 1 ? 1 : (a > 65536 ? 65536 : a));
  bp.turn_alpha_q16 = rate_over_turns(bp.alpha_q16);
  bp.absorb_alpha_q16 = std::max<int32_t>(bp.alpha_q16 >> 2, 1);
  bp.absorb_turn_alpha_q16 = rate_over_turns(bp.absorb_alpha_q16);
  bp.k_q8 = static_cast<int32_t>(std::lround(static_cast<double>(p.foreground_threshold) * 256.0));
  bp.sigma_min_q4 = static_cast<int32_t>(std::lround(static_cast<double>(p.min_sigma) * 16.0));
  bp.absorb_delay = p.absorb_delay;
  bp.warmup_frames = p.warmup_frames;
  return bp;
}

ElasParams elas_params(const Params& p, Range range) {
  ElasParams e;
  e.support.min_disparity = range.lo;
  e.support.max_disparity = range.hi;
  e.uniqueness_ratio = resolve_uniqueness_ratio(p);
  e.lr_check = p.lr_check;
  e.lr_threshold = resolve_lr_tolerance(p);
  e.fill_all = p.elas_fill_gaps;
  return e;
}

}  // namespace cs
