// ELAS's descriptors and support points on the GPU (cuda/elas_support_gpu.h)
// against the CPU reference (common/elas_support.cpp, E1 and E2), bit for
// bit: E1's descriptors, every byte, read from grey sub-views whose
// surroundings hold other values (a read past the view's border instead of
// clamping shows); E2's grid after c (the candidates), after d and after e,
// step by step and as one enqueue; the whole chain from grey views against
// elas_support_points. On rendered scenes at many sizes (1920x1080, odd
// ones, down to 1x1, one row, one column), min-disparity 0 and > 0,
// max-disparity 16 .. 1000 and beyond the width, candidate steps 5, 3 and
// 1, random and box masks, flat and black frames, ratios 85 and 100, and
// descriptors drawn to tie often with a ratio of 200 (ties then pass the
// ratio test, so the tie rules decide the winners); the removal rules on
// random grids with other windows and distances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "elas_support.h"
#include "elas_support_gpu.h"
#include "gpu_test_util.h"
#include "stages.h"
#include "synthetic.h"
#include "test_scenes.h"

namespace cs::cuda::test {
namespace {

// ---------------------------------------------------------------- helpers

// A view's descriptors in the device layout: byte k of the descriptor is
// byte k of the uint4 in memory (both machines little-endian).
Image<uint4> words_of(const Image<ElasDescriptor>& d) {
  Image<uint4> out(d.width, d.height);
  for (size_t i = 0; i < d.pixels.size(); ++i) std::memcpy(&out.pixels[i], d.pixels[i].data(), 16);
  return out;
}
ElasDescriptor bytes_of(const uint4& u) {
  ElasDescriptor d;
  std::memcpy(d.data(), &u, 16);
  return d;
}

std::string bytes_text(const ElasDescriptor& d) {
  std::ostringstream s;
  for (int k = 0; k < 16; ++k) s << (k ? " " : "[") << +d[k];
  s << "]";
  return s.str();
}

// Waits for the legacy stream's copies (a copy from pageable memory may
// return before its DMA is done) before a non-blocking stream reads them.
void settle() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess); }

// A grey view on the device as the inside of a larger image whose margin
// holds other values.
constexpr int kMarginX = 5, kMarginY = 3;
struct DeviceSubView {
  DeviceImage<uint8_t> store;
  ImageView<const uint8_t> view;
};
DeviceSubView upload_inside(const Image<uint8_t>& img) {
  Image<uint8_t> big(img.width + 2 * kMarginX, img.height + 2 * kMarginY);
  for (int y = 0; y < big.height; ++y)
    for (int x = 0; x < big.width; ++x) big.at(x, y) = static_cast<uint8_t>((x * 37 + y * 101) ^ 0x5A);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) big.at(x + kMarginX, y + kMarginY) = img.at(x, y);
  DeviceSubView d;
  d.store = upload(big);
  const ImageView<uint8_t>& v = d.store.view();
  d.view = {v.data + kMarginY * v.pitch + kMarginX, img.width, img.height, v.pitch};
  return d;
}

::testing::AssertionResult same_descriptors(const Image<ElasDescriptor>& want, const Image<uint4>& got) {
  if (want.width != got.width || want.height != got.height)
    return ::testing::AssertionFailure() << "size " << got.width << "x" << got.height << " != expected " << want.width
                                         << "x" << want.height;
  size_t diffs = 0;
  std::ostringstream first;
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x) {
      const ElasDescriptor g = bytes_of(got.at(x, y)), &e = want.at(x, y);
      if (g == e) continue;
      if (diffs < 4) {
        int k = 0;
        while (g[k] == e[k]) ++k;
        first << "\n  pixel (" << x << ", " << y << "), first at byte " << k << " (" << (k < 12 ? "du" : "dv")
              << "): expected " << bytes_text(e) << ", got " << bytes_text(g);
      }
      ++diffs;
    }
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diffs << " of " << want.pixels.size() << " descriptors differ:"
                                       << first.str();
}

int support_cells(const Image<int16_t>& g) {
  return static_cast<int>(std::count_if(g.pixels.begin(), g.pixels.end(), [](int16_t d) { return d >= 0; }));
}

// Grids compared cell by cell; the first differing cells with the pixel
// each stands for (s = candidate_step).
::testing::AssertionResult same_grid(const Image<int16_t>& want, const Image<int16_t>& got, int s) {
  if (want.width != got.width || want.height != got.height)
    return ::testing::AssertionFailure() << "grid " << got.width << "x" << got.height << " != expected " << want.width
                                         << "x" << want.height;
  size_t diffs = 0;
  std::ostringstream first;
  for (int j = 0; j < want.height; ++j)
    for (int i = 0; i < want.width; ++i)
      if (want.at(i, j) != got.at(i, j)) {
        if (diffs < 5)
          first << "\n  cell (" << i << ", " << j << ") = pixel (" << s * i << ", " << s * j << "): expected "
                << want.at(i, j) << ", got " << got.at(i, j);
        ++diffs;
      }
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diffs << " of " << want.pixels.size() << " cells differ (expected "
                                       << support_cells(want) << " with a disparity, got " << support_cells(got)
                                       << "):" << first.str();
}

std::string describe(const ElasSupportParams& p, const char* mask) {
  std::ostringstream s;
  s << "step " << p.candidate_step << ", d in [" << p.min_disparity << ", " << p.max_disparity << "), ratio "
    << p.support_ratio_pct << "%, lr " << p.lr_threshold << ", texture " << p.support_texture << ", incon "
    << p.incon_window << "/" << p.incon_threshold << "/" << p.incon_min_support << ", redun " << p.redun_max_dist
    << "/" << p.redun_threshold << ", mask " << mask;
  return s.str();
}

ElasSupportParams params(int step, int min_d, int max_d, int ratio) {
  ElasSupportParams p;
  p.candidate_step = step;
  p.min_disparity = min_d;
  p.max_disparity = max_d;
  p.support_ratio_pct = ratio;
  return p;
}

Image<uint8_t> box_mask(int w, int h) {
  Image<uint8_t> m(w, h, 0);
  for (int y = h / 4; y < 3 * h / 4; ++y)
    for (int x = w / 4; x < 3 * w / 4; ++x) m.at(x, y) = 255;
  return m;
}

class ElasSupportGpu : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess); }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // E1 on the GPU from a sub-view of `grey`, downloaded.
  Image<uint4> gpu_descriptors(const Image<uint8_t>& grey) {
    const DeviceSubView in = upload_inside(grey);
    DeviceImage<uint4> out = make_device<uint4>(grey.width, grey.height);
    settle();
    EXPECT_EQ(enqueue_elas_descriptors(in.view, out.view(), stream_), cudaSuccess);
    return download(out);
  }

  // Both views' descriptors against the reference; the reference's in dl, dr.
  void check_descriptors(const Image<uint8_t>& left, const Image<uint8_t>& right, Image<ElasDescriptor>* dl,
                         Image<ElasDescriptor>* dr) {
    elas_view_descriptors(left, *dl);
    elas_view_descriptors(right, *dr);
    EXPECT_TRUE(same_descriptors(*dl, gpu_descriptors(left))) << "E1 descriptors of the left view";
    EXPECT_TRUE(same_descriptors(*dr, gpu_descriptors(right))) << "E1 descriptors of the right view";
  }

  // How many cells the reference gives a disparity after c and after e.
  struct Kept {
    int candidates = 0, points = 0;
  };
  // E2 from the reference's descriptors (so that E2 is judged apart from
  // E1): the grid after c, d and e against the reference's, step by step,
  // then a .. e as one enqueue.
  Kept check_support(const Image<ElasDescriptor>& dl, const Image<ElasDescriptor>& dr, const Image<uint8_t>* mask,
                    const ElasSupportParams& p) {
    ElasDisparityGrid cpu;
    elas_candidates(dl, dr, p, cpu, mask);
    const Image<int16_t> after_c = cpu.d;
    elas_remove_inconsistent(p, cpu);
    const Image<int16_t> after_d = cpu.d;
    elas_remove_redundant(p, cpu);
    const Image<int16_t>& after_e = cpu.d;

    const int gw = elas_grid_cells(dl.width, p.candidate_step), gh = elas_grid_cells(dl.height, p.candidate_step);
    EXPECT_EQ(gw, after_c.width);
    EXPECT_EQ(gh, after_c.height);
    const DeviceImage<uint4> l = upload(words_of(dl)), r = upload(words_of(dr));
    DeviceImage<uint8_t> m;
    if (mask) m = upload(*mask);
    const ImageView<const uint8_t> mask_view = mask ? m.cview() : ImageView<const uint8_t>{};
    DeviceImage<int16_t> candidates = make_device<int16_t>(gw, gh), grid = make_device<int16_t>(gw, gh);
    settle();
    const int s = std::max(1, p.candidate_step);
    EXPECT_EQ(enqueue_elas_candidates(l.cview(), r.cview(), mask_view, p, candidates.view(), stream_), cudaSuccess);
    EXPECT_TRUE(same_grid(after_c, download(candidates), s)) << "E2 a..c: the candidates";
    EXPECT_EQ(enqueue_elas_remove_inconsistent(candidates.cview(), p, grid.view(), stream_), cudaSuccess);
    EXPECT_TRUE(same_grid(after_d, download(grid), s)) << "E2 d: inconsistent candidates removed";
    EXPECT_TRUE(same_grid(after_c, download(candidates), s)) << "E2 d changed the candidates it reads";
    EXPECT_EQ(enqueue_elas_remove_redundant(p, grid.view(), stream_), cudaSuccess);
    EXPECT_TRUE(same_grid(after_e, download(grid), s)) << "E2 e: redundant candidates removed";

    DeviceImage<int16_t> grid2 = make_device<int16_t>(gw, gh), scratch2 = make_device<int16_t>(gw, gh);
    EXPECT_EQ(enqueue_elas_support(l.cview(), r.cview(), mask_view, p, grid2.view(), scratch2.view(), stream_),
              cudaSuccess);
    EXPECT_TRUE(same_grid(after_e, download(grid2), s)) << "E2 a..e in one enqueue: the grid";
    EXPECT_TRUE(same_grid(after_c, download(scratch2), s)) << "E2 a..e in one enqueue: the scratch (candidates)";
    return {support_cells(after_c), support_cells(after_e)};
  }

  // A scene's descriptors (E1), then E2 under each run's parameters and
  // mask: none, random blobs (test_scenes::random_mask) or a centred box.
  struct Run {
    ElasSupportParams p;
    const char* mask;  // "none", "random", "box"
    bool expect_points;
  };
  void check_scene(const std::string& name, const Image<uint8_t>& left, const Image<uint8_t>& right,
                   const std::vector<Run>& runs) {
    SCOPED_TRACE(name + " " + std::to_string(left.width) + "x" + std::to_string(left.height));
    Image<ElasDescriptor> dl, dr;
    check_descriptors(left, right, &dl, &dr);
    const Image<uint8_t> random = test_scenes::random_mask(left.width, left.height, 91);
    const Image<uint8_t> box = box_mask(left.width, left.height);
    for (const Run& run : runs) {
      SCOPED_TRACE(describe(run.p, run.mask));
      const std::string m = run.mask;
      const Image<uint8_t>* mask = m == "random" ? &random : m == "box" ? &box : nullptr;
      const int points = check_support(dl, dr, mask, run.p).points;
      if (run.expect_points) {
        EXPECT_GT(points, 0) << "the reference keeps no support point: nothing was compared";
      }
      if (::testing::Test::HasFailure()) return;
    }
  }

  cudaStream_t stream_ = nullptr;
};

// ---------------------------------------------------------------- E1

TEST_F(ElasSupportGpu, DescriptorsMatchReference) {
  struct Size {
    int w, h;
  };
  // Whole tiles, odd sizes, sizes below the tile and below the descriptor's
  // reach (every read clamped), one row, one column.
  for (const Size s : {Size{1920, 1080}, Size{641, 479}, Size{64, 64}, Size{33, 31}, Size{16, 16}, Size{7, 3},
                       Size{3, 7}, Size{2, 2}, Size{1, 1}, Size{1, 50}, Size{50, 1}, Size{31, 1}, Size{1, 33}}) {
    SCOPED_TRACE(::testing::Message() << s.w << "x" << s.h);
    // Noise of the whole range: the gradients saturate at 0 and 255 too.
    const Image<uint8_t> noise = random_gray(s.w, s.h, 7 + s.w * 31 + s.h);
    Image<ElasDescriptor> want;
    elas_view_descriptors(noise, want);
    EXPECT_TRUE(same_descriptors(want, gpu_descriptors(noise))) << "E1 descriptors of noise";
  }
  const SyntheticPair scene = make_step_pair(1920, 1080, 20, 60, 3);
  const Image<uint8_t> l = grey_of(scene.left_rgba);
  Image<ElasDescriptor> want;
  elas_view_descriptors(l, want);
  EXPECT_TRUE(same_descriptors(want, gpu_descriptors(l))) << "E1 descriptors of a rendered step scene";
  for (uint8_t v : {0, 128, 255}) {
    SCOPED_TRACE(::testing::Message() << "flat " << +v);
    const Image<uint8_t> flat(45, 23, v);
    elas_view_descriptors(flat, want);
    EXPECT_TRUE(same_descriptors(want, gpu_descriptors(flat))) << "E1 descriptors of a flat frame";
  }
}

// ---------------------------------------------------------------- E2

TEST_F(ElasSupportGpu, SupportOnFullHdStepScene) {
  const SyntheticPair pair = make_step_pair(1920, 1080, 20, 60, 1);
  check_scene("step", grey_of(pair.left_rgba), grey_of(pair.right_rgba),
              {{params(5, 0, 64, 85), "none", true},
               {params(5, 16, 256, 100), "random", true},
               {params(3, 0, 64, 85), "box", true}});
}

TEST_F(ElasSupportGpu, SupportOnPlaneAndSlantedScenes) {
  {
    const SyntheticPair pair = make_plane_pair(641, 479, 17, 2);
    check_scene("plane at 17", grey_of(pair.left_rgba), grey_of(pair.right_rgba),
                {{params(5, 0, 256, 85), "none", true},
                 {params(3, 0, 1000, 100), "none", true},  // beyond the width
                 {params(1, 0, 16, 85), "none", false},    // the plane beyond the range
                 {params(5, 10, 64, 85), "box", true},
                 {params(1, 5, 40, 100), "random", true}});
  }
  {
    const SyntheticPair pair = make_slanted_pair(333, 200, 8.0f, 0.12f, 4);
    check_scene("slanted", grey_of(pair.left_rgba), grey_of(pair.right_rgba),
                {{params(1, 0, 64, 85), "none", true},
                 {params(3, 3, 64, 100), "random", true},
                 {params(5, 0, 1000, 85), "none", true}});
  }
}

// Flat patches (ties everywhere) and repeated stripes (near rivals).
TEST_F(ElasSupportGpu, SupportOnStructuredScene) {
  Image<uint8_t> l, r;
  test_scenes::structured_pair(203, 131, 9, 5, &l, &r);
  ElasSupportParams tight = params(1, 2, 16, 85);
  tight.lr_threshold = 0;
  check_scene("structured", l, r,
              {{params(1, 0, 64, 85), "none", true},
               {params(3, 0, 64, 100), "random", true},
               {params(5, 0, 256, 200), "none", true},
               {tight, "box", false}});
}

// Every step, range and mask on a small step scene (odd size).
TEST_F(ElasSupportGpu, SupportOverStepsRangesAndMasks) {
  const SyntheticPair pair = make_step_pair(97, 61, 6, 19, 8);
  std::vector<Run> runs;
  for (int step : {5, 3, 1})
    for (int max_d : {16, 64, 256, 1000})
      for (int min_d : {0, 4})
        for (int ratio : {85, 100})
          for (const char* mask : {"none", "random", "box"})
            runs.push_back({params(step, min_d, max_d, ratio), mask, false});
  // A range that is empty (min above max - 1) and ranges too small for a
  // rival.
  runs.push_back({params(3, 20, 16, 85), "none", false});
  runs.push_back({params(1, 0, 2, 85), "none", false});
  runs.push_back({params(1, 7, 9, 85), "none", false});
  check_scene("step", grey_of(pair.left_rgba), grey_of(pair.right_rgba), runs);
}

// Views too small for a candidate (or for a rival) on every side; the grid
// is still written, all -1.
TEST_F(ElasSupportGpu, SupportOnTinyFrames) {
  struct Size {
    int w, h;
  };
  for (const Size s : {Size{16, 16}, Size{7, 3}, Size{1, 1}, Size{1, 50}, Size{50, 1}, Size{8, 8}, Size{9, 9},
                       Size{11, 6}, Size{6, 11}, Size{13, 13}}) {
    const Image<uint8_t> l = random_gray(s.w, s.h, 100 + s.w), r = random_gray(s.w, s.h, 200 + s.h);
    std::vector<Run> runs;
    for (int step : {5, 3, 1})
      for (int max_d : {16, 1000})
        for (int min_d : {0, 2}) runs.push_back({params(step, min_d, max_d, 100), "none", false});
    runs.push_back({params(1, 0, 16, 100), "random", false});
    check_scene("noise", l, r, runs);
  }
  {
    const SyntheticPair pair = make_plane_pair(16, 16, 3, 9);
    check_scene("plane 16x16", grey_of(pair.left_rgba), grey_of(pair.right_rgba),
                {{params(1, 0, 16, 85), "none", false}, {params(3, 0, 64, 100), "none", false}});
  }
}

TEST_F(ElasSupportGpu, FlatAndBlackFramesHaveNoSupport) {
  for (uint8_t v : {0, 128}) {
    SCOPED_TRACE(::testing::Message() << "value " << +v);
    const Image<uint8_t> flat(64, 40, v);
    Image<ElasDescriptor> dl, dr;
    check_descriptors(flat, flat, &dl, &dr);
    for (int step : {5, 1}) {
      const ElasSupportParams p = params(step, 0, 16, 85);
      SCOPED_TRACE(describe(p, "none"));
      EXPECT_EQ(check_support(dl, dr, nullptr, p).candidates, 0);
    }
  }
}

// Descriptors drawn near 128 so that costs tie often; ratio 200 lets a tie
// (or a near tie) pass the ratio test, so the winner's tie rule (the
// smaller d) and the rival's exclusion of the winner's neighbours decide.
// The right view is the left shifted by `shift` with some bytes nudged (a
// true match among ties), or independent noise (ties alone).
void tie_prone_pair(int w, int h, int shift, uint32_t seed, Image<ElasDescriptor>* left,
                    Image<ElasDescriptor>* right) {
  std::mt19937 rng(seed);
  auto draw = [&]() {
    ElasDescriptor d;
    for (auto& b : d) b = static_cast<uint8_t>(rng() % 4 ? 128 : 127 + rng() % 3);
    return d;
  };
  *left = Image<ElasDescriptor>(w, h);
  *right = Image<ElasDescriptor>(w, h);
  for (auto& d : left->pixels) d = draw();
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (shift < 0 || x + shift >= w) {
        right->at(x, y) = draw();
        continue;
      }
      ElasDescriptor d = left->at(x + shift, y);
      if (rng() % 3 == 0) d[rng() % 16] ^= 1;
      right->at(x, y) = d;
    }
}

// Candidates (after c) whose least cost is also reached at a d at least 2
// away: kept only through a ratio above 100, their d set by the tie rule.
int tied_candidates(const Image<ElasDescriptor>& dl, const Image<ElasDescriptor>& dr, const ElasSupportParams& p) {
  ElasDisparityGrid g;
  elas_candidates(dl, dr, p, g);
  const int s = std::max(1, p.candidate_step);
  int tied = 0;
  for (int j = 0; j < g.d.height; ++j)
    for (int i = 0; i < g.d.width; ++i) {
      const int d1 = g.d.at(i, j);
      if (d1 < 0) continue;
      const int x = s * i, y = s * j, c1 = elas_support_cost(dl, dr, x, y, d1, false);
      for (int d = p.min_disparity; d <= std::min(p.max_disparity - 1, x - 2); ++d)
        if (std::abs(d - d1) >= 2 && elas_support_cost(dl, dr, x, y, d, false) == c1) {
          ++tied;
          break;
        }
    }
  return tied;
}

TEST_F(ElasSupportGpu, TiesFollowTheReference) {
  int tied_winners = 0;  // candidates kept at ratio 200 whose cost equals their rival's
  for (int shift : {-1, 7}) {
    for (int step : {1, 3}) {
      Image<ElasDescriptor> dl, dr;
      tie_prone_pair(150, 41, shift, 11 + step, &dl, &dr);
      for (int max_d : {16, 64, 256})
        for (int ratio : {100, 200})
          for (int lr : {0, 2}) {
            ElasSupportParams p = params(step, max_d == 64 ? 3 : 0, max_d, ratio);
            p.support_texture = 0;
            p.lr_threshold = lr;
            SCOPED_TRACE(::testing::Message() << "shift " << shift << ", " << describe(p, "none"));
            check_support(dl, dr, nullptr, p);
            if (::testing::Test::HasFailure()) return;
            if (ratio == 200) tied_winners += tied_candidates(dl, dr, p);
          }
    }
  }
  EXPECT_GT(tied_winners, 0) << "no candidate won a tie: the tie rules were not exercised";
}

// E2 d and e alone, each on the same grids, with other windows,
// thresholds and distances than the defaults: random clusters of near
// disparities with holes, a constant grid (every cell similar: removals
// chain along whole lines) and a repeating ramp. Distances 32 and 33: the
// last the warp's scan takes and the first that a single lane scans.
TEST_F(ElasSupportGpu, RemovalRulesOnGrids) {
  struct Size {
    int w, h;
  };
  int seed = 0;
  for (const Size s : {Size{97, 53}, Size{384, 216}, Size{1, 40}, Size{40, 1}, Size{1, 1}, Size{5, 3}, Size{64, 33}})
    for (const char* kind : {"random", "constant", "ramp"}) {
      std::mt19937 rng(++seed);
      Image<int16_t> cells(s.w, s.h);
      for (int j = 0; j < s.h; ++j)
        for (int i = 0; i < s.w; ++i) {
          int d = 7;
          if (kind[0] == 'r' && kind[1] == 'a')
            d = (i + 2 * j) % 5;
          else if (kind[0] == 'r')
            d = rng() % 4 == 0 ? -1 : static_cast<int>(10 + rng() % 4 + (rng() % 8 == 0 ? 20 : 0));
          cells.at(i, j) = static_cast<int16_t>(d);
        }
      const DeviceImage<int16_t> in = upload(cells);
      for (int window : {5, 3, 7, 1})
        for (int max_dist : {5, 1, 0, 2, 32, 33}) {
          ElasSupportParams p;
          p.incon_window = window;
          p.incon_threshold = window == 3 ? 2 : 5;
          p.incon_min_support = window == 7 ? 9 : (window == 1 ? 0 : 5);
          p.redun_max_dist = max_dist;
          p.redun_threshold = max_dist == 2 ? 0 : 1;
          SCOPED_TRACE(::testing::Message() << kind << " grid " << s.w << "x" << s.h << ", " << describe(p, "none"));
          ElasDisparityGrid inconsistent{cells}, redundant{cells};
          elas_remove_inconsistent(p, inconsistent);
          elas_remove_redundant(p, redundant);
          DeviceImage<int16_t> grid = make_device<int16_t>(s.w, s.h), lines = upload(cells);
          settle();
          ASSERT_EQ(enqueue_elas_remove_inconsistent(in.cview(), p, grid.view(), stream_), cudaSuccess);
          EXPECT_TRUE(same_grid(inconsistent.d, download(grid), 1)) << "E2 d: inconsistent candidates removed";
          ASSERT_EQ(enqueue_elas_remove_redundant(p, lines.view(), stream_), cudaSuccess);
          EXPECT_TRUE(same_grid(redundant.d, download(lines), 1)) << "E2 e: redundant candidates removed";
          if (::testing::Test::HasFailure()) return;
        }
    }
}

// The chain as an engine runs it: both views' descriptors and a .. e on one
// stream with no wait between them, against elas_support_points.
TEST_F(ElasSupportGpu, ChainFromGreyViewsMatchesSupportPoints) {
  struct Case {
    const char* name;
    SyntheticPair pair;
    ElasSupportParams p;
  };
  const Case cases[] = {{"step 1920x1080", make_step_pair(1920, 1080, 20, 60, 6), params(5, 0, 128, 85)},
                        {"plane 641x479", make_plane_pair(641, 479, 40, 7), params(5, 8, 256, 85)},
                        {"slanted 160x97", make_slanted_pair(160, 97, 8.0f, 0.12f, 2), params(3, 0, 64, 100)}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + ", " + describe(c.p, "none"));
    const Image<uint8_t> l = grey_of(c.pair.left_rgba), r = grey_of(c.pair.right_rgba);
    const std::vector<ElasSupportPoint> want = elas_support_points(l, r, c.p);
    EXPECT_FALSE(want.empty());
    const int w = l.width, h = l.height;
    const int gw = elas_grid_cells(w, c.p.candidate_step), gh = elas_grid_cells(h, c.p.candidate_step);
    const DeviceSubView dl = upload_inside(l), dr = upload_inside(r);
    DeviceImage<uint4> descl = make_device<uint4>(w, h), descr = make_device<uint4>(w, h);
    DeviceImage<int16_t> grid = make_device<int16_t>(gw, gh), scratch = make_device<int16_t>(gw, gh);
    settle();
    ASSERT_EQ(enqueue_elas_descriptors(dl.view, descl.view(), stream_), cudaSuccess);
    ASSERT_EQ(enqueue_elas_descriptors(dr.view, descr.view(), stream_), cudaSuccess);
    ASSERT_EQ(enqueue_elas_support(descl.cview(), descr.cview(), {}, c.p, grid.view(), scratch.view(), stream_),
              cudaSuccess);
    const Image<int16_t> g = download(grid);
    std::vector<ElasSupportPoint> got;
    for (int j = 0; j < gh; ++j)
      for (int i = 0; i < gw; ++i)
        if (g.at(i, j) >= 0) got.push_back({c.p.candidate_step * i, c.p.candidate_step * j, g.at(i, j)});
    ASSERT_EQ(want.size(), got.size()) << "support points";
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_TRUE(want[k].x == got[k].x && want[k].y == got[k].y && want[k].d == got[k].d)
          << "support point " << k << ": expected (" << want[k].x << ", " << want[k].y << ", d " << want[k].d
          << "), got (" << got[k].x << ", " << got[k].y << ", d " << got[k].d << ")";
  }
}

// Wrong sizes and layouts are refused before anything runs.
TEST_F(ElasSupportGpu, RefusesViewsThatDoNotFit) {
  const int w = 40, h = 30;
  DeviceImage<uint8_t> grey = make_device<uint8_t>(w, h);
  DeviceImage<uint4> dl = make_device<uint4>(w, h), dr = make_device<uint4>(w, h), small = make_device<uint4>(w - 1, h);
  const ElasSupportParams p = params(5, 0, 16, 85);
  DeviceImage<int16_t> grid = make_device<int16_t>(8, 6), scratch = make_device<int16_t>(8, 6),
                       wrong = make_device<int16_t>(7, 6);
  EXPECT_EQ(enqueue_elas_descriptors(grey.cview(), small.view(), stream_), cudaErrorInvalidValue);
  ImageView<uint4> unaligned = dl.view();
  unaligned.data = reinterpret_cast<uint4*>(reinterpret_cast<char*>(unaligned.data) + 4);
  unaligned.width = w - 1;
  EXPECT_EQ(enqueue_elas_descriptors({grey.view().data, w - 1, h, grey.view().pitch}, unaligned, stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(enqueue_elas_support(dl.cview(), small.cview(), {}, p, grid.view(), scratch.view(), stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(enqueue_elas_support(dl.cview(), dr.cview(), {}, p, wrong.view(), scratch.view(), stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(enqueue_elas_support(dl.cview(), dr.cview(), {}, p, grid.view(), grid.view(), stream_),
            cudaErrorInvalidValue);
  ElasSupportParams negative = p;
  negative.min_disparity = -1;
  EXPECT_EQ(enqueue_elas_support(dl.cview(), dr.cview(), {}, negative, grid.view(), scratch.view(), stream_),
            cudaErrorInvalidValue);
  EXPECT_EQ(enqueue_elas_support(dl.cview(), dr.cview(), {}, p, grid.view(), scratch.view(), stream_), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

}  // namespace
}  // namespace cs::cuda::test
