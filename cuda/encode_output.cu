#include "encode_output.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

struct EncodeArgs {
  OutputFormat format;
  const uint8_t* lut;
  int max_disparity;
  double k_q4;
  uint8_t invalid_rgb[3];
  bool alpha_from_mask;
};

__global__ void encode_kernel(ImageView<const uint16_t> q4, ImageView<const uint8_t> mask, EncodeArgs a,
                              uint8_t* dst, std::ptrdiff_t dst_pitch) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= q4.width || y >= q4.height) return;
  const int q = drow(q4, y)[x];
  uint8_t* row = dst + y * dst_pitch;
  switch (a.format) {
    case OutputFormat::DisparityQ4: reinterpret_cast<uint16_t*>(row)[x] = static_cast<uint16_t>(q); break;
    case OutputFormat::DepthMm: reinterpret_cast<uint16_t*>(row)[x] = depth_mm_from_q4(q, a.k_q4); break;
    case OutputFormat::Gray8: row[x] = gray8_from_q4(q, a.max_disparity); break;
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
      const bool transparent = has_alpha && a.alpha_from_mask && mask.data && drow(mask, y)[x] == 0;
      const uint32_t px = static_cast<uint32_t>(bgr ? b : r) | (static_cast<uint32_t>(gr) << 8) |
                          (static_cast<uint32_t>(bgr ? r : b) << 16) | (static_cast<uint32_t>(transparent ? 0 : 255) << 24);
      reinterpret_cast<uint32_t*>(row)[x] = px;  // bytes in memory order: c0, c1, c2, alpha
      break;
    }
  }
}

}  // namespace

cudaError_t enqueue_encode(ImageView<const uint16_t> disparity_q4, ImageView<const uint8_t> mask,
                           const EncodeParams& params, const uint8_t* luts, uint8_t* dst, std::ptrdiff_t dst_pitch,
                           cudaStream_t stream) {
  EncodeArgs a;
  a.format = params.format;
  a.lut = luts + 768 * static_cast<int>(params.colormap);
  a.max_disparity = params.max_disparity;
  a.k_q4 = params.baseline_mm * params.focal_px * 16.0;
  for (int i = 0; i < 3; ++i) a.invalid_rgb[i] = params.invalid_rgb[i];
  a.alpha_from_mask = params.alpha_from_mask;
  const dim3 block(kBlockX, kBlockY);
  encode_kernel<<<grid_for(disparity_q4.width, disparity_q4.height, block), block, 0, stream>>>(disparity_q4, mask, a,
                                                                                               dst, dst_pitch);
  return cudaGetLastError();
}

}  // namespace cs::cuda
