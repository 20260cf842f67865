#include "encode_output.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kPixels = 4;  // consecutive pixels a thread

// A thread encodes kPixels consecutive pixels of a row: one load of their
// Q4 values and one store of their output where the rows are aligned for it.
__global__ void __launch_bounds__(kBlockX * kBlockY)
    encode_kernel(ImageView<const uint16_t> q4, ImageView<const uint8_t> mask, EncodeArgs a, bool vector,
                  uint8_t* dst, std::ptrdiff_t dst_pitch) {
  const int x = kPixels * (blockIdx.x * kBlockX + threadIdx.x);
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= q4.width || y >= q4.height) return;
  const bool whole = vector && x + kPixels <= q4.width;
  const uint16_t* qrow = drow(q4, y) + x;
  int q[kPixels] = {0, 0, 0, 0};
  if (whole) {
    const uint2 w = *reinterpret_cast<const uint2*>(qrow);
    q[0] = w.x & 0xFFFFu;
    q[1] = w.x >> 16;
    q[2] = w.y & 0xFFFFu;
    q[3] = w.y >> 16;
  } else {
#pragma unroll
    for (int k = 0; k < kPixels; ++k)
      if (x + k < q4.width) q[k] = qrow[k];
  }
  uint32_t out[kPixels];
#pragma unroll
  for (int k = 0; k < kPixels; ++k) {
    const bool foreground = !mask.data || x + k >= q4.width || drow(mask, y)[x + k] != 0;
    out[k] = encode_pixel(q[k], foreground, a);
  }
  uint8_t* row = dst + y * dst_pitch;
  const int bytes = a.bytes;
  if (whole) {
    if (bytes == 1)
      *reinterpret_cast<uint32_t*>(row + x) = out[0] | out[1] << 8 | out[2] << 16 | out[3] << 24;
    else if (bytes == 2)
      *reinterpret_cast<uint2*>(row + 2 * x) = make_uint2(out[0] | out[1] << 16, out[2] | out[3] << 16);
    else
      *reinterpret_cast<uint4*>(row + 4 * x) = make_uint4(out[0], out[1], out[2], out[3]);
    return;
  }
#pragma unroll
  for (int k = 0; k < kPixels; ++k) {
    if (x + k >= q4.width) break;
    if (bytes == 1) row[x + k] = static_cast<uint8_t>(out[k]);
    else if (bytes == 2) reinterpret_cast<uint16_t*>(row)[x + k] = static_cast<uint16_t>(out[k]);
    else reinterpret_cast<uint32_t*>(row)[x + k] = out[k];
  }
}

}  // namespace

EncodeArgs encode_args(const EncodeParams& params, const uint8_t* luts) {
  EncodeArgs a;
  a.format = params.format;
  a.lut = luts + 768 * static_cast<int>(params.colormap);
  a.max_disparity = params.max_disparity;
  a.k_q4 = params.baseline_mm * params.focal_px * 16.0;
  for (int i = 0; i < 3; ++i) a.invalid_rgb[i] = params.invalid_rgb[i];
  a.alpha_from_mask = params.alpha_from_mask;
  a.bytes = output_bytes_per_pixel(params.format);
  return a;
}

cudaError_t enqueue_encode(ImageView<const uint16_t> disparity_q4, ImageView<const uint8_t> mask,
                           const EncodeParams& params, const uint8_t* luts, uint8_t* dst, std::ptrdiff_t dst_pitch,
                           cudaStream_t stream, ImageView<const uint8_t> confidence) {
  // The confidence map goes out as it is.
  if (params.format == OutputFormat::Confidence) {
    const int w = disparity_q4.width, h = disparity_q4.height;
    if (confidence.data)
      return cudaMemcpy2DAsync(dst, dst_pitch, confidence.data, confidence.pitch, w, h, cudaMemcpyDeviceToDevice,
                               stream);
    return cudaMemset2DAsync(dst, dst_pitch, 0, w, h, stream);
  }
  const EncodeArgs a = encode_args(params, luts);
  // The Q4 rows and the output rows aligned for one access per four pixels.
  const bool vector = rows_aligned(disparity_q4.data, disparity_q4.pitch, kPixels * sizeof(uint16_t)) &&
                      rows_aligned(dst, dst_pitch, kPixels * a.bytes);
  const dim3 block(kBlockX, kBlockY);
  encode_kernel<<<grid_for((disparity_q4.width + kPixels - 1) / kPixels, disparity_q4.height, block), block, 0,
                  stream>>>(disparity_q4, mask, a, vector, dst, dst_pitch);
  return cudaGetLastError();
}

}  // namespace cs::cuda
