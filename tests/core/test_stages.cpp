// Unit tests of every stage of stages.h against hand-computed values or an
// independent brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <string>

#include "frame_checks.h"
#include "stages.h"

using namespace cs;

namespace {

// Writes one RGB pixel into a packed layout named by its byte order.
void put_packed(uint8_t* px, const std::string& order, int r, int g, int b) {
  for (size_t i = 0; i < order.size(); ++i) {
    const char c = order[i];
    px[i] = c == 'R' ? r : c == 'G' ? g : c == 'B' ? b : 0x5a;
  }
}

struct Rgb {
  int r, g, b, luma;  // luma computed by hand with 77/150/29, +128, >> 8
};
const Rgb kPixels[6] = {{200, 100, 50, 124}, {0, 0, 0, 0},     {255, 255, 255, 255},
                        {10, 250, 30, 153},  {255, 0, 0, 77},  {0, 0, 255, 29}};

}  // namespace

TEST(Convert, EveryPackedFormatWithPitchedRows) {
  const struct {
    PixelFormat f;
    const char* order;
  } formats[] = {{PixelFormat::RGBA, "RGBA"}, {PixelFormat::BGRA, "BGRA"}, {PixelFormat::RGBx, "RGBx"},
                 {PixelFormat::BGRx, "BGRx"}, {PixelFormat::xRGB, "xRGB"}, {PixelFormat::xBGR, "xBGR"},
                 {PixelFormat::ARGB, "ARGB"}, {PixelFormat::ABGR, "ABGR"}, {PixelFormat::RGB, "RGB"},
                 {PixelFormat::BGR, "BGR"}};
  const int w = 3, h = 2;
  for (const auto& fm : formats) {
    const int bpp = static_cast<int>(std::strlen(fm.order));
    const int pitch = w * bpp + 7;  // padded rows
    std::vector<uint8_t> buf(pitch * h, 0xab);
    for (int i = 0; i < w * h; ++i)
      put_packed(&buf[(i / w) * pitch + (i % w) * bpp], fm.order, kPixels[i].r, kPixels[i].g, kPixels[i].b);
    FrameView v;
    v.format = fm.f;
    v.width = w;
    v.height = h;
    v.plane[0] = buf.data();
    v.pitch[0] = pitch;
    Image<uint8_t> gray;
    Image<uint32_t> rgb;
    convert_to_gray(v, gray);
    convert_to_rgb(v, rgb);
    ASSERT_EQ(gray.width, w);
    for (int i = 0; i < w * h; ++i) {
      EXPECT_EQ(gray.at(i % w, i / w), kPixels[i].luma) << pixel_format_name(fm.f) << " pixel " << i;
      const uint32_t want = kPixels[i].r | (kPixels[i].g << 8) | (kPixels[i].b << 16);
      EXPECT_EQ(rgb.at(i % w, i / w), want) << pixel_format_name(fm.f) << " pixel " << i;
    }
  }
}

TEST(Convert, Gray8) {
  const uint8_t buf[2 * 20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 0, 0, 0,
                               21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 0, 0, 0};
  FrameView v;
  v.format = PixelFormat::GRAY8;
  v.width = 17;
  v.height = 2;
  v.plane[0] = buf;
  v.pitch[0] = 20;
  Image<uint8_t> gray;
  Image<uint32_t> rgb;
  convert_to_gray(v, gray);
  convert_to_rgb(v, rgb);
  EXPECT_EQ(gray.at(16, 0), 17);
  EXPECT_EQ(gray.at(0, 1), 21);
  EXPECT_EQ(rgb.at(16, 1), 37u | (37u << 8) | (37u << 16));
}

// YUV values chosen so that rgb_from_yuv is easy by hand:
// (16,128,128) -> black; (235,128,128) -> white; (100,90,200) -> (213,54,21).
TEST(Convert, I420AndNV12OddSizeUseChromaAtHalfCoordinates) {
  const int w = 5, h = 3, cw = 3, ch = 2;
  const int ypitch = 8, cpitch = 4, uvpitch = 8;
  std::vector<uint8_t> Y(ypitch * h, 0), U(cpitch * ch, 0), V(cpitch * ch, 0), UV(uvpitch * ch, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) Y[y * ypitch + x] = 16;
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x) U[y * cpitch + x] = V[y * cpitch + x] = 128;
  Y[2 * ypitch + 4] = 100;  // (4, 2): chroma sample (2, 1)
  U[1 * cpitch + 2] = 90;
  V[1 * cpitch + 2] = 200;
  Y[0] = 235;
  for (int y = 0; y < ch; ++y)
    for (int x = 0; x < cw; ++x) {
      UV[y * uvpitch + 2 * x] = U[y * cpitch + x];
      UV[y * uvpitch + 2 * x + 1] = V[y * cpitch + x];
    }
  FrameView i420;
  i420.format = PixelFormat::I420;
  i420.width = w;
  i420.height = h;
  i420.plane[0] = Y.data();
  i420.plane[1] = U.data();
  i420.plane[2] = V.data();
  i420.pitch[0] = ypitch;
  i420.pitch[1] = i420.pitch[2] = cpitch;
  FrameView nv12 = i420;
  nv12.format = PixelFormat::NV12;
  nv12.plane[1] = UV.data();
  nv12.plane[2] = nullptr;
  nv12.pitch[1] = uvpitch;
  for (const FrameView& v : {i420, nv12}) {
    Image<uint8_t> gray;
    Image<uint32_t> rgb;
    convert_to_gray(v, gray);
    convert_to_rgb(v, rgb);
    EXPECT_EQ(gray.at(4, 2), 100);
    EXPECT_EQ(gray.at(0, 0), 235);
    EXPECT_EQ(rgb.at(4, 2), 213u | (54u << 8) | (21u << 16)) << pixel_format_name(v.format);
    EXPECT_EQ(rgb.at(0, 0), 255u | (255u << 8) | (255u << 16));
    EXPECT_EQ(rgb.at(1, 1), 0u);
  }
}

// Packed 4:2:2, odd width 5: three macropixels a row, the last one's second
// Y is padding (250, never read). Each row has chroma of its own. By hand
// with rgb_from_yuv: (235,128,128) -> white, (16,128,128) -> black,
// (100,90,200) -> (213,54,21), (16,90,200) -> (115,0,0),
// (235,90,200) -> (255,211,178), (60,200,70) -> (0,70,196),
// (16,200,70) -> (0,19,145).
TEST(Convert, Yuy2AndUyvyOddWidthTakeTheMacropixelsChroma) {
  const int w = 5, h = 2, pitch = 4 * 3 + 3;  // padded rows
  // Per row, per macropixel: Y0, U, Y1, V.
  const int kMacro[h][3][4] = {{{235, 128, 16, 128}, {100, 90, 16, 200}, {100, 90, 250, 200}},
                               {{235, 90, 100, 200}, {60, 200, 16, 70}, {16, 128, 250, 128}}};
  std::vector<uint8_t> yuy2(pitch * h, 0xEE), uyvy(pitch * h, 0xEE);
  for (int y = 0; y < h; ++y)
    for (int m = 0; m < 3; ++m) {
      const int* q = kMacro[y][m];
      uint8_t* a = &yuy2[y * pitch + 4 * m];
      uint8_t* b = &uyvy[y * pitch + 4 * m];
      a[0] = q[0], a[1] = q[1], a[2] = q[2], a[3] = q[3];
      b[0] = q[1], b[1] = q[0], b[2] = q[3], b[3] = q[2];
    }
  auto rgb_word = [](uint32_t r, uint32_t g, uint32_t b) { return r | (g << 8) | (b << 16); };
  const uint8_t want_gray[h][w] = {{235, 16, 100, 16, 100}, {235, 100, 60, 16, 16}};
  const uint32_t want_rgb[h][w] = {
      {rgb_word(255, 255, 255), 0u, rgb_word(213, 54, 21), rgb_word(115, 0, 0), rgb_word(213, 54, 21)},
      {rgb_word(255, 211, 178), rgb_word(213, 54, 21), rgb_word(0, 70, 196), rgb_word(0, 19, 145), 0u}};
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY}) {
    FrameView v;
    v.format = f;
    v.width = w;
    v.height = h;
    v.plane[0] = f == PixelFormat::YUY2 ? yuy2.data() : uyvy.data();
    v.pitch[0] = pitch;
    Image<uint8_t> gray;
    Image<uint32_t> rgb;
    convert_to_gray(v, gray);
    convert_to_rgb(v, rgb);
    // A row is ceil(5 / 2) whole macropixels; 2 * w bytes are too few.
    EXPECT_EQ(plane_shape(v).count, 1);
    EXPECT_EQ(plane_shape(v).row_bytes[0], 12);
    EXPECT_EQ(check_view_planes(v, "left"), "");
    FrameView short_rows = v;
    short_rows.pitch[0] = 2 * w;
    EXPECT_NE(check_view_planes(short_rows, "left"), "");
    ASSERT_EQ(gray.width, w);
    ASSERT_EQ(rgb.height, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        EXPECT_EQ(gray.at(x, y), want_gray[y][x]) << pixel_format_name(f) << " (" << x << ", " << y << ")";
        EXPECT_EQ(rgb.at(x, y), want_rgb[y][x]) << pixel_format_name(f) << " (" << x << ", " << y << ")";
      }
  }
}

TEST(Pyramid, OddSizesDropLastRowAndColumnAndRound) {
  Image<uint8_t> fine(5, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) fine.at(x, y) = static_cast<uint8_t>(x + 10 * y);
  fine.at(0, 0) = 1;
  fine.at(1, 0) = 2;
  fine.at(0, 1) = 3;
  fine.at(1, 1) = 5;  // (1 + 2 + 3 + 5 + 2) >> 2 = 3
  Image<uint8_t> coarse;
  downsample(fine, coarse);
  ASSERT_EQ(coarse.width, 2);
  ASSERT_EQ(coarse.height, 1);
  EXPECT_EQ(coarse.at(0, 0), 3);
  EXPECT_EQ(coarse.at(1, 0), (2 + 3 + 12 + 13 + 2) >> 2);

}

TEST(Pyramid, LevelRangeAndAutomaticLevels) {
  Params p;
  // The default is automatic (the engines choose per stream, stages.h 6b);
  // level_range itself reads 0 as 1: every level searches the asked range.
  EXPECT_EQ(p.coarse_range_factor, kAutoCoarseRangeFactor);
  EXPECT_EQ(level_range(p, 2, 1000).hi, (p.max_disparity + 3) / 4);
  p.coarse_range_factor = 2;
  p.min_disparity = 5;
  p.max_disparity = 256;
  EXPECT_EQ(level_range(p, 0, 1000).lo, 5);
  EXPECT_EQ(level_range(p, 0, 1000).hi, 256);
  EXPECT_EQ(level_range(p, 3, 1000).lo, 0);
  EXPECT_EQ(level_range(p, 3, 1000).hi, 64);  // coarse_range_factor 2: ceil(2 * 256 / 8)
  EXPECT_EQ(level_range(p, 3, 20).hi, 20);
  p.max_disparity = 250;
  EXPECT_EQ(level_range(p, 3, 1000).hi, 63);  // ceil(500 / 8)
  EXPECT_EQ(level_range(p, 0, 1000).hi, 250);  // level 0: the asked range
  p.coarse_range_factor = 1;
  EXPECT_EQ(level_range(p, 3, 1000).hi, 32);  // ceil(250 / 8)
  p.coarse_range_factor = 2;
  p.min_disparity = 0;
  p.max_disparity = 256;
  EXPECT_EQ(resolve_levels(p, 1282, 1110), 3);  // 256 / 4 = 64 = kAutoCoarseRange
  EXPECT_EQ(resolve_levels(p, 256, 40), 2);     // 40 >> 2 = 10 < kMinLevelSize
  p.max_disparity = 128;
  EXPECT_EQ(resolve_levels(p, 641, 555), 2);    // Aloe half: 320x277 x 64
  EXPECT_EQ(resolve_levels(p, 1024, 768), 3);   // 512x384 x 64 = 12.6 M > kAutoCoarseWork: 256x192 x 32
  EXPECT_EQ(resolve_levels(p, 1280, 720), 3);   // 640x360 x 64 = 14.7 M: 320x180 x 32
  EXPECT_EQ(resolve_levels(p, 1920, 1080), 3);  // 960x540 > kAutoCoarsePixels: 480x270 x 32
  EXPECT_EQ(resolve_levels(p, 720, 576), 2);    // 360x288 x 64 = 6.6 M
  EXPECT_EQ(resolve_levels(p, 768, 576), 3);    // 384x288 x 64 = 7.1 M > kAutoCoarseWork: 192x144 x 32
  EXPECT_EQ(resolve_levels(p, 800, 600), 3);    // 400x300 x 64 = 7.7 M: 200x150 x 32
  p.max_disparity = 64;
  EXPECT_EQ(resolve_levels(p, 640, 480), 2);    // range fits, 640x480 > kAutoCoarsePixels
  EXPECT_EQ(resolve_levels(p, 416, 256), 1);    // exactly kAutoCoarseWork (6.5 Mi)
  EXPECT_EQ(resolve_levels(p, 417, 256), 2);
  EXPECT_EQ(resolve_levels(p, 512, 256), 2);
  EXPECT_EQ(resolve_levels(p, 384, 384), 2);    // kAutoCoarsePixels, but 9.4 M > kAutoCoarseWork
  EXPECT_EQ(resolve_levels(p, 512, 384), 2);    // 196 k > kAutoCoarsePixels (and 12.6 M)
  EXPECT_EQ(resolve_levels(p, 1024, 768), 3);   // 512x384 > kAutoCoarsePixels: 256x192 x 16
  EXPECT_EQ(resolve_levels(p, 800, 600), 2);    // 400x300 x 32 = 3.8 M
  EXPECT_EQ(resolve_levels(p, 1280, 720), 3);   // 640x360 > kAutoCoarsePixels: 320x180 x 16
  EXPECT_EQ(resolve_levels(p, 3840, 2160), 4);  // 960x540 x 16 = 8.3 M, but 960x540 > kAutoCoarsePixels: 480x270 x 8
  p.max_disparity = 32;
  EXPECT_EQ(resolve_levels(p, 1920, 1080), 3);  // likewise: 480x270 x 8
  p.max_disparity = 16;
  EXPECT_EQ(resolve_levels(p, 384, 384), 1);    // exactly kAutoCoarsePixels, 2.4 M
  EXPECT_EQ(resolve_levels(p, 385, 384), 2);
  EXPECT_EQ(resolve_levels(p, 512, 512), 2);
  p.max_disparity = 32;
  EXPECT_EQ(resolve_levels(p, 320, 240), 1);
  p.levels = 3;
  EXPECT_EQ(resolve_levels(p, 640, 480), 3);
}

TEST(Census, RowMajorBitsAndClampedBorders) {
  Image<uint8_t> g(5, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) g.at(x, y) = static_cast<uint8_t>(x + 5 * y);
  Image<uint32_t> c;
  census_transform(g, c);
  // Centre 12: exactly the neighbours before it in row-major order are darker.
  EXPECT_EQ(c.at(2, 2), 0xfffu);
  EXPECT_EQ(c.at(0, 0), 0u);  // the darkest pixel; clamped reads equal it
  // (4, 4): reads clamped to x = 4 and y = 4 at once equal the centre (8 of
  // them, those with i >= 2 and j >= 2); the other 16 are darker.
  uint32_t want = 0;
  int bit = 0;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) {
      if (i == 2 && j == 2) continue;
      if (!(i >= 2 && j >= 2)) want |= 1u << bit;
      ++bit;
    }
  EXPECT_EQ(c.at(4, 4), want);
  EXPECT_EQ(popcount32(want), 16);
}

namespace {

Image<uint32_t> random_census(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  Image<uint32_t> c(w, h);
  for (auto& v : c.pixels) v = rng() & 0xffffffu;
  return c;
}

// Independent brute force of the window cost rule of stages.h.
int brute_window_cost(const Image<uint32_t>& a, const Image<uint32_t>& b, Reference ref, int x, int y, int d, int r,
                      int best) {
  const int w = a.width, h = a.height, s = 2 * r + 1;
  std::vector<int> subs;
  int centre = 0;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i) {
      int sum = 0;
      for (int v = y + j * s - r; v <= y + j * s + r; ++v)
        for (int u = x + i * s - r; u <= x + i * s + r; ++u) {
          if (v < 0 || v >= h) continue;  // columns repeat the edge, rows outside add 0
          const int m = ref == Reference::Left ? u - d : u + d;
          sum += popcount32(a.at(std::min(std::max(u, 0), w - 1), v) ^ b.at(std::min(std::max(m, 0), w - 1), v));
        }
      if (i == 0 && j == 0)
        centre = sum;
      else
        subs.push_back(sum);
    }
  std::sort(subs.begin(), subs.end());
  for (int k = 0; k < best; ++k) centre += subs[k];
  return centre;
}

}  // namespace

TEST(Window, AdaptiveCostPicksTheBestSubWindows) {
  const int around[8] = {9, 3, 7, 1, 8, 2, 6, 5};
  EXPECT_EQ(adaptive_window_cost(10, around, 0), 10);
  EXPECT_EQ(adaptive_window_cost(10, around, 1), 11);
  EXPECT_EQ(adaptive_window_cost(10, around, 2), 13);
  EXPECT_EQ(adaptive_window_cost(10, around, 4), 10 + 1 + 2 + 3 + 5);
  EXPECT_EQ(adaptive_window_cost(10, around, 8), 10 + 41);
}

TEST(Window, WindowCostMatchesBruteForceIncludingBorders) {
  const int w = 23, h = 17;
  const Image<uint32_t> a = random_census(w, h, 1), b = random_census(w, h, 2);
  for (int r : {0, 1, 2})
    for (int best : {0, 1, 2, 4})
      for (Reference ref : {Reference::Left, Reference::Right})
        for (int y = 0; y < h; y += 3)
          for (int x = 0; x < w; x += 2)
            for (int d : {0, 3, 9})
              ASSERT_EQ(window_cost(a, b, ref, x, y, d, r, best), brute_window_cost(a, b, ref, x, y, d, r, best))
                  << "x " << x << " y " << y << " d " << d << " r " << r << " best " << best;
}

// The two views read one cost volume: the right view's window at (x, d) is
// the left view's at (x + d, d), at the borders too.
TEST(Window, RightViewWindowIsTheLeftViewsAtTheMatchedPixel) {
  const int w = 29, h = 13;
  const Image<uint32_t> left = random_census(w, h, 5), right = random_census(w, h, 6);
  for (int r : {1, 2})
    for (int best : {0, 2})
      for (int y = 0; y < h; y += 2)
        for (int x = 0; x < w; ++x)
          for (int d = 0; x + d < w; d += 3)
            ASSERT_EQ(window_cost(right, left, Reference::Right, x, y, d, r, best),
                      window_cost(left, right, Reference::Left, x + d, y, d, r, best))
                << "x " << x << " y " << y << " d " << d << " r " << r << " best " << best;
}

TEST(Subpixel, ExactValuesOnKnownParabolas) {
  // 16 (t - 1/4)^2 + 1 at t = -1, 0, 1: vertex +1/4 pixel = 4/16.
  EXPECT_EQ(subpixel_offset_q4(25, 1, 9), 4);
  EXPECT_EQ(subpixel_offset_q4(9, 1, 25), -4);
  EXPECT_EQ(subpixel_offset_q4(5, 1, 5), 0);
  // 2.5/16 rounds half away from zero.
  EXPECT_EQ(subpixel_offset_q4(21, 0, 11), 3);
  EXPECT_EQ(subpixel_offset_q4(11, 0, 21), -3);
  EXPECT_EQ(subpixel_offset_q4(100, 0, 0), 8);   // clamped to half a pixel
  EXPECT_EQ(subpixel_offset_q4(3, 5, 3), 0);     // opens downward
  EXPECT_EQ(subpixel_offset_q4(4, 4, 4), 0);     // flat
}

TEST(Background, ParamsFromTheUsersNumbers) {
  Params p;
  const BackgroundParams bp = background_params(p);
  EXPECT_EQ(bp.alpha_q16, 1311);         // 0.02 * 65536 = 1310.72
  EXPECT_EQ(bp.turn_alpha_q16, 18106);   // 1 - (1 - 1311 / 65536)^16 = 18104.5, rounded at each of 4 squarings
  EXPECT_EQ(bp.absorb_alpha_q16, 327);   // a quarter
  EXPECT_EQ(bp.absorb_turn_alpha_q16, 5039);  // 1 - (1 - 327 / 65536)^16 = 5040.7, rounded at each squaring
  EXPECT_EQ(bp.k_q8, 640);               // 2.5 * 256
  EXPECT_EQ(bp.sigma_min_q4, 64);        // 4 * 16
  EXPECT_EQ(bp.absorb_delay, kDefaultAbsorbDelay);
  EXPECT_EQ(bp.warmup_frames, 30);
  p.learning_rate = 1.0f;
  EXPECT_EQ(background_params(p).turn_alpha_q16, 65536);
  p.learning_rate = 1e-9f;  // never slower than 1 / 65536
  EXPECT_EQ(background_params(p).alpha_q16, 1);
  EXPECT_EQ(background_params(p).absorb_alpha_q16, 1);
}

TEST(Background, PixelPacksIntoSixtyFourBits) {
  BackgroundFields f;
  f.mean[0] = 2879;
  f.mean[1] = 4080;
  f.mean[2] = 17;
  f.spread[0] = 63;
  f.spread[1] = 0;
  f.spread[2] = 32;
  f.run = 127;
  const BackgroundFields g = unpack_background(pack_background(f));
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(g.mean[c], f.mean[c]);
    EXPECT_EQ(g.spread[c], f.spread[c]);
  }
  EXPECT_EQ(g.run, 127);
}

// floor((rate * step + u) / 65536) over every u in [0, 65536) sums to rate *
// step: the dithered rounding is exact on average, whatever the sign.
TEST(Background, DitheredStepIsExactOnAverage) {
  for (int rate : {1, 327, 1311, 5089, 65536})
    for (int step : {-4080, -17, -1, 0, 1, 3, 160, 2880}) {
      int64_t sum = 0;
      for (uint32_t u = 0; u < 65536; ++u) sum += dithered_step(rate, step, u);
      EXPECT_EQ(sum, static_cast<int64_t>(rate) * step) << "rate " << rate << ", step " << step;
    }
  EXPECT_EQ(dithered_step(1311, 1, 0), 0);
  EXPECT_EQ(dithered_step(1311, 1, 65535 - 1310), 1);
  EXPECT_EQ(dithered_step(1311, -1, 1310), -1);
  EXPECT_EQ(dithered_step(1311, -1, 1311), 0);
}

TEST(Background, PixelInitialisesTestsAndLearns) {
  Params p;
  p.warmup_frames = 5;
  const BackgroundParams bp = background_params(p);
  const uint32_t grey = 100 | (100 << 8) | (100 << 16);
  BackgroundPixel m = 0;
  EXPECT_TRUE(background_pixel(&m, grey, bp, 0, 3, 4, 0));  // first frame: foreground, learns
  BackgroundFields f = unpack_background(m);
  EXPECT_EQ(f.mean[2], 100 * 16);
  EXPECT_EQ(f.mean[1], 0);
  EXPECT_EQ(f.spread[2], 0);
  EXPECT_TRUE(background_pixel(&m, grey, bp, 4, 3, 4, 0));   // warm-up: foreground
  EXPECT_FALSE(background_pixel(&m, grey, bp, 5, 3, 4, 0));  // tested: background
  // V + 10 is k sigma exactly (sigma at its floor of 4): not beyond it.
  const uint32_t brighter10 = 110 | (110 << 8) | (110 << 16);
  const uint32_t brighter11 = 111 | (111 << 8) | (111 << 16);
  BackgroundPixel copy = m;
  EXPECT_FALSE(background_pixel(&copy, brighter10, bp, 5, 3, 4, 0));
  copy = m;
  EXPECT_TRUE(background_pixel(&copy, brighter11, bp, 5, 3, 4, 0));
  // Foreground: the run counts and nothing is learnt until it passes the
  // delay; then, on the pixel's turns, the means move at a quarter of the
  // rate compounded over the turns' frames, the spreads stay.
  EXPECT_EQ(unpack_background(copy).run, 1);
  EXPECT_EQ(unpack_background(copy).mean[2], 100 * 16);
  for (int i = 1; i < bp.absorb_delay; ++i) EXPECT_TRUE(background_pixel(&copy, brighter11, bp, 6 + i, 3, 4, 0));
  f = unpack_background(copy);
  EXPECT_EQ(f.run, bp.absorb_delay);
  EXPECT_EQ(f.mean[2], 100 * 16);
  BackgroundPixel absorbing = copy;
  ASSERT_FALSE(background_turn(4, 100));
  EXPECT_TRUE(background_pixel(&absorbing, brighter11, bp, 100, 3, 4, 0));  // off its turn: the run alone
  EXPECT_EQ(unpack_background(absorbing).mean[2], 100 * 16);
  EXPECT_EQ(unpack_background(absorbing).run, bp.absorb_delay + 1);
  ASSERT_TRUE(background_turn(4, 111));  // row 4's turn: (4 / 4 + 111) % 16 == 0
  EXPECT_TRUE(background_pixel(&absorbing, brighter11, bp, 111, 3, 4, 0));
  const BackgroundFields g = unpack_background(absorbing);
  const uint32_t u = next_channel_dither(next_channel_dither(background_dither(3, 4, 111, 0)));  // V
  EXPECT_EQ(g.mean[2], 100 * 16 + dithered_step(bp.absorb_turn_alpha_q16, 11 * 16, u & 0xFFFF));
  EXPECT_GT(g.mean[2], 100 * 16);
  EXPECT_EQ(g.spread[2], f.spread[2]);
  EXPECT_EQ(g.run, bp.absorb_delay + 2);
  // Background again: the run ends.
  EXPECT_FALSE(background_pixel(&copy, grey, bp, 200, 3, 4, 0));
  EXPECT_EQ(unpack_background(copy).run, 0);
}

// Background pixels learn on their turn only (rows in runs of 4, a frame in
// kBackgroundTurns), at the rate that many frames compound to.
TEST(Background, BackgroundPixelsLearnOnTheirTurn) {
  Params p;
  p.warmup_frames = 1;
  const BackgroundParams bp = background_params(p);
  const uint32_t grey = 100 | (100 << 8) | (100 << 16), lighter = 104 | (104 << 8) | (104 << 16);
  for (int y : {0, 5, 13}) {
    BackgroundPixel m = 0;
    background_pixel(&m, grey, bp, 0, 7, y, 1);
    int learnt = 0;
    for (int frame = 1; frame <= 2 * kBackgroundTurns; ++frame) {
      const BackgroundPixel before = m;
      EXPECT_FALSE(background_pixel(&m, lighter, bp, frame, 7, y, 1));
      const bool turn = background_turn(y, frame);
      EXPECT_EQ(turn, ((y >> 2) + frame) % kBackgroundTurns == 0);
      if (!turn) EXPECT_EQ(m, before) << "row " << y << ", frame " << frame;
      if (turn) {
        ++learnt;
        const BackgroundFields f = unpack_background(before);
        const uint32_t u = next_channel_dither(next_channel_dither(background_dither(7, y, frame, 1)));  // V
        EXPECT_EQ(unpack_background(m).mean[2], f.mean[2] + dithered_step(bp.turn_alpha_q16, 1664 - f.mean[2], u & 0xFFFF));
      }
    }
    EXPECT_EQ(learnt, 2) << "row " << y;
  }
}

// Camera noise of sigma 2 on a static scene: the spread learns it and the
// test finds (almost) nothing; after the warm-up the cells are tested and
// few pixels (where noise made a cell foreground), none during it.
TEST(Background, ViewLearnsNoiseAndTestsTheCells) {
  const int w = 64, h = 48;
  Params p;
  p.warmup_frames = 20;
  const BackgroundParams bp = background_params(p);
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 2.0);
  Image<uint32_t> scene(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) scene.at(x, y) = (40 + x * 3) | ((20 + y * 4) << 8) | ((200 - x) << 16);
  BackgroundModel model;
  Image<uint8_t> raw;
  long found = 0;
  for (int frame = 0; frame < 80; ++frame) {
    Image<uint32_t> noisy(w, h);
    for (size_t i = 0; i < noisy.pixels.size(); ++i) {
      uint32_t px = 0;
      for (int c = 0; c < 3; ++c)
        px |= static_cast<uint32_t>(std::clamp<long>(std::lround(((scene.pixels[i] >> (8 * c)) & 255) + noise(rng)), 0, 255))
              << (8 * c);
      noisy.pixels[i] = px;
    }
    const uint64_t tests = background_view(model, noisy, bp, frame, 0, raw);
    const uint64_t cells = (w / kBackgroundCell) * (h / kBackgroundCell);
    if (frame < p.warmup_frames) {
      EXPECT_EQ(tests, 0u) << "frame " << frame;
    } else {
      EXPECT_GE(tests, cells) << "frame " << frame;
      EXPECT_LT(tests, cells + uint64_t(w) * h / 10) << "frame " << frame;
      found += std::count(raw.pixels.begin(), raw.pixels.end(), 255);
    }
  }
  EXPECT_LT(found, 60 * w * h / 200) << "raw false foreground over 60 frames";
}

// The cells' labels (stages.h stage 3) on a known change: a flat grey view
// learnt, then a red 16 x 16 square on whole cells. The square's cells are
// foreground; a pixel whose 3 x 3 cells are all background is background
// untested, one whose cells are all foreground (the square's inner 2 x 2
// cells) foreground untested, and the rest are tested: the ring of cells
// around the inner ones, 32 cells. The raw test is the square exactly.
TEST(Background, CellsLabelAndTestTheEdge) {
  const int w = 64, h = 48;
  Params p;
  p.warmup_frames = 4;
  const BackgroundParams bp = background_params(p);
  Image<uint32_t> grey(w, h), square(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      grey.at(x, y) = 100 | 100 << 8 | 100 << 16;
      const bool in = x >= 16 && x < 32 && y >= 16 && y < 32;
      square.at(x, y) = in ? (200 | 50 << 8 | 50 << 16) : grey.at(x, y);
    }
  BackgroundModel model;
  Image<uint8_t> raw;
  for (int frame = 0; frame < p.warmup_frames; ++frame) EXPECT_EQ(background_view(model, grey, bp, frame, 0, raw), 0u);
  EXPECT_EQ(model.cells.size(), size_t(16 * 12));
  const uint64_t cells = 16 * 12;
  EXPECT_EQ(background_view(model, grey, bp, p.warmup_frames, 0, raw), cells) << "a still frame tests no pixel";
  EXPECT_EQ(std::count(raw.pixels.begin(), raw.pixels.end(), 255), 0);
  EXPECT_EQ(background_view(model, square, bp, p.warmup_frames + 1, 0, raw), cells + (6 * 6 - 2 * 2) * 16);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      ASSERT_EQ(raw.at(x, y) != 0, square.at(x, y) != grey.at(x, y)) << "pixel " << x << ", " << y;
  // The inner cells' pixels were labelled: their runs count, untested.
  EXPECT_EQ(unpack_background(model.pixels[20 * w + 20]).run, 1);
  EXPECT_EQ(unpack_background(model.pixels[40 * w + 60]).run, 0);
}

TEST(Background, CleanMaskTakesTheMajorityThenCloses) {
  Image<uint8_t> raw(12, 8, 0);
  raw.at(5, 3) = 255;  // an isolated speckle: dropped
  for (int y = 0; y < 3; ++y)
    for (int x = 8; x < 12; ++x) raw.at(x, y) = 255;  // a blob at the corner
  raw.at(9, 1) = 0;                                    // with a pinhole: filled
  for (int y = 5; y < 8; ++y)
    for (int x = 0; x < 3; ++x) raw.at(x, y) = 255;  // a blob in the other corner
  raw.at(3, 6) = 255;
  raw.at(4, 7) = 255;  // a diagonal pair beside the blob: each has the other and the blob
  raw.at(7, 7) = 255;
  raw.at(8, 7) = 255;  // a pair alone: one neighbour each, dropped
  Image<uint8_t> mask;
  clean_mask(raw, 0, mask);
  EXPECT_EQ(mask.at(5, 3), 0);      // no neighbour
  EXPECT_EQ(mask.at(9, 1), 255);    // a pinhole: 8 neighbours
  EXPECT_EQ(mask.at(11, 0), 255);   // the blob's corner: 3 neighbours (outside the image counts as background)
  EXPECT_EQ(mask.at(7, 1), 0);      // background beside the blob: 3 neighbours
  EXPECT_EQ(mask.at(0, 7), 255);
  EXPECT_EQ(mask.at(7, 7), 0);
  EXPECT_EQ(mask.at(8, 7), 0);
  EXPECT_EQ(mask.at(3, 6), 0);      // kept by the filter (4 neighbours), in no 3 x 3 square
  // The opening (radius 1) then drops what holds no 3 x 3 square: the
  // diagonal pair and the lone pixel's neighbours are gone, the blobs stay.
  EXPECT_EQ(mask.at(4, 7), 0);
  EXPECT_EQ(mask.at(1, 6), 255);
  raw.at(0, 7) = 0;                 // a background corner with 3 foreground neighbours stays background
  clean_mask(raw, 0, mask);
  EXPECT_EQ(mask.at(0, 7), 0);
  clean_mask(raw, 1, mask);         // the closing fills it
  EXPECT_EQ(mask.at(0, 7), 255);
  // Then the closing: a filtered shape with a 2-pixel gap, bridged.
  Image<uint8_t> two(16, 7, 0);
  for (int y = 1; y < 6; ++y)
    for (int x : {2, 3, 4, 7, 8, 9}) two.at(x, y) = 255;
  clean_mask(two, 1, mask);
  EXPECT_EQ(mask.at(5, 3), 255);
  EXPECT_EQ(mask.at(6, 3), 255);
  EXPECT_EQ(mask.at(1, 3), 0);
}

TEST(Background, PoolMaskMarksEveryParentOfTheForeground) {
  Image<uint8_t> full(13, 9, 0);
  full.at(5, 6) = 255;
  full.at(12, 0) = 255;  // beyond level 2's pixels (13 / 4 = 3 columns): no parent there
  Image<uint8_t> mask;
  pool_mask(full, 0, mask);
  EXPECT_EQ(mask.pixels, full.pixels);
  pool_mask(full, 1, mask);
  ASSERT_EQ(mask.width, 6);
  ASSERT_EQ(mask.height, 4);
  EXPECT_EQ(mask.at(2, 3), 255);
  EXPECT_EQ(std::count(mask.pixels.begin(), mask.pixels.end(), 255), 1);
  pool_mask(full, 2, mask);
  ASSERT_EQ(mask.width, 3);
  ASSERT_EQ(mask.height, 2);
  EXPECT_EQ(mask.at(1, 1), 255);
  EXPECT_EQ(std::count(mask.pixels.begin(), mask.pixels.end(), 255), 1);
}

TEST(Background, CloseMaskFillsGapsAndKeepsShapes) {
  Image<uint8_t> in(14, 9, 0);
  for (int y = 2; y < 7; ++y)
    for (int x = 2; x < 5; ++x) in.at(x, y) = 255;
  for (int y = 2; y < 7; ++y)
    for (int x = 7; x < 10; ++x) in.at(x, y) = 255;
  in.at(13, 0) = 255;  // isolated corner pixel: closing keeps it
  in.at(3, 4) = 0;     // a hole: filled
  Image<uint8_t> out;
  close_mask(in, 1, out);
  EXPECT_EQ(out.at(3, 4), 255);
  EXPECT_EQ(out.at(5, 4), 255);  // two-pixel gap bridged
  EXPECT_EQ(out.at(6, 4), 255);
  EXPECT_EQ(out.at(13, 0), 255);
  EXPECT_EQ(out.at(12, 0), 0);
  EXPECT_EQ(out.at(1, 4), 0);  // shapes do not grow
  EXPECT_EQ(out.at(3, 1), 0);
  // Only pixels inside the image count: a shape one pixel from the border
  // is joined to it (dilation reaches the edge, erosion sees nothing beyond).
  Image<uint8_t> edge(6, 6, 0);
  for (int y = 0; y < 6; ++y) edge.at(1, y) = 255;
  close_mask(edge, 1, out);
  EXPECT_EQ(out.at(0, 3), 255);
  EXPECT_EQ(out.at(2, 3), 0);
  close_mask(in, 0, out);
  EXPECT_EQ(out.pixels, in.pixels);
}

namespace {

// Independent winner-takes-all over an explicit candidate list.
int brute_wta(const Image<uint32_t>& a, const Image<uint32_t>& b, Reference ref, const Image<uint8_t>* mref,
              const Image<uint8_t>* moth, int x, int y, int lo, int hi, int r, int best) {
  const int w = a.width;
  if (mref && mref->at(x, y) == 0) return -1;
  int best_d = -1, best_c = INT_MAX;
  for (int d = lo; d < hi; ++d) {
    const int m = ref == Reference::Left ? x - d : x + d;
    if (m < 0 || m >= w || d < 0) continue;
    if (moth && moth->at(m, y) == 0) continue;
    const int c = brute_window_cost(a, b, ref, x, y, d, r, best);
    if (c < best_c) {
      best_c = c;
      best_d = d;
    }
  }
  return best_d;
}

}  // namespace

TEST(Matching, FullRangeEqualsBruteForceWithMasksAndBorders) {
  const int w = 45, h = 37;  // tiles of 32 plus odd remainders
  // Few census values so that ties happen and the smaller-d rule is checked.
  std::mt19937 rng(7);
  Image<uint32_t> a(w, h), b(w, h);
  for (auto& v : a.pixels) v = rng() & 0x7;
  for (auto& v : b.pixels) v = rng() & 0x7;
  Image<uint8_t> ma(w, h), mb(w, h);
  for (auto& v : ma.pixels) v = (rng() % 5) ? 255 : 0;
  for (auto& v : mb.pixels) v = (rng() % 5) ? 255 : 0;
  for (Reference ref : {Reference::Left, Reference::Right})
    for (bool masks : {false, true})
      for (int best : {0, 2}) {
        const Range range{2, 14};
        Image<int16_t> d;
        const Image<uint8_t>* mr = masks ? &ma : nullptr;
        const Image<uint8_t>* mo = masks ? &mb : nullptr;
        const Image<uint32_t>& cr = ref == Reference::Left ? a : b;
        const Image<uint32_t>& co = ref == Reference::Left ? b : a;
        match_full_range(cr, co, ref, mr, mo, range, 1, best, d);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x)
            ASSERT_EQ(d.at(x, y), brute_wta(cr, co, ref, mr, mo, x, y, range.lo, range.hi, 1, best))
                << "x " << x << " y " << y;
      }
}

TEST(Matching, FullRangeFindsAShiftedPattern) {
  const int w = 64, h = 24, shift = 6;
  std::mt19937 rng(3);
  Image<uint8_t> gl(w, h), gr(w, h);
  for (auto& v : gl.pixels) v = rng() & 255;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) gr.at(x, y) = gl.at(std::min(x + shift, w - 1), y);
  Image<uint32_t> cl, cr;
  census_transform(gl, cl);
  census_transform(gr, cr);
  Image<int16_t> d;
  match_full_range(cl, cr, Reference::Left, nullptr, nullptr, Range{0, 16}, 2, 2, d);
  for (int y = 0; y < h; ++y)
    for (int x = 12; x < w - 8; ++x) ASSERT_EQ(d.at(x, y), shift) << x << "," << y;
  EXPECT_EQ(d.at(0, 0), 0);  // only d = 0 is admissible at x = 0
}

TEST(Matching, RefineCandidateRulesIncludingHoles) {
  const int w = 40, h = 20, wc = 20, hc = 10;
  std::mt19937 rng(11);
  Image<uint32_t> a(w, h), b(w, h);
  for (auto& v : a.pixels) v = rng() & 0xffffff;
  for (auto& v : b.pixels) v = rng() & 0xffffff;
  Image<int16_t> coarser(wc, hc, -1);
  coarser.at(3, 3) = 4;
  coarser.at(4, 3) = 6;
  coarser.at(15, 8) = 2;
  const Range range{0, 20};
  for (int hole : {0, 2})
  for (int span : {0, 5, 16}) {  // hole_span: none, less than the 6..14 hole below, more
    Image<int16_t> d;
    refine_level(a, b, Reference::Left, nullptr, nullptr, coarser, range, 1, 2, hole, span, d);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int px = std::min(x / 2, wc - 1), py = std::min(y / 2, hc - 1);
        int lo = 0, hi = 0;
        if (coarser.at(px, py) >= 0) {
          lo = 2 * coarser.at(px, py) - 2;
          hi = 2 * coarser.at(px, py) + 3;
        } else {
          int mn = 1000, mx = -1;
          for (int v = py - hole; v <= py + hole; ++v)
            for (int u = px - hole; u <= px + hole; ++u)
              if (u >= 0 && v >= 0 && u < wc && v < hc && coarser.at(u, v) >= 0) {
                mn = std::min<int>(mn, coarser.at(u, v));
                mx = std::max<int>(mx, coarser.at(u, v));
              }
          if (mx >= 0) {
            lo = 2 * mn - 2;
            hi = 2 * mx + 3;
            if (span > 0) hi = std::min(hi, lo + span);  // from the farthest surface on
          }
        }
        lo = std::max(lo, range.lo);
        hi = std::min(hi, range.hi);
        ASSERT_EQ(d.at(x, y), brute_wta(a, b, Reference::Left, nullptr, nullptr, x, y, lo, hi, 1, 2))
            << "x " << x << " y " << y << " hole " << hole << " span " << span;
      }
    // Far from every valid coarser pixel: invalid.
    EXPECT_EQ(d.at(20, 0), -1);
    // Parent (3, 3) valid with 4: the result is within 6..10 (or the image clips it).
    EXPECT_GE(d.at(7, 7), 6);
    EXPECT_LE(d.at(7, 7), 10);
    if (hole == 2) {
      // Parent (5, 3) is invalid; valid 4 and 6 lie within 2: candidates 6..14,
      // or with hole_span 5 the five from the farthest surface on, 6..10.
      EXPECT_GE(d.at(10, 6), 6);
      EXPECT_LE(d.at(10, 6), span == 5 ? 10 : 14);
    } else {
      EXPECT_EQ(d.at(10, 6), -1);
    }
  }
}

// The right map a refined level's left view offers (stages.h stage 7,
// refine_level's offered): each right pixel takes, over the left pixels
// whose winner (brute force) matches it, the least cost (the right view's
// own window, brute force), ties to the smaller d; -1 where none matches it.
TEST(Matching, RefineOffersTheRightMapOfTheLeftWinners) {
  const int w = 45, h = 23, wc = w / 2, hc = h / 2;
  std::mt19937 rng(19);
  Image<uint32_t> a(w, h), b(w, h);
  for (auto& v : a.pixels) v = rng() & 0x7;  // few values: ties
  for (auto& v : b.pixels) v = rng() & 0x7;
  Image<uint8_t> ma(w, h), mb(w, h);
  for (auto& v : ma.pixels) v = (rng() % 6) ? 255 : 0;
  for (auto& v : mb.pixels) v = (rng() % 6) ? 255 : 0;
  Image<int16_t> coarser(wc, hc);
  for (auto& v : coarser.pixels) v = static_cast<int16_t>(rng() % 7 == 0 ? -1 : rng() % 9);
  const Range range{1, 17};
  for (bool masks : {false, true}) {
    const Image<uint8_t>* ml = masks ? &ma : nullptr;
    const Image<uint8_t>* mr = masks ? &mb : nullptr;
    Image<int16_t> left, offered;
    refine_level(a, b, Reference::Left, ml, mr, coarser, range, 1, 2, 2, 6, left, 0, nullptr, &offered);
    std::vector<uint64_t> want(static_cast<size_t>(w) * h, UINT64_MAX);
    int matched = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (masks && ma.at(x, y) == 0) continue;
        int lo, hi;
        if (!refined_candidates(coarser, Reference::Left, x, y, w, range, 2, 6, &lo, &hi)) continue;
        const int d = brute_wta(a, b, Reference::Left, ml, mr, x, y, lo, hi, 1, 2);
        ASSERT_EQ(left.at(x, y), d);
        if (d < 0) continue;
        const uint64_t key = static_cast<uint64_t>(brute_window_cost(b, a, Reference::Right, x - d, y, d, 1, 2))
                                 << 16 | static_cast<uint64_t>(d);
        want[static_cast<size_t>(y) * w + x - d] = std::min(want[static_cast<size_t>(y) * w + x - d], key);
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const uint64_t k = want[static_cast<size_t>(y) * w + x];
        const int d = k == UINT64_MAX ? -1 : static_cast<int>(k & 0xFFFFu);
        matched += d >= 0;
        ASSERT_EQ(offered.at(x, y), d) << "right x " << x << " y " << y << " masks " << masks;
      }
    EXPECT_GT(matched, w * h / 3) << "many right pixels are offered a winner";
  }

  // A right view that is the left one shifted by 6: the offered map finds
  // the shift wherever the left pixels' candidates hold it.
  const int shift = 6;
  Image<uint8_t> gl(64, 24), gr(64, 24);
  for (auto& v : gl.pixels) v = rng() & 255;
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 64; ++x) gr.at(x, y) = gl.at(std::min(x + shift, 63), y);
  Image<uint32_t> cl, cr;
  census_transform(gl, cl);
  census_transform(gr, cr);
  Image<int16_t> flat(32, 12, shift / 2), left, offered;
  refine_level(cl, cr, Reference::Left, nullptr, nullptr, flat, Range{0, 16}, 2, 2, 2, 16, left, 0, nullptr,
               &offered);
  for (int y = 0; y < 24; ++y)
    for (int x = 8; x < 64 - 16; ++x) ASSERT_EQ(offered.at(x, y), shift) << x << "," << y;
}

TEST(SupportFilter, KeepsValuesEnoughNeighboursAgreeWith) {
  // 5x4 map; agreeing means valid and within 1.
  Image<int16_t> m(5, 4, -1);
  const int16_t rows[4][5] = {{10, 10, 11, -1, 3}, {10, 10, 12, 7, 3}, {9, 10, 10, -1, 30}, {-1, 8, 10, 10, 3}};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) m.at(x, y) = rows[y][x];
  Image<int16_t> same = m;
  support_filter(same, 0);
  EXPECT_TRUE(same.pixels == m.pixels);  // 0: off
  Image<int16_t> f = m;
  support_filter(f, 3);
  // (1, 1) = 10: neighbours 10 10 11 10 12 9 10 10 -> 7 agree (12 does not): kept.
  EXPECT_EQ(f.at(1, 1), 10);
  // (0, 0) = 10, a corner: neighbours 10, 10, 10 -> 3: kept at 3.
  EXPECT_EQ(f.at(0, 0), 10);
  // (3, 1) = 7: neighbours 11 -1 3 12 3 10 -1 30 -> none within 1: dropped.
  EXPECT_EQ(f.at(3, 1), -1);
  // (4, 2) = 30: dropped; (4, 0) = 3: neighbours -1, 7, 3 -> 1 agrees: dropped at 3.
  EXPECT_EQ(f.at(4, 2), -1);
  EXPECT_EQ(f.at(4, 0), -1);
  // (4, 1) = 3: only (4, 0) = 3 agrees: dropped.
  EXPECT_EQ(f.at(4, 1), -1);
  // Judged on the map before the step: (1, 2) = 10 has 5 agreeing
  // neighbours, (2, 2) = 10 has 4 ((3, 1) = 7 and (2, 1) = 12 do not agree).
  EXPECT_EQ(f.at(1, 2), 10);
  EXPECT_EQ(f.at(2, 2), 10);
  // Invalid stays invalid.
  EXPECT_EQ(f.at(3, 0), -1);
  Image<int16_t> g = m;
  support_filter(g, 4);
  EXPECT_EQ(g.at(0, 0), -1);  // a corner has 3 neighbours: never 4
  EXPECT_EQ(g.at(1, 1), 10);
  EXPECT_EQ(g.at(2, 2), 10);
  Image<int16_t> five = m;
  support_filter(five, 5);
  EXPECT_EQ(five.at(1, 2), 10);
  EXPECT_EQ(five.at(2, 2), -1);
  // 8: no pixel here has all 8 neighbours agreeing ((1, 1) has 7).
  Image<int16_t> all = m;
  support_filter(all, 8);
  for (int16_t v : all.pixels) EXPECT_EQ(v, -1);
}

TEST(CrossCheck, KeepsConsistentPairsOnly) {
  Image<int16_t> left(8, 1, -1), right(8, 1, -1);
  left.at(5, 0) = 2;   // -> right[3]
  right.at(3, 0) = 3;  // |2 - 3| = 1: consistent with tolerance 1
  left.at(6, 0) = 2;   // -> right[4] = 5: inconsistent
  right.at(4, 0) = 5;  // -> left[9]: outside the image
  left.at(1, 0) = 3;   // -> x = -2: outside
  left.at(7, 0) = 0;   // -> right[7] invalid
  Image<int16_t> l1 = left, r1 = right;
  cross_check(l1, r1, 1);
  EXPECT_EQ(l1.at(5, 0), 2);
  EXPECT_EQ(r1.at(3, 0), 3);
  EXPECT_EQ(l1.at(6, 0), -1);
  EXPECT_EQ(r1.at(4, 0), -1);
  EXPECT_EQ(l1.at(1, 0), -1);
  EXPECT_EQ(l1.at(7, 0), -1);
  Image<int16_t> l0 = left, r0 = right;
  cross_check(l0, r0, 0);
  EXPECT_EQ(l0.at(5, 0), -1);
  EXPECT_EQ(r0.at(3, 0), -1);
  // Checked against the inputs: right[3] points at left[6] (3 + 3), which is
  // 2, |3 - 2| = 1: the right pixel stays valid with tolerance 1 even though
  // left[6] itself is rejected.
  Image<int16_t> l2 = left, r2 = right;
  cross_check(l2, r2, 1);
  EXPECT_EQ(r2.at(3, 0), 3);
}

TEST(Finish, Q4ValuesSubpixelConditionsAndPitchedOutput) {
  const int w = 20, h = 3;
  const Image<uint32_t> a = random_census(w, h, 5), b = random_census(w, h, 6);
  Image<int16_t> d(w, h, 7);
  d.at(0, 0) = -1;
  d.at(1, 0) = 0;
  d.at(5, 1) = 5;   // x - (d + 1) < 0: no sub-pixel
  const Range range{2, 12};
  d.at(10, 2) = 11;  // d + 1 >= range.hi: no sub-pixel
  std::vector<uint16_t> buf(24 * h, 0xeeee);
  ImageView<uint16_t> out{buf.data(), w, h, 48};
  finish_disparity(a, b, d, range, 1, 2, true, out);
  EXPECT_EQ(out.at(0, 0), 0);
  EXPECT_EQ(out.at(1, 0), 0);
  EXPECT_EQ(out.at(5, 1), 80);
  EXPECT_EQ(out.at(10, 2), 176);
  EXPECT_EQ(buf[w], 0xeeee);  // padding untouched
  for (int x = 8; x < w; ++x) {
    if (x == 10) continue;
    const int want = 7 * 16 + subpixel_offset_q4(window_cost(a, b, Reference::Left, x, 2, 6, 1, 2),
                                                 window_cost(a, b, Reference::Left, x, 2, 7, 1, 2),
                                                 window_cost(a, b, Reference::Left, x, 2, 8, 1, 2));
    EXPECT_EQ(out.at(x, 2), want) << x;
  }
  finish_disparity(a, b, d, range, 1, 2, false, out);
  EXPECT_EQ(out.at(12, 2), 112);
}
