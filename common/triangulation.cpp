// Delaunay triangulation of integer points (triangulation.h): a radial
// sweep builds a triangulation of the points so far, and Lawson flips with
// the perturbed incircle test make it Delaunay after each insertion. The
// result is the unique perturbed Delaunay triangulation; the algorithm only
// decides how fast we get there.
//
// Why radial: the points are inserted by distance from an integer centre,
// so each new point is outside the hull of the earlier ones (strictly: a
// point on the circle through the farthest earlier ones is an extreme point
// of that disc) and sees only a few hull edges near it. A sweep in (x, y)
// order would see, from each new lattice point, the whole straight column
// before it (a fan of a column's length, then as many flips), O(n^1.5) on
// ELAS's candidate grid.
#include "triangulation.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cs {
namespace {

// Half-edge e belongs to triangle e / 3 and runs from vertex tri[e] to
// tri[next_edge(e)]; every triangle is in positive orientation.
inline int32_t next_edge(int32_t e) { return e % 3 == 2 ? e - 2 : e + 1; }
inline int32_t prev_edge(int32_t e) { return e % 3 == 0 ? e + 2 : e - 1; }

class Mesh {
 public:
  explicit Mesh(std::vector<TriPoint> pts)
      : pts_(std::move(pts)),
        hull_next_(pts_.size()),
        hull_prev_(pts_.size()),
        hull_edge_(pts_.size()),
        on_hull_(pts_.size(), 0) {
    tri_.reserve(6 * pts_.size());
    twin_.reserve(6 * pts_.size());
  }

  // Distinct points. False when they are all on one line.
  bool build();
  const std::vector<int32_t>& corners() const { return tri_; }

 private:
  int32_t add_triangle(int32_t a, int32_t b, int32_t c);
  void link(int32_t e, int32_t f);
  int64_t orient(int32_t a, int32_t b, int32_t c) const { return orient2d(pts_[a], pts_[b], pts_[c]); }
  int32_t hash_key(int32_t v) const;
  void remember_on_hull(int32_t v) { hull_hash_[hash_key(v)] = v; }
  void seed(std::vector<int32_t> line, int32_t apex);
  int32_t visible_edge_start(int32_t p) const;
  void insert(int32_t p);
  void legalize();

  std::vector<TriPoint> pts_;
  TriPoint centre_{0, 0};
  std::vector<int32_t> tri_;   // 3 vertices a triangle
  std::vector<int32_t> twin_;  // the opposite half-edge, -1 on the hull
  // The convex hull, counter-clockwise, as a linked list of vertices; a
  // hull vertex u's edge u -> hull_next_[u] is the half-edge hull_edge_[u].
  // Collinear vertices on a hull side stay in the list.
  std::vector<int32_t> hull_next_, hull_prev_, hull_edge_;
  std::vector<char> on_hull_;
  // Some hull vertex in each sector of directions from the centre, a
  // starting point to look for the edges a new point sees (a hint only:
  // the exact tests decide, so rounding here changes no result).
  std::vector<int32_t> hull_hash_;
  std::vector<int32_t> flip_stack_;
};

int32_t Mesh::add_triangle(int32_t a, int32_t b, int32_t c) {
  const int32_t e = static_cast<int32_t>(tri_.size());
  tri_.insert(tri_.end(), {a, b, c});
  twin_.insert(twin_.end(), {-1, -1, -1});
  flip_stack_.insert(flip_stack_.end(), {e, e + 1, e + 2});
  return e;
}

void Mesh::link(int32_t e, int32_t f) {
  twin_[e] = f;
  if (f >= 0) twin_[f] = e;
}

// The sector of v's direction from the centre: a pseudo-angle (monotone in
// the angle, no trigonometry) scaled to the table.
int32_t Mesh::hash_key(int32_t v) const {
  const double dx = pts_[v].x - centre_.x, dy = pts_[v].y - centre_.y;
  const double sum = std::fabs(dx) + std::fabs(dy);
  if (sum == 0) return 0;
  const double t = dx / sum;
  const double angle = (dy > 0 ? 3 - t : 1 + t) / 4;  // [0, 1)
  const int32_t size = static_cast<int32_t>(hull_hash_.size());
  return std::min(size - 1, static_cast<int32_t>(angle * size));
}

// The first points, on one line in (x, y) order, fanned to the apex off
// their line (every segment of the line is visible from it).
void Mesh::seed(std::vector<int32_t> line, int32_t apex) {
  std::sort(line.begin(), line.end(), [&](int32_t a, int32_t b) {
    return pts_[a].x != pts_[b].x ? pts_[a].x < pts_[b].x : pts_[a].y < pts_[b].y;
  });
  const bool apex_left = orient(line[0], line[1], apex) > 0;
  int32_t previous = -1;  // the last triangle's side {i, apex} for the next i
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    const int32_t a = line[i], b = line[i + 1];
    const int32_t e = apex_left ? add_triangle(a, b, apex) : add_triangle(b, a, apex);
    // Consecutive triangles share the side {a, apex}.
    const int32_t side_a = apex_left ? e + 2 : e + 1;
    const int32_t side_b = apex_left ? e + 1 : e + 2;
    if (previous >= 0) link(side_a, previous);
    previous = side_b;
  }
  // The half-edges without a twin are the hull, counter-clockwise.
  for (int32_t e = 0; e < static_cast<int32_t>(tri_.size()); ++e) {
    if (twin_[e] >= 0) continue;
    const int32_t u = tri_[e], w = tri_[next_edge(e)];
    hull_next_[u] = w;
    hull_prev_[w] = u;
    hull_edge_[u] = e;
    on_hull_[u] = 1;
    remember_on_hull(u);
  }
  legalize();
}

// A hull vertex whose edge to its successor p sees (strictly right of it,
// outside the hull). Starts at the hull vertex remembered nearest in
// direction; p is outside the hull, so the walk finds one.
int32_t Mesh::visible_edge_start(int32_t p) const {
  const int32_t size = static_cast<int32_t>(hull_hash_.size());
  const int32_t key = hash_key(p);
  int32_t start = -1;
  for (int32_t j = 0; j < size && start < 0; ++j) {
    const int32_t v = hull_hash_[(key + j) % size];
    if (v >= 0 && on_hull_[v]) start = v;
  }
  int32_t e = start;
  while (orient(e, hull_next_[e], p) >= 0) e = hull_next_[e];
  return e;
}

// p is outside the hull; the edges it sees form one chain. Each gets a
// triangle with p; the chain's inner vertices leave the hull.
void Mesh::insert(int32_t p) {
  const int32_t e = visible_edge_start(p);
  int32_t first = e, last = hull_next_[e];
  while (orient(hull_prev_[first], first, p) < 0) first = hull_prev_[first];
  while (orient(last, hull_next_[last], p) < 0) last = hull_next_[last];
  int32_t previous = -1;  // the side (p, u) of the last triangle added
  for (int32_t u = first; u != last;) {
    const int32_t w = hull_next_[u];
    // (w, u, p) is positive because p is right of the hull edge u -> w.
    const int32_t t = add_triangle(w, u, p);
    link(t, hull_edge_[u]);
    if (previous >= 0) link(t + 1, previous);  // u -> p against p -> u
    else hull_edge_[u] = t + 1;                // the first: u -> p is a hull edge
    previous = t + 2;                          // p -> w
    if (u != first) on_hull_[u] = 0;
    u = w;
  }
  hull_next_[first] = p;
  hull_prev_[p] = first;
  hull_next_[p] = last;
  hull_prev_[last] = p;
  hull_edge_[p] = previous;
  on_hull_[p] = 1;
  remember_on_hull(p);
  remember_on_hull(first);
  remember_on_hull(last);
  legalize();
}

// Lawson flips until every half-edge on the stack is locally Delaunay
// under the perturbed test. Each flip lowers the lifted surface, so this
// ends; an edge that fails the test always has a convex quadrilateral
// (the opposite vertex is inside or, perturbed, on the circle beyond the
// edge), so the flip never makes a triangle of zero area.
void Mesh::legalize() {
  while (!flip_stack_.empty()) {
    const int32_t e = flip_stack_.back();
    flip_stack_.pop_back();
    const int32_t f = twin_[e];
    if (f < 0) continue;
    // Triangle (P, Q, R) on e = P -> Q, triangle (Q, P, S) on f = Q -> P.
    const int32_t e1 = next_edge(e), e2 = prev_edge(e);
    const int32_t f1 = next_edge(f), f2 = prev_edge(f);
    const int32_t P = tri_[e], Q = tri_[e1], R = tri_[e2], S = tri_[f2];
    if (incircle_perturbed(pts_[P], pts_[Q], pts_[R], pts_[S]) <= 0) continue;
    // Flip to (P, S, R) on e, e1, e2 and (Q, R, S) on f, f1, f2: the sides
    // R -> P (e2) and S -> Q (f2) stay where they are.
    const int32_t twin_ps = twin_[f1], twin_qr = twin_[e1];
    tri_[e1] = S;
    tri_[f1] = R;
    link(e, twin_ps);  // P -> S
    link(f, twin_qr);  // Q -> R
    link(e1, f1);      // S -> R against R -> S
    if (twin_ps < 0) hull_edge_[P] = e;
    if (twin_qr < 0) hull_edge_[Q] = f;
    flip_stack_.insert(flip_stack_.end(), {e, e2, f, f2});
  }
}

bool Mesh::build() {
  const int32_t n = static_cast<int32_t>(pts_.size());
  if (n < 3) return false;
  int32_t min_x = kTriCoordLimit, min_y = kTriCoordLimit, max_x = 0, max_y = 0;
  for (const TriPoint& p : pts_) {
    min_x = std::min(min_x, p.x), max_x = std::max(max_x, p.x);
    min_y = std::min(min_y, p.y), max_y = std::max(max_y, p.y);
  }
  centre_ = {(min_x + max_x) / 2, (min_y + max_y) / 2};
  // Insertion order: distance from the centre, ties in (y, x) order.
  std::vector<int64_t> distance(n);
  for (int32_t i = 0; i < n; ++i) {
    const int64_t dx = pts_[i].x - centre_.x, dy = pts_[i].y - centre_.y;
    distance[i] = dx * dx + dy * dy;
  }
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (distance[a] != distance[b]) return distance[a] < distance[b];
    return tri_priority(pts_[a]) < tri_priority(pts_[b]);
  });
  int32_t apex = 2;
  while (apex < n && orient(order[0], order[1], order[apex]) == 0) ++apex;
  if (apex >= n) return false;
  hull_hash_.assign(static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n)))), -1);
  seed(std::vector<int32_t>(order.begin(), order.begin() + apex), order[apex]);
  for (int32_t k = apex + 1; k < n; ++k) insert(order[k]);
  return true;
}

// Indices of the vertices: in range, sorted by (x, y), the first of equal
// points (smallest index) kept.
std::vector<int32_t> vertex_order(const std::vector<TriPoint>& points) {
  std::vector<int32_t> order;
  order.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const TriPoint p = points[i];
    if (p.x >= 0 && p.y >= 0 && p.x < kTriCoordLimit && p.y < kTriCoordLimit) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const TriPoint pa = points[a], pb = points[b];
    if (pa.x != pb.x) return pa.x < pb.x;
    if (pa.y != pb.y) return pa.y < pb.y;
    return a < b;
  });
  const auto same = [&](int32_t a, int32_t b) { return points[a].x == points[b].x && points[a].y == points[b].y; };
  order.erase(std::unique(order.begin(), order.end(), same), order.end());
  return order;
}

}  // namespace

std::vector<TriIndices> delaunay_triangulate(const std::vector<TriPoint>& points) {
  std::vector<TriIndices> triangles;
  if (points.size() > kTriMaxPoints) return triangles;
  const std::vector<int32_t> order = vertex_order(points);
  std::vector<TriPoint> sorted(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) sorted[i] = points[order[i]];
  Mesh mesh(std::move(sorted));
  if (!mesh.build()) return triangles;
  const std::vector<int32_t>& corners = mesh.corners();
  triangles.reserve(corners.size() / 3);
  for (std::size_t t = 0; t < corners.size(); t += 3) {
    TriIndices tri = {order[corners[t]], order[corners[t + 1]], order[corners[t + 2]]};
    // A rotation keeps the orientation.
    std::rotate(tri.begin(), std::min_element(tri.begin(), tri.end()), tri.end());
    triangles.push_back(tri);
  }
  std::sort(triangles.begin(), triangles.end());
  return triangles;
}

}  // namespace cs
