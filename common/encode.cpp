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
    case OutputFormat::Confidence: return "confidence";
  }
  return "unknown";
}

int output_bytes_per_pixel(OutputFormat f) {
  switch (f) {
    case OutputFormat::DisparityQ4:
    case OutputFormat::DepthMm: return 2;
    case OutputFormat::Gray8:
    case OutputFormat::Confidence: return 1;
    default: return 4;
  }
}

namespace {

uint8_t unit_to_byte(double v) {
  const double c = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
  return static_cast<uint8_t>(std::lround(c * 255.0));
}

// Google's Turbo map as published: the 256-entry sRGB byte table
// (turbo_srgb_bytes) of Anton Mikhailov's turbo_colormap.c, Copyright 2019
// Google LLC, Apache License 2.0, which accompanies "Turbo, An Improved
// Rainbow Colormap for Visualization" (Google AI Blog, August 2019;
// https://gist.github.com/mikhailov-work/ee72ba4191942acecc03fe6da94fc73f).
// Data, not code: every entry is round(255 * turbo_colormap_data[i]) of the
// same gist's float table, which is how it was checked when written here.
constexpr uint8_t kTurboSrgb[256][3] = {
    {48, 18, 59}, {50, 21, 67}, {51, 24, 74}, {52, 27, 81}, {53, 30, 88}, {54, 33, 95}, {55, 36, 102},
    {56, 39, 109}, {57, 42, 115}, {58, 45, 121}, {59, 47, 128}, {60, 50, 134}, {61, 53, 139}, {62, 56, 145},
    {63, 59, 151}, {63, 62, 156}, {64, 64, 162}, {65, 67, 167}, {65, 70, 172}, {66, 73, 177}, {66, 75, 181},
    {67, 78, 186}, {68, 81, 191}, {68, 84, 195}, {68, 86, 199}, {69, 89, 203}, {69, 92, 207}, {69, 94, 211},
    {70, 97, 214}, {70, 100, 218}, {70, 102, 221}, {70, 105, 224}, {70, 107, 227}, {71, 110, 230}, {71, 113, 233},
    {71, 115, 235}, {71, 118, 238}, {71, 120, 240}, {71, 123, 242}, {70, 125, 244}, {70, 128, 246}, {70, 130, 248},
    {70, 133, 250}, {70, 135, 251}, {69, 138, 252}, {69, 140, 253}, {68, 143, 254}, {67, 145, 254}, {66, 148, 255},
    {65, 150, 255}, {64, 153, 255}, {62, 155, 254}, {61, 158, 254}, {59, 160, 253}, {58, 163, 252}, {56, 165, 251},
    {55, 168, 250}, {53, 171, 248}, {51, 173, 247}, {49, 175, 245}, {47, 178, 244}, {46, 180, 242}, {44, 183, 240},
    {42, 185, 238}, {40, 188, 235}, {39, 190, 233}, {37, 192, 231}, {35, 195, 228}, {34, 197, 226}, {32, 199, 223},
    {31, 201, 221}, {30, 203, 218}, {28, 205, 216}, {27, 208, 213}, {26, 210, 210}, {26, 212, 208}, {25, 213, 205},
    {24, 215, 202}, {24, 217, 200}, {24, 219, 197}, {24, 221, 194}, {24, 222, 192}, {24, 224, 189}, {25, 226, 187},
    {25, 227, 185}, {26, 228, 182}, {28, 230, 180}, {29, 231, 178}, {31, 233, 175}, {32, 234, 172}, {34, 235, 170},
    {37, 236, 167}, {39, 238, 164}, {42, 239, 161}, {44, 240, 158}, {47, 241, 155}, {50, 242, 152}, {53, 243, 148},
    {56, 244, 145}, {60, 245, 142}, {63, 246, 138}, {67, 247, 135}, {70, 248, 132}, {74, 248, 128}, {78, 249, 125},
    {82, 250, 122}, {85, 250, 118}, {89, 251, 115}, {93, 252, 111}, {97, 252, 108}, {101, 253, 105},
    {105, 253, 102}, {109, 254, 98}, {113, 254, 95}, {117, 254, 92}, {121, 254, 89}, {125, 255, 86}, {128, 255, 83},
    {132, 255, 81}, {136, 255, 78}, {139, 255, 75}, {143, 255, 73}, {146, 255, 71}, {150, 254, 68}, {153, 254, 66},
    {156, 254, 64}, {159, 253, 63}, {161, 253, 61}, {164, 252, 60}, {167, 252, 58}, {169, 251, 57}, {172, 251, 56},
    {175, 250, 55}, {177, 249, 54}, {180, 248, 54}, {183, 247, 53}, {185, 246, 53}, {188, 245, 52}, {190, 244, 52},
    {193, 243, 52}, {195, 241, 52}, {198, 240, 52}, {200, 239, 52}, {203, 237, 52}, {205, 236, 52}, {208, 234, 52},
    {210, 233, 53}, {212, 231, 53}, {215, 229, 53}, {217, 228, 54}, {219, 226, 54}, {221, 224, 55}, {223, 223, 55},
    {225, 221, 55}, {227, 219, 56}, {229, 217, 56}, {231, 215, 57}, {233, 213, 57}, {235, 211, 57}, {236, 209, 58},
    {238, 207, 58}, {239, 205, 58}, {241, 203, 58}, {242, 201, 58}, {244, 199, 58}, {245, 197, 58}, {246, 195, 58},
    {247, 193, 58}, {248, 190, 57}, {249, 188, 57}, {250, 186, 57}, {251, 184, 56}, {251, 182, 55}, {252, 179, 54},
    {252, 177, 54}, {253, 174, 53}, {253, 172, 52}, {254, 169, 51}, {254, 167, 50}, {254, 164, 49}, {254, 161, 48},
    {254, 158, 47}, {254, 155, 45}, {254, 153, 44}, {254, 150, 43}, {254, 147, 42}, {254, 144, 41}, {253, 141, 39},
    {253, 138, 38}, {252, 135, 37}, {252, 132, 35}, {251, 129, 34}, {251, 126, 33}, {250, 123, 31}, {249, 120, 30},
    {249, 117, 29}, {248, 114, 28}, {247, 111, 26}, {246, 108, 25}, {245, 105, 24}, {244, 102, 23}, {243, 99, 21},
    {242, 96, 20}, {241, 93, 19}, {240, 91, 18}, {239, 88, 17}, {237, 85, 16}, {236, 83, 15}, {235, 80, 14},
    {234, 78, 13}, {232, 75, 12}, {231, 73, 12}, {229, 71, 11}, {228, 69, 10}, {226, 67, 10}, {225, 65, 9},
    {223, 63, 8}, {221, 61, 8}, {220, 59, 7}, {218, 57, 7}, {216, 55, 6}, {214, 53, 6}, {212, 51, 5}, {210, 49, 5},
    {208, 47, 5}, {206, 45, 4}, {204, 43, 4}, {202, 42, 4}, {200, 40, 3}, {197, 38, 3}, {195, 37, 3}, {193, 35, 2},
    {190, 33, 2}, {188, 32, 2}, {185, 30, 2}, {183, 29, 2}, {180, 27, 1}, {178, 26, 1}, {175, 24, 1}, {172, 23, 1},
    {169, 22, 1}, {167, 20, 1}, {164, 19, 1}, {161, 18, 1}, {158, 16, 1}, {155, 15, 1}, {152, 14, 1}, {149, 13, 1},
    {146, 11, 1}, {142, 10, 1}, {139, 9, 2}, {136, 8, 2}, {133, 7, 2}, {129, 6, 2}, {126, 5, 2}, {122, 4, 3},
};

void build_turbo(uint8_t* lut) { std::memcpy(lut, kTurboSrgb, sizeof(kTurboSrgb)); }

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
                   const EncodeParams& params, uint8_t* dst, std::ptrdiff_t dst_pitch,
                   const ImageView<const uint8_t>* confidence) {
  const int w = disparity_q4.width, h = disparity_q4.height;
  if (params.format == OutputFormat::Confidence) {
    for (int y = 0; y < h; ++y) {
      if (confidence)
        std::memcpy(dst + y * dst_pitch, confidence->row(y), w);
      else
        std::memset(dst + y * dst_pitch, 0, w);
    }
    return;
  }
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

void output_frame_size(ViewsOutput views, int width, int height, int* out_width, int* out_height) {
  *out_width = views == ViewsOutput::SideBySide ? 2 * width : width;
  *out_height = views == ViewsOutput::TopBottom ? 2 * height : height;
}

void encode_views(ImageView<const uint32_t> left, ImageView<const uint32_t> right, const EncodeParams& params,
                  uint8_t* dst, std::ptrdiff_t dst_pitch) {
  const int w = left.width, h = left.height;
  for (int v = 0; v < 2; ++v) {
    const ImageView<const uint32_t>& in = v == 0 ? left : right;
    const bool beside = params.views == ViewsOutput::SideBySide;
    uint8_t* base = dst + (v == 0 ? 0 : beside ? static_cast<std::ptrdiff_t>(w) * 4 : h * dst_pitch);
    for (int y = 0; y < h; ++y) {
      uint8_t* row = base + y * dst_pitch;
      for (int x = 0; x < w; ++x) {
        const uint32_t px = view_output_pixel(in.data ? in.row(y)[x] : 0u, params.format);
        std::memcpy(row + 4 * x, &px, 4);
      }
    }
  }
}

}  // namespace cs
