// Output encoding (encode.h encode_output) on the GPU: raw Q4, depth, 8-bit
// and false colour, with the same per-pixel rules (stereo_math.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "encode.h"
#include "stereo.h"
#include "stereo_math.h"

namespace cs::cuda {

// What encoding a pixel needs (encode_pixel), set from EncodeParams.
struct EncodeArgs {
  OutputFormat format;
  const uint8_t* lut;
  int max_disparity;
  double k_q4;
  uint8_t invalid_rgb[3];
  bool alpha_from_mask;
  int bytes;  // output bytes a pixel
};

// An encoded output that the frame's last kernel writes as it makes each
// pixel's Q4 value (the finish of either method), instead of a pass of its
// own over the Q4 map. dst == nullptr: none.
struct EncodeTarget {
  EncodeArgs args{};
  uint8_t* dst = nullptr;
  std::ptrdiff_t pitch = 0;
};

// luts as enqueue_encode's. Not for OutputFormat::Confidence, which copies
// the confidence map (enqueue_encode).
EncodeArgs encode_args(const EncodeParams& params, const uint8_t* luts);

#if defined(__CUDACC__)
// One output pixel from its Q4 disparity (q >= 0), as the low bytes of the
// result; encode.h encode_output's per-pixel rules (stereo_math.h).
__device__ __forceinline__ uint32_t encode_pixel(int q, bool foreground, const EncodeArgs& a) {
  switch (a.format) {
    case OutputFormat::DisparityQ4: return static_cast<uint16_t>(q);
    case OutputFormat::DepthMm: return depth_mm_from_q4(q, a.k_q4);
    case OutputFormat::Gray8: return gray8_from_q4(q, a.max_disparity);
    default: {
      const bool bgr = a.format == OutputFormat::BGRA || a.format == OutputFormat::BGRx;
      const bool has_alpha = a.format == OutputFormat::RGBA || a.format == OutputFormat::BGRA;
      const uint8_t g = gray8_from_q4(q, a.max_disparity);
      uint8_t r, gr, b;
      if (g == 0) {
        r = a.invalid_rgb[0];
        gr = a.invalid_rgb[1];
        b = a.invalid_rgb[2];
      } else {
        r = a.lut[3 * g];
        gr = a.lut[3 * g + 1];
        b = a.lut[3 * g + 2];
      }
      const bool transparent = has_alpha && a.alpha_from_mask && !foreground;
      // Bytes in memory order: c0, c1, c2, alpha.
      return static_cast<uint32_t>(bgr ? b : r) | (static_cast<uint32_t>(gr) << 8) |
             (static_cast<uint32_t>(bgr ? r : b) << 16) | (static_cast<uint32_t>(transparent ? 0 : 255) << 24);
    }
  }
}

// Pixel (x, y) of the target from its Q4 value.
__device__ __forceinline__ void store_encoded(const EncodeTarget& t, int x, int y, int q, bool foreground) {
  const uint32_t v = encode_pixel(q, foreground, t.args);
  uint8_t* row = t.dst + y * t.pitch;
  if (t.args.bytes == 1) row[x] = static_cast<uint8_t>(v);
  else if (t.args.bytes == 2) reinterpret_cast<uint16_t*>(row)[x] = static_cast<uint16_t>(v);
  else reinterpret_cast<uint32_t*>(row)[x] = v;
}
#endif

// luts: device copy of the three colour maps, 768 bytes each, in the order
// of the Colormap enum. mask: 255 = foreground (used for alpha).
// confidence: what OutputFormat::Confidence copies (data == nullptr there:
// zeros, as encode_output); other formats ignore it.
cudaError_t enqueue_encode(ImageView<const uint16_t> disparity_q4, ImageView<const uint8_t> mask,
                           const EncodeParams& params, const uint8_t* luts, uint8_t* dst, std::ptrdiff_t dst_pitch,
                           cudaStream_t stream, ImageView<const uint8_t> confidence = {});

}  // namespace cs::cuda
