#include "convert.h"

#include "background.h"
#include "cuda_util.h"
#include "dependent_launch.h"
#include "pixel_read.cuh"
#include "stereo_math.h"

namespace cs::cuda {
namespace {

constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kSide = 4;  // a thread converts kSide x kSide level-0 pixels
// With the model (and no rectification), blocks an SM holds: 40 registers
// a thread, none spilled, where the compiler's own choice took 48 (1080p:
// 1.29 waves of blocks on an H200 rather than 1.55). Compute capability
// 7.5 holds 1024 threads an SM: four blocks there.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kModelBlocksPerSm = 4;
#else
constexpr int kModelBlocksPerSm = 6;
#endif

// Both views of a pair in one launch: blockIdx.z picks the view. Taken by
// value: a reference chosen at run time between two parameters makes the
// compiler copy the parameters to local memory.
struct Views {
  FrameView in[2];
  ImageView<uint8_t> gray[2][kMaxConvertLevels];
  ModelViews model;  // the background model (the kModel forms)
  ImageView<const RemapPoint> map[2];  // stage 0's maps (the kRemap forms)
  ImageView<uint32_t> colour[2];       // level-0 colour (convert_to_rgb), data == nullptr: none
  int levels;       // intensity levels made: level 0, then its pyramid
  bool words;       // 4-byte pixels on 4-byte aligned rows: one load a pixel
  bool quads;       // ... on 16-byte aligned rows: one load for four pixels
  bool pairs;       // 8-byte aligned rows: one load for two YUY2/UYVY macropixels
  bool gray_words;  // level-0 intensity rows 4-byte aligned: one store for four pixels
  unsigned long long* clear;  // words the first block zeroes (clear_words of them)
  int clear_words;
};

__device__ __forceinline__ int byte_of(uint32_t word, int k) { return (word >> (8 * k)) & 255; }

// The pixels' pass's blocks (background.h ModelViews::work) whose cells or
// their neighbours hold a foreground cell of this warp's row of cells (bx,
// by) .. (bx + 31, by): a warp's cells are one block's (kModelBlockCells
// cells from a multiple of it), so one lane marks at most 3 x 2 blocks, and
// only where a mark is missing (in a moving scene the pass left most set).
static_assert(kThreadsX == kModelBlockCells, "a warp's cells are one block's row");
__device__ __forceinline__ void mark_work(const ImageView<uint8_t>& work, bool fg, int bx, int by) {
  const unsigned lanes = __ballot_sync(__activemask(), fg);
  const int lane = threadIdx.x;
  if (!lanes || lane != __ffs(lanes) - 1) return;
  const int block_x = bx / kModelBlockCells;
  // Neighbours across the block's sides: the first and last lanes' cells.
  const int x0 = (lanes & 1u) && block_x > 0 ? block_x - 1 : block_x;
  const int x1 = (lanes >> 31) && block_x + 1 < work.width ? block_x + 1 : block_x;
  const int y0 = max(by - 1, 0) / kModelBlockCellRows, y1 = min((by + 1) / kModelBlockCellRows, work.height - 1);
  for (int j = y0; j <= y1; ++j)
    for (int i = x0; i <= x1; ++i) {
      uint8_t* m = drow(work, j) + i;
      if (!*m) *m = 1;
    }
}

// A thread converts a kSide x kSide block of level-0 pixels and makes the
// block's pixels of levels 1 and 2 from them (stages.h downsample: each the
// average4 of its 2 x 2 block one level finer), so the first pyramid levels
// cost no pass of their own. A level's pixel exists where its 2 x 2 block
// does: level l + 1 is level l's width / 2 x height / 2. With kRemap each
// level-0 pixel is the rectified view's (stage 0 fused: rectified_rgb).
template <PixelFormat F, bool kModel, bool kRemap>
__device__ __forceinline__ void convert_block(const Views& w, int z, int block_x, int block_y) {
  const FrameView& in = w.in[z];
  const int bx = block_x * kThreadsX + threadIdx.x, by = block_y * kThreadsY + threadIdx.y;
  const int x = kSide * bx, y = kSide * by;
  if (x >= in.width || y >= in.height) return;
  constexpr PackedLayout L = packed_layout(F);
  constexpr bool kLuma8 = F == PixelFormat::GRAY8 || F == PixelFormat::I420 || F == PixelFormat::NV12;
  constexpr bool kPacked4 = L.bytes == 4 && !kLuma8;
  constexpr bool k422 = F == PixelFormat::YUY2 || F == PixelFormat::UYVY;
  const bool full = x + kSide <= in.width;
  // Where the block lies inside the frame on aligned rows, all its rows are
  // loaded first, one wide load a row (loads cannot pass the stores below).
  const bool whole = !kRemap && full && y + kSide <= in.height &&
                     (kPacked4 ? w.quads : k422 ? w.pairs : kLuma8 && w.words);
  uint4 quad[kSide];
  uint2 pair[kSide];  // two macropixels: the block's four pixels of a row
  uint32_t word[kSide];
  if (whole) {
#pragma unroll
    for (int r = 0; r < kSide; ++r) {
      const uint8_t* row = in.plane[0] + (y + r) * in.pitch[0];
      if (kPacked4) quad[r] = __ldg(reinterpret_cast<const uint4*>(row + x * 4));
      else if (k422) pair[r] = __ldg(reinterpret_cast<const uint2*>(row + x * 2));
      else word[r] = __ldg(reinterpret_cast<const uint32_t*>(row + x));
    }
  }
  uint32_t gray[kSide];  // four intensity bytes a row
  // The colour a method matches (method cross): convert_to_rgb's packing,
  // the rectified view's with kRemap; with kModel the block is a cell of
  // the background model (stages.h stage 3): its mean colour is tested
  // against the cell's model. With the model, a whole block of packed
  // pixels is summed and stored as each row is converted (its loads then
  // die early: 40 registers where keeping them took 48).
  constexpr bool kSumRows = kModel && kPacked4;
  int sum[3] = {0, 0, 0}, n = 0;
  uint32_t* const colour = w.colour[z].data;
#pragma unroll
  for (int r = 0; r < kSide; ++r) {
    gray[r] = 0;
    const int yy = y + r;
    if (yy >= in.height) continue;
    if (kPacked4 && whole) {
      const uint32_t px[kSide] = {quad[r].x, quad[r].y, quad[r].z, quad[r].w};
      uint32_t* out = kSumRows && colour ? drow(w.colour[z], yy) + x : nullptr;
#pragma unroll
      for (int k = 0; k < kSide; ++k) {
        const int cr = byte_of(px[k], L.r), cg = byte_of(px[k], L.g), cb = byte_of(px[k], L.b);
        gray[r] |= static_cast<uint32_t>(luma_from_rgb(cr, cg, cb)) << (8 * k);
        if (kSumRows) {
          if (out) out[k] = pack_rgb(cr, cg, cb);
          sum[0] += cr;
          sum[1] += cg;
          sum[2] += cb;
        }
      }
      if (kSumRows) n += kSide;
    } else if (k422 && whole) {
      // The Y bytes of the eight (0 2 4 6 for YUY2, 1 3 5 7 for UYVY), in order.
      constexpr MacropixelLayout M = macropixel_layout(F);
      gray[r] = __byte_perm(pair[r].x, pair[r].y, M.y0 == 0 ? 0x6420 : 0x7531);
    } else if (kLuma8 && whole) {
      gray[r] = word[r];
    } else {
#pragma unroll
      for (int k = 0; k < kSide; ++k)
        if (x + k < in.width)
          gray[r] |= static_cast<uint32_t>(kRemap ? luma_of(rectified_rgb<F>(in, w.words, w.map[z], x + k, yy))
                                                  : convert_one<F, false>(in, w.words, x + k, yy, nullptr))
                     << (8 * k);
    }
    uint8_t* out = drow(w.gray[z][0], yy) + x;
    if (full && w.gray_words) {
      *reinterpret_cast<uint32_t*>(out) = gray[r];
    } else {
#pragma unroll
      for (int k = 0; k < kSide; ++k)
        if (x + k < in.width) out[k] = static_cast<uint8_t>(byte_of(gray[r], k));
    }
  }
  if (colour || kModel) {
    // The colours the row loop did not take (all of them without the
    // model), pixel by pixel.
#pragma unroll
    for (int r = 0; r < kSide; ++r) {
      const int yy = y + r;
      if ((kSumRows && whole) || yy >= in.height) break;
      uint32_t* out = colour ? drow(w.colour[z], yy) + x : nullptr;
#pragma unroll
      for (int k = 0; k < kSide; ++k) {
        if (x + k >= in.width) break;
        uint32_t c = 0;
        if (kRemap) {
          c = rectified_rgb<F>(in, w.words, w.map[z], x + k, yy);
        } else if (kPacked4 && whole) {
          const uint32_t px = k == 0 ? quad[r].x : k == 1 ? quad[r].y : k == 2 ? quad[r].z : quad[r].w;
          c = pack_rgb(byte_of(px, L.r), byte_of(px, L.g), byte_of(px, L.b));
        } else {
          convert_one<F, true>(in, w.words, x + k, yy, &c);
        }
        if (out) out[k] = c;
        if (kModel) {
          sum[0] += c & 255u;
          sum[1] += (c >> 8) & 255u;
          sum[2] += (c >> 16) & 255u;
          ++n;
        }
      }
    }
    if (kModel) {
      BackgroundPixel* cell = drow(w.model.cells[z], by) + bx;
      BackgroundPixel m = *cell;
      const BackgroundPixel before = m;
      const bool fg = background_pixel(&m, cell_colour(sum[0], sum[1], sum[2], n), w.model.params,
                                       *w.model.frames_seen, bx, by, z + 2);
      if (m != before) *cell = m;
      drow(w.model.cell_fg[z], by)[bx] = fg ? 1 : 0;
      mark_work(w.model.work[z], fg, bx, by);
    }
  }
  if (w.levels < 2) return;
  const ImageView<uint8_t>& l1 = w.gray[z][1];
  uint32_t half[2] = {0, 0};  // level-1 pixels 2 bx + j of row 2 by + i: byte j of half[i]
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int x1 = 2 * bx + j, y1 = 2 * by + i;
      if (x1 >= l1.width || y1 >= l1.height) continue;
      const int v = average4(byte_of(gray[2 * i], 2 * j), byte_of(gray[2 * i], 2 * j + 1),
                             byte_of(gray[2 * i + 1], 2 * j), byte_of(gray[2 * i + 1], 2 * j + 1));
      drow(l1, y1)[x1] = static_cast<uint8_t>(v);
      half[i] |= static_cast<uint32_t>(v) << (8 * j);
    }
  if (w.levels < 3) return;
  const ImageView<uint8_t>& l2 = w.gray[z][2];
  if (bx < l2.width && by < l2.height)
    drow(l2, by)[bx] = average4(byte_of(half[0], 0), byte_of(half[0], 1), byte_of(half[1], 0), byte_of(half[1], 1));
}


// The frame's first kernel: kSide x kSide blocks of pixels a thread
// (convert_block), with kModel each a cell of the background model tested;
// blockIdx.z picks the view. With kModel the first block also records the
// frame's input for the pixels' pass (ModelInput).
template <PixelFormat F, bool kModel, bool kRemap>
__global__ void __launch_bounds__(kThreadsX * kThreadsY, kModel && !kRemap ? kModelBlocksPerSm : 0) convert_kernel(const __grid_constant__ Views w) {
  // The model's pixels' pass may be scheduled once every block has begun
  // (it waits for this kernel's end: dependent_launch.h).
  if (kModel) let_dependents_start();
  const int z = blockIdx.z;
  if ((blockIdx.x | blockIdx.y | z) == 0) {
    const int tid = threadIdx.x + threadIdx.y * kThreadsX;
    for (int i = tid; i < w.clear_words; i += kThreadsX * kThreadsY) w.clear[i] = 0;
    if (kModel && tid == 0) {
      ModelInput& input = *w.model.input;
      for (int v = 0; v < 2; ++v) {
        input.in[v] = w.in[v];
        input.map[v] = w.map[v];
      }
      input.words = w.words;
      input.quads = w.quads;
    }
  }
  convert_block<F, kModel, kRemap>(w, z, blockIdx.x, blockIdx.y);
}

// The launch of w's kernel for `count` views (blockIdx.z): the form for
// the input format and for whether the background model runs.
template <bool kModel, bool kRemap>
cudaError_t describe(const Views& w, int count, KernelCall* call) {
  const dim3 block(kThreadsX, kThreadsY);
  dim3 grid = grid_for((w.in[0].width + kSide - 1) / kSide, (w.in[0].height + kSide - 1) / kSide, block);
  grid.z = count;
  const Views& v = w;
  switch (w.in[0].format) {
#define CS_FORMAT(F) \
  case PixelFormat::F: call->set(convert_kernel<PixelFormat::F, kModel, kRemap>, grid, block, 0, v); break;
    CS_FOR_EACH_PIXEL_FORMAT(CS_FORMAT)
#undef CS_FORMAT
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

// model: the background model's views, or null (the model off); maps:
// count views' rectification maps, or null (none).
cudaError_t describe_views(const FrameView* in, const ImageView<uint8_t>* const* gray, int levels,
                           const ModelViews* model, int count, KernelCall* call, unsigned long long* clear = nullptr,
                           int clear_words = 0, const ImageView<const RemapPoint>* maps = nullptr,
                           const ImageView<uint32_t>* colour = nullptr) {
  if (levels < 1 || levels > kMaxConvertLevels || clear_words < 0 || (clear_words > 0 && !clear))
    return cudaErrorInvalidValue;
  Views w{};
  w.clear = clear;
  w.clear_words = clear_words;
  w.levels = levels;
  w.words = w.quads = w.pairs = w.gray_words = true;
  if (model) {
    if (!model->frames_seen) return cudaErrorInvalidValue;
    w.model = *model;
  }
  for (int i = 0; i < count; ++i) {
    w.in[i] = in[i];
    for (int l = 0; l < levels; ++l) {
      const ImageView<uint8_t>& g = gray[i][l];
      const int want_w = in[i].width >> l, want_h = in[i].height >> l;
      if (g.width != want_w || g.height != want_h) return cudaErrorInvalidValue;
      w.gray[i][l] = g;
    }
    if (model) {
      const int cw = (in[i].width + kSide - 1) / kSide, ch = (in[i].height + kSide - 1) / kSide;
      if (model->cells[i].width != cw || model->cells[i].height != ch || model->cell_fg[i].width != cw ||
          model->cell_fg[i].height != ch || !model->input || model->work[i].width != model_blocks_x(in[i].width) ||
          model->work[i].height != model_blocks_y(in[i].height))
        return cudaErrorInvalidValue;
    }
    if (maps) {
      if (maps[i].width != in[i].width || maps[i].height != in[i].height) return cudaErrorInvalidValue;
      w.map[i] = maps[i];
    }
    if (colour) {
      if (colour[i].width != in[i].width || colour[i].height != in[i].height) return cudaErrorInvalidValue;
      w.colour[i] = colour[i];
    }
    w.words = w.words && rows_aligned(in[i].plane[0], in[i].pitch[0], 4);
    w.quads = w.quads && rows_aligned(in[i].plane[0], in[i].pitch[0], 16);
    w.pairs = w.pairs && rows_aligned(in[i].plane[0], in[i].pitch[0], 8);
    w.gray_words = w.gray_words && rows_aligned(gray[i][0].data, gray[i][0].pitch, 4);
  }
  if (maps) return model ? describe<true, true>(w, count, call) : describe<false, true>(w, count, call);
  return model ? describe<true, false>(w, count, call) : describe<false, false>(w, count, call);
}

cudaError_t launch_described(cudaError_t described, const KernelCall& call, cudaStream_t stream) {
  return described != cudaSuccess ? described : call.launch(stream);
}

}  // namespace

cudaError_t enqueue_convert(const FrameView& in, ImageView<uint8_t> gray, const ModelViews* model,
                            cudaStream_t stream) {
  const ImageView<uint8_t>* levels[1] = {&gray};
  KernelCall call;
  const cudaError_t e = launch_described(describe_views(&in, levels, 1, model, 1, &call), call, stream);
  if (e != cudaSuccess || !model) return e;
  return enqueue_model_pixels(*model, in.width, in.height, in.format, false, stream, 1);
}

cudaError_t convert_pair_call(const FrameView& left, const FrameView& right, const ImageView<uint8_t>* gray_left,
                              const ImageView<uint8_t>* gray_right, int levels, const ModelViews* model,
                              KernelCall* call, unsigned long long* clear, int clear_words,
                              const ImageView<const RemapPoint>* maps, const ImageView<uint32_t>* colour) {
  if (left.format != right.format || left.width != right.width || left.height != right.height)
    return cudaErrorInvalidValue;
  const FrameView in[2] = {left, right};
  const ImageView<uint8_t>* gray[2] = {gray_left, gray_right};
  return describe_views(in, gray, levels, model, 2, call, clear, clear_words, maps, colour);
}

cudaError_t enqueue_convert_pair(const FrameView& left, const FrameView& right, const ImageView<uint8_t>* gray_left,
                                 const ImageView<uint8_t>* gray_right, int levels, const ModelViews* model,
                                 cudaStream_t stream, unsigned long long* clear, int clear_words,
                                 const ImageView<const RemapPoint>* maps) {
  KernelCall call;
  const cudaError_t e = launch_described(
      convert_pair_call(left, right, gray_left, gray_right, levels, model, &call, clear, clear_words, maps), call,
      stream);
  if (e != cudaSuccess || !model) return e;
  return enqueue_model_pixels(*model, left.width, left.height, left.format, maps != nullptr, stream);
}

}  // namespace cs::cuda
