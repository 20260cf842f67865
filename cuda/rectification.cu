#include "rectification.h"

#include "cuda_util.h"
#include "pixel_read.cuh"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32, kThreadsY = 8;

struct ViewsArgs {
  FrameView in[2];
  ImageView<const RemapPoint> map[2];
  uint8_t* dst;
  std::ptrdiff_t pitch;
  int right_x, right_y;  // where the right view starts in the output
  OutputFormat format;
  bool words;
};

// A thread an output pixel of one view (blockIdx.z): its colour, rectified
// with kRemap, as encode_views writes it.
template <PixelFormat F, bool kRemap>
__global__ void __launch_bounds__(kThreadsX * kThreadsY) views_kernel(ViewsArgs a) {
  const int view = blockIdx.z;
  const int x = blockIdx.x * kThreadsX + threadIdx.x, y = blockIdx.y * kThreadsY + threadIdx.y;
  const FrameView& in = a.in[view];
  if (x >= in.width || y >= in.height) return;
  uint32_t rgb = 0;
  if (kRemap)
    rgb = rectified_rgb<F>(in, a.words, a.map[view], x, y);
  else
    convert_one<F, true>(in, a.words, x, y, &rgb);
  uint8_t* row = a.dst + static_cast<std::ptrdiff_t>(y + view * a.right_y) * a.pitch;
  reinterpret_cast<uint32_t*>(row)[x + view * a.right_x] = view_output_pixel(rgb, a.format);
}

}  // namespace

cudaError_t enqueue_views_output(const FrameView& left, const FrameView& right,
                                 const ImageView<const RemapPoint>* maps, const EncodeParams& encode, uint8_t* dst,
                                 std::ptrdiff_t pitch, cudaStream_t stream) {
  if (left.format != right.format || left.width != right.width || left.height != right.height ||
      encode.views == ViewsOutput::None || output_bytes_per_pixel(encode.format) != 4)
    return cudaErrorInvalidValue;
  ViewsArgs a;
  a.in[0] = left;
  a.in[1] = right;
  if (maps)
    for (int k = 0; k < 2; ++k) {
      if (maps[k].width != left.width || maps[k].height != left.height) return cudaErrorInvalidValue;
      a.map[k] = maps[k];
    }
  a.dst = dst;
  a.pitch = pitch;
  a.right_x = encode.views == ViewsOutput::SideBySide ? left.width : 0;
  a.right_y = encode.views == ViewsOutput::TopBottom ? left.height : 0;
  a.format = encode.format;
  a.words = rows_aligned(left.plane[0], left.pitch[0], 4) && rows_aligned(right.plane[0], right.pitch[0], 4);
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid((left.width + kThreadsX - 1) / kThreadsX, (left.height + kThreadsY - 1) / kThreadsY, 2);
  switch (left.format) {
#define CS_FORMAT(F)                                                                 \
  case PixelFormat::F:                                                               \
    if (maps)                                                                        \
      views_kernel<PixelFormat::F, true><<<grid, block, 0, stream>>>(a);             \
    else                                                                             \
      views_kernel<PixelFormat::F, false><<<grid, block, 0, stream>>>(a);            \
    break;
    CS_FOR_EACH_PIXEL_FORMAT(CS_FORMAT)
#undef CS_FORMAT
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace cs::cuda
