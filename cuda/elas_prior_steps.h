// The per-element code of ELAS's prior on the GPU (elas_prior.h, E4 of
// common/elas_dense.h): the support grid's points made into THE perturbed
// Delaunay triangulation (common/triangulation.h) and its planes rasterised
// (common/triangle_prior.h), as host-and-device functions over plain
// pointers. The kernels (elas_prior.cu) call them between their barriers;
// tests/cuda/test_elas_triangulation_emulation.cpp runs the very same code
// on the CPU, kernel by kernel and thread by thread, against the CPU
// reference. No CUDA header: under nvcc CS_HD makes these __host__
// __device__; the atomics stay in the kernels.
//
// The construction. The points lie on the grid's rows (y = s j), so:
//  1. Rows. Each row's vertices sorted by x: a cell's point is a vertex when
//     it is inside the predicates' range and no earlier cell of its row has
//     the same x (the right view's points x = s i - d can coincide; equal
//     points are always on one row, and the row's first is the reference's
//     vertex). Vertex ids are row-slotted: row j's k-th vertex is
//     j * cells_x + k, so no global compaction is needed.
//  2. Strips. Between two consecutive non-empty rows A (above) and B, a
//     zipper: the rows' vertices after their first, merged by x (A's first
//     at equal x), each adds one triangle to the current rung A[i] - B[j]
//     (A[i], A[i + 1], B[j]) or (B[j + 1], B[j], A[i]); every one has
//     nonzero area because A and B differ in y. A strip has |A| + |B| - 2
//     triangles, numbered in merge order after the strips above it; an
//     element finds its place in the merge by a binary search in the other
//     row, so a thread a vertex builds them all at once.
//  3. Pockets. The strips' union is cut by every row in one interval but
//     need not be convex. Between its left boundary (each non-empty row's
//     first vertex, top to bottom) and the convex hull, rounds of ear
//     clipping: a row where the boundary turns strictly the wrong way is
//     cut off by the triangle of it and its two neighbours on the boundary
//     (outside the union), non-neighbouring rows at once, until the boundary
//     is convex; collinear vertices stay on it, so every vertex is a vertex
//     of the triangulation and no triangle is flat. The right boundary
//     alike, in the same rounds. A thread a row and side, a barrier a round;
//     the rounds' tail a thread a side (pocket_walk).
//  4. Flips. Rounds of Lawson flips with incircle_perturbed. In a round
//     every illegal edge is a candidate; each triangle takes the first of
//     its candidate edges in the round's order (edge_order of the edge's
//     canonical id, the smaller of its two half-edge ids) by an atomic
//     maximum of claim_key, and an edge flips when both its triangles took
//     it, so the flips of a round share no triangle. A flipped pair
//     rewrites its own two triangles; then each outer half-edge of a
//     flipped triangle mends its twin: a neighbour that did not flip is
//     told the new half-edge, a neighbour that flipped holds the edge in
//     itself or in its partner, known from the half-edges of its flip. Only
//     the outer edges of triangles flipped in the last round are tested
//     again (nothing else changed, and a flip's new edge is legal). The
//     first candidate in the order always flips, so a round with a
//     candidate flips something, and Lawson flips on a fixed point set
//     end: the loop ends, with no illegal edge, at the unique perturbed
//     Delaunay triangulation the CPU reference builds.
//  5. The prior: per triangle, its plane and the pixels of its bounding box
//     it covers by the exact top-left rule; each pixel has at most one.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>

#include "stereo.h"
#include "stereo_math.h"
#include "triangle_prior.h"
#include "triangulation.h"

namespace cs::cuda {

// A cell without a vertex, in a row's array of x coordinates (above every
// coordinate the predicates accept).
constexpr int32_t kNoVertexX = INT32_MAX;
// The flip loop's guard against a bug that would never end it: Lawson flips
// end long before (tests count the rounds); reaching it sets kPriorStatus.
constexpr int kMaxFlipRounds = 1 << 20;

struct alignas(16) PriorVertex {
  int32_t x, y, d;
  int32_t cell;  // j * cells_x + i: the grid cell it comes from
};

// Slots of PriorMesh::counts, written on the GPU, read by later kernels and
// by tests.
enum PriorCount : int {
  kPriorRows = 0,           // non-empty rows
  kPriorStripTriangles = 1, // triangles of the strips (ids below it)
  kPriorTriangles = 2,      // all triangles
  // 3: unused
  kPriorRounds = 4,         // flip rounds run (the last one flipped nothing)
  kPriorFlips = 5,          // flips in all
  kPriorStatus = 6,         // 0, or 1 when kMaxFlipRounds stopped the loop
  kPriorLastFlipRound = 7,  // the last round that flipped (0: none)
  // The rounds spread over the GPU (elas_prior.cu): round r's candidate
  // edges and its flipped half-edges (two a flip) are counted in the slot
  // of r's parity.
  kPriorRoundCandidates = 8,  // 8, 9
  kPriorRoundWork = 10,       // 10, 11
  // The triangles rasterised a row a warp (raster_is_big): their rows in
  // all and how many, one 64-bit word (rows the low half) that one atomic
  // addition a triangle advances, so that the list's order is that of the
  // rows' ranges.
  kPriorBigRows = 12,
  kPriorBigTriangles = 13,
  kPriorCountSlots = 16
};

// One view's triangulation: the vertices (row-slotted), the non-empty rows
// and strips, and the triangles as half-edges: half-edge e belongs to
// triangle e / 3 and runs from corner[e] to corner[next_half(e)]; twin[e] is
// the opposite half-edge, -1 on the hull. Every triangle is in positive
// orientation (orient2d > 0).
struct PriorMesh {
  int cells_x = 0, cells_y = 0;  // this frame's grid
  PriorVertex* vertex = nullptr;         // cells_x * cells_y
  int32_t* row_count = nullptr;          // cells_y: vertices of each grid row
  int32_t* row_rank = nullptr;           // cells_y: index among the non-empty rows, -1 for an empty row
  int32_t* nonempty_row = nullptr;       // cells_y: the grid row of each non-empty row
  int32_t* strip_first = nullptr;        // cells_y: strip k (non-empty rows k, k + 1): its first triangle
  int32_t* left_outer = nullptr;         // cells_y: the pocket half-edge across strip k's left side, -1 none
  int32_t* right_outer = nullptr;        // likewise on its right side
  int32_t* corner = nullptr;             // 3 a triangle
  int32_t* twin = nullptr;               // 3 a triangle
  int32_t* flipped = nullptr;            // a triangle: the round of its last flip, 0 none
  int32_t* flip_with = nullptr;          // a triangle: 4 x the partner's half-edge of that flip + its own's slot
  unsigned long long* claim = nullptr;   // a triangle: claim_key of the edge it takes this round
  int32_t* work = nullptr;               // the half-edges flipped on in the last round (two a flip)
  int32_t* candidate = nullptr;          // pairs (half-edge, twin) of the round's candidate edges
  int32_t* big = nullptr;                // pairs (triangle, its first flattened row) of the big triangles
  int32_t* counts = nullptr;             // kPriorCountSlots
};

// Room for the triangles of a grid's points: n points make 2 n - 2 - (hull
// vertices) triangles, fewer than 2 n (at least one slot, for empty grids).
inline std::size_t prior_max_triangles(int cells_x, int cells_y) {
  const std::size_t n = static_cast<std::size_t>(cells_x > 0 ? cells_x : 0) * (cells_y > 0 ? cells_y : 0);
  return n > 0 ? 2 * n : 1;
}

CS_HD int next_half(int e) { return e % 3 == 2 ? e - 2 : e + 1; }
CS_HD int prev_half(int e) { return e % 3 == 0 ? e + 2 : e - 1; }

// The vertices do not change after compact_rows: on the GPU they are read
// through the read-only cache, which the flips' stores do not disturb.
CS_HD TriPoint vertex_point(const PriorMesh& m, int v) {
#if defined(__CUDA_ARCH__)
  const int2 p = __ldg(reinterpret_cast<const int2*>(m.vertex + v));
  return {p.x, p.y};
#else
  return {m.vertex[v].x, m.vertex[v].y};
#endif
}
CS_HD int vertex_row(const PriorMesh& m, int v) { return v / m.cells_x; }

// A round's order of the edges: a bijection of the 32-bit ids (murmur3's
// finaliser: xor-shifts and odd multipliers are invertible), so two edges
// never tie, mixed anew each round. Plain ids would let only one edge of a
// chain of conflicting candidates flip a round (a fan's edges take
// increasing ids: each triangle takes its lower edge); a mixed order lets
// about one in three flip, whatever the numbering.
CS_HD uint32_t edge_order(int edge, int round) {
  uint32_t h = static_cast<uint32_t>(edge) ^ (static_cast<uint32_t>(round) * 0x9E3779B9u);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// ---------------------------------------------------------------- 1. rows

// Cell (i, j)'s point: (s i, s j) in the left view, (s i - d, s j) in the
// right one; a vertex candidate when d >= 0 and inside the predicates'
// range (common/triangulation.h: a point outside is no vertex).
struct GridPoint {
  int32_t x, y;
  bool valid;
};
CS_HD GridPoint grid_point(int d, int i, int j, int step, bool right_view) {
  const int64_t x = static_cast<int64_t>(step) * i - (right_view ? d : 0);
  const int64_t y = static_cast<int64_t>(step) * j;
  const bool valid = d >= 0 && x >= 0 && y >= 0 && x < kTriCoordLimit && y < kTriCoordLimit;
  return {valid ? static_cast<int32_t>(x) : kNoVertexX, valid ? static_cast<int32_t>(y) : 0, valid};
}

// x[i]: the row's cell i's x, kNoVertexX where it has no point. Cell i's
// point is a vertex when no earlier cell of the row has the same point.
CS_HD bool row_keeps(const int32_t* x, int i) {
  if (x[i] == kNoVertexX) return false;
  for (int k = 0; k < i; ++k)
    if (x[k] == x[i]) return false;
  return true;
}

// A vertex's place in its row: kept_x holds the row's vertices' x (distinct)
// and kNoVertexX elsewhere.
CS_HD int row_position(const int32_t* kept_x, int cells, int32_t x) {
  int rank = 0;
  for (int k = 0; k < cells; ++k) rank += kept_x[k] < x;
  return rank;
}

// ---------------------------------------------------------------- 2. strips

CS_HD int strip_triangle_count(int upper_count, int lower_count) { return upper_count + lower_count - 2; }

// Of a row's vertices after its first (indices 1 .. count - 1), how many
// have x below `x` (at most `x` when or_equal): a binary search.
CS_HD int merged_before(const PriorVertex* row, int count, int32_t x, bool or_equal) {
  int lo = 1, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    const bool before = or_equal ? row[mid].x <= x : row[mid].x < x;
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

// A new triangle's corners; its flip state cleared for this frame.
CS_HD void set_triangle(const PriorMesh& m, int t, int a, int b, int c) {
  m.corner[3 * t] = a;
  m.corner[3 * t + 1] = b;
  m.corner[3 * t + 2] = c;
  m.flipped[t] = 0;
  m.claim[t] = 0;
}

// Vertex v = row j's p-th (p >= 1) makes its two triangles: in the strip
// below its row, (A[p - 1], A[p], B[jj]) with its row as A; in the strip
// above, (B[p], B[p - 1], A[ii]) with its row as B. Both have the row's edge
// (p - 1, p) as half-edge 0, so they are each other's twin there (-1 on the
// first and last non-empty rows: hull). The rungs (slots 1 and 2) are
// strip_rung_step's.
CS_HD void strip_vertex_step(const PriorMesh& m, int v) {
  const int cx = m.cells_x;
  const int j = v / cx, p = v % cx;
  if (p == 0 || p >= m.row_count[j]) return;
  const int k = m.row_rank[j];
  const int rows = m.counts[kPriorRows];
  const int32_t x = m.vertex[v].x;
  int below = -1, above = -1, below_apex = 0, above_apex = 0;
  if (k + 1 < rows) {
    const int c = m.nonempty_row[k + 1];
    const int jj = merged_before(m.vertex + c * cx, m.row_count[c], x, false);
    below = m.strip_first[k] + p - 1 + jj;
    below_apex = c * cx + jj;
  }
  if (k >= 1) {
    const int a = m.nonempty_row[k - 1];
    const int ii = merged_before(m.vertex + a * cx, m.row_count[a], x, true);
    above = m.strip_first[k - 1] + p - 1 + ii;
    above_apex = a * cx + ii;
  }
  if (below >= 0) {
    set_triangle(m, below, v - 1, v, below_apex);
    m.twin[3 * below] = above >= 0 ? 3 * above : -1;
  }
  if (above >= 0) {
    set_triangle(m, above, v, v - 1, above_apex);
    m.twin[3 * above] = below >= 0 ? 3 * below : -1;
  }
}

// A strip triangle of the first kind (A[i], A[i + 1], B[j]) has its third
// corner in the lower row; the second kind (B[j + 1], B[j], A[i]) in the
// upper one. The rung before it (B[j] -> A[i]) and the rung after it
// (A[i'] -> B[j'], upper to lower) are these slots.
CS_HD bool upper_edge_kind(const PriorMesh& m, int t) {
  return vertex_row(m, m.corner[3 * t + 2]) > vertex_row(m, m.corner[3 * t]);
}
CS_HD int rung_before_slot(bool upper_edge) { return upper_edge ? 2 : 1; }
CS_HD int rung_after_slot(bool upper_edge) { return upper_edge ? 1 : 2; }

// Strip triangle t's rungs: the triangles before and after it in its strip,
// or, on the strip's first rung (both rows' first vertices) and last rung
// (both rows' last), the pocket triangle there (or the hull).
CS_HD void strip_rung_step(const PriorMesh& m, int t) {
  if (t >= m.counts[kPriorStripTriangles]) return;
  const int cx = m.cells_x;
  const bool kind = upper_edge_kind(m, t);
  const int before = 3 * t + rung_before_slot(kind);
  const int lower = m.corner[before], upper = m.corner[next_half(before)];
  if (lower % cx == 0 && upper % cx == 0) m.twin[before] = m.left_outer[m.row_rank[upper / cx]];
  else m.twin[before] = 3 * (t - 1) + rung_after_slot(upper_edge_kind(m, t - 1));
  const int after = 3 * t + rung_after_slot(kind);
  const int top = m.corner[after], bottom = m.corner[next_half(after)];
  if (top % cx == m.row_count[top / cx] - 1 && bottom % cx == m.row_count[bottom / cx] - 1)
    m.twin[after] = m.right_outer[m.row_rank[top / cx]];
  else m.twin[after] = 3 * (t + 1) + rung_before_slot(upper_edge_kind(m, t + 1));
}

// ---------------------------------------------------------------- 3. pockets

// The non-empty rows k = 0 .. rows - 1, top to bottom, as the plan
// gathers them (shared memory on the GPU), and each side's chain as the
// pocket rounds shorten it (rows entries each). Side 0 is the left boundary
// (each row's first vertex), side 1 the right one (its last).
struct ChainRows {
  int rows = 0;
  int32_t* grid_row = nullptr;     // the grid row
  int32_t* count = nullptr;        // its vertices
  int32_t* second_x = nullptr;     // its second vertex's x (count >= 2)
  int32_t* y = nullptr;
  int32_t* strip_first = nullptr;  // strip k's first triangle
  int32_t* x[2] = {};              // the side's vertex's x
  int32_t* vertex[2] = {};         // its id
  int32_t* inner[2] = {};          // strip k's side: the strip triangle's half-edge there, -1 none
  int32_t* outer[2] = {};          // strip k's side: the pocket triangle's half-edge there, -1 none
  // The chain: rows still on it as a doubly linked list (prev -1 for the
  // first, next -1 for the last, kOffChain once clipped) ...
  int32_t* prev[2] = {};
  int32_t* next[2] = {};
  int32_t* inside[2] = {};         // ... the half-edge inside the chain edge from k to next[k], -1 none
  int32_t* inside_strip[2] = {};   // that edge's strip when it is a strip's side, else -1
  int32_t* clip[2] = {};           // this round: the id of the triangle that clips k, -1 none
};
// ChainRows' arrays (rows + 1 entries each).
constexpr int kChainRowArrays = 23;

// Non-empty row k's boundary vertices, from its first two and last vertex
// (its grid row and count set).
CS_HD void chain_row_step(const PriorMesh& m, const ChainRows& c, int k) {
  const int base = c.grid_row[k] * m.cells_x, n = c.count[k];
  const PriorVertex* r = m.vertex + base;
  c.x[0][k] = r[0].x;
  c.x[1][k] = r[n - 1].x;
  c.second_x[k] = n > 1 ? r[1].x : 0;
  c.y[k] = r[0].y;
  c.vertex[0][k] = base;
  c.vertex[1][k] = base + n - 1;
}

// Strip k's sides (strip_first set): the strip triangles' half-edges there.
// The left side runs from the lower row's first vertex up to the upper
// row's (B[0] -> A[0]): the rung before the strip's first triangle, whose
// kind is that of the first element of the merge. The right side runs from
// the upper row's last vertex down to the lower row's: the rung after the
// last triangle, of the kind of the merge's last element. A strip without
// triangles (both rows a single vertex): -1.
CS_HD void chain_strip_step(const ChainRows& c, int k) {
  const int ca = c.count[k], cb = c.count[k + 1], n = strip_triangle_count(ca, cb);
  c.outer[0][k] = c.outer[1][k] = -1;
  if (n == 0) {
    c.inner[0][k] = c.inner[1][k] = -1;
    return;
  }
  const bool upper_first = ca > 1 && (cb == 1 || c.second_x[k] <= c.second_x[k + 1]);
  const bool upper_last = ca > 1 && (cb == 1 || c.x[1][k] > c.x[1][k + 1]);
  c.inner[0][k] = 3 * c.strip_first[k] + rung_before_slot(upper_first);
  c.inner[1][k] = 3 * (c.strip_first[k] + n - 1) + rung_after_slot(upper_last);
}

// A row clipped off its side's chain (ChainRows::next).
constexpr int32_t kOffChain = -2;

// The pockets, by rounds of ear clipping, both sides at once. Side s's chain
// starts as every row's boundary vertex, top to bottom, the inside of the
// chain edge from row k to k + 1 being strip k's side (inner; a strip
// without triangles: -1). In a round, a row k of the chain whose turn
// (prev, k, next) goes strictly the wrong way (left: orient2d > 0, right:
// < 0; pocket_reflex) is clipped when neither neighbour is such a row of a
// higher priority (pocket_order: a bijection of k, mixed anew each round):
// the triangle (prev, k, next) is added and k leaves the chain. A clipped
// row's triangle lies outside the union, between the chain and the segment
// (prev, next), in the band of rows between prev and next, which no other
// row of the chain enters and no other clip of the round touches (no two
// neighbours clip at once), so every round's clips are valid together. The
// highest wrong turn of a round always clips; the rounds end when none is
// left: the chain is then convex, the hull, its collinear rows kept (they
// never turn strictly). Every row but the hull's is clipped once, so each
// side adds (rows on its chain) - (rows on the hull) triangles, as Andrew's
// monotone chain would (and the same vertex set: the hull's rows), in
// another order; the flips make any triangulation THE one. About a third
// of a run of wrong turns clips a round: tens of rounds for thousands of
// rows.
CS_HD uint32_t pocket_order(int k, int round) { return edge_order(k, round); }

CS_HD TriPoint chain_point(const ChainRows& c, int side, int k) { return {c.x[side][k], c.y[k]}; }

// Row k's chain at the start (every non-empty row on it).
CS_HD void pocket_chain_init(const ChainRows& c, int side, int k) {
  const bool last = k + 1 >= c.rows;
  c.prev[side][k] = k - 1;
  c.next[side][k] = last ? -1 : k + 1;
  c.inside[side][k] = last ? -1 : c.inner[side][k];
  c.inside_strip[side][k] = last ? -1 : k;
}

// Whether the chain turns strictly the wrong way at k between a and b
// (false when a or b is past an end: -1).
CS_HD bool pocket_reflex(const ChainRows& c, int side, int a, int k, int b) {
  if (a < 0 || b < 0) return false;
  const int64_t turn = orient2d(chain_point(c, side, a), chain_point(c, side, k), chain_point(c, side, b));
  return side == 0 ? turn > 0 : turn < 0;
}

// Whether row k (on the chain or not) is clipped in `round`; reads the
// chain only (pocket_clip_step writes it after every row's decision).
CS_HD bool pocket_clips(const ChainRows& c, int side, int k, int round) {
  const int a = c.prev[side][k], b = c.next[side][k];
  if (!pocket_reflex(c, side, a, k, b)) return false;
  const uint32_t own = pocket_order(k, round);
  if (pocket_order(a, round) > own && pocket_reflex(c, side, c.prev[side][a], a, k)) return false;
  if (pocket_order(b, round) > own && pocket_reflex(c, side, k, b, c.next[side][b])) return false;
  return true;
}

// Row k (a, k, b on the chain) clipped by triangle t: left (a, k, b),
// right (a, b, k), both positive. Its half-edges along (a, k) and (k, b)
// are the twins of those chain edges' insides; a strip's side is set from
// the outer half-edges by strip_rung_step (a strip without triangles meets
// the other side's pocket: link_strip_sides). The new chain edge (a, b) is
// hull until a later clip covers it.
CS_HD void pocket_clip_step(const PriorMesh& m, const ChainRows& c, int side, int k, int t) {
  const bool right = side == 1;
  int32_t* const prev = right ? c.prev[1] : c.prev[0];
  int32_t* const next = right ? c.next[1] : c.next[0];
  int32_t* const inside = right ? c.inside[1] : c.inside[0];
  int32_t* const inside_strip = right ? c.inside_strip[1] : c.inside_strip[0];
  int32_t* const outer = right ? c.outer[1] : c.outer[0];
  const int a = prev[k], b = next[k];
  const int32_t* const vs = right ? c.vertex[1] : c.vertex[0];
  int ak, kb, ba;  // the half-edges along a - k, k - b, b - a
  if (!right) {
    set_triangle(m, t, vs[a], vs[k], vs[b]);
    ak = 3 * t, kb = 3 * t + 1, ba = 3 * t + 2;
  } else {
    set_triangle(m, t, vs[a], vs[b], vs[k]);
    ak = 3 * t + 2, kb = 3 * t + 1, ba = 3 * t;
  }
  auto attach = [&](int h, int g, int strip) {
    m.twin[h] = g;
    if (strip >= 0) outer[strip] = h;
    else if (g >= 0) m.twin[g] = h;
  };
  attach(ak, inside[a], inside_strip[a]);
  attach(kb, inside[k], inside_strip[k]);
  m.twin[ba] = -1;
  inside[a] = ba;
  inside_strip[a] = -1;
  next[a] = b;
  prev[b] = a;
  next[k] = kOffChain;
}

// The rounds' tail: a wrong turn whose neighbours turn right only becomes
// one when its neighbour is clipped, one row a round (a bulge of the
// boundary inside the hull is eaten from its ends), so once a round clips
// few of the rows left (pocket_walk_now), one thread a side walks the rest
// of its chain top to bottom, clipping each row's predecessor while it
// turns the wrong way: Andrew's monotone chain on what is left, a row a
// step, the same clips (pocket_clip_step) in another order. Returns the
// next free id.
CS_HD bool pocket_walk_now(int clipped, int left_on_chains) { return 8 * clipped < left_on_chains; }

CS_HD int pocket_walk(const PriorMesh& m, const ChainRows& c, int side, int next_id) {
  if (c.rows < 3) return next_id;
  const int32_t* const prev = side == 1 ? c.prev[1] : c.prev[0];
  const int32_t* const next = side == 1 ? c.next[1] : c.next[0];
  for (int k = next[0]; k >= 0; k = next[k]) {
    for (;;) {
      const int p = prev[k];
      if (!pocket_reflex(c, side, prev[p], p, k)) break;
      pocket_clip_step(m, c, side, p, next_id++);
    }
  }
  return next_id;
}

// The two sides run at once: the left side's pockets take the ids after the
// strip triangles, the right side's are built at pocket_scratch_first (past
// any id the left side can reach: a side clips at most rows - 2 rows) and
// then moved to the ids after the left side's (move_right_pocket), so the
// numbering is that of the left side's pockets, then the right side's.
CS_HD int pocket_scratch_first(int strip_triangles, int rows) { return strip_triangles + 2 * (rows > 0 ? rows : 0); }
// The triangle slots the buffers need for a grid: prior_max_triangles and
// room for the right side's pockets as they are built.
inline std::size_t prior_triangle_slots(int cells_x, int cells_y) {
  return prior_max_triangles(cells_x, cells_y) + 3 * static_cast<std::size_t>(cells_y > 0 ? cells_y + 1 : 1);
}

// Where the right side's pockets were built (from `built`, `count` of them)
// and go (from `to`).
struct PocketMove {
  int built, to, count;
};
// A half-edge after the move: one of a moved triangle renumbered.
CS_HD int moved_half(const PocketMove& mv, int h) {
  return h >= 3 * mv.built && h < 3 * (mv.built + mv.count) ? h - 3 * (mv.built - mv.to) : h;
}
// The right side's i-th pocket triangle to its place; the two ranges do not
// overlap, and only these triangles and the strips' right outer half-edges
// (link_strip_sides) refer to them.
CS_HD void move_right_pocket(const PriorMesh& m, const PocketMove& mv, int i) {
  const int from = mv.built + i, to = mv.to + i;
  for (int s = 0; s < 3; ++s) {
    m.corner[3 * to + s] = m.corner[3 * from + s];
    m.twin[3 * to + s] = moved_half(mv, m.twin[3 * from + s]);
  }
  m.flipped[to] = 0;
  m.claim[to] = 0;
}

// After the pockets (and their move), strip k's outer half-edges for
// strip_rung_step; a strip without triangles is one segment, both sides'
// chain edge: the pocket triangles the two sides put on it (if any) are
// twins.
CS_HD void link_strip_sides(const PriorMesh& m, const ChainRows& c, const PocketMove& mv, int k) {
  const int l = c.outer[0][k], r = c.outer[1][k] >= 0 ? moved_half(mv, c.outer[1][k]) : -1;
  m.left_outer[k] = l;
  m.right_outer[k] = r;
  if (strip_triangle_count(c.count[k], c.count[k + 1]) == 0 && l >= 0 && r >= 0) {
    m.twin[l] = r;
    m.twin[r] = l;
  }
}

// ---------------------------------------------------------------- 4. flips

// Larger for a later round, then for an edge earlier in the round's order.
CS_HD unsigned long long claim_key(int round, int edge) {
  return (static_cast<unsigned long long>(static_cast<uint32_t>(round)) << 32) |
         (0xFFFFFFFFull - edge_order(edge, round));
}

// The flip loop runs in one block, so each dependent trip to memory in a
// round is paid by the whole round: the steps below issue every load that
// does not depend on another one first and decide afterwards (loads whose
// values a losing or finished step then ignores cost nothing extra on the
// chain).

// An edge as the legality test needs it: half-edge e = P -> Q of triangle
// (P, Q, R), its twin f (-1: hull) of triangle (Q, P, S), and whether f's
// triangle counts as flipped in the round before the test's (every
// triangle counts as flipped in round 0).
struct EdgeQuad {
  int twin;
  int p, q, r, s;  // vertex ids
  bool twin_fresh;
};

// Edge e read from the mesh, for a test in `round`.
CS_HD EdgeQuad edge_quad(const PriorMesh& m, int e, int round) {
  EdgeQuad k;
  k.twin = m.twin[e];
  k.p = m.corner[e];
  k.q = m.corner[next_half(e)];
  k.r = m.corner[prev_half(e)];
  k.s = k.twin >= 0 ? m.corner[prev_half(k.twin)] : -1;
  k.twin_fresh = k.twin >= 0 && m.flipped[k.twin / 3] == round - 1;
  return k;
}

// Edge e tested from its triangle t, which flipped in the round before the
// test's, so the edge may have changed; an edge between two such triangles
// is tested from its smaller half-edge. A candidate when the vertex
// opposite it is inside the circle of t by the perturbed test (and both
// triangles after the flip positive, which the test implies).
CS_HD bool illegal_edge(const PriorMesh& m, int e, const EdgeQuad& k) {
  if (k.twin < 0) return false;
  if (k.twin < e && k.twin_fresh) return false;
  const TriPoint P = vertex_point(m, k.p), Q = vertex_point(m, k.q), R = vertex_point(m, k.r),
                 S = vertex_point(m, k.s);
  if (incircle_perturbed(P, Q, R, S) <= 0) return false;
  return orient2d(P, S, R) > 0 && orient2d(Q, R, S) > 0;
}

// Candidate (e, f): when it won both its triangles this round (each holds
// claim_key of the edge it took), triangle (P, Q, R) on e = P -> Q and
// (Q, P, S) on f = Q -> P become (P, S, R) and (Q, R, S)
// (common/triangulation.cpp's flip): e1 = S -> R and f1 = R -> S are the
// new edge; e and f take the outer half-edges of P -> S and Q -> R. The
// other triangles' half-edges are mended (mend_read, mend_write) once
// every flip of the round is done. A winner reads only its own two triangles (no other
// flip of the round touches them); a loser's reads may meet another flip's
// writes and are ignored. Returns whether it flipped.
CS_HD bool flip_if_won(const PriorMesh& m, int e, int f, int round) {
  const int t = e / 3, u = f / 3;
  const int e1 = next_half(e), e2 = prev_half(e), f1 = next_half(f), f2 = prev_half(f);
  const unsigned long long claim_t = m.claim[t], claim_u = m.claim[u];
  const int R = m.corner[e2], S = m.corner[f2];
  const int twin_ps = m.twin[f1], twin_qr = m.twin[e1];
  const unsigned long long key = claim_key(round, e < f ? e : f);
  if (claim_t != key || claim_u != key) return false;
  m.corner[e1] = S;
  m.corner[f1] = R;
  m.twin[e] = twin_ps;
  m.twin[f] = twin_qr;
  m.twin[e1] = f1;
  m.twin[f1] = e1;
  m.flipped[t] = m.flipped[u] = round;
  m.flip_with[t] = 4 * f + e % 3;
  m.flip_with[u] = 4 * e + f % 3;
  return true;
}

// The half-edges of a triangle flipped on half-edge e (flip_if_won) that
// are mended and tested again: k = 0 is e, k = 1 is prev_half(e). The third,
// next_half(e), is the new edge: its twin is the partner's (nothing to
// mend) and it is legal (of a convex quad's two diagonals exactly one is
// legal under the perturbation, and the flip chose it; neither triangle
// changes again this round), so testing it would only say no.
CS_HD int flipped_outer_half(int e, int k) { return k == 0 ? e : prev_half(e); }

// Entry i (0 .. 2) of three, by selects: a run-time index into an array
// would put it in local memory on the GPU.
CS_HD int pick3(const int (&v)[3], int i) { return i == 0 ? v[0] : (i == 1 ? v[1] : v[2]); }

// Half-edge e, an outer half-edge of a triangle flipped this round: its
// twin h is a half-edge of before the round, of triangle w. A w that did
// not flip this round keeps h and is told e. A w that flipped on its
// half-edge x with the partner's half-edge y (flip_with) kept the edge at
// prev_half(x) in place and handed the one at next_half(x) to y (h is not
// x: x lay between w and its partner, h between w and e's pair), so the
// edge's new place needs no search; its opposite vertex is then the one
// that w received at next_half(x). Each half-edge is one thread's: it
// writes only its own twin and those of triangles that did not flip, and
// nothing else of the mesh changes in this phase, so what it reads is
// settled. In two steps: mend_read does every load and mend_write the
// stores, so that a thread with two half-edges issues both half-edges'
// loads before either's stores (the compiler may not move a load past a
// store that might alias it); every load is one of two dependent levels
// (e's twin, then its triangle).
struct MendRead {
  int twin;
  int p, q, r;     // e = p -> q in (p, q, r)
  int w_flipped;   // the round the twin's triangle w last flipped
  int w_with;      // its flip_with
  int w_corner[3];
};

CS_HD MendRead mend_read(const PriorMesh& m, int e) {
  MendRead d;
  d.twin = m.twin[e];
  d.p = m.corner[e];
  d.q = m.corner[next_half(e)];
  d.r = m.corner[prev_half(e)];
  d.w_flipped = -1;
  d.w_with = -1;
  for (int c = 0; c < 3; ++c) d.w_corner[c] = -1;
  if (d.twin < 0) return d;
  const int w = d.twin / 3;
  d.w_flipped = m.flipped[w];
  d.w_with = m.flip_with[w];
  for (int c = 0; c < 3; ++c) d.w_corner[c] = m.corner[3 * w + c];
  return d;
}

// Returns e's edge after mending, for the test of the next round: every
// vertex is known, and the twin's triangle flipped this round unless it is
// a neighbour that did not.
CS_HD EdgeQuad mend_write(const PriorMesh& m, int e, const MendRead& d, int round) {
  EdgeQuad k{d.twin, d.p, d.q, d.r, -1, true};
  if (d.twin < 0) return k;
  const int h = d.twin, w = h / 3;
  if (d.w_flipped != round) {
    m.twin[h] = e;
    k.s = pick3(d.w_corner, prev_half(h % 3));
    k.twin_fresh = false;
    return k;
  }
  const int x_slot = d.w_with & 3;
  if (h == 3 * w + next_half(x_slot)) {
    k.twin = d.w_with >> 2;
    k.s = pick3(d.w_corner, next_half(x_slot));
  } else {
    k.s = pick3(d.w_corner, prev_half(h % 3));
  }
  m.twin[e] = k.twin;
  return k;
}

// ---------------------------------------------------------------- 5. the prior

template <typename T>
CS_HD T* prior_row(const ImageView<T>& v, int y) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(v.data) + static_cast<std::ptrdiff_t>(y) * v.pitch);
}

// Triangle t as the raster needs it: its corners, its plane and its
// bounding box clipped to a width x height image (empty: x0 > x1 or y0 > y1).
struct RasterTriangle {
  TriPoint p0, p1, p2;
  TrianglePlane plane;
  int x0, x1, y0, y1;
};

// The triangle of corners p0, p1, p2 (positive orientation) and their
// disparities.
CS_HD RasterTriangle raster_triangle_of(TriPoint p0, int d0, TriPoint p1, int d1, TriPoint p2, int d2, int width,
                                        int height) {
  RasterTriangle r;
  r.p0 = p0;
  r.p1 = p1;
  r.p2 = p2;
  r.plane = triangle_plane(p0, d0, p1, d1, p2, d2);
  r.x0 = maxi(0, mini(p0.x, mini(p1.x, p2.x)));
  r.x1 = mini(width - 1, maxi(p0.x, maxi(p1.x, p2.x)));
  r.y0 = maxi(0, mini(p0.y, mini(p1.y, p2.y)));
  r.y1 = mini(height - 1, maxi(p0.y, maxi(p1.y, p2.y)));
  return r;
}

CS_HD RasterTriangle raster_triangle(const PriorMesh& m, int t, int width, int height) {
  const int v0 = m.corner[3 * t], v1 = m.corner[3 * t + 1], v2 = m.corner[3 * t + 2];
  return raster_triangle_of(vertex_point(m, v0), m.vertex[v0].d, vertex_point(m, v1), m.vertex[v1].d,
                            vertex_point(m, v2), m.vertex[v2].d, width, height);
}

// A triangle whose clipped box holds more than this many pixels is
// rasterised a row at a time (rasterise_row, a warp a row): with a warp a
// triangle the launch would wait on the few largest (the hull's pockets and
// the triangles over textureless areas span hundreds of rows). A row costs
// its bounds' and its walk's divisions, a box's pixel a few additions: on
// the H200 (Aloe, 640x480 to 1080p) 4096 was 2 to 4 % faster a frame than
// 1024 and within 1 % of 2048 to 16384; with no big triangles 1080p x 128
// took 0.97 ms against 0.71 (bench/RESULTS.md).
constexpr int kBigRasterPixels = 4096;

CS_HD bool raster_is_empty(const RasterTriangle& r) { return r.x0 > r.x1 || r.y0 > r.y1; }
CS_HD bool raster_is_big(const RasterTriangle& r) {
  return !raster_is_empty(r) && (r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1) > kBigRasterPixels;
}

// The raster walks each lane over its pixels with exact integer steps
// instead of testing and dividing afresh at every pixel (a 32-bit division
// for the box's x and y, three edge functions and the plane's division were
// about 170 instructions a pixel):
//  - an edge function less its bias, orient2d(i, j, q) - (owns ? 0 : 1):
//    q is covered iff all three are >= 0 (triangle_covers' rule: E > 0, or
//    E = 0 and the edge owns q). For corners and pixels in [0, 2^15)
//    |orient2d| < 2^31 (triangulation.h), so 32 bits hold every value the
//    walk reaches, and a step adds the exact difference;
//  - the plane's rounded quotient (plane_q4): N = plane_q4_numerator = 32
//    (a x + b y + c) + den = q D + r with D = 2 den and 0 <= r < D; a step adds its own quotient
//    and remainder and carries one where the remainders pass D. q is the
//    floor of N / D at every pixel, what floor_div gives.
struct RasterEdge {
  int32_t value;  // at the walk's pixel, less the bias
  int32_t ddx, ddy;  // its change a column and a row
};

CS_HD RasterEdge raster_edge(TriPoint i, TriPoint j, int x, int y) {
  RasterEdge e;
  e.value = static_cast<int32_t>(orient2d(i, j, {x, y})) - (edge_owns_its_points(i, j) ? 0 : 1);
  e.ddx = -(j.y - i.y);
  e.ddy = j.x - i.x;
  return e;
}

struct PlaneStep {
  int64_t q, r;  // a step's 32 (a dx + b dy) = q D + r, 0 <= r < D
};

CS_HD PlaneStep plane_step(const TrianglePlane& t, int64_t numerator) {
  PlaneStep s;
  s.q = floor_div(numerator, 2 * t.den);
  s.r = numerator - s.q * 2 * t.den;
  return s;
}

// The walk's state at one pixel: the three edges and the plane's quotient.
struct RasterWalk {
  int32_t e[3];
  int64_t q, r;

  CS_HD RasterWalk(const RasterTriangle& t, int x, int y, RasterEdge* edges) {
    const TriPoint p[3] = {t.p0, t.p1, t.p2};
    for (int k = 0; k < 3; ++k) {
      edges[k] = raster_edge(p[k], p[k == 2 ? 0 : k + 1], x, y);
      e[k] = edges[k].value;
    }
    const PlaneStep s = plane_step(t.plane, plane_q4_numerator(t.plane, x, y));
    q = s.q;
    r = s.r;
  }
  CS_HD bool covered() const { return (e[0] | e[1] | e[2]) >= 0; }
  CS_HD void step(const int32_t* de, const PlaneStep& s, int64_t den2) {
    for (int k = 0; k < 3; ++k) e[k] += de[k];
    q += s.q;
    r += s.r;
    if (r >= den2) {
      r -= den2;
      ++q;
    }
  }
  CS_HD void store(const ImageView<int32_t>& mu_q4, int x, int y) const {
    if (covered()) prior_row(mu_q4, y)[x] = static_cast<int32_t>(q);
  }
};

// A small triangle: every pixel of its box; lane `lane` of `lanes` takes
// pixels i = lane, lane + lanes, ... of the box in row order, (x0 + i % w,
// y0 + i / w): a step is lanes / w rows and lanes % w columns, one row more
// and w columns fewer where the columns pass the box's width.
CS_HD void rasterise_box(const RasterTriangle& r, int lane, int lanes, const ImageView<int32_t>& mu_q4) {
  if (raster_is_empty(r)) return;
  const int w = r.x1 - r.x0 + 1, pixels = w * (r.y1 - r.y0 + 1);
  if (lane >= pixels) return;
  const int sx = lanes % w, sy = lanes / w;
  int col = lane % w, x = r.x0 + col, y = r.y0 + lane / w;
  RasterEdge edge[3];
  RasterWalk walk(r, x, y, edge);
  int32_t plain[3], wrap[3];
  for (int k = 0; k < 3; ++k) {
    plain[k] = edge[k].ddx * sx + edge[k].ddy * sy;
    wrap[k] = plain[k] - edge[k].ddx * w + edge[k].ddy;
  }
  const TrianglePlane& t = r.plane;
  const PlaneStep plain_q = plane_step(t, 32 * (t.a * sx + t.b * sy));
  const PlaneStep wrap_q = plane_step(t, 32 * (t.a * (sx - w) + t.b * (sy + 1)));
  const int64_t den2 = 2 * t.den;
  for (int i = lane;;) {
    walk.store(mu_q4, x, y);
    i += lanes;
    if (i >= pixels) break;
    col += sx;
    x += sx;
    y += sy;
    const bool wraps = col >= w;
    if (wraps) {
      col -= w;
      x -= w;
      ++y;
    }
    walk.step(wraps ? wrap : plain, wraps ? wrap_q : plain_q, den2);
  }
}

// Row y (in the box) of a big triangle: the pixels of the box's row where
// each edge function orient2d(i, j, (x, y)) = K - dy x is >= 0 (a superset
// of the covered ones, bounded by exact floor divisions), each tested by
// the rule; lane `lane` of `lanes` takes every lanes-th (a step of lanes
// columns).
CS_HD void rasterise_row(const RasterTriangle& r, int y, int lane, int lanes, const ImageView<int32_t>& mu_q4) {
  int64_t lo = r.x0, hi = r.x1;
  const TriPoint p[3] = {r.p0, r.p1, r.p2};
  for (int k = 0; k < 3; ++k) {
    const TriPoint i = p[k], j = p[k == 2 ? 0 : k + 1];
    const int64_t dx = j.x - i.x, dy = j.y - i.y;
    const int64_t K = dx * (y - i.y) + dy * i.x;
    if (dy > 0) {
      const int64_t bound = floor_div(K, dy);  // x <= K / dy
      hi = hi < bound ? hi : bound;
    } else if (dy < 0) {
      const int64_t bound = -floor_div(K, -dy);  // x >= K / dy, rounded up
      lo = lo > bound ? lo : bound;
    } else if (K < 0) {
      return;
    }
  }
  if (lo + lane > hi) return;
  int x = static_cast<int>(lo) + lane;
  RasterEdge edge[3];
  RasterWalk walk(r, x, y, edge);
  int32_t de[3];
  for (int k = 0; k < 3; ++k) de[k] = edge[k].ddx * lanes;
  const PlaneStep s = plane_step(r.plane, 32 * r.plane.a * lanes);
  const int64_t den2 = 2 * r.plane.den;
  for (;;) {
    walk.store(mu_q4, x, y);
    x += lanes;
    if (x > hi) break;
    walk.step(de, s, den2);
  }
}

// The entry of the big triangles' list (pairs: triangle, first flattened
// row; in order of first rows) whose rows hold flattened row `row`.
CS_HD int big_entry_of_row(const int32_t* big, int count, int row) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (big[2 * mid + 1] <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace cs::cuda
