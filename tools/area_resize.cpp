#include "area_resize.h"

#include <algorithm>
#include <vector>

#include "imageio.h"
#include "stages.h"

namespace cs::tools {

namespace {

// One axis of the box filter in units of 1 / (source_size * output_size):
// source pixel k spans [k * n, (k + 1) * n) and output pixel i spans
// [i * m, (i + 1) * m), with m = source size and n = output size, so
// every overlap is an integer and the weights of one output pixel add up
// to m.
struct AxisWeights {
  std::vector<int> first;                // first source pixel of each output pixel
  std::vector<std::vector<int64_t>> weight;  // overlap with source pixels first, first + 1, ...
};

AxisWeights axis_weights(int source_size, int output_size) {
  AxisWeights a;
  a.first.resize(output_size);
  a.weight.resize(output_size);
  const int64_t m = source_size, n = output_size;
  for (int i = 0; i < output_size; ++i) {
    const int64_t begin = i * m, end = (i + 1) * m;  // output pixel i
    const int64_t k0 = begin / n, k1 = (end - 1) / n;  // source pixels it touches
    a.first[i] = static_cast<int>(k0);
    for (int64_t k = k0; k <= k1; ++k) {
      const int64_t lo = std::max(begin, k * n), hi = std::min(end, (k + 1) * n);
      a.weight[i].push_back(hi - lo);
    }
  }
  return a;
}

// The box filter of area_resize on `Channels` 8-bit channels packed in
// each pixel (channel c in bits 8c .. 8c + 7), each channel on its own.
template <int Channels, typename Pixel>
Image<Pixel> resize_channels(const Image<Pixel>& source, int width, int height) {
  if (width <= 0 || height <= 0 || source.width <= 0 || source.height <= 0) return {};
  if (width == source.width && height == source.height) return source;
  const AxisWeights ax = axis_weights(source.width, width), ay = axis_weights(source.height, height);
  // Rows first: each source row filtered along x, sums kept unnormalised
  // (at most source.width * 255 a value).
  std::vector<int64_t> rows(static_cast<size_t>(source.height) * width * Channels);
  for (int y = 0; y < source.height; ++y)
    for (int i = 0; i < width; ++i) {
      int64_t s[Channels] = {};
      const auto& w = ax.weight[i];
      for (size_t t = 0; t < w.size(); ++t) {
        const uint32_t p = source.at(ax.first[i] + static_cast<int>(t), y);
        for (int c = 0; c < Channels; ++c) s[c] += w[t] * ((p >> (8 * c)) & 0xff);
      }
      for (int c = 0; c < Channels; ++c) rows[(static_cast<size_t>(y) * width + i) * Channels + c] = s[c];
    }
  Image<Pixel> out(width, height);
  const int64_t total = static_cast<int64_t>(source.width) * source.height;  // sum of all weights of a pixel
  for (int j = 0; j < height; ++j) {
    const auto& w = ay.weight[j];
    for (int i = 0; i < width; ++i) {
      int64_t s[Channels] = {};
      for (size_t t = 0; t < w.size(); ++t)
        for (int c = 0; c < Channels; ++c)
          s[c] += w[t] * rows[(static_cast<size_t>(ay.first[j] + t) * width + i) * Channels + c];
      uint32_t p = 0;
      for (int c = 0; c < Channels; ++c) p |= static_cast<uint32_t>((s[c] + total / 2) / total) << (8 * c);
      out.at(i, j) = static_cast<Pixel>(p);
    }
  }
  return out;
}

}  // namespace

Image<uint8_t> area_resize(const Image<uint8_t>& source, int width, int height) {
  return resize_channels<1>(source, width, height);
}

Image<uint32_t> area_resize(const Image<uint32_t>& source, int width, int height) {
  return resize_channels<4>(source, width, height);
}

std::string read_grey(const std::string& path, Image<uint8_t>& grey) {
  Picture picture;
  std::string err = read_image(path, picture);
  if (!err.empty()) return err;
  const Frame8 frame = to_frame8(picture);
  convert_to_gray(frame.view(), grey);
  return {};
}

std::string read_rgba(const std::string& path, Image<uint32_t>& rgba) {
  Picture picture;
  std::string err = read_image(path, picture);
  if (!err.empty()) return err;
  const Frame8 frame = to_frame8(picture);
  rgba = Image<uint32_t>(frame.width, frame.height);
  const int bpp = frame.bytes_per_pixel;  // 1 (grey) or 3 (RGB)
  for (size_t i = 0; i < rgba.pixels.size(); ++i) {
    const uint8_t* p = &frame.bytes[i * bpp];
    const uint32_t r = p[0], g = p[bpp == 3 ? 1 : 0], b = p[bpp == 3 ? 2 : 0];
    rgba.pixels[i] = r | g << 8 | b << 16 | 0xff000000u;
  }
  return {};
}

std::string write_grey_pgm(const std::string& path, const Image<uint8_t>& grey) {
  Picture p;
  p.width = grey.width;
  p.height = grey.height;
  p.channels = 1;
  p.bit_depth = 8;
  p.max_value = 255;
  p.samples.assign(grey.pixels.begin(), grey.pixels.end());
  return write_pnm(path, p);
}

}  // namespace cs::tools
