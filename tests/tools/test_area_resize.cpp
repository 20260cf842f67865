// Area-averaging resize (tools/area_resize.h) against answers worked out by
// hand, grey and colour, and reading through the engine's own luma rule or
// as packed RGBA.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "area_resize.h"
#include "imageio.h"
#include "stereo_math.h"

namespace {

using cs::Image;
using cs::tools::area_resize;

Image<uint8_t> from_rows(int w, int h, std::initializer_list<int> values) {
  Image<uint8_t> img(w, h);
  size_t i = 0;
  for (int v : values) img.pixels[i++] = static_cast<uint8_t>(v);
  EXPECT_EQ(i, img.pixels.size());
  return img;
}

TEST(AreaResize, TwoByTwoBecomesItsRoundedMean) {
  // (10 + 20 + 30 + 40) / 4 = 25 exactly; (10 + 20 + 30 + 41) / 4 = 25.25 -> 25;
  // (10 + 20 + 30 + 42) / 4 = 25.5 -> 26 (halves up).
  EXPECT_EQ(area_resize(from_rows(2, 2, {10, 20, 30, 40}), 1, 1).pixels[0], 25);
  EXPECT_EQ(area_resize(from_rows(2, 2, {10, 20, 30, 41}), 1, 1).pixels[0], 25);
  EXPECT_EQ(area_resize(from_rows(2, 2, {10, 20, 30, 42}), 1, 1).pixels[0], 26);
}

TEST(AreaResize, ThreeToTwoWeighsTheSharedPixelByHalf) {
  // Output pixel 0 covers source [0, 1.5): (0 * 1 + 30 * 0.5) / 1.5 = 10;
  // output pixel 1 covers [1.5, 3): (30 * 0.5 + 90 * 1) / 1.5 = 70.
  const Image<uint8_t> row = area_resize(from_rows(3, 1, {0, 30, 90}), 2, 1);
  ASSERT_EQ(row.width, 2);
  ASSERT_EQ(row.height, 1);
  EXPECT_EQ(row.pixels[0], 10);
  EXPECT_EQ(row.pixels[1], 70);
  // The same along y, and both axes together (3x3 -> 2x2): the top-left
  // output pixel covers source [0, 1.5) x [0, 1.5), weights 1, 0.5 / 0.5,
  // 0.25 over an area of 2.25: (0 + 0.5 * 30 + 0.5 * 60 + 0.25 * 90) / 2.25
  // = 67.5 / 2.25 = 30.
  const Image<uint8_t> column = area_resize(from_rows(1, 3, {0, 30, 90}), 1, 2);
  EXPECT_EQ(column.pixels[0], 10);
  EXPECT_EQ(column.pixels[1], 70);
  const Image<uint8_t> square = area_resize(from_rows(3, 3, {0, 30, 0,  //
                                                             60, 90, 0,  //
                                                             0, 0, 0}),
                                            2, 2);
  EXPECT_EQ(square.pixels[0], 30);
  // Top-right: source [1.5, 3) x [0, 1.5): 0.5 * 30 + 0.25 * 90 = 37.5 over
  // 2.25 = 16.67 -> 17. Bottom-left: 0.5 * 60 + 0.25 * 90 = 52.5 / 2.25 =
  // 23.33 -> 23. Bottom-right: 0.25 * 90 / 2.25 = 10.
  EXPECT_EQ(square.pixels[1], 17);
  EXPECT_EQ(square.pixels[2], 23);
  EXPECT_EQ(square.pixels[3], 10);
}

TEST(AreaResize, EnlargingRepeatsOrSplitsSourcePixels) {
  // 2 -> 4: every output pixel lies inside one source pixel.
  const Image<uint8_t> up = area_resize(from_rows(2, 1, {40, 200}), 4, 1);
  EXPECT_EQ(up.pixels, (std::vector<uint8_t>{40, 40, 200, 200}));
  // 2 -> 3: the middle output pixel covers [2/3, 4/3): half of each.
  const Image<uint8_t> third = area_resize(from_rows(2, 1, {40, 200}), 3, 1);
  EXPECT_EQ(third.pixels, (std::vector<uint8_t>{40, 120, 200}));
}

TEST(AreaResize, ConstantStaysConstantAtAnyRatio) {
  Image<uint8_t> flat(1282, 1110, 173);
  for (auto size : {std::pair{640, 480}, std::pair{1024, 768}, std::pair{1920, 1080}, std::pair{3840, 2160},
                    std::pair{17, 1109}, std::pair{1283, 3}}) {
    const Image<uint8_t> out = area_resize(flat, size.first, size.second);
    ASSERT_EQ(out.width, size.first);
    ASSERT_EQ(out.height, size.second);
    for (uint8_t v : out.pixels) ASSERT_EQ(v, 173) << size.first << "x" << size.second;
  }
}

TEST(AreaResize, KeepsTheMeanOfAnIntegerReduction) {
  // A 4x4 reduction of a random picture: each output pixel is the rounded
  // mean of its 16 source pixels, computed here directly.
  Image<uint8_t> src(64, 48);
  uint32_t s = 12345;
  for (auto& p : src.pixels) p = static_cast<uint8_t>((s = s * 1664525u + 1013904223u) >> 24);
  const Image<uint8_t> out = area_resize(src, 16, 12);
  for (int y = 0; y < 12; ++y)
    for (int x = 0; x < 16; ++x) {
      int sum = 0;
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i) sum += src.at(4 * x + i, 4 * y + j);
      ASSERT_EQ(out.at(x, y), (sum + 8) / 16) << x << "," << y;
    }
}

TEST(AreaResize, SameSizeIsACopyAndBadSizesGiveNothing) {
  const Image<uint8_t> src = from_rows(3, 2, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(area_resize(src, 3, 2).pixels, src.pixels);
  EXPECT_EQ(area_resize(src, 0, 2).pixels.size(), 0u);
  EXPECT_EQ(area_resize(src, 3, -1).pixels.size(), 0u);
}

TEST(AreaResizeColour, EachChannelFollowsTheGreyRule) {
  // Random RGBA at odd sizes and ratios, shrinking and enlarging: channel c
  // of the colour result is the grey resize of channel c.
  Image<uint32_t> src(97, 61);
  uint32_t s = 777;
  for (auto& p : src.pixels) p = (s = s * 1664525u + 1013904223u);
  for (auto size : {std::pair{40, 23}, std::pair{97, 61}, std::pair{150, 100}, std::pair{1, 1}, std::pair{33, 61}}) {
    const Image<uint32_t> out = area_resize(src, size.first, size.second);
    ASSERT_EQ(out.width, size.first);
    ASSERT_EQ(out.height, size.second);
    for (int c = 0; c < 4; ++c) {
      Image<uint8_t> channel(src.width, src.height);
      for (size_t i = 0; i < src.pixels.size(); ++i) channel.pixels[i] = static_cast<uint8_t>(src.pixels[i] >> (8 * c));
      const Image<uint8_t> expected = area_resize(channel, size.first, size.second);
      for (size_t i = 0; i < out.pixels.size(); ++i)
        ASSERT_EQ(static_cast<uint8_t>(out.pixels[i] >> (8 * c)), expected.pixels[i]) << "channel " << c << " pixel " << i;
    }
  }
  // A 2x2 block of colours becomes its rounded mean per channel; opaque stays opaque.
  Image<uint32_t> block(2, 2);
  block.pixels = {0xff00000au, 0xff000014u, 0xff0a001eu, 0xff1400ffu};  // r 10, 20, 30, 255; b 0, 0, 10, 20
  const uint32_t mean = area_resize(block, 1, 1).pixels[0];
  EXPECT_EQ(mean & 0xff, (10u + 20 + 30 + 255 + 2) / 4);
  EXPECT_EQ((mean >> 8) & 0xff, 0u);
  EXPECT_EQ((mean >> 16) & 0xff, (0u + 0 + 10 + 20 + 2) / 4);
  EXPECT_EQ(mean >> 24, 255u);
  EXPECT_EQ(area_resize(block, 0, 1).pixels.size(), 0u);
}

TEST(ReadRgba, ColourAndGreyFilesBecomePackedRgba) {
  const std::string dir = std::filesystem::temp_directory_path() / ("cs-rgba-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/c.ppm", std::ios::binary);
    f << "P6\n2 1\n255\n";
    const unsigned char px[6] = {255, 0, 0, 10, 20, 30};
    f.write(reinterpret_cast<const char*>(px), 6);
  }
  {
    // 16-bit grey: 65535 and 257 rescale to 255 and 1.
    std::ofstream f(dir + "/g.pgm", std::ios::binary);
    f << "P5\n2 1\n65535\n";
    const unsigned char px[4] = {255, 255, 1, 1};
    f.write(reinterpret_cast<const char*>(px), 4);
  }
  Image<uint32_t> rgba;
  ASSERT_EQ(cs::tools::read_rgba(dir + "/c.ppm", rgba), "");
  ASSERT_EQ(rgba.width, 2);
  ASSERT_EQ(rgba.height, 1);
  EXPECT_EQ(rgba.pixels[0], 0xff0000ffu);
  EXPECT_EQ(rgba.pixels[1], 0xff1e140au);
  ASSERT_EQ(cs::tools::read_rgba(dir + "/g.pgm", rgba), "");
  EXPECT_EQ(rgba.pixels[0], 0xffffffffu);
  EXPECT_EQ(rgba.pixels[1], 0xff010101u);
  EXPECT_NE(cs::tools::read_rgba(dir + "/missing.png", rgba), "");
  std::filesystem::remove_all(dir);
}

TEST(ReadGrey, ColourBecomesTheEngineLumaAndPgmRoundTrips) {
  const std::string dir = std::filesystem::temp_directory_path() / ("cs-grey-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // A 2x1 RGB PPM: pure red and a grey.
  {
    std::ofstream f(dir + "/c.ppm", std::ios::binary);
    f << "P6\n2 1\n255\n";
    const unsigned char px[6] = {255, 0, 0, 90, 90, 90};
    f.write(reinterpret_cast<const char*>(px), 6);
  }
  Image<uint8_t> grey;
  ASSERT_EQ(cs::tools::read_grey(dir + "/c.ppm", grey), "");
  ASSERT_EQ(grey.width, 2);
  EXPECT_EQ(grey.pixels[0], cs::luma_from_rgb(255, 0, 0));
  EXPECT_EQ(grey.pixels[1], 90);
  // The PGM a libSGM program reads: "P5\n2 1\n255\n" then the bytes.
  ASSERT_EQ(cs::tools::write_grey_pgm(dir + "/g.pgm", grey), "");
  std::ifstream in(dir + "/g.pgm", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, std::string("P5\n2 1\n255\n") + static_cast<char>(grey.pixels[0]) + static_cast<char>(90));
  Image<uint8_t> back;
  ASSERT_EQ(cs::tools::read_grey(dir + "/g.pgm", back), "");
  EXPECT_EQ(back.pixels, grey.pixels);
  EXPECT_NE(cs::tools::read_grey(dir + "/missing.png", back), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
