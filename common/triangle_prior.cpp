// ELAS's prior over the image (triangle_prior.h): each triangle's pixels
// in its bounding box, tested by the exact coverage rule.
#include "triangle_prior.h"

#include <algorithm>
#include <climits>

namespace cs {

void rasterize_prior(const std::vector<TriPoint>& points, const std::vector<int>& disparity,
                     const std::vector<TriIndices>& triangles, int width, int height, Image<int32_t>& mu_q4,
                     Image<int32_t>& triangle) {
  mu_q4 = Image<int32_t>(std::max(width, 0), std::max(height, 0), kNoPrior);
  triangle = Image<int32_t>(mu_q4.width, mu_q4.height, -1);
  const int n = static_cast<int>(std::min(points.size(), disparity.size()));
  for (size_t t = 0; t < triangles.size(); ++t) {
    const TriIndices& k = triangles[t];
    if (k[0] < 0 || k[1] < 0 || k[2] < 0 || k[0] >= n || k[1] >= n || k[2] >= n) continue;
    const TriPoint p0 = points[k[0]], p1 = points[k[1]], p2 = points[k[2]];
    if (orient2d(p0, p1, p2) <= 0) continue;
    const TrianglePlane plane = triangle_plane(p0, disparity[k[0]], p1, disparity[k[1]], p2, disparity[k[2]]);
    const int x0 = std::max(0, std::min({p0.x, p1.x, p2.x})), x1 = std::min(mu_q4.width - 1, std::max({p0.x, p1.x, p2.x}));
    const int y0 = std::max(0, std::min({p0.y, p1.y, p2.y})), y1 = std::min(mu_q4.height - 1, std::max({p0.y, p1.y, p2.y}));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        if (!triangle_covers(p0, p1, p2, {x, y})) continue;
        mu_q4.at(x, y) = plane_q4(plane, x, y);
        triangle.at(x, y) = static_cast<int32_t>(t);
      }
  }
}

}  // namespace cs
