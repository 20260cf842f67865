#include "cross_check.h"

#include "cuda_util.h"
#include "matching.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;

// A row of a disparity map: int16 values, or the right view's match keys
// (cost << 16 | d, all ones for none: matching.h right_keys_kept), read as
// the map they stand for.
struct MapRow {
  const int16_t* values;
  __device__ __forceinline__ int operator[](int x) const { return values[x]; }
};
struct KeyRow {
  const uint32_t* keys;
  __device__ __forceinline__ int operator[](int x) const { return key_disparity(keys[x]); }
};

// Pixel x of a view's checked map (stage 8; the raw value without lr_check):
// `own` is the view's input row, `other` the other view's, sign -1 for the
// left view (matched column x - d), +1 for the right.
template <typename Own, typename Other>
__device__ __forceinline__ int checked_value(const Own& own, const Other& other, int x, int w, int sign,
                                             bool lr_check, int tolerance) {
  const int d = own[x];
  if (d < 0) return -1;
  return !lr_check || lr_consistent(d, x + sign * d, w, other, tolerance) ? d : -1;
}

// Stage 8b's support test of d (min_support > 0): at least min_support of
// its 8 neighbours in the block's shared tile of checked values (-1 outside
// the image, which supports nothing) agree with it.
__device__ __forceinline__ int16_t supported(const int16_t (*tile)[kBlockX + 2], int tx, int ty, int d,
                                             int min_support) {
  if (d < 0) return static_cast<int16_t>(d);
  int agree = 0;
#pragma unroll
  for (int j = 0; j < 3; ++j)
#pragma unroll
    for (int i = 0; i < 3; ++i)
      if ((i != 1 || j != 1) && supports(d, tile[ty + j][tx + i])) ++agree;
  return static_cast<int16_t>(agree >= min_support ? d : -1);
}

// With a support test, each block first checks its pixels and a one-pixel
// border around them, in both views, into shared tiles; then each pixel
// counts its supporting neighbours there. A pixel's checked value is thus
// computed once, not once for each of its 9 readers. Without one (the plain
// cross-check: the block method's every frame, debug maps), each pixel is
// checked alone, with no border.
// RightRow: MapRow, or KeyRow where the right map is still match keys; then
// right_raw gets the map they stand for.
template <typename RightRow, typename RightView>
__global__ void __launch_bounds__(kBlockX * kBlockY)
    check_and_support_kernel(ImageView<const int16_t> left, RightView right, bool lr_check, int tolerance,
                             int min_support, ImageView<int16_t> left_out, ImageView<int16_t> right_out,
                             ImageView<int16_t> right_raw) {
  constexpr int kTileW = kBlockX + 2, kTileH = kBlockY + 2;
  __shared__ int16_t tiles[2][kTileH][kTileW];
  const int w = left.width, h = left.height;
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (right_raw.data && x < w && y < h) drow(right_raw, y)[x] = static_cast<int16_t>(RightRow{drow(right, y)}[x]);
  if (min_support <= 0) {  // the same for the whole grid
    if (x >= w || y >= h) return;
    const MapRow lrow{drow(left, y)};
    const RightRow rrow{drow(right, y)};
    drow(left_out, y)[x] = static_cast<int16_t>(checked_value(lrow, rrow, x, w, -1, lr_check, tolerance));
    drow(right_out, y)[x] = static_cast<int16_t>(checked_value(rrow, lrow, x, w, +1, lr_check, tolerance));
    return;
  }
  const int bx = blockIdx.x * kBlockX - 1, by = blockIdx.y * kBlockY - 1;
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  for (int i = tid; i < kTileW * kTileH; i += kBlockX * kBlockY) {
    const int ty = i / kTileW, tx = i - ty * kTileW;
    const int u = bx + tx, v = by + ty;
    int dl = -1, dr = -1;
    if (u >= 0 && u < w && v >= 0 && v < h) {
      const MapRow lrow{drow(left, v)};
      const RightRow rrow{drow(right, v)};
      dl = checked_value(lrow, rrow, u, w, -1, lr_check, tolerance);
      dr = checked_value(rrow, lrow, u, w, +1, lr_check, tolerance);
    }
    tiles[0][ty][tx] = static_cast<int16_t>(dl);
    tiles[1][ty][tx] = static_cast<int16_t>(dr);
  }
  __syncthreads();
  if (x >= w || y >= h) return;
  const int tx = threadIdx.x, ty = threadIdx.y;
  drow(left_out, y)[x] = supported(tiles[0], tx, ty, tiles[0][ty + 1][tx + 1], min_support);
  drow(right_out, y)[x] = supported(tiles[1], tx, ty, tiles[1][ty + 1][tx + 1], min_support);
}

}  // namespace

cudaError_t enqueue_check_and_support(ImageView<const int16_t> left, ImageView<const int16_t> right, bool lr_check,
                                      int tolerance, int min_support, ImageView<int16_t> left_out,
                                      ImageView<int16_t> right_out, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  check_and_support_kernel<MapRow><<<grid_for(left.width, left.height, block), block, 0, stream>>>(
      left, right, lr_check, tolerance, min_support, left_out, right_out, ImageView<int16_t>{});
  return cudaGetLastError();
}

cudaError_t enqueue_check_and_support_keys(ImageView<const int16_t> left, ImageView<const uint32_t> right_keys,
                                           bool lr_check, int tolerance, int min_support,
                                           ImageView<int16_t> right_raw, ImageView<int16_t> left_out,
                                           ImageView<int16_t> right_out, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  check_and_support_kernel<KeyRow><<<grid_for(left.width, left.height, block), block, 0, stream>>>(
      left, right_keys, lr_check, tolerance, min_support, left_out, right_out, right_raw);
  return cudaGetLastError();
}

cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream) {
  return enqueue_check_and_support(left, right, true, tolerance, 0, left_checked, right_checked, stream);
}

}  // namespace cs::cuda
