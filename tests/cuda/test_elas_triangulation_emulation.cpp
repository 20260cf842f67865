// ELAS's prior on the GPU (cuda/elas_prior_steps.h) run on the CPU, kernel
// by kernel and thread by thread as cuda/elas_prior.cu launches them,
// against the CPU reference (common/triangulation.h, common/triangle_prior.h:
// what prior_of in common/elas_dense.cpp makes of a view's support points):
// the same triangles (canonical form) and the same mu_q4, bit for bit, on
// random subsets of the candidate lattice, full lattices (every square
// co-circular), right views with coinciding points, one row, two rows, one
// column, collinear points, wavy boundaries (the pockets' rounds and their
// walked tail), 0 to 3 points, tiny grids, 1080p grids and the
// support grids of rendered scenes; and the raster's walks against the
// coverage rule and plane pixel by pixel on triangles no grid makes (long
// and thin, steep planes). Each case also runs with every phase's
// threads in reverse order: a result that hung on the order of threads
// between two barriers would differ. Runs without a GPU; the number of flip
// rounds is printed (the GPU's single-block loop runs that many).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "elas_prior_cases.h"
#include "elas_prior_steps.h"
#include "triangle_prior.h"
#include "triangulation.h"

namespace cs::cuda {
namespace {

using namespace elas_prior_cases;

// The scratch of elas_prior.cu's ElasPriorScratch, in host memory, poisoned
// so that a read of something no step wrote shows.
struct HostMesh {
  std::vector<PriorVertex> vertex;
  std::vector<int32_t> row_count, row_rank, nonempty_row, strip_first, left_outer, right_outer;
  std::vector<int32_t> corner, twin, flipped, flip_with, work, candidate, counts;
  std::vector<unsigned long long> claim;
  PriorMesh m;

  HostMesh(int cells_x, int cells_y) {
    const size_t cells = static_cast<size_t>(cells_x) * cells_y, rows = cells_y + 1;
    const size_t tri = prior_triangle_slots(cells_x, cells_y);
    constexpr int32_t kPoison = 0x5A5A5A5A;
    vertex.assign(cells, PriorVertex{kPoison, kPoison, kPoison, kPoison});
    for (auto* v : {&row_count, &row_rank, &nonempty_row, &strip_first, &left_outer, &right_outer})
      v->assign(rows, kPoison);
    corner.assign(3 * tri, kPoison);
    twin.assign(3 * tri, kPoison);
    flipped.assign(tri, 77);
    flip_with.assign(tri, kPoison);
    work.assign(tri, kPoison);
    candidate.assign(4 * tri, kPoison);
    counts.assign(kPriorCountSlots, kPoison);
    claim.assign(tri, ~0ull);
    m.cells_x = cells_x;
    m.cells_y = cells_y;
    m.vertex = vertex.data();
    m.row_count = row_count.data();
    m.row_rank = row_rank.data();
    m.nonempty_row = nonempty_row.data();
    m.strip_first = strip_first.data();
    m.left_outer = left_outer.data();
    m.right_outer = right_outer.data();
    m.corner = corner.data();
    m.twin = twin.data();
    m.flipped = flipped.data();
    m.flip_with = flip_with.data();
    m.claim = claim.data();
    m.work = work.data();
    m.candidate = candidate.data();
    m.counts = counts.data();
  }
};

// The emulated mesh is a valid triangulation: twins agree, every triangle
// is positive, and (delaunay) no edge is illegal.
::testing::AssertionResult valid_mesh(const PriorMesh& m, int triangles, bool delaunay) {
  for (int e = 0; e < 3 * triangles; ++e) {
    const int f = m.twin[e];
    if (f < -1 || f >= 3 * triangles) return ::testing::AssertionFailure() << "half-edge " << e << " twin " << f;
    if (f < 0) continue;
    if (m.twin[f] != e) return ::testing::AssertionFailure() << "twins " << e << " " << f << " " << m.twin[f];
    if (m.corner[e] != m.corner[next_half(f)] || m.corner[next_half(e)] != m.corner[f])
      return ::testing::AssertionFailure() << "twins " << e << " " << f << " are not one edge";
    const TriPoint P = vertex_point(m, m.corner[e]), Q = vertex_point(m, m.corner[next_half(e)]);
    const TriPoint R = vertex_point(m, m.corner[prev_half(e)]), S = vertex_point(m, m.corner[prev_half(f)]);
    if (delaunay && incircle_perturbed(P, Q, R, S) > 0)
      return ::testing::AssertionFailure() << "edge " << e << " is illegal";
  }
  for (int t = 0; t < triangles; ++t)
    if (orient2d(vertex_point(m, m.corner[3 * t]), vertex_point(m, m.corner[3 * t + 1]),
                 vertex_point(m, m.corner[3 * t + 2])) <= 0)
      return ::testing::AssertionFailure() << "triangle " << t << " is not positive";
  return ::testing::AssertionSuccess();
}

// Threads 0 .. n - 1 of a phase, forwards or backwards.
template <typename F>
void threads(int n, bool reverse, F&& f) {
  for (int i = 0; i < n; ++i) f(reverse ? n - 1 - i : i);
}

struct Emulated {
  std::vector<int32_t> corners;  // 3 a triangle: vertex ids
  Image<int32_t> mu_q4;
  int rounds = 0, flips = 0, status = 0, first_candidates = 0, big_triangles = 0;
  int pocket_rounds = 0, walk_clips = 0;  // the pockets' rounds that clipped, and the clips of their tail's walk
  bool padding_intact = true;
  ::testing::AssertionResult before_flips = ::testing::AssertionSuccess();
};

// elas_prior.cu's kernels in launch order.
Emulated emulate(const Image<int16_t>& grid, int step, bool right_view, int width, int height, bool reverse,
                 HostMesh& h) {
  PriorMesh& m = h.m;
  const int cx = grid.width, cy = grid.height;
  // compact_rows_kernel: a block a row, a thread a cell (the kernel finds
  // row_keeps' cells and row_position's ranks through a table indexed by x;
  // test_elas_prior's right views with coinciding points check it).
  for (int j = 0; j < cy; ++j) {
    std::vector<int32_t> x(cx), kept_x(cx);
    threads(cx, reverse, [&](int i) { x[i] = grid_point(grid.at(i, j), i, j, step, right_view).x; });
    threads(cx, reverse, [&](int i) { kept_x[i] = row_keeps(x.data(), i) ? x[i] : kNoVertexX; });
    int kept = 0;
    threads(cx, reverse, [&](int i) {
      if (kept_x[i] == kNoVertexX) return;
      const GridPoint p = grid_point(grid.at(i, j), i, j, step, right_view);
      m.vertex[j * cx + row_position(kept_x.data(), cx, kept_x[i])] = {p.x, p.y, grid.at(i, j), j * cx + i};
      ++kept;
    });
    m.row_count[j] = kept;
  }
  // plan_kernel: one block; its scans as plain loops, its shared arrays
  // poisoned.
  std::vector<std::vector<int32_t>> shared(kChainRowArrays, std::vector<int32_t>(cy + 1, -77777));
  ChainRows c;
  c.grid_row = shared[0].data();
  c.count = shared[1].data();
  c.second_x = shared[2].data();
  c.y = shared[3].data();
  c.strip_first = shared[4].data();
  for (int side = 0; side < 2; ++side) {
    c.x[side] = shared[5 + 4 * side].data();
    c.vertex[side] = shared[6 + 4 * side].data();
    c.inner[side] = shared[7 + 4 * side].data();
    c.outer[side] = shared[8 + 4 * side].data();
  }
  for (int side = 0; side < 2; ++side) {
    c.prev[side] = shared[13 + 5 * side].data();
    c.next[side] = shared[14 + 5 * side].data();
    c.inside[side] = shared[15 + 5 * side].data();
    c.inside_strip[side] = shared[16 + 5 * side].data();
    c.clip[side] = shared[17 + 5 * side].data();
  }
  int rows = 0;
  for (int j = 0; j < cy; ++j) {
    m.row_rank[j] = m.row_count[j] > 0 ? rows : -1;
    if (m.row_count[j] == 0) continue;
    m.nonempty_row[rows] = c.grid_row[rows] = j;
    c.count[rows++] = m.row_count[j];
  }
  c.rows = rows;
  threads(rows, reverse, [&](int k) { chain_row_step(m, c, k); });
  int strip_triangles = 0;
  for (int k = 0; k + 1 < rows; ++k) {
    c.strip_first[k] = m.strip_first[k] = strip_triangles;
    strip_triangles += strip_triangle_count(c.count[k], c.count[k + 1]);
  }
  threads(std::max(rows - 1, 0), reverse, [&](int k) { chain_strip_step(c, k); });
  // The two sides' pockets: rounds of clips, a thread a row and side; each
  // round every decision, the ids in thread order (the kernel's scan), then
  // the clips. The right side's built apart and moved behind the left's.
  const int chain = 2 * rows;
  auto side_of = [&](int i) { return i >= rows ? 1 : 0; };
  threads(chain, reverse, [&](int i) { pocket_chain_init(c, side_of(i), i - side_of(i) * rows); });
  int pocket_next[2] = {strip_triangles, pocket_scratch_first(strip_triangles, rows)};
  const int right_built = pocket_next[1];
  int on_chains = chain, pocket_rounds = 0, walk_clips = 0;
  for (int round = 0;; ++round) {
    std::vector<char> clips(chain);
    threads(chain, reverse, [&](int i) { clips[i] = pocket_clips(c, side_of(i), i - side_of(i) * rows, round); });
    int clipped[2] = {0, 0};
    for (int i = 0; i < chain; ++i) {
      const int side = side_of(i);
      c.clip[side][i - side * rows] = clips[i] ? pocket_next[side] + clipped[side]++ : -1;
    }
    if (clipped[0] + clipped[1] == 0) break;
    threads(chain, reverse, [&](int i) {
      const int side = side_of(i), k = i - side * rows;
      if (c.clip[side][k] >= 0) pocket_clip_step(m, c, side, k, c.clip[side][k]);
    });
    pocket_next[0] += clipped[0];
    pocket_next[1] += clipped[1];
    on_chains -= clipped[0] + clipped[1];
    ++pocket_rounds;
    if (pocket_walk_now(clipped[0] + clipped[1], on_chains)) {
      int walked[2];
      threads(2, reverse, [&](int side) { walked[side] = pocket_walk(m, c, side, pocket_next[side]); });
      walk_clips = walked[0] - pocket_next[0] + walked[1] - pocket_next[1];
      pocket_next[0] = walked[0];
      pocket_next[1] = walked[1];
      break;
    }
  }
  const PocketMove mv{right_built, pocket_next[0], pocket_next[1] - right_built};
  threads(mv.count, reverse, [&](int i) { move_right_pocket(m, mv, i); });
  const int triangles = mv.to + mv.count;
  m.counts[kPriorRows] = rows;
  m.counts[kPriorStripTriangles] = strip_triangles;
  m.counts[kPriorTriangles] = triangles;
  for (int slot = kPriorTriangles + 1; slot < kPriorCountSlots; ++slot) m.counts[slot] = 0;
  threads(std::max(rows - 1, 0), reverse, [&](int k) { link_strip_sides(m, c, mv, k); });
  // strip_kernel, rung_kernel, first_candidates_kernel: a thread a cell or
  // a triangle (of the most there can be).
  const int max_tri = static_cast<int>(prior_max_triangles(cx, cy));
  threads(cx * cy, reverse, [&](int v) { strip_vertex_step(m, v); });
  threads(max_tri, reverse, [&](int t) { strip_rung_step(m, t); });
  Emulated out;
  out.pocket_rounds = pocket_rounds;
  out.walk_clips = walk_clips;
  out.before_flips = valid_mesh(m, triangles, false);
  if (!out.before_flips) return out;
  // offer_candidates, one half-edge: its edge (as k holds it) at the lane's
  // next reserved slot when a candidate, offered to both its triangles
  // (atomicMax).
  auto offer = [&](int e, const EdgeQuad& k, int round, int& count) {
    if (!illegal_edge(m, e, k)) return;
    const int f = k.twin;
    m.candidate[2 * count] = e;
    m.candidate[2 * count + 1] = f;
    ++count;
    const unsigned long long key = claim_key(round, std::min(e, f));
    m.claim[e / 3] = std::max(m.claim[e / 3], key);
    m.claim[f / 3] = std::max(m.claim[f / 3], key);
  };
  int candidates = 0;
  threads(3 * max_tri, reverse, [&](int e) {
    if (e < 3 * m.counts[kPriorTriangles]) offer(e, edge_quad(m, e, 1), 1, candidates);
  });
  // flips_kernel: one block, its two phases a round.
  out.first_candidates = candidates;
  int round = 1, flips = 0;
  for (;;) {
    int flipped = 0;
    threads(candidates, reverse, [&](int i) {
      const int e = m.candidate[2 * i], f = m.candidate[2 * i + 1];
      if (!flip_if_won(m, e, f, round)) return;
      m.work[flipped++] = e;
      m.work[flipped++] = f;
    });
    if (flipped == 0) break;
    flips += flipped / 2;
    int offered = 0;
    threads(flipped, reverse, [&](int i) {
      const int e0 = flipped_outer_half(m.work[i], 0), e1 = flipped_outer_half(m.work[i], 1);
      const MendRead d0 = mend_read(m, e0), d1 = mend_read(m, e1);
      const EdgeQuad k0 = mend_write(m, e0, d0, round), k1 = mend_write(m, e1, d1, round);
      offer(e0, k0, round + 1, offered);
      offer(e1, k1, round + 1, offered);
    });
    if (round >= kMaxFlipRounds) {
      m.counts[kPriorStatus] = 1;
      break;
    }
    candidates = offered;
    ++round;
  }
  out.rounds = round;
  out.flips = flips;
  out.status = m.counts[kPriorStatus];
  out.corners.assign(m.corner, m.corner + 3 * triangles);
  // clear_kernel, raster_kernel: a warp a triangle, into a pitched image
  // whose padding must stay as it is.
  constexpr int kPad = 3, kPadValue = 12345;
  Image<int32_t> padded(width + kPad, height, kPadValue);
  const ImageView<int32_t> mu{padded.pixels.data(), width, height,
                              static_cast<std::ptrdiff_t>((width + kPad) * sizeof(int32_t))};
  for (int yy = 0; yy < height; ++yy)
    for (int xx = 0; xx < width; ++xx) mu.at(xx, yy) = kNoPrior;
  // raster_kernel: a warp a triangle, a big one to the list (entries in
  // the order of their rows' ranges); big_raster_kernel: a warp a row.
  std::vector<int32_t> big(2 * static_cast<size_t>(std::max(triangles, 1)), -1);
  int big_count = 0, big_rows = 0;
  threads(triangles, reverse, [&](int t) {
    const RasterTriangle r = raster_triangle(m, t, width, height);
    if (!raster_is_big(r)) {
      threads(32, reverse, [&](int lane) { rasterise_box(r, lane, 32, mu); });
      return;
    }
    big[2 * big_count] = t;
    big[2 * big_count + 1] = big_rows;
    ++big_count;
    big_rows += r.y1 - r.y0 + 1;
  });
  out.big_triangles = big_count;
  threads(big_rows, reverse, [&](int row) {
    const int entry = big_entry_of_row(big.data(), big_count, row);
    const RasterTriangle r = raster_triangle(m, big[2 * entry], width, height);
    threads(32, reverse, [&](int lane) { rasterise_row(r, r.y0 + row - big[2 * entry + 1], lane, 32, mu); });
  });
  out.mu_q4 = Image<int32_t>(width, height);
  for (int yy = 0; yy < height; ++yy)
    for (int xx = 0; xx < width + kPad; ++xx) {
      if (xx < width) out.mu_q4.at(xx, yy) = mu.at(xx, yy);
      else out.padding_intact = out.padding_intact && padded.at(xx, yy) == kPadValue;
    }
  return out;
}

// One grid, one view, both thread orders, against the reference; returns
// the flip rounds (and the big triangles' count in *big_triangles).
int expect_matches_reference(const Image<int16_t>& grid, int step, bool right_view, int width, int height,
                             int* big_triangles = nullptr) {
  const Reference ref = reference(grid, step, right_view, width, height);
  int rounds = -1;
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "threads backwards" : "threads forwards");
    HostMesh h(grid.width, grid.height);
    const Emulated got = emulate(grid, step, right_view, width, height, reverse, h);
    if (!got.before_flips) {
      ADD_FAILURE() << "the strips and pockets: " << got.before_flips.message();
      return -1;
    }
    EXPECT_EQ(got.status, 0);
    EXPECT_TRUE(valid_mesh(h.m, static_cast<int>(got.corners.size() / 3), true));
    EXPECT_EQ(canonical_triangles(got.corners, h.vertex, ref.index_of_cell), ref.triangles)
        << got.corners.size() / 3 << " triangles, reference " << ref.triangles.size();
    EXPECT_TRUE(same_mu(ref.mu_q4, got.mu_q4));
    EXPECT_TRUE(got.padding_intact);
    if (rounds >= 0) {
      EXPECT_EQ(got.rounds, rounds) << "the rounds hang on the threads' order";
    }
    rounds = got.rounds;
    if (big_triangles) *big_triangles = got.big_triangles;
  }
  return rounds;
}

void expect_both_views(const Image<int16_t>& grid, int step = 5) {
  const int w = grid.width * step, h = grid.height * step;
  {
    SCOPED_TRACE("left view");
    expect_matches_reference(grid, step, false, w, h);
  }
  {
    SCOPED_TRACE("right view");
    expect_matches_reference(grid, step, true, w, h);
  }
}

TEST(ElasPriorEmulation, RandomSubsetsOfTheLattice) {
  const double densities[] = {0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9, 1.0};
  uint32_t seed = 1;
  for (double density : densities)
    for (int size : {6, 17, 40}) {
      SCOPED_TRACE("density " + std::to_string(density) + " size " + std::to_string(size));
      expect_both_views(random_grid(size + 3, size, density, 30, seed++));
    }
}

TEST(ElasPriorEmulation, FullLatticesAreCoCircularEverywhere) {
  for (int cx : {2, 3, 7, 31})
    for (int cy : {2, 3, 11}) {
      SCOPED_TRACE(std::to_string(cx) + " x " + std::to_string(cy));
      Image<int16_t> g(cx, cy, int16_t{0});
      expect_matches_reference(g, 5, false, cx * 5, cy * 5);
      expect_matches_reference(g, 5, true, cx * 5, cy * 5);  // d = 0: the same points
      Image<int16_t> c(cx, cy, int16_t{7});
      expect_matches_reference(c, 5, true, cx * 5, cy * 5);  // a lattice shifted left, x < 0 dropped
      expect_matches_reference(c, 1, false, cx, cy);         // step 1
    }
}

TEST(ElasPriorEmulation, RightViewsWithCoincidingPoints) {
  uint32_t seed = 100;
  for (double density : {0.3, 0.7, 1.0})
    for (int size : {5, 12, 30}) {
      SCOPED_TRACE("density " + std::to_string(density) + " size " + std::to_string(size));
      // d in multiples of the step: many cells of a row land on one point.
      Image<int16_t> g = random_grid(size, size, density, 3, seed++);
      for (int16_t& v : g.pixels)
        if (v >= 0) v = static_cast<int16_t>(5 * v);
      expect_matches_reference(g, 5, true, size * 5, size * 5);
      // Small d: neighbours cross over, a row's points out of x order.
      Image<int16_t> s = random_grid(size, size, density, 12, seed++);
      expect_matches_reference(s, 5, true, size * 5, size * 5);
    }
}

TEST(ElasPriorEmulation, RowsAndColumns) {
  for (bool right : {false, true}) {
    SCOPED_TRACE(right ? "right view" : "left view");
    // One row: collinear, no triangles.
    Image<int16_t> one(20, 6, int16_t{-1});
    for (int i = 0; i < 20; i += 2) one.at(i, 3) = static_cast<int16_t>(i % 7);
    expect_matches_reference(one, 5, right, 100, 30);
    // Two rows, sparse and dense.
    Image<int16_t> two(20, 6, int16_t{-1});
    for (int i = 0; i < 20; ++i) two.at(i, 1) = static_cast<int16_t>(i % 5);
    for (int i = 3; i < 17; i += 4) two.at(i, 4) = 2;
    expect_matches_reference(two, 5, right, 100, 30);
    // One column: collinear in the left view, zigzag in the right one.
    Image<int16_t> col(8, 15, int16_t{-1});
    for (int j = 0; j < 15; ++j) col.at(5, j) = static_cast<int16_t>((j * 7) % 9);
    expect_matches_reference(col, 5, right, 40, 75);
    // Two columns, one of them with gaps.
    Image<int16_t> cols(8, 15, int16_t{-1});
    for (int j = 0; j < 15; ++j) {
      cols.at(2, j) = static_cast<int16_t>(j % 3);
      if (j % 4 != 1) cols.at(6, j) = static_cast<int16_t>(j % 5);
    }
    expect_matches_reference(cols, 5, right, 40, 75);
    // A column with rows of single points between wide rows.
    Image<int16_t> mixed(12, 9, int16_t{-1});
    for (int j = 0; j < 9; ++j)
      for (int i = 0; i < 12; ++i)
        if (j % 3 == 0 || i == 6 - j % 3) mixed.at(i, j) = static_cast<int16_t>((i + j) % 4);
    expect_matches_reference(mixed, 5, right, 60, 45);
  }
}

TEST(ElasPriorEmulation, CollinearPoints) {
  // A diagonal, an anti-diagonal, a line of slope 1/2, and one with an
  // extra point off it.
  Image<int16_t> diag(10, 10, int16_t{-1}), anti(10, 10, int16_t{-1}), half(20, 10, int16_t{-1});
  for (int k = 0; k < 10; ++k) {
    diag.at(k, k) = 3;
    anti.at(9 - k, k) = 3;
    half.at(2 * k, k) = 0;
  }
  for (bool right : {false, true}) {
    expect_matches_reference(diag, 5, right, 50, 50);
    expect_matches_reference(anti, 5, right, 50, 50);
    expect_matches_reference(half, 5, right, 100, 50);
  }
  // The right view's diagonal with d = s j: one vertical line.
  Image<int16_t> vertical(12, 10, int16_t{-1});
  for (int k = 0; k < 10; ++k) vertical.at(k + 2, k) = static_cast<int16_t>(5 * k);
  expect_matches_reference(vertical, 5, true, 60, 50);
  diag.at(7, 2) = 1;
  expect_both_views(diag);
}

TEST(ElasPriorEmulation, NoneToThreePointsAndTinyGrids) {
  for (int n = 0; n <= 4; ++n) {
    Image<int16_t> g(6, 5, int16_t{-1});
    const int cells[4][2] = {{1, 1}, {4, 1}, {2, 3}, {5, 4}};
    for (int k = 0; k < n; ++k) g.at(cells[k][0], cells[k][1]) = static_cast<int16_t>(k * 3);
    SCOPED_TRACE(std::to_string(n) + " points");
    expect_both_views(g);
  }
  // Three points of one row, three on a line across rows.
  Image<int16_t> g(6, 5, int16_t{-1});
  g.at(1, 2) = g.at(3, 2) = g.at(5, 2) = 1;
  expect_both_views(g);
  Image<int16_t> l(6, 5, int16_t{-1});
  l.at(0, 0) = l.at(2, 1) = l.at(4, 2) = 1;
  expect_both_views(l);
  expect_both_views(Image<int16_t>(0, 0));
  expect_matches_reference(Image<int16_t>(0, 0), 5, false, 16, 9);
  for (int cx : {1, 2, 3})
    for (int cy : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(cx) + " x " + std::to_string(cy));
      Image<int16_t> t(cx, cy, int16_t{2});
      expect_both_views(t);
      expect_both_views(random_grid(cx, cy, 0.6, 9, cx * 10 + cy));
    }
}

// Boundaries that wave in and out (wavy_grid): both paths of the pockets,
// the rounds and their walked tail, forwards and backwards, give the
// reference's triangles.
TEST(ElasPriorEmulation, WavyBoundariesClipInRoundsThenWalk) {
  const Image<int16_t> grid = wavy_grid();
  for (bool right : {false, true}) {
    SCOPED_TRACE(right ? "right view" : "left view");
    HostMesh h(grid.width, grid.height);
    const Emulated got = emulate(grid, 5, right, 5 * grid.width, 5 * grid.height, false, h);
    std::printf("%s view: %d pocket rounds, %d clips walked\n", right ? "right" : "left", got.pocket_rounds,
                got.walk_clips);
    EXPECT_GT(got.pocket_rounds, 1);
    EXPECT_GT(got.walk_clips, 0);
    expect_matches_reference(grid, 5, right, 5 * grid.width, 5 * grid.height);
  }
}

// A triangle for the raster alone (not from a mesh): corners turned to
// positive orientation for raster_triangle_of; collinear corners give an
// empty box.
RasterTriangle raster_of(TriPoint a, int da, TriPoint b, int db, TriPoint c, int dc, int width, int height) {
  const int64_t turn = orient2d(a, b, c);
  if (turn < 0) {
    std::swap(b, c);
    std::swap(db, dc);
  }
  RasterTriangle r = raster_triangle_of(a, da, b, db, c, dc, width, height);
  if (turn == 0) r.x0 = r.x1 + 1;
  return r;
}

// The raster's walks, a box a warp (rasterise_box) and a row a warp
// (rasterise_row), give what the rule gives pixel by pixel (triangle_covers,
// then plane_q4), 32 lanes in either order. Returns the pixels covered.
int expect_walks_match_rule(const RasterTriangle& r, int width, int height) {
  Image<int32_t> rule(width, height, kNoPrior), box(width, height, kNoPrior), rows(width, height, kNoPrior);
  int covered = 0;
  for (int y = r.y0; y <= r.y1; ++y)
    for (int x = r.x0; x <= r.x1; ++x)
      if (triangle_covers(r.p0, r.p1, r.p2, {x, y})) {
        rule.at(x, y) = plane_q4(r.plane, x, y);
        ++covered;
      }
  auto view = [](Image<int32_t>& im) {
    return ImageView<int32_t>{im.pixels.data(), im.width, im.height,
                              static_cast<std::ptrdiff_t>(im.width * sizeof(int32_t))};
  };
  const ImageView<int32_t> box_view = view(box), rows_view = view(rows);
  for (bool reverse : {false, true}) {
    threads(32, reverse, [&](int lane) { rasterise_box(r, lane, 32, box_view); });
    for (int y = r.y0; y <= r.y1; ++y)
      threads(32, reverse, [&](int lane) { rasterise_row(r, y, lane, 32, rows_view); });
  }
  EXPECT_EQ(box.pixels, rule.pixels) << "box walk";
  EXPECT_EQ(rows.pixels, rule.pixels) << "row walk";
  return covered;
}

// Triangles the support grids do not make: long and thin along x and along
// y (edges of 2^15 - 1, the coordinates' limit), disparities up to 2^15 - 1
// with steep planes (large quotients, quotients past 32 bits), boxes
// narrower and wider than a warp, corners beyond the image (clipped).
TEST(ElasPriorEmulation, RasterWalksEqualTheRulePixelByPixel) {
  constexpr int kMax = kTriCoordLimit - 1;
  int covered = 0;
  covered += expect_walks_match_rule(raster_of({0, 0}, 0, {kMax, 1}, kMax, {0, 2}, 7, kMax + 1, 3), kMax + 1, 3);
  covered += expect_walks_match_rule(raster_of({0, 0}, 9, {1, kMax}, 0, {2, 3}, kMax, 3, kMax + 1), 3, kMax + 1);
  covered += expect_walks_match_rule(raster_of({kMax, 0}, kMax, {0, 1}, 0, {kMax, 2}, 1, kMax + 1, 3), kMax + 1, 3);
  std::mt19937 rng(2026);
  auto coord = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto disparity = [&]() { return coord(kMax + 1); };
  struct Field {
    int extent, width, height, count;
  };
  // Small fields with many triangles (boxes of a few pixels to a few
  // warps), a large one with boxes of up to a million pixels, and points
  // beyond the image on both sides.
  for (const Field f : {Field{12, 12, 12, 3000}, Field{40, 40, 40, 1500}, Field{200, 200, 200, 300},
                        Field{1200, 1200, 900, 12}, Field{400, 300, 250, 200}}) {
    for (int t = 0; t < f.count; ++t) {
      const TriPoint a{coord(f.extent), coord(f.extent)}, b{coord(f.extent), coord(f.extent)},
          c{coord(f.extent), coord(f.extent)};
      const bool steep = t % 3 == 0;  // disparities over the whole range, else a plane near 100
      const int da = steep ? disparity() : 100 + coord(8), db = steep ? disparity() : 100 + coord(8),
                dc = steep ? disparity() : 100 + coord(8);
      covered += expect_walks_match_rule(raster_of(a, da, b, db, c, dc, f.width, f.height), f.width, f.height);
      if (::testing::Test::HasFailure()) return;
    }
  }
  std::printf("%d pixels covered\n", covered);
  EXPECT_GT(covered, 1000000);
}

TEST(ElasPriorEmulation, ImagesSmallerAndLargerThanThePoints) {
  const Image<int16_t> g = random_grid(30, 20, 0.4, 20, 77);
  for (bool right : {false, true}) {
    expect_matches_reference(g, 5, right, 47, 33);    // clipped
    expect_matches_reference(g, 5, right, 211, 140);  // beyond the points
  }
}

TEST(ElasPriorEmulation, FullHdGrids) {
  // 1920 x 1080 at step 5: 384 x 216 cells. The sparse grid's triangles
  // are large (rasterised a row a warp), the full lattice's all small.
  for (double density : {0.05, 0.3, 1.0}) {
    SCOPED_TRACE("density " + std::to_string(density));
    const Image<int16_t> g = random_grid(384, 216, density, 120, 5);
    for (bool right : {false, true}) {
      int big = 0;
      const int rounds = expect_matches_reference(g, 5, right, 1920, 1080, &big);
      std::printf("1080p random grid, density %.2f, %s view: %d flip rounds, %d big triangles\n", density,
                  right ? "right" : "left", rounds - 1, big);
      if (density < 0.1) {
        EXPECT_GT(big, 0);
      }
    }
  }
}

TEST(ElasPriorEmulation, SupportGridsOfRenderedScenes) {
  const ElasSupportParams p = rendered_support_params();
  for (const RenderedScene& s : rendered_scenes()) {
    SCOPED_TRACE(s.name);
    const Image<int16_t> grid = support_grid(s.pair, p);
    size_t support = 0;
    for (int16_t d : grid.pixels) support += d >= 0;
    const int w = s.pair.left_rgba.width, h = s.pair.left_rgba.height;
    for (bool right : {false, true}) {
      const int rounds = expect_matches_reference(grid, p.candidate_step, right, w, h);
      std::printf("%s (%d x %d cells, %zu support points), %s view: %d flip rounds\n", s.name, grid.width,
                  grid.height, support, right ? "right" : "left", rounds - 1);
    }
  }
}

}  // namespace
}  // namespace cs::cuda
