// cs-refine-work: how much of the refinement's work a real frame needs
// (issue 15: refinement is 76 % of a 1080p frame on the H100). CPU reference
// only, no GPU.
//
// The CUDA refine kernel (cuda/match_refine.cu, phased::refine_kernel) computes,
// for each tile of kTileW x rows pixels, the window costs of every disparity
// in the union of its pixels' evaluation intervals over the whole tile. A
// pixel needs only its own interval (stages.h refine_level: [2d - 2, 2d + 3)
// from a valid parent, a bounded span for a hole; one more on each side with
// sub-pixel). This program runs the reference on a real pair at a size and
// range, rebuilds every pixel's interval at each refined level from the
// coarser level's final map exactly as the reference does, and reports per
// level: pixels, disparities the pixels need, disparities x pixels the
// tiles compute, their ratio, and the ratio with the margins each tile
// streams besides its own pixels (kMargin = 7 columns on each side, 5 rows
// above and below), for tiles of half, equal and twice the height (--rows)
// and any width (--tile-w; the kernel's is 50).
//
// A second table gives, per refined level and view, how the tiles' needed
// sets (narrow pixels only, as the kernel marks them; --rows high) are
// spread: mean, median, 90th percentile and largest. With one wave of blocks
// a level takes as long as its slowest tiles.
//
// The last line is a crude cost model in pixel-disparity evaluations: the
// coarsest level's full search (its pixels x its range, one cost volume for
// both views) plus every refined level's tile work with margins (both views,
// --rows high tiles), for comparing rules (--coarse-range-factor F) against
// GPU times.
//
//   cs-refine-work LEFT RIGHT [--size WxH] [--disparities D] [--tile-w W] [--rows R] [--slots N]
//                  [--coarse-range-factor F|auto]
// (auto: Params::coarse_range_factor = 0, the second frame after the first
// one's probe)
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "area_resize.h"
#include "matcher_debug.h"
#include "stereo.h"
#include "stages.h"
#include "synthetic.h"

using namespace cs;

namespace {

struct Interval {
  int lo = 0, hi = 0;  // evaluation interval [lo, hi); empty when lo >= hi
};

// Every pixel's evaluation interval at a refined level: refine_level's
// candidates (stages.h refined_candidates) plus, in the left view, sub-pixel's
// neighbours.
std::vector<Interval> intervals(const Image<int16_t>& coarser, int w, int h, Range range, const Params& p, bool left) {
  std::vector<Interval> out(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int lo, hi;
      if (!refined_candidates(coarser, left ? Reference::Left : Reference::Right, x, y, w, range,
                              p.hole_search_radius, p.hole_span, &lo, &hi) ||
          lo >= hi)
        continue;
      if (p.subpixel && left) {  // sub-pixel is the left view's (the right view's interval is its candidates)
        lo = std::max(lo - 1, range.lo);
        hi = std::min(hi + 1, range.hi);
      }
      out[static_cast<size_t>(y) * w + x] = {lo, hi};
    }
  return out;
}

struct Work {
  double needed = 0, computed = 0;
};

// Union work of tiles tw x th.
Work tile_work(const std::vector<Interval>& iv, int w, int h, int tw, int th) {
  Work k;
  for (int y0 = 0; y0 < h; y0 += th)
    for (int x0 = 0; x0 < w; x0 += tw) {
      std::vector<Interval> px;
      for (int y = y0; y < std::min(y0 + th, h); ++y)
        for (int x = x0; x < std::min(x0 + tw, w); ++x) {
          const Interval& i = iv[static_cast<size_t>(y) * w + x];
          if (i.lo < i.hi) px.push_back(i);
        }
      const double area = static_cast<double>(std::min(tw, w - x0)) * std::min(th, h - y0);
      if (px.empty()) continue;
      int lo = INT_MAX, hi = INT_MIN;
      for (const Interval& i : px) {
        k.needed += i.hi - i.lo;
        lo = std::min(lo, i.lo);
        hi = std::max(hi, i.hi);
      }
      // The kernel marks the disparities any pixel needs (a set, not a span).
      std::vector<char> mark(hi - lo, 0);
      for (const Interval& i : px)
        for (int d = i.lo; d < i.hi; ++d) mark[d - lo] = 1;
      int set = 0;
      for (char m : mark) set += m;
      k.computed += set * area;
    }
  return k;
}

// The kernel's kWideWidth: a pixel with a wider evaluation interval goes to
// the wide list, not into its tile's needed set.
constexpr int kWideWidth = 24;

// The size of each tile's needed set as the kernel marks it, tiles in
// row-major order (0 for a tile with no narrow pixel): pixels whose
// evaluation interval is wider than `wide_width` (the kernel's kWideWidth)
// go to the wide list instead and are left out.
std::vector<int> tile_sets(const std::vector<Interval>& iv, int w, int h, int tw, int th, int wide_width) {
  std::vector<int> out;
  for (int y0 = 0; y0 < h; y0 += th)
    for (int x0 = 0; x0 < w; x0 += tw) {
      std::vector<char> mark;
      int set = 0;
      for (int y = y0; y < std::min(y0 + th, h); ++y)
        for (int x = x0; x < std::min(x0 + tw, w); ++x) {
          const Interval& i = iv[static_cast<size_t>(y) * w + x];
          if (i.lo >= i.hi || i.hi - i.lo > wide_width) continue;
          if (mark.size() < static_cast<size_t>(i.hi)) mark.resize(i.hi, 0);
          for (int d = i.lo; d < i.hi; ++d)
            if (!mark[d]) {
              mark[d] = 1;
              ++set;
            }
        }
      out.push_back(set);
    }
  return out;
}

// The non-empty tiles' sets, ascending.
std::vector<int> tile_unions(const std::vector<Interval>& iv, int w, int h, int tw, int th, int wide_width) {
  std::vector<int> out;
  for (int n : tile_sets(iv, w, h, tw, th, wide_width))
    if (n > 0) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

// One cost volume for the refinement: stages.h makes the right view's
// window at (x, y, d) the left view's at (x + d, y, d), so a left tile's S
// planes of disparity d could serve the right pixels whose candidate d puts
// their window on the tile's columns. For every left tile this measures the
// needed set it would stream then (its own narrow pixels' set and those
// right disparities) against what the two views' tiles stream apart now, and
// the band of right columns whose pixels it would serve.
struct SharedVolume {
  double apart = 0, shared = 0;  // sum over tiles of needed-set sizes
  std::vector<int> bands;        // right columns a tile serves (max - min + 1), tiles that serve any
  double straddle = 0, right_pixels = 0;  // right pixels whose candidates fall on two tiles
};

SharedVolume shared_volume(const std::vector<Interval>& left, const std::vector<Interval>& right, int w, int h, int tw,
                           int th, int wide_width) {
  SharedVolume r;
  for (int n : tile_sets(left, w, h, tw, th, wide_width)) r.apart += n;
  for (int n : tile_sets(right, w, h, tw, th, wide_width)) r.apart += n;
  const int tiles_x = (w + tw - 1) / tw;
  for (int y0 = 0; y0 < h; y0 += th) {
    std::vector<std::vector<char>> mark(tiles_x);
    std::vector<int> band_lo(tiles_x, INT_MAX), band_hi(tiles_x, INT_MIN);
    auto add = [&](int t, int d) {
      if (mark[t].size() < static_cast<size_t>(d + 1)) mark[t].resize(d + 1, 0);
      mark[t][d] = 1;
    };
    for (int y = y0; y < std::min(y0 + th, h); ++y)
      for (int x = 0; x < w; ++x) {
        const Interval& l = left[static_cast<size_t>(y) * w + x];
        if (l.lo < l.hi && l.hi - l.lo <= wide_width)
          for (int d = l.lo; d < l.hi; ++d) add(x / tw, d);
        const Interval& c = right[static_cast<size_t>(y) * w + x];
        if (c.lo >= c.hi || c.hi - c.lo > wide_width) continue;
        r.right_pixels += 1;
        if ((x + c.lo) / tw != (x + c.hi - 1) / tw) r.straddle += 1;
        for (int d = c.lo; d < c.hi; ++d) {
          const int t = (x + d) / tw;  // admissible: x + d < w
          add(t, d);
          band_lo[t] = std::min(band_lo[t], x);
          band_hi[t] = std::max(band_hi[t], x);
        }
      }
    for (int t = 0; t < tiles_x; ++t) {
      for (char m : mark[t]) r.shared += m;
      if (band_lo[t] <= band_hi[t]) r.bands.push_back(band_hi[t] - band_lo[t] + 1);
    }
  }
  std::sort(r.bands.begin(), r.bands.end());
  return r;
}

// A launch's time in a crude model: each block costs its needed set times
// the row steps of a pass (tile rows plus 14 margin and warm-up rows), and
// a grid takes at least its work over the GPU's block slots and at least
// its slowest block. Measured, the slowest-block bound does not hold: the
// blocks an SM holds share its issue slots, so a heavy tile speeds up when
// the light ones end. Splitting heavy tiles as this model advised gave
// nothing on the H100 (bench/RESULTS.md, seventh session; branch
// i15-split-tiles): read its "pairs split" column as an upper bound.
double grid_time(const std::vector<double>& blocks, int slots) {
  double sum = 0, most = 0;
  for (double b : blocks) {
    sum += b;
    most = std::max(most, b);
  }
  return std::max(sum / slots, most);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: cs-refine-work LEFT RIGHT [--size WxH] [--disparities D] [--tile-w W] [--rows R]"
                 " [--coarse-range-factor F] [--slots N]\n");
    return 2;
  }
  int width = 1920, height = 1080, disparities = 128, tile_w = 50, rows = 32, factor = kDefaultCoarseRangeFactor;
  int slots = 528;  // the H100's block slots for the register-capped 24-row refine kernel (4 an SM)
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size")) std::sscanf(argv[i + 1], "%dx%d", &width, &height);
    else if (!std::strcmp(argv[i], "--disparities")) disparities = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tile-w")) tile_w = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows")) rows = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--slots")) slots = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--coarse-range-factor"))
      factor = std::strcmp(argv[i + 1], "auto") ? std::atoi(argv[i + 1]) : 0;
  }
  Image<uint8_t> gl, gr;
  for (auto [path, img] : {std::pair<const char*, Image<uint8_t>*>{argv[1], &gl}, {argv[2], &gr}}) {
    const std::string e = tools::read_grey(path, *img);
    if (!e.empty()) {
      std::fprintf(stderr, "cs-refine-work: %s\n", e.c_str());
      return 1;
    }
    *img = tools::area_resize(*img, width, height);
  }
  Image<uint16_t> q4(width, height);
  Outputs o;
  o.disparity_q4 = q4.view();
  auto run = [&](Matcher& m) {
    const std::string e = m.process(gray_view(gl), gray_view(gr), o);
    if (!e.empty()) std::fprintf(stderr, "cs-refine-work: %s\n", e.c_str());
    return e.empty();
  };
  Params p;
  p.max_disparity = disparities;
  // --coarse-range-factor auto: Params::coarse_range_factor = 0 (stages.h
  // 6b). The first frame probes; the second, reported, uses the factor.
  std::string chosen;
  const bool automatic = factor == 0;
  if (automatic) chosen = " automatic";
  p.coarse_range_factor = factor;
  if (const std::string bad = p.validate(); !bad.empty()) {
    std::fprintf(stderr, "cs-refine-work: %s\n", bad.c_str());
    return 2;
  }
  Matcher m(p);
  if (!run(m)) return 1;
  if (automatic) {
    if (!run(m)) return 1;
    factor = m.stats().coarse_range_factor;
  }
  const Matcher::Debug& dbg = m.debug();
  std::printf("%dx%d x %d, coarse-range factor %d, %zu levels, tiles %d wide\n\n", width, height, disparities, factor,
              dbg.levels.size(), tile_w);
  // Every refined level's evaluation intervals, both views, for the tables below.
  struct LevelIntervals {
    int w = 0, h = 0;
    std::vector<Interval> view[2];
  };
  std::vector<LevelIntervals> levels(dbg.levels.size() - 1);
  for (size_t l = 0; l + 1 < dbg.levels.size(); ++l) {
    const LevelDebug& L = dbg.levels[l];
    const LevelDebug& C = dbg.levels[l + 1];
    levels[l].w = L.census_left.width;
    levels[l].h = L.census_left.height;
    for (int v = 0; v < 2; ++v)
      levels[l].view[v] = intervals(v == 0 ? C.disparity_left : C.disparity_right, levels[l].w, levels[l].h, L.range,
                                    p, v == 0);
  }
  double refine_model = 0;
  std::printf("| level | view | pixels | needed / pixel | tile rows | computed / needed | with margins |\n");
  std::printf("| ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t l = 0; l < levels.size(); ++l) {
    const int w = levels[l].w, h = levels[l].h;
    for (int v = 0; v < 2; ++v) {
      const std::vector<Interval>& iv = levels[l].view[v];
      for (int th : {rows / 2, rows, rows * 2}) {
        const Work k = tile_work(iv, w, h, tile_w, th);
        const double margins = (tile_w + 14.0) / tile_w * (th + 10.0) / th;
        std::printf("| %zu | %s | %d | %.2f | %d | %.2f | %.2f |\n", l, v == 0 ? "left" : "right", w * h,
                    k.needed / (static_cast<double>(w) * h), th, k.computed / k.needed, k.computed / k.needed * margins);
        if (th == rows) refine_model += k.computed * margins;
      }
    }
  }
  // How unequal the tiles are: with one wave of blocks (a small frame) a
  // level takes as long as its slowest tiles, the ones with the largest
  // needed sets.
  std::printf("\nNeeded set a tile (%d x %d, narrow pixels only: evaluation interval <= %d):\n\n", tile_w, rows,
              kWideWidth);
  std::printf("| level | view | tiles | mean | median | 90th pct | max | max / mean |\n");
  std::printf("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t l = 0; l < levels.size(); ++l) {
    for (int v = 0; v < 2; ++v) {
      const std::vector<int> u = tile_unions(levels[l].view[v], levels[l].w, levels[l].h, tile_w, rows, kWideWidth);
      if (u.empty()) continue;
      double mean = 0;
      for (int n : u) mean += n;
      mean /= static_cast<double>(u.size());
      std::printf("| %zu | %s | %zu | %.1f | %d | %d | %d | %.2f |\n", l, v == 0 ? "left" : "right", u.size(), mean,
                  u[u.size() / 2], u[u.size() * 9 / 10], u.back(), u.back() / mean);
    }
  }
  // Two ways to spread the largest tiles (issue 15), in the model of
  // grid_time, both views in one grid as the kernel runs them: tiles whose
  // set exceeds the threshold split their pairs over ceil(set / threshold)
  // blocks; or they are refined again, after the grid, as tiles of 8 rows
  // (their own, smaller sets) by a second launch.
  if (rows % 8 == 0) {
    std::printf("\nLevel time in the model (set x row steps; %d block slots), relative to %d-row tiles as now"
                " (an upper bound on the gain: splitting measured no faster on the H100, bench/RESULTS.md):\n\n",
                slots, rows);
    std::printf("| level | threshold | heavy tiles | pairs split | 8-row tiles again |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t l = 0; l < levels.size(); ++l) {
      const int w = levels[l].w, h = levels[l].h;
      const int tiles_x = (w + tile_w - 1) / tile_w, tiles_y = (h + rows - 1) / rows;
      std::vector<int> sets[2], subs[2];
      for (int v = 0; v < 2; ++v) {
        sets[v] = tile_sets(levels[l].view[v], w, h, tile_w, rows, kWideWidth);
        subs[v] = tile_sets(levels[l].view[v], w, h, tile_w, 8, kWideWidth);
      }
      const double steps = rows + 14.0, sub_steps = 8 + 14.0;
      std::vector<double> now;
      for (int v = 0; v < 2; ++v)
        for (int n : sets[v])
          if (n > 0) now.push_back(n * steps);
      const double base = grid_time(now, slots);
      for (int threshold : {24, 32, 48}) {
        std::vector<double> split, light, heavy;
        int count = 0;
        for (int v = 0; v < 2; ++v)
          for (int t = 0; t < tiles_x * tiles_y; ++t) {
            const int n = sets[v][t];
            if (n == 0) continue;
            if (n <= threshold) {
              split.push_back(n * steps);
              light.push_back(n * steps);
              continue;
            }
            ++count;
            const int k = (n + threshold - 1) / threshold;
            for (int i = 0; i < k; ++i) split.push_back((n + k - 1) / k * steps);
            const int tx = t % tiles_x, ty = t / tiles_x;
            for (int r = 0; r < rows / 8; ++r) {
              const int sy = ty * (rows / 8) + r;
              if (sy * 8 >= h) break;
              const int m = subs[v][static_cast<size_t>(sy) * tiles_x + tx];
              if (m > 0) heavy.push_back(m * sub_steps);
            }
          }
        const double retile = grid_time(light, slots) + (heavy.empty() ? 0.0 : grid_time(heavy, slots));
        std::printf("| %zu | %d | %d | %.2f | %.2f |\n", l, threshold, count, grid_time(split, slots) / base,
                    retile / base);
      }
    }
  }
  // One cost volume for the refinement (shared_volume).
  {
    std::printf("\nOne cost volume for the refinement: left tiles (%d x %d) streaming the right view's candidates"
                " too, needed sets summed over tiles (narrow pixels):\n\n",
                tile_w, rows);
    std::printf("| level | apart (both views' tiles) | shared (left tiles) | shared / apart | right pixels on two tiles |"
                " band of right columns a tile serves: median | 90th pct | max |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t l = 0; l < levels.size(); ++l) {
      const SharedVolume sv =
          shared_volume(levels[l].view[0], levels[l].view[1], levels[l].w, levels[l].h, tile_w, rows, kWideWidth);
      if (sv.bands.empty()) continue;
      std::printf("| %zu | %.0f | %.0f | %.2f | %.1f %% | %d | %d | %d |\n", l, sv.apart, sv.shared,
                  sv.shared / sv.apart, 100.0 * sv.straddle / std::max(sv.right_pixels, 1.0),
                  sv.bands[sv.bands.size() / 2], sv.bands[sv.bands.size() * 9 / 10], sv.bands.back());
    }
  }
  const LevelDebug& top = dbg.levels.back();
  const double coarsest = static_cast<double>(top.census_left.width) * top.census_left.height * (top.range.hi - top.range.lo);
  std::printf("\nmodel size=%dx%d D=%d factor=%d levels=%zu coarsest_mevals=%.1f refine_mevals=%.1f total_mevals=%.1f%s\n",
              width, height, disparities, factor, dbg.levels.size(), coarsest / 1e6, refine_model / 1e6,
              (coarsest + refine_model) / 1e6, chosen.c_str());
  return 0;
}
