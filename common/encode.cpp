// Output encodings and colour maps.
#include "encode.h"

#include <cmath>
#include <cstring>

#include "stereo_math.h"

namespace cs {

const char* output_format_name(OutputFormat f) {
  switch (f) {
    case OutputFormat::DisparityQ4: return "disparity-q4";
    case OutputFormat::DepthMm: return "depth-mm";
    case OutputFormat::Gray8: return "gray8";
    case OutputFormat::RGBA: return "RGBA";
    case OutputFormat::BGRA: return "BGRA";
    case OutputFormat::RGBx: return "RGBx";
    case OutputFormat::BGRx: return "BGRx";
  }
  return "unknown";
}

int output_bytes_per_pixel(OutputFormat f) {
  switch (f) {
    case OutputFormat::DisparityQ4:
    case OutputFormat::DepthMm: return 2;
    case OutputFormat::Gray8: return 1;
    default: return 4;
  }
}

namespace {

uint8_t unit_to_byte(double v) {
  const double c = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
  return static_cast<uint8_t>(std::lround(c * 255.0));
}

// A piecewise-linear approximation of Google's Turbo map through eleven
// colours read off it at t = 0, 0.1, ..., 1 (dark blue, blue, cyan, green,
// yellow, orange, dark red).
void build_turbo(uint8_t* lut) {
  static const int knots[11][3] = {{48, 18, 59},   {67, 75, 186},  {70, 128, 246}, {40, 180, 236},
                                   {26, 228, 182}, {100, 253, 106}, {165, 252, 60}, {225, 221, 55},
                                   {252, 164, 45}, {228, 85, 20},  {122, 4, 3}};
  for (int i = 0; i < 256; ++i) {
    const double t = i / 255.0 * 10.0;
    const int k = t >= 10.0 ? 9 : static_cast<int>(t);
    const double f = t - k;
    for (int c = 0; c < 3; ++c)
      lut[i * 3 + c] = static_cast<uint8_t>(std::lround(knots[k][c] * (1.0 - f) + knots[k + 1][c] * f));
  }
}

// Classic Jet: each channel a clipped triangle over t.
void build_jet(uint8_t* lut) {
  for (int i = 0; i < 256; ++i) {
    const double t = i / 255.0;
    lut[i * 3 + 0] = unit_to_byte(1.5 - std::fabs(4.0 * t - 3.0));
    lut[i * 3 + 1] = unit_to_byte(1.5 - std::fabs(4.0 * t - 2.0));
    lut[i * 3 + 2] = unit_to_byte(1.5 - std::fabs(4.0 * t - 1.0));
  }
}

void build_grey(uint8_t* lut) {
  for (int i = 0; i < 256; ++i) lut[i * 3] = lut[i * 3 + 1] = lut[i * 3 + 2] = static_cast<uint8_t>(i);
}

struct Luts {
  uint8_t turbo[768], jet[768], grey[768];
  Luts() {
    build_turbo(turbo);
    build_jet(jet);
    build_grey(grey);
  }
};

}  // namespace

const uint8_t* colormap_lut(Colormap c) {
  static const Luts luts;  // built once, thread-safe initialisation
  switch (c) {
    case Colormap::Jet: return luts.jet;
    case Colormap::Grey: return luts.grey;
    default: return luts.turbo;
  }
}

void encode_output(ImageView<const uint16_t> disparity_q4, const ImageView<const uint8_t>* mask,
                   const EncodeParams& params, uint8_t* dst, std::ptrdiff_t dst_pitch) {
  const int w = disparity_q4.width, h = disparity_q4.height;
  const double k_q4 = params.baseline_mm * params.focal_px * 16.0;
  const uint8_t* lut = colormap_lut(params.colormap);
  const bool bgr = params.format == OutputFormat::BGRA || params.format == OutputFormat::BGRx;
  const bool has_alpha = params.format == OutputFormat::RGBA || params.format == OutputFormat::BGRA;
  for (int y = 0; y < h; ++y) {
    const uint16_t* src = disparity_q4.row(y);
    const uint8_t* m = mask ? mask->row(y) : nullptr;
    uint8_t* row = dst + y * dst_pitch;
    for (int x = 0; x < w; ++x) {
      const int q = src[x];
      switch (params.format) {
        case OutputFormat::DisparityQ4: {
          const uint16_t v = static_cast<uint16_t>(q);
          std::memcpy(row + 2 * x, &v, 2);
          break;
        }
        case OutputFormat::DepthMm: {
          const uint16_t v = depth_mm_from_q4(q, k_q4);
          std::memcpy(row + 2 * x, &v, 2);
          break;
        }
        case OutputFormat::Gray8: row[x] = gray8_from_q4(q, params.max_disparity); break;
        default: {
          const uint8_t g = gray8_from_q4(q, params.max_disparity);
          const uint8_t* rgb = g == 0 ? params.invalid_rgb : lut + 3 * g;
          uint8_t* px = row + 4 * x;
          px[0] = bgr ? rgb[2] : rgb[0];
          px[1] = rgb[1];
          px[2] = bgr ? rgb[0] : rgb[2];
          px[3] = (has_alpha && params.alpha_from_mask && m && m[x] == 0) ? 0 : 255;
          break;
        }
      }
    }
  }
}

}  // namespace cs
