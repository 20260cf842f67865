// Image files: exact round trips, byte order on disk, hand-written PGM/PPM,
// JPEG through libjpeg, and clear errors on damaged or unknown files.
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#if CS_HAVE_JPEG
#include <jpeglib.h>
#endif

#include "imageio.h"

namespace {

using cs::tools::Picture;
using cs::tools::read_image;

class ImageIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cs-imageio-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  void write_bytes(const std::string& p, const std::string& bytes) const {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  std::filesystem::path dir_;
};

Picture patterned(int w, int h, int channels, int depth) {
  Picture p;
  p.width = w;
  p.height = h;
  p.channels = channels;
  p.bit_depth = depth;
  p.max_value = depth == 16 ? 65535 : 255;
  p.samples.resize(static_cast<size_t>(w) * h * channels);
  for (size_t i = 0; i < p.samples.size(); ++i)
    p.samples[i] = static_cast<uint16_t>(depth == 16 ? (i * 2654435761u) & 0xffff : (i * 37 + 11) & 0xff);
  return p;
}

TEST_F(ImageIo, PngRoundTripsEveryLayoutExactly) {
  for (int depth : {8, 16})
    for (int channels : {1, 2, 3, 4}) {
      const Picture p = patterned(7, 5, channels, depth);
      const std::string file = path("rt.png");
      ASSERT_EQ(cs::tools::write_png(file, p), "");
      Picture q;
      ASSERT_EQ(read_image(file, q), "");
      EXPECT_EQ(q.width, 7);
      EXPECT_EQ(q.height, 5);
      EXPECT_EQ(q.channels, channels);
      EXPECT_EQ(q.bit_depth, depth);
      EXPECT_EQ(q.samples, p.samples) << channels << " channels, " << depth << " bit";
    }
}

TEST_F(ImageIo, SixteenBitPngIsBigEndianOnDisk) {
  Picture p = patterned(2, 1, 1, 16);
  p.samples = {0x0102, 0xA0B0};
  const std::string file = path("be.png");
  ASSERT_EQ(cs::tools::write_png(file, p), "");
  // Read back with libpng and no transformations: rows hold the file's bytes.
  FILE* f = std::fopen(file.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_read_info(png, info);
  EXPECT_EQ(png_get_bit_depth(png, info), 16);
  EXPECT_EQ(png_get_color_type(png, info), PNG_COLOR_TYPE_GRAY);
  uint8_t row[4] = {0};
  png_read_row(png, row, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  EXPECT_EQ(row[0], 0x01);
  EXPECT_EQ(row[1], 0x02);
  EXPECT_EQ(row[2], 0xA0);
  EXPECT_EQ(row[3], 0xB0);
}

TEST_F(ImageIo, ReadsHandWrittenPgmAndPpmWithComments) {
  const std::string pgm = path("a.pgm");
  write_bytes(pgm, std::string("P5\n# a comment\n3 1 # another\n255\n") + std::string("\x00\x7f\xff", 3));
  Picture q;
  ASSERT_EQ(read_image(pgm, q), "");
  EXPECT_EQ(q.width, 3);
  EXPECT_EQ(q.channels, 1);
  EXPECT_EQ(q.bit_depth, 8);
  EXPECT_EQ(q.samples, (std::vector<uint16_t>{0, 127, 255}));

  const std::string pgm16 = path("b.pgm");
  write_bytes(pgm16, std::string("P5 2 1 65535\n") + std::string("\x12\x34\xff\x00", 4));
  ASSERT_EQ(read_image(pgm16, q), "");
  EXPECT_EQ(q.bit_depth, 16);
  EXPECT_EQ(q.samples, (std::vector<uint16_t>{0x1234, 0xff00}));

  const std::string ppm = path("c.ppm");
  write_bytes(ppm, std::string("P6\n1 2\n255\n") + std::string("\x01\x02\x03\x04\x05\x06", 6));
  ASSERT_EQ(read_image(ppm, q), "");
  EXPECT_EQ(q.width, 1);
  EXPECT_EQ(q.height, 2);
  EXPECT_EQ(q.channels, 3);
  EXPECT_EQ(q.samples, (std::vector<uint16_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(ImageIo, OddMaxvalIsKeptAndScaledForMatching) {
  const std::string pgm = path("m.pgm");
  write_bytes(pgm, std::string("P5 3 1 1023\n") + std::string("\x03\xff\x02\x00\x00\x00", 6));
  Picture q;
  ASSERT_EQ(read_image(pgm, q), "");
  EXPECT_EQ(q.max_value, 1023);
  EXPECT_EQ(q.samples, (std::vector<uint16_t>{1023, 512, 0}));
  const cs::tools::Frame8 f = cs::tools::to_frame8(q);
  EXPECT_EQ(f.bytes, (std::vector<uint8_t>{255, 128, 0}));  // (512 * 255 + 511) / 1023 = 128
}

TEST_F(ImageIo, PnmWriterRoundTripsAndWritesTheStandardHeader) {
  const Picture p = patterned(3, 2, 1, 16);
  const std::string file = path("w.pgm");
  ASSERT_EQ(cs::tools::write_image(file, p), "");
  std::ifstream in(file, std::ios::binary);
  std::string header(13, '\0');
  in.read(&header[0], 13);
  EXPECT_EQ(header, "P5\n3 2\n65535\n");
  Picture q;
  ASSERT_EQ(read_image(file, q), "");
  EXPECT_EQ(q.samples, p.samples);

  const Picture rgb = patterned(4, 3, 3, 8);
  ASSERT_EQ(cs::tools::write_image(path("w.ppm"), rgb), "");
  ASSERT_EQ(read_image(path("w.ppm"), q), "");
  EXPECT_EQ(q.channels, 3);
  EXPECT_EQ(q.samples, rgb.samples);
  EXPECT_NE(cs::tools::write_pnm(path("x.pgm"), patterned(2, 2, 4, 8)), "");  // RGBA has no PNM form here
}

TEST_F(ImageIo, DamagedAndUnknownFilesGiveMessagesNamingTheFile) {
  Picture q;
  std::string e = read_image(path("missing.png"), q);
  EXPECT_NE(e.find("missing.png"), std::string::npos) << e;

  write_bytes(path("junk.bin"), "hello, not an image");
  e = read_image(path("junk.bin"), q);
  EXPECT_NE(e.find("unknown image format"), std::string::npos) << e;

  write_bytes(path("short.pgm"), std::string("P5 4 4 255\n") + std::string(10, 'x'));
  e = read_image(path("short.pgm"), q);
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;

  write_bytes(path("hdr.pgm"), "P5 4 ");
  e = read_image(path("hdr.pgm"), q);
  EXPECT_NE(e.find("header"), std::string::npos) << e;

  write_bytes(path("ascii.pgm"), "P2 1 1 255 0\n");
  e = read_image(path("ascii.pgm"), q);
  EXPECT_NE(e.find("not supported"), std::string::npos) << e;

  // A valid PNG cut in half: libpng's error comes back as a message.
  ASSERT_EQ(cs::tools::write_png(path("full.png"), patterned(64, 64, 3, 8)), "");
  std::ifstream in(path("full.png"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_bytes(path("cut.png"), bytes.substr(0, bytes.size() / 2));
  e = read_image(path("cut.png"), q);
  EXPECT_NE(e.find("cut.png: cannot decode PNG"), std::string::npos) << e;

  // Writing into a folder that does not exist.
  e = cs::tools::write_png(path("no/such/dir/x.png"), patterned(2, 2, 1, 8));
  EXPECT_NE(e.find("cannot create"), std::string::npos) << e;
}

#if CS_HAVE_JPEG
// Writes a flat JPEG of one value per channel with libjpeg.
void write_flat_jpeg(const std::string& file, int w, int h, int channels, const uint8_t* value) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  FILE* f = std::fopen(file.c_str(), "wb");
  jpeg_stdio_dest(&c, f);
  c.image_width = w;
  c.image_height = h;
  c.input_components = channels;
  c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 95, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(w) * channels);
  for (size_t i = 0; i < row.size(); ++i) row[i] = value[i % channels];
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

TEST_F(ImageIo, ReadsGrayAndColourJpeg) {
  ASSERT_TRUE(cs::tools::have_jpeg());
  const uint8_t gray = 100;
  write_flat_jpeg(path("g.jpg"), 19, 11, 1, &gray);
  Picture q;
  ASSERT_EQ(read_image(path("g.jpg"), q), "");
  EXPECT_EQ(q.width, 19);
  EXPECT_EQ(q.height, 11);
  EXPECT_EQ(q.channels, 1);
  for (uint16_t s : q.samples) EXPECT_NEAR(s, 100, 1);

  const uint8_t rgb[3] = {200, 60, 30};
  write_flat_jpeg(path("c.jpg"), 16, 8, 3, rgb);
  ASSERT_EQ(read_image(path("c.jpg"), q), "");
  EXPECT_EQ(q.channels, 3);
  for (size_t i = 0; i < q.samples.size(); ++i) EXPECT_NEAR(q.samples[i], rgb[i % 3], 4) << i;

  // Only the start-of-image marker: the decoder's complaint comes back.
  std::ofstream(path("bad.jpg"), std::ios::binary) << std::string("\xff\xd8\xff\xe0\x00\x10", 6);
  const std::string e = read_image(path("bad.jpg"), q);
  EXPECT_NE(e.find("bad.jpg: cannot decode JPEG"), std::string::npos) << e;
}
#endif

TEST(Frames, ToFrame8DropsAlphaAndRescalesSixteenBits) {
  Picture rgba = patterned(2, 1, 4, 8);
  rgba.samples = {1, 2, 3, 9, 4, 5, 6, 9};
  cs::tools::Frame8 f = cs::tools::to_frame8(rgba);
  EXPECT_EQ(f.format, cs::PixelFormat::RGB);
  EXPECT_EQ(f.bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));

  Picture ga = patterned(2, 1, 2, 16);
  ga.samples = {0x1234, 0xffff, 0xab00, 0};
  f = cs::tools::to_frame8(ga);
  EXPECT_EQ(f.format, cs::PixelFormat::GRAY8);
  // round(0x1234 * 255 / 65535) = 18, round(0xab00 * 255 / 65535) = 170
  EXPECT_EQ(f.bytes, (std::vector<uint8_t>{18, 170}));
  EXPECT_EQ(f.view().pitch[0], 2);
}

TEST(Frames, HalfSizeAveragesTwoByTwoBlocksPerChannel) {
  cs::tools::Frame8 f;
  f.format = cs::PixelFormat::RGB;
  f.width = 3;  // odd: the last column is dropped
  f.height = 2;
  f.bytes_per_pixel = 3;
  // Row 0: (10,0,1) (20,0,2) (99,99,99); row 1: (30,0,3) (41,0,5) (99,99,99)
  f.bytes = {10, 0, 1, 20, 0, 2, 99, 99, 99, 30, 0, 3, 41, 0, 5, 99, 99, 99};
  const cs::tools::Frame8 h = cs::tools::half_size(f);
  ASSERT_EQ(h.width, 1);
  ASSERT_EQ(h.height, 1);
  // (10+20+30+41+2)>>2 = 25; (1+2+3+5+2)>>2 = 3
  EXPECT_EQ(h.bytes, (std::vector<uint8_t>{25, 0, 3}));
}

}  // namespace
