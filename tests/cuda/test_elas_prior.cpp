// ELAS's prior on the GPU (cuda/elas_prior.h) against the CPU reference
// (what prior_of in common/elas_dense.cpp makes of a view's support points):
// both views of each grid at once on two streams and two scratches, the
// same triangles (read back from the scratch, canonical form) and the same
// mu_q4 bit for bit in a pitched image, on random subsets of the candidate
// lattice, full lattices, right views with coinciding points, rows,
// columns, collinear points, 0 to 3 points, tiny grids, a 1080p grid, the
// support grids of rendered scenes, a grid smaller than its scratch, images
// smaller and larger than the points; and once captured into a CUDA graph
// launched twice on different grids. tests/cuda/test_elas_triangulation_
// emulation.cpp runs the same steps on the CPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "elas_prior.h"
#include "elas_prior_cases.h"
#include "gpu_test_util.h"

namespace cs::cuda::test {
namespace {

using namespace elas_prior_cases;

struct Streams {
  cudaStream_t s[2] = {nullptr, nullptr};
  Streams() {
    for (cudaStream_t& q : s) EXPECT_EQ(cudaStreamCreateWithFlags(&q, cudaStreamNonBlocking), cudaSuccess);
  }
  ~Streams() {
    for (cudaStream_t q : s) cudaStreamDestroy(q);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
};

template <typename T>
std::vector<T> download_array(const T* device, size_t n) {
  std::vector<T> out(n);
  if (n > 0) {
    EXPECT_EQ(cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return out;
}

// One view's run against the reference: mu_q4, the triangles, the counters.
void expect_view_matches(const Image<int16_t>& grid, int step, bool right_view, const ElasPriorScratch& scratch,
                         const DeviceImage<int32_t>& mu) {
  SCOPED_TRACE(right_view ? "right view" : "left view");
  const Reference ref = reference(grid, step, right_view, mu.view().width, mu.view().height);
  EXPECT_TRUE(same_mu(ref.mu_q4, download(mu)));
  const std::vector<int32_t> counts = download_array(scratch.device_counts(), kPriorCountSlots);
  EXPECT_EQ(counts[kPriorStatus], 0);
  const int triangles = counts[kPriorTriangles];
  ASSERT_GE(triangles, 0);
  ASSERT_LE(static_cast<size_t>(triangles), prior_max_triangles(grid.width, grid.height));
  const std::vector<int32_t> corners = download_array(scratch.mesh().corner, 3 * static_cast<size_t>(triangles));
  const std::vector<PriorVertex> vertex =
      download_array(scratch.mesh().vertex, static_cast<size_t>(grid.width) * grid.height);
  for (int32_t v : corners) ASSERT_TRUE(v >= 0 && static_cast<size_t>(v) < vertex.size()) << "vertex " << v;
  EXPECT_EQ(canonical_triangles(corners, vertex, ref.index_of_cell), ref.triangles)
      << triangles << " triangles, reference " << ref.triangles.size();
}

// Both views of a grid at once (two streams, two scratches extra cells
// larger than the grid) into width x height images, the first `spread`
// flip rounds over the whole GPU (-1: the default); returns the flip rounds
// of the left view.
int expect_both_views(const Image<int16_t>& grid, int step, int width, int height, int extra = 0, int spread = -1) {
  const DeviceImage<int16_t> d_grid = upload(grid);
  ElasPriorScratch scratch[2];
  Streams streams;
  DeviceImage<int32_t> mu[2] = {make_device<int32_t>(width, height), make_device<int32_t>(width, height)};
  for (int v = 0; v < 2; ++v) {
    EXPECT_EQ(scratch[v].allocate(grid.width + extra, grid.height + extra), cudaSuccess);
    EXPECT_EQ(enqueue_elas_prior(d_grid.cview(), step, v == 1, scratch[v], mu[v].view(), streams.s[v], spread),
              cudaSuccess);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int v = 0; v < 2; ++v) expect_view_matches(grid, step, v == 1, scratch[v], mu[v]);
  return download_array(scratch[0].device_counts(), kPriorCountSlots)[kPriorRounds];
}

int expect_both_views(const Image<int16_t>& grid, int step = 5) {
  return expect_both_views(grid, step, grid.width * step, grid.height * step);
}

TEST(ElasPrior, RandomSubsetsOfTheLattice) {
  uint32_t seed = 1;
  for (double density : {0.05, 0.2, 0.5, 0.9, 1.0})
    for (int size : {7, 40}) {
      SCOPED_TRACE("density " + std::to_string(density) + " size " + std::to_string(size));
      expect_both_views(random_grid(size + 3, size, density, 30, seed++));
    }
}

// Boundaries that wave in and out (wavy_grid): the pockets' rounds and
// their walked tail in the plan kernel.
TEST(ElasPrior, WavyBoundaries) { expect_both_views(wavy_grid()); }

TEST(ElasPrior, FullLatticesAndCoincidingPoints) {
  for (int cx : {2, 3, 31})
    for (int cy : {2, 11}) {
      SCOPED_TRACE(std::to_string(cx) + " x " + std::to_string(cy));
      expect_both_views(Image<int16_t>(cx, cy, int16_t{0}));
      expect_both_views(Image<int16_t>(cx, cy, int16_t{7}));
      expect_both_views(Image<int16_t>(cx, cy, int16_t{7}), 1);
    }
  uint32_t seed = 100;
  for (int size : {5, 30}) {
    // d in multiples of the step: cells of a row land on one point.
    Image<int16_t> g = random_grid(size, size, 0.7, 3, seed++);
    for (int16_t& v : g.pixels)
      if (v >= 0) v = static_cast<int16_t>(5 * v);
    expect_both_views(g);
    expect_both_views(random_grid(size, size, 0.7, 12, seed++));
  }
}

TEST(ElasPrior, RowsColumnsAndCollinearPoints) {
  Image<int16_t> one(20, 6, int16_t{-1}), two(20, 6, int16_t{-1});
  for (int i = 0; i < 20; ++i) {
    if (i % 2 == 0) one.at(i, 3) = static_cast<int16_t>(i % 7);
    two.at(i, 1) = static_cast<int16_t>(i % 5);
    if (i % 4 == 3) two.at(i, 4) = 2;
  }
  expect_both_views(one);
  expect_both_views(two);
  Image<int16_t> col(8, 15, int16_t{-1}), diag(10, 10, int16_t{-1});
  for (int j = 0; j < 15; ++j) col.at(5, j) = static_cast<int16_t>((j * 7) % 9);
  for (int k = 0; k < 10; ++k) diag.at(k, k) = 3;
  expect_both_views(col);
  expect_both_views(diag);
  Image<int16_t> mixed(12, 9, int16_t{-1});
  for (int j = 0; j < 9; ++j)
    for (int i = 0; i < 12; ++i)
      if (j % 3 == 0 || i == 6 - j % 3) mixed.at(i, j) = static_cast<int16_t>((i + j) % 4);
  expect_both_views(mixed);
}

TEST(ElasPrior, NoneToThreePointsAndTinyGrids) {
  const int cells[4][2] = {{1, 1}, {4, 1}, {2, 3}, {5, 4}};
  for (int n = 0; n <= 4; ++n) {
    SCOPED_TRACE(std::to_string(n) + " points");
    Image<int16_t> g(6, 5, int16_t{-1});
    for (int k = 0; k < n; ++k) g.at(cells[k][0], cells[k][1]) = static_cast<int16_t>(k * 3);
    expect_both_views(g);
  }
  for (int cx : {1, 2, 3})
    for (int cy : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(cx) + " x " + std::to_string(cy));
      expect_both_views(Image<int16_t>(cx, cy, int16_t{2}));
    }
}

TEST(ElasPrior, EmptyGridLeavesNoPrior) {
  ElasPriorScratch s;
  ASSERT_EQ(s.allocate(0, 0), cudaSuccess);
  DeviceImage<int32_t> mu = make_device<int32_t>(33, 17);
  ASSERT_EQ(enqueue_elas_prior(ImageView<const int16_t>{}, 5, true, s, mu.view(), nullptr), cudaSuccess);
  EXPECT_TRUE(same_mu(Image<int32_t>(33, 17, kNoPrior), download(mu)));
}

TEST(ElasPrior, GridSmallerThanItsScratchAndImagesOfOtherSizes) {
  const Image<int16_t> g = random_grid(30, 20, 0.4, 20, 77);
  expect_both_views(g, 5, 150, 100, 9);
  expect_both_views(g, 5, 47, 33);
  expect_both_views(g, 5, 211, 140);
}

// Views over 6144 pixels wide: the rows' vertices are found by a search a
// cell instead of the x table (which would outgrow the default shared
// memory); both views, right-view points coinciding.
TEST(ElasPrior, RowsWiderThanTheXTable) {
  expect_both_views(random_grid(1300, 6, 0.3, 120, 21), 5, 6500, 30);
  expect_both_views(random_grid(1300, 6, 0.9, 40, 22), 5, 6500, 30);
}

TEST(ElasPrior, FullHdGridsAndRenderedScenes) {
  for (double density : {0.05, 0.3}) {
    SCOPED_TRACE("density " + std::to_string(density));
    expect_both_views(random_grid(384, 216, density, 120, 5), 5, 1920, 1080);
  }
  const ElasSupportParams p = rendered_support_params();
  for (const RenderedScene& s : rendered_scenes()) {
    SCOPED_TRACE(s.name);
    const int rounds =
        expect_both_views(support_grid(s.pair, p), p.candidate_step, s.pair.left_rgba.width, s.pair.left_rgba.height);
    std::printf("%s: %d flip rounds (left view)\n", s.name, rounds - 1);
  }
}

// The first rounds over the whole GPU, then one block: the same triangles,
// mu_q4 and number of rounds whichever round the block takes over at (0:
// the block runs them all; more than the rounds: it runs none).
TEST(ElasPrior, SpreadRoundsChangeNothing) {
  EXPECT_EQ(default_spread_rounds(128, 96), 4);  // 640x480 at step 5
  EXPECT_EQ(default_spread_rounds(384, 216), 11);  // 1920x1080
  EXPECT_EQ(default_spread_rounds(20, 20), 0);
  const ElasSupportParams p = rendered_support_params();
  const RenderedScene scene = rendered_scenes().front();
  const Image<int16_t> grids[] = {random_grid(384, 216, 0.3, 120, 5), random_grid(384, 216, 0.05, 120, 6),
                                  support_grid(scene.pair, p), random_grid(17, 9, 0.5, 20, 7)};
  for (const Image<int16_t>& g : grids) {
    SCOPED_TRACE(std::to_string(g.width) + " x " + std::to_string(g.height) + " cells");
    const int w = g.width * 5, h = g.height * 5;
    const int rounds = expect_both_views(g, 5, w, h, 0, 0);
    for (int spread : {1, 4, rounds / 2, rounds - 1, rounds, rounds + 3}) {
      SCOPED_TRACE("spread " + std::to_string(spread));
      EXPECT_EQ(expect_both_views(g, 5, w, h, 0, spread), rounds);
    }
  }
}

TEST(ElasPrior, CapturedIntoAGraphAndLaunchedTwice) {
  const Image<int16_t> a = random_grid(64, 40, 0.3, 40, 11), b = random_grid(64, 40, 0.15, 60, 12);
  DeviceImage<int16_t> d_grid = upload(a);
  ElasPriorScratch scratch[2];
  for (ElasPriorScratch& s : scratch) ASSERT_EQ(s.allocate(64, 40), cudaSuccess);
  Streams streams;
  DeviceImage<int32_t> mu[2] = {make_device<int32_t>(320, 200), make_device<int32_t>(320, 200)};
  cudaEvent_t fork, join;
  ASSERT_EQ(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(streams.s[0], cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(fork, streams.s[0]), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(streams.s[1], fork, 0), cudaSuccess);
  for (int v = 0; v < 2; ++v)
    EXPECT_EQ(enqueue_elas_prior(d_grid.cview(), 5, v == 1, scratch[v], mu[v].view(), streams.s[v]), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(join, streams.s[1]), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(streams.s[0], join, 0), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(streams.s[0], &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (const Image<int16_t>* g : {&a, &b}) {
    SCOPED_TRACE(g == &a ? "first launch" : "second launch, another grid");
    EXPECT_EQ(cudaMemcpy2D(d_grid.view().data, d_grid.view().pitch, g->pixels.data(), g->width * sizeof(int16_t),
                           g->width * sizeof(int16_t), g->height, cudaMemcpyHostToDevice),
              cudaSuccess);
    EXPECT_EQ(cudaGraphLaunch(exec, streams.s[0]), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(streams.s[0]), cudaSuccess);
    for (int v = 0; v < 2; ++v) expect_view_matches(*g, 5, v == 1, scratch[v], mu[v]);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
}

TEST(ElasPrior, RefusesAGridLargerThanItsScratch) {
  ElasPriorScratch s;
  ASSERT_EQ(s.allocate(10, 10), cudaSuccess);
  const DeviceImage<int16_t> g = upload(Image<int16_t>(11, 10, int16_t{1}));
  DeviceImage<int32_t> mu = make_device<int32_t>(50, 50);
  EXPECT_EQ(enqueue_elas_prior(g.cview(), 5, false, s, mu.view(), nullptr), cudaErrorInvalidValue);
  const DeviceImage<int16_t> fits = upload(Image<int16_t>(10, 10, int16_t{1}));
  EXPECT_EQ(enqueue_elas_prior(fits.cview(), 0, false, s, mu.view(), nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace cs::cuda::test
