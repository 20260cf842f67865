// The background model's pixels (stages.h stage 3), the frame's second
// kernel with the model on: each pixel labelled by its cells' 3 x 3
// neighbourhood (the conversion tested the cells), tested against its own
// model where they disagree, updated, and its raw bit written.
#include "background.h"
#include "cuda_util.h"
#include "dependent_launch.h"
#include "pixel_read.cuh"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kSide = kBackgroundCell;  // a thread takes a cell's row: kSide pixels
constexpr int kCellRows = kThreadsY / kBackgroundCell;  // cell rows a block
static_assert(kThreadsY % kBackgroundCell == 0, "a block holds whole cells");
static_assert(kThreadsX == kModelBlockCells && kCellRows == kModelBlockCellRows, "ModelViews::work's blocks");
static_assert(kSide == 4, "a cell's rows are one run of background_turn's");
constexpr uint8_t kOutside = 2;  // a neighbour beyond the grid of cells

__device__ __forceinline__ int byte_of(uint32_t word, int k) { return (word >> (8 * k)) & 255; }

// The colours of n (1 .. 4) pixels of a row, x .. x + n - 1 of row y, as
// convert_to_rgb gives them (the rectified view's with kRemap).
template <PixelFormat F, bool kRemap>
__device__ __forceinline__ void read_colours(const ModelInput& input, const FrameView& in, int z, int x, int y, int n,
                                             uint32_t* colour) {
  constexpr PackedLayout L = packed_layout(F);
  constexpr bool kPacked4 = L.bytes == 4 && F != PixelFormat::GRAY8 && F != PixelFormat::I420 &&
                            F != PixelFormat::NV12 && F != PixelFormat::YUY2 && F != PixelFormat::UYVY;
  if (kRemap) {
#pragma unroll
    for (int k = 0; k < kSide; ++k)
      if (k < n) colour[k] = rectified_rgb<F>(in, input.words, input.map[z], x + k, y);
  } else if (kPacked4 && n == kSide && input.quads) {
    const uint4 q = __ldg(reinterpret_cast<const uint4*>(in.plane[0] + y * in.pitch[0] + x * 4));
    const uint32_t px[kSide] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < kSide; ++k) colour[k] = pack_rgb(byte_of(px[k], L.r), byte_of(px[k], L.g), byte_of(px[k], L.b));
  } else {
#pragma unroll
    for (int k = 0; k < kSide; ++k)
      if (k < n) convert_one<F, true>(in, input.words, x + k, y, &colour[k]);
  }
}

// Reads the models of n (1 .. N) pixels of a row, x .. x + n - 1 of row y
// (16 bytes at a time when all N are in the image), their colours where
// `need`, runs background_pixel on each with the cells' label and writes
// back the models that changed. Returns the pixels' foreground bits.
template <int N, PixelFormat F, bool kRemap>
__device__ __forceinline__ unsigned update_pixels(const ModelViews& v, const ModelInput& input, const FrameView& in,
                                                  int z, int x, int y, int n, bool need, int frames_seen, int label) {
  static_assert(N % 2 == 0 && N <= kSide, "pairs of 8-byte models");
  BackgroundPixel* model = drow(v.model[z], y) + x;
  BackgroundPixel m[N];
  if (n == N) {
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      const ulonglong2 pair = reinterpret_cast<const ulonglong2*>(model)[k / 2];
      m[k] = pair.x, m[k + 1] = pair.y;
    }
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) m[k] = k < n ? model[k] : 0;
  }
  uint32_t colour[kSide] = {0, 0, 0, 0};
  if (need) read_colours<F, kRemap>(input, in, z, x, y, n, colour);
  unsigned bits = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k >= n) break;
    const BackgroundPixel before = m[k];
    if (background_pixel(&m[k], colour[k], v.params, frames_seen, x + k, y, z, label)) bits |= 1u << k;
    if (m[k] != before) model[k] = m[k];
  }
  return bits;
}

// A block: kThreadsX cells across by kCellRows down, a thread a row of a
// cell (a cell a thread, its 16 pixels in turn, was slower: on a turn
// frame a warp's 16 updates a thread in series are the pass's longest
// path; 640x480, nothing moving: 0.030 against 0.023 ms a frame, H200). A
// cell's pixels share their label and their turn, so a warp (a row of
// cells) takes one path but where labels differ. A pixel's model is read
// only where its label or its turn can change it, and its colour only where
// an update or a test needs it. A block with no work (ModelViews::work),
// off its turn, after the warm-up, leaves after its first loads: in a still
// scene every block but those on the turn's rows and those around a
// foreground cell or a cell not yet settled.
template <PixelFormat F, bool kRemap>
__global__ void __launch_bounds__(kThreadsX * kThreadsY) model_pixels_kernel(const __grid_constant__ ModelViews v) {
  __shared__ uint8_t s_fg[kCellRows + 2][kThreadsX + 2];
  __shared__ uint8_t s_settled[kCellRows][kThreadsX];
  __shared__ unsigned s_tests;
  __shared__ int s_any;  // a raw word of the block holds a foreground bit
  // Launched to start during the conversion's last blocks
  // (dependent_launch.h): nothing is read before the conversion is done.
  // (The masks' kernel after it is launched the ordinary way: launched
  // early too it made moving frames up to 7 % slower, H200.)
  wait_for_prior_grid();
  const int z = blockIdx.z;
  const int tid = threadIdx.x + threadIdx.y * kThreadsX;
  const ImageView<uint8_t>& fg_cells = v.cell_fg[z];
  const int cx0 = blockIdx.x * kThreadsX, cy0 = blockIdx.y * kCellRows;
  // Every load the block's decision and its labels need, at once: the
  // frame count, the block's work, its cells' 3 x 3 neighbourhood and
  // records (into registers: a block that leaves waits for one load).
  const int frames_seen = *v.frames_seen;
  uint8_t& work = drow(v.work[z], blockIdx.y)[blockIdx.x];
  const uint8_t had_work = work;
  constexpr int kHalo = (kCellRows + 2) * (kThreadsX + 2);
  static_assert(kHalo <= kThreadsX * kThreadsY, "a thread a neighbour");
  uint8_t halo = kOutside, record = 0;
  {
    const int j = tid / (kThreadsX + 2), k = tid - j * (kThreadsX + 2);
    const int cx = cx0 - 1 + k, cy = cy0 - 1 + j;
    if (tid < kHalo && cx >= 0 && cx < fg_cells.width && cy >= 0 && cy < fg_cells.height) halo = drow(fg_cells, cy)[cx];
  }
  if (tid < kCellRows * kThreadsX) {
    const int j = tid / kThreadsX, k = tid - j * kThreadsX;
    const int cx = cx0 + k, cy = cy0 + j;
    if (cx < fg_cells.width && cy < fg_cells.height) record = drow(v.settled[z], cy)[cx];
  }
  const BackgroundParams& bp = v.params;
  const bool warm = frames_seen == 0 || frames_seen < bp.warmup_frames;
  static_assert(kCellRows == 2, "the block's turn: either of its cell rows");
  const bool turn = background_turn(cy0 * kSide, frames_seen) || background_turn((cy0 + 1) * kSide, frames_seen);
  if (!warm && !turn && !had_work) return;
  if (tid < kHalo) (&s_fg[0][0])[tid] = halo;
  if (tid < kCellRows * kThreadsX) (&s_settled[0][0])[tid] = record;
  if (tid == 0) {
    s_tests = 0;
    s_any = 0;
  }
  __syncthreads();
  const ModelInput& input = *v.input;
  const FrameView& in = input.in[z];
  const int x = (cx0 + threadIdx.x) * kSide, y = blockIdx.y * kThreadsY + threadIdx.y;
  const int row = threadIdx.y / kSide;  // the cell row in the block
  int foreground = 0, cells = 0;
#pragma unroll
  for (int a = 0; a < 3; ++a)
#pragma unroll
    for (int b = 0; b < 3; ++b) {
      const int c = s_fg[row + a][threadIdx.x + b];
      foreground += c == 1;
      cells += c != kOutside;
    }
  const int label = cells_label(foreground, cells);
  const int n = y < in.height ? mini(kSide, in.width - x) : 0;  // pixels of the four in the image
  // The cell's record for the next frame, by its first row's thread (the
  // block read the records before its barrier): whether the cells labelled
  // its pixels background.
  const bool settled = !warm && label == 0;
  // Settled on this frame and the frame before, and off its turn: its runs
  // are 0 and its raw bits were written 0 on the frame before, so there is
  // nothing to read or write.
  const bool idle = n <= 0 || (settled && !background_turn(y, frames_seen) && s_settled[row][threadIdx.x]);
  // The block's work on the next frame: a cell of it not settled (the
  // conversion adds the foreground's). A block where every thread is idle
  // leaves now.
  const int all_idle = __syncthreads_and(idle);
  const uint8_t next_work = !all_idle && __syncthreads_or(n > 0 && !settled) ? 1 : 0;
  if (tid == 0 && next_work != had_work) work = next_work;
  if (all_idle) {
    if (tid == 0) drow(v.raw_any[z], blockIdx.y)[blockIdx.x] = 0;  // its words hold 0 already
    return;
  }
  if (n > 0 && y % kSide == 0 && settled != (s_settled[row][threadIdx.x] != 0))
    drow(v.settled[z], y / kSide)[x / kSide] = settled;
  // A block whose only work is its turn (in a still scene every block with
  // work): its turn's row of cells settled, labelled background, each pixel
  // updated; the other row idle. Its pixels' 128 threads would update four
  // pixels each in turn while the others waited; each of the 256 takes two
  // of them instead (the same updates: background_pixel is the pixel's
  // alone). Its raw words are 0, written as the block's rows' threads write
  // them otherwise; nothing is tested.
  if (__syncthreads_and(idle || (settled && background_turn(y, frames_seen)))) {
    const int turn_row = background_turn(cy0 * kSide, frames_seen) ? 0 : 1;
    const int ty = (cy0 + turn_row) * kSide + (threadIdx.y & (kSide - 1));
    const int tx = (cx0 + threadIdx.x) * kSide + 2 * (threadIdx.y / kSide);
    static_assert(kThreadsY == 2 * kSide, "two threads a cell's row of the turn");
    const int tn = ty < in.height ? mini(2, in.width - tx) : 0;
    if (tn > 0) update_pixels<2, F, kRemap>(v, input, in, z, tx, ty, tn, true, frames_seen, 0);
    if ((threadIdx.x & 7) == 0 && y < in.height && x < in.width) drow(v.raw[z], y)[x / 32] = 0;
    if (tid == 0) drow(v.raw_any[z], blockIdx.y)[blockIdx.x] = 0;
    return;
  }
  unsigned nibble = 0, tests = 0;
  if (!idle) {
    // Whether background_pixel reads a colour: to start, in the warm-up, a
    // test, or a labelled pixel's turn (its update).
    const bool need = warm || label == kLabelTest || background_turn(y, frames_seen);
    nibble = update_pixels<kSide, F, kRemap>(v, input, in, z, x, y, n, need, frames_seen, label);
    if (!warm && label == kLabelTest) tests = n;
  }
  // Lanes 8 j .. 8 j + 7 hold the 32 pixels of one raw word.
  const unsigned lane = threadIdx.x & 31;
  unsigned word = nibble << (4 * (lane & 7));
  word |= __shfl_xor_sync(0xFFFFFFFFu, word, 1);
  word |= __shfl_xor_sync(0xFFFFFFFFu, word, 2);
  word |= __shfl_xor_sync(0xFFFFFFFFu, word, 4);
  if ((lane & 7) == 0 && y < in.height && x < in.width) {
    drow(v.raw[z], y)[x / 32] = word;
    if (word) s_any = 1;
  }
  // One atomic a block and only where it tested: a still scene adds none.
  if (v.pixel_tests) {
    tests = warp_sum(tests);
    if (lane == 0 && tests) atomicAdd(&s_tests, tests);
  }
  __syncthreads();
  if (tid == 0) {
    if (v.pixel_tests && s_tests) atomicAdd(&v.pixel_tests[z], s_tests);
    drow(v.raw_any[z], blockIdx.y)[blockIdx.x] = s_any ? 1 : 0;
  }
}

template <bool kRemap>
cudaError_t launch(const ModelViews& v, int width, int height, PixelFormat format, int views, cudaStream_t stream) {
  const dim3 block(kThreadsX, kThreadsY);
  const dim3 grid((width + kThreadsX * kSide - 1) / (kThreadsX * kSide), (height + kThreadsY - 1) / kThreadsY, views);
  cudaError_t e = cudaSuccess;
  switch (format) {
#define CS_FORMAT(F)                                                                                 \
  case PixelFormat::F:                                                                               \
    e = launch_dependent(model_pixels_kernel<PixelFormat::F, kRemap>, grid, block, 0, stream, v);    \
    break;
    CS_FOR_EACH_PIXEL_FORMAT(CS_FORMAT)
#undef CS_FORMAT
    default: return cudaErrorInvalidValue;
  }
  const cudaError_t last = cudaGetLastError();
  return e != cudaSuccess ? e : last;
}

}  // namespace

cudaError_t enqueue_model_pixels(const ModelViews& model, int width, int height, PixelFormat format, bool remap,
                                 cudaStream_t stream, int views) {
  const int cw = (width + kBackgroundCell - 1) / kBackgroundCell, ch = (height + kBackgroundCell - 1) / kBackgroundCell;
  if (!model.input || !model.frames_seen || views < 1 || views > 2) return cudaErrorInvalidValue;
  for (int v = 0; v < views; ++v) {
    const ImageView<BackgroundPixel>& m = model.model[v];
    // The kernel loads a thread's four models as two 16-byte words.
    if (m.width != width || m.height != height || !rows_aligned(m.data, m.pitch, 32) ||
        model.raw[v].width != (width + 31) / 32 || model.raw[v].height != height || model.cells[v].width != cw ||
        model.cells[v].height != ch || model.cell_fg[v].width != cw || model.cell_fg[v].height != ch ||
        model.settled[v].width != cw || model.settled[v].height != ch ||
        model.work[v].width != model_blocks_x(width) || model.work[v].height != model_blocks_y(height) ||
        model.raw_any[v].width != model.work[v].width || model.raw_any[v].height != model.work[v].height)
      return cudaErrorInvalidValue;
  }
  return remap ? launch<true>(model, width, height, format, views, stream)
               : launch<false>(model, width, height, format, views, stream);
}

}  // namespace cs::cuda
