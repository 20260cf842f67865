// Input conversion: matching intensity and background-model colour.
#include "stages.h"

namespace cs {

namespace {

// Byte offsets of R, G, B within a packed pixel, and its size.
struct PackedLayout {
  int r, g, b, bytes;
};

bool packed_layout(PixelFormat f, PackedLayout* l) {
  switch (f) {
    case PixelFormat::RGBA: *l = {0, 1, 2, 4}; return true;
    case PixelFormat::RGBx: *l = {0, 1, 2, 4}; return true;
    case PixelFormat::BGRA: *l = {2, 1, 0, 4}; return true;
    case PixelFormat::BGRx: *l = {2, 1, 0, 4}; return true;
    case PixelFormat::ARGB: *l = {1, 2, 3, 4}; return true;
    case PixelFormat::xRGB: *l = {1, 2, 3, 4}; return true;
    case PixelFormat::ABGR: *l = {3, 2, 1, 4}; return true;
    case PixelFormat::xBGR: *l = {3, 2, 1, 4}; return true;
    case PixelFormat::RGB: *l = {0, 1, 2, 3}; return true;
    case PixelFormat::BGR: *l = {2, 1, 0, 3}; return true;
    default: return false;
  }
}

// Byte offsets within a YUY2/UYVY macropixel: the first Y (the second is
// two bytes on), U and V.
struct MacropixelLayout {
  int y0, u, v;
};

bool macropixel_layout(PixelFormat f, MacropixelLayout* l) {
  switch (f) {
    case PixelFormat::YUY2: *l = {0, 1, 3}; return true;
    case PixelFormat::UYVY: *l = {1, 0, 2}; return true;
    default: return false;
  }
}

const uint8_t* plane_row(const FrameView& in, int plane, int y) { return in.plane[plane] + y * in.pitch[plane]; }

}  // namespace

void convert_to_gray(const FrameView& in, Image<uint8_t>& gray) {
  gray = Image<uint8_t>(in.width, in.height);
  PackedLayout l;
  if (packed_layout(in.format, &l)) {
    for (int y = 0; y < in.height; ++y) {
      const uint8_t* src = plane_row(in, 0, y);
      uint8_t* dst = &gray.at(0, y);
      for (int x = 0; x < in.width; ++x, src += l.bytes) dst[x] = luma_from_rgb(src[l.r], src[l.g], src[l.b]);
    }
    return;
  }
  MacropixelLayout m;
  if (macropixel_layout(in.format, &m)) {
    for (int y = 0; y < in.height; ++y) {
      const uint8_t* src = plane_row(in, 0, y);
      uint8_t* dst = &gray.at(0, y);
      for (int x = 0; x < in.width; ++x) dst[x] = src[2 * x + m.y0];
    }
    return;
  }
  // GRAY8, I420, NV12: plane 0 is the intensity.
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* src = plane_row(in, 0, y);
    uint8_t* dst = &gray.at(0, y);
    for (int x = 0; x < in.width; ++x) dst[x] = src[x];
  }
}

void convert_to_rgb(const FrameView& in, Image<uint32_t>& rgb) {
  rgb = Image<uint32_t>(in.width, in.height);
  auto pack = [](uint32_t r, uint32_t g, uint32_t b) { return r | (g << 8) | (b << 16); };
  PackedLayout l;
  if (packed_layout(in.format, &l)) {
    for (int y = 0; y < in.height; ++y) {
      const uint8_t* src = plane_row(in, 0, y);
      for (int x = 0; x < in.width; ++x, src += l.bytes) rgb.at(x, y) = pack(src[l.r], src[l.g], src[l.b]);
    }
    return;
  }
  if (in.format == PixelFormat::GRAY8) {
    for (int y = 0; y < in.height; ++y) {
      const uint8_t* src = plane_row(in, 0, y);
      for (int x = 0; x < in.width; ++x) rgb.at(x, y) = pack(src[x], src[x], src[x]);
    }
    return;
  }
  MacropixelLayout m;
  if (macropixel_layout(in.format, &m)) {
    for (int y = 0; y < in.height; ++y) {
      const uint8_t* src = plane_row(in, 0, y);
      for (int x = 0; x < in.width; ++x) {
        const uint8_t* macropixel = src + 4 * (x / 2);
        uint8_t c[3];
        rgb_from_yuv(src[2 * x + m.y0], macropixel[m.u], macropixel[m.v], c);
        rgb.at(x, y) = pack(c[0], c[1], c[2]);
      }
    }
    return;
  }
  const bool nv12 = in.format == PixelFormat::NV12;
  for (int y = 0; y < in.height; ++y) {
    const uint8_t* luma = plane_row(in, 0, y);
    const uint8_t* cu = plane_row(in, 1, y / 2);
    const uint8_t* cv = nv12 ? cu + 1 : plane_row(in, 2, y / 2);
    const int step = nv12 ? 2 : 1;
    for (int x = 0; x < in.width; ++x) {
      uint8_t c[3];
      rgb_from_yuv(luma[x], cu[(x / 2) * step], cv[(x / 2) * step], c);
      rgb.at(x, y) = pack(c[0], c[1], c[2]);
    }
  }
}

}  // namespace cs
