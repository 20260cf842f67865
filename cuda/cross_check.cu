#include "cross_check.h"

#include "cuda_util.h"
#include "matching.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kBlockX = 64;
constexpr int kBlockY = 4;
static_assert(kBlockX == kCheckTileW, "cross_check.h");

// A row of a disparity map: int16 values, or the right view's match keys
// (cost << 16 | d, all ones for none: matching.h right_keys_kept), read as
// the map they stand for; -1 where the view's mask (the background model;
// null: none) is background, whatever the map holds there.
struct MapRow {
  const int16_t* values;
  const uint8_t* mask;
  __device__ __forceinline__ int operator[](int x) const { return mask && !mask[x] ? -1 : values[x]; }
};
struct KeyRow {
  const uint32_t* keys;
  const uint8_t* mask;
  __device__ __forceinline__ int operator[](int x) const { return mask && !mask[x] ? -1 : key_disparity(keys[x]); }
};

template <typename Row, typename T>
__device__ __forceinline__ Row row_of(const ImageView<const T>& map, const ImageView<const uint8_t>& mask, int y) {
  return Row{drow(map, y), mask.data ? drow(mask, y) : nullptr};
}

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

template <typename RightView>
struct CheckArgs {
  ImageView<const int16_t> left;
  RightView right;
  ImageView<const uint8_t> mask_left, mask_right;
  bool lr_check;
  int tolerance;
  int min_support;
  ImageView<int16_t> left_out, right_out, right_raw;
  TileList tiles;  // of kCheckTileRows blocks' rows each
};

// Blocks of kBlockX x kBlockY pixels; with a tile list, a block of the
// launch checks a tile of kCheckTileRows of them, one after the other.
constexpr int kCheckTileRows = kCheckTileH / kBlockY;

// With a support test, each block first checks its pixels and a one-pixel
// border around them, in both views, into shared tiles; then each pixel
// counts its supporting neighbours there. A pixel's checked value is thus
// computed once, not once for each of its 9 readers. Without one (the plain
// cross-check: the block method's every frame, debug maps), each pixel is
// checked alone, with no border. (bx, by): the block of pixels.
template <typename RightRow, typename RightView>
__device__ __forceinline__ void check_block(const CheckArgs<RightView>& c, int bx_block, int by_block) {
  constexpr int kTileW = kBlockX + 2, kTileH = kBlockY + 2;
  __shared__ int16_t tiles[2][kTileH][kTileW];
  const int w = c.left.width, h = c.left.height;
  const int x = bx_block * kBlockX + threadIdx.x;
  const int y = by_block * kBlockY + threadIdx.y;
  if (c.right_raw.data && x < w && y < h)
    drow(c.right_raw, y)[x] = static_cast<int16_t>(row_of<RightRow>(c.right, c.mask_right, y)[x]);
  if (c.min_support <= 0) {  // the same for the whole grid
    if (x >= w || y >= h) return;
    const MapRow lrow = row_of<MapRow>(c.left, c.mask_left, y);
    const RightRow rrow = row_of<RightRow>(c.right, c.mask_right, y);
    drow(c.left_out, y)[x] = static_cast<int16_t>(checked_value(lrow, rrow, x, w, -1, c.lr_check, c.tolerance));
    drow(c.right_out, y)[x] = static_cast<int16_t>(checked_value(rrow, lrow, x, w, +1, c.lr_check, c.tolerance));
    return;
  }
  const int bx = bx_block * kBlockX - 1, by = by_block * kBlockY - 1;
  const int tid = threadIdx.y * kBlockX + threadIdx.x;
  for (int i = tid; i < kTileW * kTileH; i += kBlockX * kBlockY) {
    const int ty = i / kTileW, tx = i - ty * kTileW;
    const int u = bx + tx, v = by + ty;
    int dl = -1, dr = -1;
    if (u >= 0 && u < w && v >= 0 && v < h) {
      const MapRow lrow = row_of<MapRow>(c.left, c.mask_left, v);
      const RightRow rrow = row_of<RightRow>(c.right, c.mask_right, v);
      dl = checked_value(lrow, rrow, u, w, -1, c.lr_check, c.tolerance);
      dr = checked_value(rrow, lrow, u, w, +1, c.lr_check, c.tolerance);
    }
    tiles[0][ty][tx] = static_cast<int16_t>(dl);
    tiles[1][ty][tx] = static_cast<int16_t>(dr);
  }
  __syncthreads();
  if (x < w && y < h) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    drow(c.left_out, y)[x] = supported(tiles[0], tx, ty, tiles[0][ty + 1][tx + 1], c.min_support);
    drow(c.right_out, y)[x] = supported(tiles[1], tx, ty, tiles[1][ty + 1][tx + 1], c.min_support);
  }
  __syncthreads();  // the shared tiles are the next block's
}

// RightRow: MapRow, or KeyRow where the right map is still match keys; then
// right_raw gets the map they stand for.
template <typename RightRow, typename RightView>
__global__ void __launch_bounds__(kBlockX * kBlockY) check_and_support_kernel(const CheckArgs<RightView> c) {
  if (!c.tiles.on()) {
    check_block<RightRow>(c, blockIdx.x, blockIdx.y);
    return;
  }
  unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
  if (block >= *c.tiles.count) return;
  const unsigned t = c.tiles.list[block];
  const int tx = static_cast<int>(t % gridDim.x), ty = static_cast<int>(t / gridDim.x);
  for (int k = 0; k < kCheckTileRows; ++k) check_block<RightRow>(c, tx, ty * kCheckTileRows + k);
}

template <typename RightRow, typename RightView>
cudaError_t launch_check(const CheckArgs<RightView>& c, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  dim3 grid = grid_for(c.left.width, c.left.height, block);
  if (c.tiles.on()) grid.y = (grid.y + kCheckTileRows - 1) / kCheckTileRows;
  check_and_support_kernel<RightRow><<<grid, block, 0, stream>>>(c);
  return cudaGetLastError();
}

}  // namespace

cudaError_t enqueue_check_and_support(ImageView<const int16_t> left, ImageView<const int16_t> right, bool lr_check,
                                      int tolerance, int min_support, ImageView<int16_t> left_out,
                                      ImageView<int16_t> right_out, cudaStream_t stream) {
  CheckArgs<ImageView<const int16_t>> c{left, right, {}, {}, lr_check, tolerance, min_support, left_out, right_out, {},
                                        {}};
  return launch_check<MapRow>(c, stream);
}

cudaError_t enqueue_check_and_support_keys(ImageView<const int16_t> left, ImageView<const uint32_t> right_keys,
                                           bool lr_check, int tolerance, int min_support,
                                           ImageView<int16_t> right_raw, ImageView<int16_t> left_out,
                                           ImageView<int16_t> right_out, cudaStream_t stream,
                                           ImageView<const uint8_t> mask_left, ImageView<const uint8_t> mask_right,
                                           TileList tiles) {
  CheckArgs<ImageView<const uint32_t>> c{left,     right_keys, mask_left, mask_right, lr_check, tolerance,
                                         min_support, left_out,  right_out, right_raw, tiles};
  return launch_check<KeyRow>(c, stream);
}

cudaError_t enqueue_cross_check(ImageView<const int16_t> left, ImageView<const int16_t> right, int tolerance,
                                ImageView<int16_t> left_checked, ImageView<int16_t> right_checked,
                                cudaStream_t stream) {
  return enqueue_check_and_support(left, right, true, tolerance, 0, left_checked, right_checked, stream);
}

}  // namespace cs::cuda
