#include <algorithm>
// Parameter validation, level count and per-level search range.
#include <cmath>
#include <sstream>

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

// Limits beyond which a value is certainly a mistake. The Q4 output (d * 16
// in 16 bits) bounds the disparity.
constexpr int kMaxDisparityLimit = 4096;
constexpr int kMaxSubwindowRadius = 8;
constexpr int kMaxHoleRadius = 16;
constexpr int kMaxMorphRadius = 8;
constexpr int kMaxWarmup = 1000000;

template <typename T>
std::string say(const char* name, T value, const char* rule) {
  std::ostringstream s;
  s << name << " (" << value << ") " << rule;
  return s.str();
}

bool window_variant_known(WindowVariant w) {
  return w == WindowVariant::Box || w == WindowVariant::Best1 || w == WindowVariant::Best2 ||
         w == WindowVariant::Best4;
}

bool method_known(Method m) { return m == Method::Progressive || m == Method::Block; }

}  // namespace

std::string Params::validate() const {
  if (!method_known(method))
    return say("method", static_cast<int>(method), "must be 0 (progressive) or 1 (block)");
  if (min_disparity < 0) return say("min-disparity", min_disparity, "must not be negative");
  if (max_disparity <= min_disparity) {
    std::ostringstream s;
    s << "max-disparity (" << max_disparity << ") must be greater than min-disparity (" << min_disparity << ")";
    return s.str();
  }
  if (max_disparity > kMaxDisparityLimit)
    return say("max-disparity", max_disparity, "must not exceed 4096");
  if (levels < 0 || levels > kMaxLevels)
    return say("levels", levels, "must be between 0 (automatic) and 8");
  if (subwindow_radius < 0 || subwindow_radius > kMaxSubwindowRadius)
    return say("subwindow-radius", subwindow_radius, "must be between 0 and 8");
  if (!window_variant_known(window))
    return say("window", static_cast<int>(window), "must be 0 (box), 1, 2 or 4 best sub-windows");
  if (hole_search_radius < 0 || hole_search_radius > kMaxHoleRadius)
    return say("hole-search-radius", hole_search_radius, "must be between 0 and 16");
  if (hole_span < 0 || hole_span > kMaxHoleSpan)
    return say("hole-span", hole_span, "must be between 0 (no bound) and 4096");
  if (coarse_range_factor < kAutoCoarseRangeFactor || coarse_range_factor > kMaxCoarseRangeFactor)
    return say("coarse-range-factor", coarse_range_factor,
               "must be between 0 (automatic) and 16 (1: the asked range at every level)");
  if (min_support < 0 || min_support > 8)
    return say("min-support", min_support, "must be between 0 (off) and 8");
  if (!(learning_rate > 0.0f && learning_rate <= 1.0f))
    return say("learning-rate", learning_rate, "must be greater than 0 and at most 1");
  if (!(foreground_threshold > 0.0f && foreground_threshold <= 100.0f))
    return say("foreground-threshold", foreground_threshold, "must be greater than 0 and at most 100");
  if (!(min_sigma > 0.0f && min_sigma <= 128.0f))
    return say("min-sigma", min_sigma, "must be greater than 0 and at most 128");
  if (warmup_frames < 0 || warmup_frames > kMaxWarmup)
    return say("warmup-frames", warmup_frames, "must be between 0 and 1000000");
  // Named apart from block-size, the element's SSD window of method block.
  if (absorb_delay < 0 || absorb_delay > kMaxAbsorbDelay)
    return say("absorb-delay", absorb_delay, "must be between 0 and 126");
  if (morph_radius < 0 || morph_radius > kMaxMorphRadius)
    return say("morph-radius", morph_radius, "must be between 0 and 8");
  if (lr_tolerance < 0 || lr_tolerance > max_disparity)
    return say("lr-tolerance", lr_tolerance, "must be between 0 and max-disparity");
  if (match_block_size < 3 || match_block_size > kMaxMatchBlockSize || match_block_size % 2 == 0)
    return say("block-size", match_block_size, "must be odd and between 3 and 31");
  if (uniqueness_ratio < -1 || uniqueness_ratio > kMaxUniquenessRatio)
    return say("uniqueness-ratio", uniqueness_ratio,
               "must be -1 (the method's default), 0 (off) or a percentage up to 1000");
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
  if (p.method == Method::Block) return 1;
  return resolve_levels(p, width, height);
}

int resolve_uniqueness_ratio(const Params& p) {
  if (p.uniqueness_ratio >= 0) return p.uniqueness_ratio;
  return p.method == Method::Block ? kBlockUniquenessRatio : 0;
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

BackgroundParams background_params(const Params& p) {
  BackgroundParams bp;
  const long a = std::lround(static_cast<double>(p.learning_rate) * 65536.0);
  bp.alpha_q16 = static_cast<int32_t>(a < 1 ? 1 : (a > 65536 ? 65536 : a));
  // 1 - (1 - a)^kBackgroundTurns in Q16, rounded at each product.
  int64_t keep = 65536 - bp.alpha_q16;
  for (int i = 1; i < kBackgroundTurns; i *= 2) keep = (keep * keep + 32768) >> 16;
  static_assert(kBackgroundTurns == 4, "the product above squares twice");
  bp.turn_alpha_q16 = static_cast<int32_t>(65536 - keep);
  bp.absorb_alpha_q16 = std::max<int32_t>(bp.alpha_q16 >> 2, 1);
  bp.k_q8 = static_cast<int32_t>(std::lround(static_cast<double>(p.foreground_threshold) * 256.0));
  bp.sigma_min_q4 = static_cast<int32_t>(std::lround(static_cast<double>(p.min_sigma) * 16.0));
  bp.absorb_delay = p.absorb_delay;
  bp.warmup_frames = p.warmup_frames;
  return bp;
}

}  // namespace cs
