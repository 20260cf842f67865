#include "background.h"

#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

// stages.h background_pixel, step for step (that function is host-only; its
// arithmetic is the shared stereo_math.h helpers used here).
__device__ bool background_pixel_device(PixelModel& m, uint32_t rgb, const BackgroundParams& bp, int frames_seen,
                                        bool warming_up, bool test, bool untested_foreground) {
  int hsv[3];
  hsv_from_rgb(rgb & 255, (rgb >> 8) & 255, (rgb >> 16) & 255, &hsv[0], &hsv[1], &hsv[2]);
  if (frames_seen == 0) {
#pragma unroll
    for (int c = 0; c < 3; ++c) m.hsv[c] = {hsv[c] * 256, bp.var_min_q8};
    return true;
  }
  int32_t d[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) d[c] = hsv_delta_q8(c, hsv[c], m.hsv[c].mean, hsv[1]);
  bool foreground = untested_foreground;
  if (warming_up) {
    foreground = true;
  } else if (test) {
    foreground = false;
#pragma unroll
    for (int c = 0; c < 3; ++c) foreground = foreground || gauss_is_foreground(d[c], m.hsv[c].var, bp.k2_q8);
  }
  // Foreground outside warm-up: slower mean, variance kept (stages.h).
  const bool learn_variance = warming_up || !foreground;
  int32_t alpha = bp.alpha_q16;
  if (warming_up)
    alpha = warmup_alpha_q16(frames_seen, bp.alpha_q16);
  else if (foreground)
    alpha = foreground_alpha_q16(bp.alpha_q16);
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const int32_t var = m.hsv[c].var;
    gauss_update(&m.hsv[c], c, d[c], alpha, bp.var_min_q8);
    if (!learn_variance) m.hsv[c].var = var;
  }
  return foreground;
}

__device__ __forceinline__ void warp_count(bool flag, unsigned long long* counter) {
  const unsigned active = __activemask();
  const unsigned votes = __ballot_sync(active, flag);
  if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == __ffs(active) - 1 && votes)
    atomicAdd(counter, static_cast<unsigned long long>(__popc(votes)));
}

__global__ void __launch_bounds__(kBlockX * kBlockY) background_kernel(BackgroundViews v, BackgroundLevelParams p) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  const int w = v.rgb.width, h = v.rgb.height;
  if (x >= w || y >= h) return;
  const int frames_seen = *v.frames_seen;
  const bool warming_up = frames_seen < p.warmup_frames;
  PixelModel m = drow(v.model, y)[x];
  const uint32_t rgb = drow(v.rgb, y)[x];
  bool fg;
  bool tested = false;
  if (warming_up || frames_seen == 0) {
    // Learning only: every pixel foreground, no test counted.
    background_pixel_device(m, rgb, p.bp, frames_seen, true, false, false);
    fg = true;
  } else if (v.coarser_mask.data == nullptr) {
    fg = background_pixel_device(m, rgb, p.bp, frames_seen, false, true, false);
    tested = true;
  } else {
    // The block's parents' footprint, grown by one coarser pixel and clamped,
    // decides whether the block is tested or copies the coarser label.
    const int bs = p.block_size;
    const int bx = x - x % bs, by = y - y % bs;
    const int x1 = mini(bx + bs, w), y1 = mini(by + bs, h);
    const ImageView<const uint8_t>& cm = v.coarser_mask;
    const int cx0 = maxi(bx / 2 - 1, 0), cx1 = mini((x1 - 1) / 2 + 1, cm.width - 1);
    const int cy0 = maxi(by / 2 - 1, 0), cy1 = mini((y1 - 1) / 2 + 1, cm.height - 1);
    const uint8_t first = drow(cm, mini(cy0, cm.height - 1))[mini(cx0, cm.width - 1)];
    bool uniform = true;
    for (int cy = cy0; cy <= cy1 && uniform; ++cy) {
      const uint8_t* row = drow(cm, cy);
      for (int cx = cx0; cx <= cx1; ++cx)
        if (row[cx] != first) {
          uniform = false;
          break;
        }
    }
    fg = background_pixel_device(m, rgb, p.bp, frames_seen, false, !uniform, uniform && first != 0);
    tested = !uniform;
  }
  drow(v.model, y)[x] = m;
  drow(v.mask, y)[x] = fg ? 255 : 0;
  warp_count(tested, v.tests);
}

__global__ void __launch_bounds__(1) count_frame_kernel(int* frames_seen) {
  if (*frames_seen < INT_MAX) ++*frames_seen;
}

}  // namespace

cudaError_t enqueue_background(const BackgroundViews& views, const BackgroundLevelParams& params,
                               cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  background_kernel<<<grid_for(views.rgb.width, views.rgb.height, block), block, 0, stream>>>(views, params);
  return cudaGetLastError();
}

cudaError_t enqueue_count_frame(int* frames_seen, cudaStream_t stream) {
  count_frame_kernel<<<1, 1, 0, stream>>>(frames_seen);
  return cudaGetLastError();
}

}  // namespace cs::cuda
