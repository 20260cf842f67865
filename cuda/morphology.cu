#include "morphology.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

// kMax: dilation (max), else erosion (min); the window is cut by the image.
template <bool kMax>
__global__ void __launch_bounds__(kBlockX * kBlockY)
    morph_kernel(ImageView<const uint8_t> in, int radius, ImageView<uint8_t> out) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= in.width || y >= in.height) return;
  const int xa = maxi(x - radius, 0), xb = mini(x + radius, in.width - 1);
  const int ya = maxi(y - radius, 0), yb = mini(y + radius, in.height - 1);
  int v = kMax ? 0 : 255;
  for (int yy = ya; yy <= yb; ++yy) {
    const uint8_t* r = drow(in, yy);
    for (int xx = xa; xx <= xb; ++xx) v = kMax ? maxi(v, r[xx]) : mini(v, r[xx]);
  }
  drow(out, y)[x] = static_cast<uint8_t>(v);
}

}  // namespace

cudaError_t enqueue_close_mask(ImageView<const uint8_t> in, int radius, ImageView<uint8_t> scratch,
                               ImageView<uint8_t> out, cudaStream_t stream) {
  if (radius <= 0)
    return cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, in.width, in.height, cudaMemcpyDeviceToDevice,
                             stream);
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid = grid_for(in.width, in.height, block);
  morph_kernel<true><<<grid, block, 0, stream>>>(in, radius, scratch);
  morph_kernel<false><<<grid, block, 0, stream>>>(as_const(scratch), radius, out);
  return cudaGetLastError();
}

}  // namespace cs::cuda
