#include "census.h"

#include "cuda_util.h"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kPixelsPerThread = 4;                      // along x, one byte lane each
constexpr int kTileX = kThreadsX * kPixelsPerThread;    // 128
constexpr int kTileY = kThreadsY;
static_assert(kTileX == kCensusTileW && kTileY == kCensusTileH, "census.h");
constexpr int kR = kCensusRadius;
constexpr int kLeft = 4;                                 // halo columns kept on the left (word-aligned)
constexpr int kSharedX = kLeft + kTileX + 4;
constexpr int kSharedY = kTileY + 2 * kR;

// The tile plus its clamped halo goes through shared memory once. Each
// thread then codes 4 neighbouring pixels at once: for every neighbour
// offset the 4 neighbour bytes and the 4 centre bytes are compared in one
// SIMD instruction (__vcmpltu4), and bit b of pixel k is gathered into byte
// k of an accumulator (bits 0-7, 8-15, 16-23 in three words).
__device__ __forceinline__ void census_tile(const ImageView<const uint8_t>& gray, const ImageView<uint32_t>& census,
                                            const ImageView<uint32_t>& clear, int bx, int by) {
  __shared__ __align__(16) uint8_t tile[kSharedY][kSharedX];
  const int x0 = bx * kTileX - kLeft;
  const int y0 = by * kTileY - kR;
  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  // Four bytes a thread: one word load where the word lies in the image and
  // the row is word-aligned, else byte by byte with the reads clamped.
  constexpr int kWords = kSharedX / 4;
  const bool aligned = rows_aligned(gray.data, gray.pitch, 4);
  for (int i = tid; i < kWords * kSharedY; i += kThreadsX * kThreadsY) {
    const int sy = i / kWords, sx = 4 * (i - sy * kWords);
    const int gx = x0 + sx;
    const uint8_t* row = drow(gray, clampi(y0 + sy, 0, gray.height - 1));
    uint32_t word;
    if (aligned && gx >= 0 && gx + 4 <= gray.width) {
      word = *reinterpret_cast<const uint32_t*>(row + gx);
    } else {
      word = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) word |= static_cast<uint32_t>(row[clampi(gx + k, 0, gray.width - 1)]) << (8 * k);
    }
    *reinterpret_cast<uint32_t*>(&tile[sy][sx]) = word;
  }
  __syncthreads();
  const int x = bx * kTileX + kPixelsPerThread * threadIdx.x;
  const int y = by * kTileY + threadIdx.y;
  if (x >= gray.width || y >= gray.height) return;
  // Bytes kLeft + 4 t - 4 .. kLeft + 4 t + 7 of each of the 5 rows: the
  // thread's pixels are the middle word, their neighbours 2 either side.
  const int c0 = kLeft + kPixelsPerThread * threadIdx.x;
  const uint32_t centre = *reinterpret_cast<const uint32_t*>(&tile[threadIdx.y + kR][c0]);
  uint32_t acc[3] = {0, 0, 0};
  int bit = 0;
#pragma unroll
  for (int j = 0; j < 5; ++j) {
    const uint8_t* row = &tile[threadIdx.y + j][c0];
    const uint32_t w0 = *reinterpret_cast<const uint32_t*>(row - 4);
    const uint32_t w1 = *reinterpret_cast<const uint32_t*>(row);
    const uint32_t w2 = *reinterpret_cast<const uint32_t*>(row + 4);
    const uint32_t nb[5] = {__byte_perm(w0, w1, 0x5432), __byte_perm(w0, w1, 0x6543), w1, __byte_perm(w1, w2, 0x4321),
                            __byte_perm(w1, w2, 0x5432)};
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      if (i == kR && j == kR) continue;
      acc[bit >> 3] |= (__vcmpltu4(nb[i], centre) & 0x01010101u) << (bit & 7);
      ++bit;
    }
  }
  uint32_t code[kPixelsPerThread];
#pragma unroll
  for (int k = 0; k < kPixelsPerThread; ++k)
    code[k] = ((acc[0] >> (8 * k)) & 0xFFu) | ((acc[1] >> (8 * k)) & 0xFFu) << 8 | ((acc[2] >> (8 * k)) & 0xFFu) << 16;
  if (clear.data) {
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k)
      if (x + k < gray.width) drow(clear, y)[x + k] = 0xFFFFFFFFu;
  }
  uint32_t* out = drow(census, y) + x;
  if (x + kPixelsPerThread <= gray.width && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {
    *reinterpret_cast<uint4*>(out) = make_uint4(code[0], code[1], code[2], code[3]);
  } else {
#pragma unroll
    for (int k = 0; k < kPixelsPerThread; ++k)
      if (x + k < gray.width) out[k] = code[k];
  }
}

// Every image of the batch in one launch: blocks [first[j], first[j + 1])
// are image j's tiles, row by row.
struct Batch {
  ImageView<const uint8_t> gray[kMaxCensusBatch];
  ImageView<uint32_t> census[kMaxCensusBatch];
  ImageView<uint32_t> clear[kMaxCensusBatch];
  int first[kMaxCensusBatch + 1];
  int tiles_x[kMaxCensusBatch];
  TileList tiles[kMaxCensusBatch];
  int count;
};

__global__ void __launch_bounds__(kThreadsX * kThreadsY) census_batch_kernel(const __grid_constant__ Batch b) {
  int j = 0;
  while (j + 1 < b.count && static_cast<int>(blockIdx.x) >= b.first[j + 1]) ++j;
  int t = static_cast<int>(blockIdx.x) - b.first[j];
  if (b.tiles[j].on()) {
    if (static_cast<unsigned>(t) >= *b.tiles[j].count) return;
    t = static_cast<int>(b.tiles[j].list[t]);
  }
  census_tile(b.gray[j], b.census[j], b.clear[j], t % b.tiles_x[j], t / b.tiles_x[j]);
}

}  // namespace

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream) {
  return enqueue_census_batch(&gray, &census, 1, stream);
}

cudaError_t enqueue_census_batch(const ImageView<const uint8_t>* gray, const ImageView<uint32_t>* census, int count,
                                 cudaStream_t stream, const ImageView<uint32_t>* clear, const TileList* tiles) {
  if (count < 1 || count > kMaxCensusBatch) return cudaErrorInvalidValue;
  Batch b{};
  b.count = count;
  int blocks = 0;
  for (int j = 0; j < count; ++j) {
    b.gray[j] = gray[j];
    b.census[j] = census[j];
    if (clear) b.clear[j] = clear[j];
    if (tiles) b.tiles[j] = tiles[j];
    b.tiles_x[j] = (gray[j].width + kTileX - 1) / kTileX;
    b.first[j] = blocks;
    blocks += b.tiles_x[j] * ((gray[j].height + kTileY - 1) / kTileY);
  }
  b.first[count] = blocks;
  census_batch_kernel<<<blocks, dim3(kThreadsX, kThreadsY), 0, stream>>>(b);
  return cudaGetLastError();
}

}  // namespace cs::cuda
