// Output encodings of a Q4 disparity map: raw, depth, 8-bit, false colour.
// Scaling always follows the configured range, never the frame's content,
// so video does not flicker. Per-pixel rules are in stereo_math.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stereo.h"
#include "stereo_math.h"

namespace cs {

enum class OutputFormat {
  DisparityQ4,  // GRAY16 (native endian = LE on our targets): d * 16, 0 = invalid
  DepthMm,      // GRAY16: millimetres, 0 = invalid, 65535 = at or beyond 65.535 m
  Gray8,        // gray8_from_q4
  RGBA, BGRA, RGBx, BGRx,  // false colour through the colour map
  // GRAY8: the per-pixel confidence map as is (stages.h, confidence):
  // 0 = invalid or another disparity fits as well, 255 = unique.
  Confidence,
};

const char* output_format_name(OutputFormat f);
int output_bytes_per_pixel(OutputFormat f);

// What the output frame shows: the disparity map in `format` (None), or the
// two views as matching sees them (rectified when the engine rectifies),
// left first, beside each other (an output 2 W x H) or one above the other
// (W x 2 H), in RGBA, BGRA, RGBx or BGRx with alpha 255 (encode_views).
enum class ViewsOutput { None, SideBySide, TopBottom };

struct EncodeParams {
  OutputFormat format = OutputFormat::DisparityQ4;
  ViewsOutput views = ViewsOutput::None;
  Colormap colormap = Colormap::Turbo;
  int max_disparity = 64;      // scale of Gray8 and colour
  // Depth: the rectified pair's calibration. 0 = not set, and DepthMm
  // refuses to encode until both are (no default could be right for a
  // camera it has never seen).
  double baseline_mm = 0.0;
  double focal_px = 0.0;
  // RGBA/BGRA: alpha = 255 on foreground, 0 on background (as the paper
  // shows it); false: alpha = 255 everywhere.
  bool alpha_from_mask = false;
  uint8_t invalid_rgb[3] = {0, 0, 0};
};

// The output frame's size for views of width x height (`views`).
void output_frame_size(ViewsOutput views, int width, int height, int* out_width, int* out_height);

// A view's colour (R,G,B,0 packed, as stages.h convert_to_rgb packs it) as
// an output pixel of `format` (RGBA, BGRA, RGBx or BGRx: bytes in memory
// order c0, c1, c2, 255), as the low bytes of the result.
CS_HD uint32_t view_output_pixel(uint32_t rgb, OutputFormat format) {
  const bool bgr = format == OutputFormat::BGRA || format == OutputFormat::BGRx;
  const uint32_t r = rgb & 255u, g = rgb >> 8 & 255u, b = rgb >> 16 & 255u;
  return (bgr ? b : r) | (g << 8) | ((bgr ? r : b) << 16) | (255u << 24);
}

// Writes both views (`left`, `right`: R,G,B,0 packed, the views' size; a
// null data pointer: black) into the output frame as params.views and
// params.format say (view_output_pixel). dst as encode_output's.
void encode_views(ImageView<const uint32_t> left, ImageView<const uint32_t> right, const EncodeParams& params,
                  uint8_t* dst, std::ptrdiff_t dst_pitch);

// 256 entries of R, G, B. Entry 0 is the low end of the range.
const uint8_t* colormap_lut(Colormap c);

// Encodes one frame. `mask` may be null (treated as all foreground).
// `confidence` is what OutputFormat::Confidence writes; null there gives
// 0 everywhere (an all-invalid frame); other formats ignore it.
// dst points at the first row, `dst_pitch` bytes apart.
void encode_output(ImageView<const uint16_t> disparity_q4, const ImageView<const uint8_t>* mask,
                   const EncodeParams& params, uint8_t* dst, std::ptrdiff_t dst_pitch,
                   const ImageView<const uint8_t>* confidence = nullptr);

}  // namespace cs
