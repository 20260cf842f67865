// Still-image files for the command-line tools: PNG, JPEG (when built with
// libjpeg), binary PGM/PPM. GStreamer-free; every failure comes back as a
// sentence naming the file and the problem, never as an exception or exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stereo.h"

namespace cs::tools {

// A decoded picture: `channels` interleaved samples per pixel (1 gray,
// 2 gray+alpha, 3 RGB, 4 RGBA), rows tightly packed. Samples keep the file's
// values: 0..255 for 8-bit files, 0..65535 (or 0..maxval for PGM/PPM) for
// 16-bit ones, so disparity maps come back exactly as stored.
struct Picture {
  int width = 0;
  int height = 0;
  int channels = 0;
  int bit_depth = 8;     // 8 or 16
  int max_value = 255;   // 255, 65535, or a PGM/PPM file's maxval
  std::vector<uint16_t> samples;

  uint16_t sample(int x, int y, int c) const {
    return samples[(static_cast<size_t>(y) * width + x) * channels + c];
  }
};

// Reads PNG (gray, gray+alpha, RGB, RGBA, palette; 1..16 bit), JPEG (gray,
// RGB) or binary PGM/PPM (P5/P6, maxval up to 65535). The format comes from
// the file's first bytes, not its name. Empty string on success.
std::string read_image(const std::string& path, Picture& out);

// Writes a PNG: 1, 2, 3 or 4 channels at 8 or 16 bits (16-bit samples are
// stored big-endian, as PNG requires).
std::string write_png(const std::string& path, const Picture& picture);
// Writes a binary PGM (1 channel) or PPM (3 channels), 8 or 16 bits.
std::string write_pnm(const std::string& path, const Picture& picture);
// Chooses the writer from the name: .pgm/.ppm/.pnm -> write_pnm, else PNG.
std::string write_image(const std::string& path, const Picture& picture);

// Whether this build reads JPEG.
bool have_jpeg();

// Conversions between pictures and the core's images.

// One channel as a 16-bit image (error if the picture has several channels
// and `allow_first_of_many` is false).
std::string single_channel(const Picture& picture, Image<uint16_t>& out, const char* what,
                           bool allow_first_of_many = false);

// 8-bit matching input: gray stays gray (GRAY8); gray+alpha drops alpha;
// RGB and RGBA become packed RGB. Samples are rescaled from 0..max_value to
// 0..255, rounding to nearest.
struct Frame8 {
  PixelFormat format = PixelFormat::GRAY8;
  int width = 0;
  int height = 0;
  int bytes_per_pixel = 1;
  std::vector<uint8_t> bytes;
  FrameView view() const;
};
Frame8 to_frame8(const Picture& picture);

// Half size by 2x2 averaging (average4, as the pyramid does); an odd last
// row or column is dropped.
Frame8 half_size(const Frame8& frame);

Picture picture_from_q4(const Image<uint16_t>& disparity_q4);
Picture picture_from_rgb(int width, int height, const std::vector<uint8_t>& rgb);

}  // namespace cs::tools
