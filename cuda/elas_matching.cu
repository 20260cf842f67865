// ELAS's disparity grid (E3) and dense matching (E5 with uniqueness) on the
// GPU (elas_matching.h), the scratch they share with the post-processing,
// and the whole sequence E3 .. E8.
#include "elas_matching.h"

#include <algorithm>
#include <climits>

#include "cuda_util.h"
#include "stereo_math.h"
#include "triangle_prior.h"

namespace cs::cuda {
namespace {

// ---------------------------------------------------------------- E3

// A support cell's point at (s i, s j) in the left view and (s i - d, s j)
// in the right sets bit d - min_disparity in its cell's mask, in each view
// where it lies inside the image (the reference's elas_grid keeps every
// point inside, duplicates of a position too; a set or a multiset gives the
// same winner, so the bit of a repeated d is simply set again). A d outside
// the range sets nothing: E5 would never count it.
struct CellArgs {
  int width, height, step, grid, cells_x, cells, words, min_disparity, max_disparity;
};

__global__ void __launch_bounds__(256) elas_cells_kernel(ImageView<const int16_t> support, CellArgs a,
                                                         uint32_t* cells) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= support.width || j >= support.height) return;
  const int d = drow(support, j)[i];
  if (d < a.min_disparity || d >= a.max_disparity) return;
  const int y = a.step * j;
  if (y >= a.height) return;
  const int bit = d - a.min_disparity;
  const uint32_t mask = 1u << (bit & 31);
  const int row = (y / a.grid) * a.cells_x;
  const int xl = a.step * i, xr = xl - d;
  if (xl < a.width) atomicOr(cells + static_cast<size_t>(row + xl / a.grid) * a.words + (bit >> 5), mask);
  if (xr >= 0 && xr < a.width)
    atomicOr(cells + (static_cast<size_t>(a.cells) + row + xr / a.grid) * a.words + (bit >> 5), mask);
}

constexpr int kDiffuseCells = 8;  // a warp a cell

// The diffused mask of a cell: the OR of its own and its eight neighbours'
// (cells outside the grid: none), preceded by a summary whose bit k of word
// j says whether mask word 32 j + k has a bit, so that E5 skips the empty
// words of a wide range. Both views (blockIdx.z).
__global__ void __launch_bounds__(32 * kDiffuseCells) elas_diffuse_kernel(const uint32_t* cells, uint32_t* diffused,
                                                                          int cells_x, int cells_y, int words,
                                                                          int summary) {
  const int cell = blockIdx.x * kDiffuseCells + threadIdx.y;
  const int n = cells_x * cells_y;
  if (cell >= n) return;  // the whole warp
  const int cx = cell % cells_x, cy = cell / cells_x;
  const uint32_t* own = cells + static_cast<size_t>(blockIdx.z) * n * words;
  uint32_t* record = diffused + (static_cast<size_t>(blockIdx.z) * n + cell) * (summary + words);
  const int u0 = max(cx - 1, 0), u1 = min(cx + 1, cells_x - 1);
  const int v0 = max(cy - 1, 0), v1 = min(cy + 1, cells_y - 1);
  for (int j = 0; j < summary; ++j) {
    const int word = 32 * j + threadIdx.x;
    uint32_t bits = 0;
    if (word < words) {
      for (int v = v0; v <= v1; ++v)
        for (int u = u0; u <= u1; ++u) bits |= own[static_cast<size_t>(v * cells_x + u) * words + word];
      record[summary + word] = bits;
    }
    const uint32_t nonzero = __ballot_sync(0xFFFFFFFFu, bits != 0);
    if (threadIdx.x == 0) record[j] = nonzero;
  }
}

// ---------------------------------------------------------------- E5

constexpr int kMatchX = 32, kMatchY = 8;
// |mu_q4| beyond this puts every candidate (16 d <= 16 * 4096) past the
// table's end: clamping mu there keeps |16 d - mu| in 32 bits and changes
// no energy.
constexpr int32_t kMuClamp = 1 << 20;
static_assert(kMuClamp - 16 * kMaxDisparity >= kElasPriorEntries, "a clamped prior stays beyond the table");

struct MatchArgs {
  ImageView<const uint4> descriptors[2];
  ImageView<const int32_t> mu_q4[2];
  ImageView<const uint8_t> mask[2];
  ImageView<int16_t> raw[2];
  ImageView<int32_t> best, rival;
  const uint32_t* diffused;
  const uint16_t* prior;
  int grid, cells_x, cells, words, summary;
  int min_disparity, max_disparity, sradius, uniqueness_ratio;
};

__device__ __forceinline__ int descriptor_sad(uint4 a, uint4 b) {
  return static_cast<int>(__vsadu4(a.x, b.x) + __vsadu4(a.y, b.y) + __vsadu4(a.z, b.z) + __vsadu4(a.w, b.w));
}

// A pixel's candidates (E5): the prior's window and its cell's diffused set,
// each only where min_disparity <= d <= hi (hi: the range's end and the
// last d whose column in the other view is inside the image). A d of both
// is visited once: the least (E, d), and the rival's least E, are those of
// the set.
struct Candidates {
  int hi;                       // admissible: min_disparity .. hi
  int window_lo, window_hi;     // the prior's window within them (empty: lo > hi)
  const uint32_t* record;       // the cell's diffused mask: summary words, then the mask
};

// The diffused set's d inside the prior's window are skipped (visited once,
// from the window).
template <typename Visit>
__device__ __forceinline__ void each_candidate(const Candidates& c, int min_disparity, int summary, Visit&& visit) {
  for (int d = c.window_lo; d <= c.window_hi; ++d) visit(d);
  if (c.hi < min_disparity) return;
  const int last = (c.hi - min_disparity) >> 5;  // the last word that holds an admissible d
  const uint32_t last_bits = 0xFFFFFFFFu >> (31 - ((c.hi - min_disparity) & 31));
  for (int j = 0; j <= (last >> 5); ++j) {
    uint32_t nonzero = c.record[j];
    while (nonzero) {
      const int word = 32 * j + __ffs(nonzero) - 1;
      if (word > last) break;
      nonzero &= nonzero - 1;
      uint32_t bits = c.record[summary + word];
      if (word == last) bits &= last_bits;
      while (bits) {
        const int d = min_disparity + 32 * word + __ffs(bits) - 1;
        if (d < c.window_lo || d > c.window_hi) visit(d);
        bits &= bits - 1;
      }
    }
  }
}

// The winner's order, least E then smaller d, as one unsigned minimum: E <
// 2^17 (a SAD of 16 bytes, 4080, plus a 16-bit table entry) above d < 2^13.
constexpr int kKeyShift = 13;
static_assert(kMaxDisparity <= (1 << kKeyShift), "d fits below the energy in a key");

template <int kView>
__device__ __forceinline__ void match_pixel(const MatchArgs& a, const uint16_t* table, int x, int y) {
  const int w = a.descriptors[0].width;
  const ImageView<const uint4>& own = a.descriptors[kView];
  if (a.mask[kView].data && !drow(a.mask[kView], y)[x]) {
    drow(a.raw[kView], y)[x] = -1;
    if (kView == 0) drow(a.best, y)[x] = drow(a.rival, y)[x] = kNoCost;
    return;
  }
  const uint4 here = __ldg(drow(own, y) + x);
  const uint4* other = drow(a.descriptors[1 - kView], y);
  const int32_t mu = drow(a.mu_q4[kView], y)[x];
  const bool has_prior = mu != kNoPrior;
  const int mu_c = min(max(mu, -kMuClamp), kMuClamp);
  const int far = table[kElasPriorEntries - 1];
  Candidates c;
  // The other view's column x - d (left) or x + d (right) inside the image.
  c.hi = min(a.max_disparity - 1, kView == 0 ? x : w - 1 - x);
  c.window_lo = 1;
  c.window_hi = 0;
  if (has_prior) {
    // m = floor((mu + 8) / 16) without overflow: mu = 16 q + r, 0 <= r < 16.
    const int m = (mu >> 4) + (((mu & 15) + 8) >> 4);
    const long long lo = max(static_cast<long long>(m) - a.sradius, static_cast<long long>(a.min_disparity));
    const long long hi = min(static_cast<long long>(m) + a.sradius, static_cast<long long>(c.hi));
    if (lo <= hi) c.window_lo = static_cast<int>(lo), c.window_hi = static_cast<int>(hi);
  }
  c.record = a.diffused + (static_cast<size_t>(kView) * a.cells + (y / a.grid) * a.cells_x + x / a.grid) *
                              (a.summary + a.words);
  auto energy = [&](int d) {
    const uint4 there = __ldg(other + (kView == 0 ? x - d : x + d));
    int e = descriptor_sad(here, there);
    if (has_prior) {
      const int t = abs(16 * d - mu_c);
      e += t < kElasPriorEntries ? table[t] : far;
    } else {
      e += far;
    }
    return e;
  };
  // The least keys (E << kKeyShift | d), ascending: the right view needs
  // the least alone; the left view the four least, from one pass over the
  // candidates. Each d is visited once and has one key, so the four are
  // four different d. The rival (the least E at least 2 from the winner)
  // is the first of the other three that far from it: at most two of them
  // (winner - 1, winner + 1) are not, and every key after the fourth is
  // above it. (A second pass over the candidates for the rival took about a
  // third of the kernel's instructions.)
  constexpr uint32_t kNoKey = 0xFFFFFFFFu;
  uint32_t key[4] = {kNoKey, kNoKey, kNoKey, kNoKey};
  each_candidate(c, a.min_disparity, a.summary, [&](int d) {
    uint32_t k = static_cast<uint32_t>(energy(d)) << kKeyShift | static_cast<uint32_t>(d);
    if constexpr (kView == 1) {
      key[0] = min(key[0], k);
    } else {
#pragma unroll
      for (int j = 0; j < 3; ++j) {
        const uint32_t lo = min(key[j], k);
        k = max(key[j], k);
        key[j] = lo;
      }
      key[3] = min(key[3], k);
    }
  });
  const int winner = key[0] == kNoKey ? -1 : static_cast<int>(key[0] & ((1u << kKeyShift) - 1));
  if (kView == 1) {
    drow(a.raw[1], y)[x] = static_cast<int16_t>(winner);
    return;
  }
  int32_t best = kNoCost, rival = kNoCost;
  if (winner >= 0) {
    best = static_cast<int32_t>(key[0] >> kKeyShift);
#pragma unroll
    for (int j = 3; j >= 1; --j) {
      const int d = static_cast<int>(key[j] & ((1u << kKeyShift) - 1));
      if (key[j] != kNoKey && abs(d - winner) >= 2) rival = static_cast<int32_t>(key[j] >> kKeyShift);
    }
  }
  const bool kept = winner >= 0 && passes_uniqueness(best, rival, a.uniqueness_ratio);
  drow(a.raw[0], y)[x] = static_cast<int16_t>(kept ? winner : -1);
  drow(a.best, y)[x] = best;
  drow(a.rival, y)[x] = rival;
}

// A thread a pixel of the view blockIdx.z; the prior's table in shared
// memory (2 KiB, read at a different place by nearly every candidate).
__global__ void __launch_bounds__(kMatchX * kMatchY) elas_match_kernel(const __grid_constant__ MatchArgs a) {
  __shared__ uint16_t table[kElasPriorEntries];
  for (int k = threadIdx.y * kMatchX + threadIdx.x; k < kElasPriorEntries; k += kMatchX * kMatchY)
    table[k] = a.prior[k];
  __syncthreads();
  const int x = blockIdx.x * kMatchX + threadIdx.x, y = blockIdx.y * kMatchY + threadIdx.y;
  if (x >= a.descriptors[0].width || y >= a.descriptors[0].height) return;
  if (blockIdx.z == 0)
    match_pixel<0>(a, table, x, y);
  else
    match_pixel<1>(a, table, x, y);
}

// ---------------------------------------------------------------- checks

template <typename A, typename B>
bool same_size(const ImageView<A>& a, const ImageView<B>& b) {
  return a.width == b.width && a.height == b.height;
}

bool range_ok(const ElasDenseParams& p) {
  return p.min_disparity >= 0 && p.max_disparity <= kMaxDisparity;
}

// The scratch holds at least what this size and range need.
bool scratch_fits(const ElasDenseScratch& s, const ElasDenseLayout& need) {
  return need.cell_words() <= s.layout.cell_words() && need.diffused_words() <= s.layout.diffused_words() &&
         need.pixels() <= s.layout.pixels() && (need.cell_words() == 0 || (s.cells && s.diffused)) &&
         (need.pixels() == 0 || (s.parent && s.members)) && s.prior;
}

// What E3 reads: the support grid of the left view's size.
bool grid_views_agree(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s) {
  const int w = v.descriptors[0].width, h = v.descriptors[0].height;
  const int step = std::max(1, p.support_step);
  return range_ok(p) && scratch_fits(s, elas_dense_layout(w, h, p)) && v.support.width == (w + step - 1) / step &&
         v.support.height == (h + step - 1) / step;
}

// What E5 reads and writes: every image the left view's size, the masks
// both or neither.
bool match_views_agree(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s) {
  const ImageView<const uint4>& d0 = v.descriptors[0];
  const bool masks = v.mask[0].data != nullptr;
  return range_ok(p) && scratch_fits(s, elas_dense_layout(d0.width, d0.height, p)) &&
         same_size(d0, v.descriptors[1]) && same_size(d0, v.mu_q4[0]) && same_size(d0, v.mu_q4[1]) &&
         same_size(d0, v.raw[0]) && same_size(d0, v.raw[1]) && same_size(d0, v.best) && same_size(d0, v.rival) &&
         masks == (v.mask[1].data != nullptr) &&
         (!masks || (same_size(d0, v.mask[0]) && same_size(d0, v.mask[1])));
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

ElasDenseLayout elas_dense_layout(int width, int height, const ElasDenseParams& p) {
  ElasDenseLayout l;
  l.width = std::max(width, 0);
  l.height = std::max(height, 0);
  const int g = std::max(1, p.grid_size);
  l.cells_x = (l.width + g - 1) / g;
  l.cells_y = (l.height + g - 1) / g;
  const int range = std::max(0, p.max_disparity - std::max(0, p.min_disparity));
  l.words = std::max(1, (range + 31) / 32);
  l.summary = (l.words + 31) / 32;
  return l;
}

cudaError_t ElasDenseBuffers::allocate(int width, int height, const ElasDenseParams& p,
                                       const std::vector<uint16_t>& prior) {
  release();
  if (prior.size() != static_cast<size_t>(kElasPriorEntries)) return cudaErrorInvalidValue;
  const ElasDenseLayout l = elas_dense_layout(width, height, p);
  const size_t cells = aligned(l.cell_words() * 4), diffused = aligned(l.diffused_words() * 4);
  const size_t pixels = aligned(l.pixels() * 4), table = aligned(prior.size() * 2);
  char* m = nullptr;
  const size_t bytes = cells + diffused + 2 * pixels + table;
  cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&m), bytes);
  if (e != cudaSuccess) return e;
  memory_ = m;
  bytes_ = bytes;
  scratch_.layout = l;
  scratch_.cells = reinterpret_cast<uint32_t*>(m);
  scratch_.diffused = reinterpret_cast<uint32_t*>(m + cells);
  scratch_.parent = reinterpret_cast<int32_t*>(m + cells + diffused);
  scratch_.members = reinterpret_cast<int32_t*>(m + cells + diffused + pixels);
  uint16_t* t = reinterpret_cast<uint16_t*>(m + cells + diffused + 2 * pixels);
  scratch_.prior = t;
  e = cudaMemcpy(t, prior.data(), prior.size() * 2, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) release();
  return e;
}

void ElasDenseBuffers::release() {
  if (memory_) cudaFree(memory_);
  memory_ = nullptr;
  bytes_ = 0;
  scratch_ = ElasDenseScratch();
}

cudaError_t enqueue_elas_grid(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                              cudaStream_t stream) {
  if (!grid_views_agree(v, p, s)) return cudaErrorInvalidValue;
  const int w = v.descriptors[0].width, h = v.descriptors[0].height;
  if (w <= 0 || h <= 0) return cudaSuccess;
  const ElasDenseLayout l = elas_dense_layout(w, h, p);
  const int step = std::max(1, p.support_step);
  cudaError_t e = cudaMemsetAsync(s.cells, 0, l.cell_words() * 4, stream);
  if (e != cudaSuccess) return e;
  const CellArgs a{w, h, step, std::max(1, p.grid_size), l.cells_x, l.cells_x * l.cells_y, l.words,
                   p.min_disparity, p.max_disparity};
  const dim3 block(32, 8);
  elas_cells_kernel<<<grid_for(v.support.width, v.support.height, block), block, 0, stream>>>(v.support, a, s.cells);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  const dim3 cells_grid((a.cells + kDiffuseCells - 1) / kDiffuseCells, 1, 2);
  elas_diffuse_kernel<<<cells_grid, dim3(32, kDiffuseCells), 0, stream>>>(s.cells, s.diffused, l.cells_x, l.cells_y,
                                                                          l.words, l.summary);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_match(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                               cudaStream_t stream) {
  if (!match_views_agree(v, p, s)) return cudaErrorInvalidValue;
  const int w = v.descriptors[0].width, h = v.descriptors[0].height;
  if (w <= 0 || h <= 0) return cudaSuccess;
  const ElasDenseLayout l = elas_dense_layout(w, h, p);
  MatchArgs a;
  for (int k = 0; k < 2; ++k) {
    a.descriptors[k] = v.descriptors[k];
    a.mu_q4[k] = v.mu_q4[k];
    a.mask[k] = v.mask[k];
    a.raw[k] = v.raw[k];
  }
  a.best = v.best;
  a.rival = v.rival;
  a.diffused = s.diffused;
  a.prior = s.prior;
  a.grid = std::max(1, p.grid_size);
  a.cells_x = l.cells_x;
  a.cells = l.cells_x * l.cells_y;
  a.words = l.words;
  a.summary = l.summary;
  a.min_disparity = p.min_disparity;
  a.max_disparity = p.max_disparity;
  a.sradius = p.sradius;
  a.uniqueness_ratio = p.uniqueness_ratio;
  dim3 grid = grid_for(w, h, dim3(kMatchX, kMatchY));
  grid.z = 2;
  elas_match_kernel<<<grid, dim3(kMatchX, kMatchY), 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t enqueue_elas_dense(const ElasDenseViews& v, const ElasDenseParams& p, const ElasDenseScratch& s,
                               cudaStream_t stream, bool with_grid) {
  const ImageView<const uint4>& d0 = v.descriptors[0];
  // Everything checked before anything is enqueued: a refusal leaves the stream as it was.
  if (!grid_views_agree(v, p, s) || !match_views_agree(v, p, s) || !same_size(d0, v.checked[0]) ||
      !same_size(d0, v.checked[1]) || !same_size(d0, v.disparity) ||
      (v.confidence.data && !same_size(d0, v.confidence)) ||
      static_cast<long long>(d0.width) * d0.height > INT_MAX)
    return cudaErrorInvalidValue;
  cudaError_t e = with_grid ? enqueue_elas_grid(v, p, s, stream) : cudaSuccess;
  if (e != cudaSuccess) return e;
  if ((e = enqueue_elas_match(v, p, s, stream)) != cudaSuccess) return e;
  if (p.lr_check) {
    e = enqueue_elas_lr_check(as_const(v.raw[0]), as_const(v.raw[1]), v.checked[0], v.checked[1], p.lr_threshold,
                              stream);
  } else {  // E6 off: the maps after E5 go on
    for (int k = 0; k < 2 && e == cudaSuccess; ++k)
      e = cudaMemcpy2DAsync(v.checked[k].data, v.checked[k].pitch, v.raw[k].data, v.raw[k].pitch,
                            sizeof(int16_t) * d0.width, d0.height, cudaMemcpyDeviceToDevice, stream);
  }
  if (e != cudaSuccess) return e;
  if ((e = enqueue_elas_speckles(as_const(v.checked[0]), v.disparity, p.speckle_size, p.speckle_similarity, s,
                                 stream)) != cudaSuccess)
    return e;
  ElasFinishViews f;
  f.disparity = v.disparity;
  f.mask = v.mask[0];
  f.raw = as_const(v.raw[0]);
  f.best = as_const(v.best);
  f.rival = as_const(v.rival);
  f.confidence = v.confidence;
  return enqueue_elas_gaps(f, p.gap_width, p.fill_all, stream);
}

}  // namespace cs::cuda
