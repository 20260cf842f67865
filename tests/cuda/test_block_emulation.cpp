// Method block's kernel code (cuda/block_tile.h) run on the CPU, phase by
// phase and thread by thread in the order of block_match_kernel's barriers,
// against the CPU reference (common/block_matching.cpp): the index
// arithmetic, borders, slabs, shared-memory bounds and key packing are
// checked here without a GPU; tests/cuda/test_block.cpp checks the same on
// one. Each phase also runs with its threads in reverse order: a result
// that depended on the order of threads between two barriers would differ.
// Shared memory is poisoned before each block, so a read of something no
// phase wrote shows as a difference.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

#include "block_tile.h"
#include "stages.h"
#include "test_scenes.h"

namespace cs::cuda {
namespace {

// A host image with padded rows (pitch > row), poisoned padding.
template <typename T>
struct Pitched {
  int width = 0, height = 0, pitch_elems = 0;
  std::vector<T> data;
  Pitched(int w, int h, T fill, int pad = 3) : width(w), height(h), pitch_elems(w + pad), data(static_cast<size_t>(w + pad) * h, fill) {}
  explicit Pitched(const Image<T>& img, int pad = 5) : Pitched(img.width, img.height, T(), pad) {
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) data[static_cast<size_t>(y) * pitch_elems + x] = img.at(x, y);
  }
  ImageView<T> view() { return {data.data(), width, height, static_cast<std::ptrdiff_t>(pitch_elems * sizeof(T))}; }
  ImageView<const T> cview() { return {data.data(), width, height, static_cast<std::ptrdiff_t>(pitch_elems * sizeof(T))}; }
  Image<T> image() const {
    Image<T> out(width, height);
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) out.at(x, y) = data[static_cast<size_t>(y) * pitch_elems + x];
    return out;
  }
};

template <typename T>
::testing::AssertionResult same(const Image<T>& want, const Image<T>& got) {
  if (want.width != got.width || want.height != got.height) return ::testing::AssertionFailure() << "sizes differ";
  size_t diffs = 0;
  std::ostringstream first;
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      if (want.at(x, y) != got.at(x, y)) {
        if (diffs++ == 0) first << "first at (" << x << ", " << y << "): want " << +want.at(x, y) << ", got " << +got.at(x, y);
      }
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diffs << " pixels differ, " << first.str();
}

template <int kTileW>
void emulate_match(const BlockTileArgs& a, bool reverse) {
  const int w = a.gray_left.width, h = a.gray_left.height;
  auto sh = std::make_unique<BlockTileShared<kTileW>>();
  auto each = [&](auto&& f) {
    if (reverse)
      for (int tid = kTileW - 1; tid >= 0; --tid) f(tid);
    else
      for (int tid = 0; tid < kTileW; ++tid) f(tid);
  };
  for (int by = 0; by < (h + a.rows - 1) / a.rows; ++by)
    for (int bx = 0; bx < (w + kTileW - 1) / kTileW; ++bx) {
      std::memset(sh.get(), 0xA5, sizeof(*sh));
      BlockTile<kTileW> t(a, *sh, bx, by);
      if (t.slabs == 0) {
        each([&](int tid) { t.write_empty(tid); });
        continue;
      }
      each([&](int tid) { t.clear_keys(tid); });
      for (int s = 0; s < t.slabs; ++s) {
        t.begin_slab(s);
        each([&](int tid) { t.init_box(tid); });
        for (int y = t.y0; y < t.y1; ++y) {
          if (y > t.y0) each([&](int tid) { t.update_box(tid, y); });
          // One phase on the GPU: sweep, fold the previous row, stage the next rows.
          each([&](int tid) {
            t.sweep(tid, y);
            if (y > t.y0) t.fold_keys(tid, y - 1);
            if (y + 1 < t.y1) t.stage_rows(tid, y);
          });
        }
        each([&](int tid) { t.fold_keys(tid, t.y1 - 1); });
      }
    }
}

struct Case {
  std::string name;
  Image<uint8_t> left, right;
  Image<uint8_t> mask_left, mask_right;  // empty: no masks
  Range range;
  int block_size;
};

struct Emulated {
  Image<int16_t> disparity, right;
  Image<int32_t> best, rival, below, above;
};

Emulated run_emulation(const Case& c, int tile_width, int rows, bool reverse) {
  const int w = c.left.width, h = c.left.height;
  Pitched<uint8_t> gl(c.left), gr(c.right, 9);
  const bool masks = c.mask_left.width > 0;
  Pitched<uint8_t> ml(masks ? c.mask_left : Image<uint8_t>(1, 1)), mr(masks ? c.mask_right : Image<uint8_t>(1, 1));
  Pitched<int16_t> disparity(w, h, 0x5A5A), right(w, h, 0x5A5A);
  Pitched<int32_t> best(w, h, 0x5A5A5A5A), rival(w, h, 0x5A5A5A5A), below(w, h, 0x5A5A5A5A), above(w, h, 0x5A5A5A5A);
  Pitched<unsigned long long> keys(w, h, kNoRightKey);
  std::vector<SweepWinner> state(static_cast<size_t>(w) * h);
  // A poisoned state: the first slab must not read it.
  std::memset(static_cast<void*>(state.data()), 0x5A, state.size() * sizeof(SweepWinner));
  BlockTileArgs a{};
  a.gray_left = gl.cview();
  a.gray_right = gr.cview();
  if (masks) {
    a.mask_left = ml.cview();
    a.mask_right = mr.cview();
  }
  a.left = {disparity.view(), best.view(), rival.view(), below.view(), above.view()};
  a.right_keys = keys.view();
  a.state = state.data();
  a.lo = std::max(c.range.lo, 0);
  a.hi = std::min(c.range.hi, w);
  a.radius = c.block_size / 2;
  a.rows = rows;
  if (tile_width == 64)
    emulate_match<64>(a, reverse);
  else
    emulate_match<128>(a, reverse);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) block_resolve_pixel(keys.view(), right.view(), x, y);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) EXPECT_EQ(keys.data[static_cast<size_t>(y) * keys.pitch_elems + x], kNoRightKey);
  return {disparity.image(), right.image(), best.image(), rival.image(), below.image(), above.image()};
}

void expect_matches_reference(const Case& c, int tile_width, int rows, bool reverse) {
  SCOPED_TRACE(::testing::Message() << c.name << ", tile " << tile_width << "x" << rows << (reverse ? ", reversed" : ""));
  const bool masks = c.mask_left.width > 0;
  BlockWinners want;
  Image<int16_t> want_right;
  block_match(c.left, c.right, masks ? &c.mask_left : nullptr, masks ? &c.mask_right : nullptr, c.range, c.block_size,
              want, want_right);
  const Emulated got = run_emulation(c, tile_width, rows, reverse);
  EXPECT_TRUE(same(want.disparity, got.disparity)) << "left disparity";
  EXPECT_TRUE(same(want.best, got.best)) << "best";
  EXPECT_TRUE(same(want.rival, got.rival)) << "rival";
  EXPECT_TRUE(same(want.below, got.below)) << "below";
  EXPECT_TRUE(same(want.above, got.above)) << "above";
  EXPECT_TRUE(same(want_right, got.right)) << "right disparity";
}

using test_scenes::random_gray;
using test_scenes::random_mask;
using test_scenes::structured_pair;

}  // namespace

TEST(BlockEmulation, RandomViewsEveryTileAndBlockSize) {
  const int w = 141, h = 53;
  Case c;
  c.left = random_gray(w, h, 1);
  c.right = random_gray(w, h, 2);
  for (int block : {3, 9, 31}) {
    c.block_size = block;
    c.range = {0, 40};  // two slabs
    c.name = "random, block " + std::to_string(block);
    for (int tile_width : {64, 128})
      for (int rows : {8, 16, 32, 64}) expect_matches_reference(c, tile_width, rows, false);
  }
}

TEST(BlockEmulation, StructuredPairsRangesAndOddSizes) {
  struct Shape {
    int w, h, shift;
    Range range;
    int block;
  };
  const Shape shapes[] = {
      {97, 61, 7, {0, 20}, 5},     // one slab
      {130, 45, 12, {3, 67}, 7},   // min-disparity, three slabs (the last short)
      {77, 33, 30, {28, 77}, 11},  // the range up to the width; tiles left of it have no candidates
      {200, 19, 40, {0, 96}, 15},  // block taller than a tile of 8 rows
      {65, 70, 5, {1, 33}, 3},     // a width one past a 64-column tile
      {129, 17, 9, {32, 65}, 31},  // a slab exactly at 32
  };
  for (const Shape& s : shapes) {
    Case c;
    structured_pair(s.w, s.h, s.shift, s.w * 7 + s.h, &c.left, &c.right);
    c.range = s.range;
    c.block_size = s.block;
    c.name = std::to_string(s.w) + "x" + std::to_string(s.h) + " block " + std::to_string(s.block);
    for (int tile_width : {64, 128})
      for (int rows : {8, 32}) expect_matches_reference(c, tile_width, rows, false);
    expect_matches_reference(c, 64, 16, true);
  }
}

TEST(BlockEmulation, MasksAndReversedThreadOrder) {
  const int w = 150, h = 41;
  Case c;
  structured_pair(w, h, 11, 3, &c.left, &c.right);
  c.mask_left = random_mask(w, h, 4);
  c.mask_right = random_mask(w, h, 5);
  c.range = {2, 70};
  c.name = "masks";
  for (int block : {5, 13}) {
    c.block_size = block;
    for (int tile_width : {64, 128})
      for (bool reverse : {false, true}) expect_matches_reference(c, tile_width, 16, reverse);
  }
  // All background: no winners anywhere.
  c.mask_left = Image<uint8_t>(w, h, 0);
  c.block_size = 9;
  expect_matches_reference(c, 128, 8, false);
}

// B3, stage 8, B4 and the confidence of block_finish_pixel against the
// reference's apply_uniqueness, cross_check, finish_block_disparity and
// block_confidence, on the reference's winners.
TEST(BlockEmulation, FinishEqualsTheReferenceStages) {
  const int w = 123, h = 47;
  Image<uint8_t> left, right;
  structured_pair(w, h, 9, 8, &left, &right);
  const Image<uint8_t> mask = random_mask(w, h, 9);
  for (Range range : {Range{0, 48}, Range{4, 40}})
    for (int ratio : {0, 80, 300})
      for (bool check : {false, true})
        for (bool subpixel : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "range " << range.lo << ".." << range.hi << " ratio " << ratio
                                            << (check ? " check" : "") << (subpixel ? " subpixel" : ""));
          BlockWinners win;
          Image<int16_t> right_map;
          block_match(left, right, nullptr, nullptr, range, 7, win, right_map);
          Image<int16_t> unique = win.disparity;
          apply_uniqueness(win, ratio, unique);
          Image<int16_t> final_left = unique, final_right = right_map;
          if (check) cross_check(final_left, final_right, 1);
          Image<uint16_t> q4(w, h);
          finish_block_disparity(win, final_left, range, subpixel, q4.view());
          Image<uint8_t> conf;
          block_confidence(win, final_left, conf);

          Pitched<int16_t> d(win.disparity), r(right_map);
          Pitched<int32_t> best(win.best), rival(win.rival), below(win.below), above(win.above);
          Pitched<uint8_t> m(mask);
          Pitched<int16_t> got_unique(w, h, 0x5A5A), got_final(w, h, 0x5A5A);
          Pitched<uint16_t> got_q4(w, h, 0x5A5A);
          Pitched<uint8_t> got_conf(w, h, 0x5A);
          BlockFinishMaps v;
          v.winners = {d.cview(), best.cview(), rival.cview(), below.cview(), above.cview()};
          if (check) v.right = r.cview();
          v.mask = m.cview();
          v.unique = got_unique.view();
          v.final_map = got_final.view();
          v.disparity_q4 = got_q4.view();
          v.confidence = got_conf.view();
          BlockFinishParams p;
          p.range = range;
          p.uniqueness_ratio = ratio;
          p.tolerance = 1;
          p.subpixel = subpixel;
          long valid = 0, fg = 0, want_valid = 0, want_fg = 0;
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
              bool f = false;
              valid += block_finish_pixel(v, p, x, y, &f);
              fg += f;
              want_valid += final_left.at(x, y) >= 0;
              want_fg += mask.at(x, y) != 0;
            }
          EXPECT_TRUE(same(unique, got_unique.image())) << "after uniqueness";
          EXPECT_TRUE(same(final_left, got_final.image())) << "after the check";
          EXPECT_TRUE(same(q4, got_q4.image())) << "Q4";
          EXPECT_TRUE(same(conf, got_conf.image())) << "confidence";
          EXPECT_EQ(valid, want_valid);
          EXPECT_EQ(fg, want_fg);
        }
}

}  // namespace cs::cuda
