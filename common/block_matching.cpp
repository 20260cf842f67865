// Method block (stages.h, B1 .. B4): SSD block matching over the full range,
// uniqueness, sub-pixel and confidence.
//
// Costs are swept one disparity at a time over the whole image, as the SDK
// sample does per tile: per d, the squared differences of every row, column
// sums over block_size rows kept by adding the row entering the block and
// subtracting the one leaving it, then a running sum along the row. Each
// (pixel, d) thus costs a few additions whatever the block size, and the
// winners are updated on the fly (SweepWinner), so no cost volume is stored.
#include <algorithm>
#include <vector>

#include "stages.h"

namespace cs {

int block_ssd(const Image<uint8_t>& gray_ref, const Image<uint8_t>& gray_other, Reference ref, int x, int y, int d,
              int block_size) {
  const int w = gray_ref.width, h = gray_ref.height;
  const int r = block_size / 2;
  const int sign = ref == Reference::Left ? -1 : 1;
  int sum = 0;
  for (int v = y - r; v <= y + r; ++v) {
    if (v < 0 || v >= h) continue;
    for (int u = x - r; u <= x + r; ++u)
      sum += squared_difference(gray_ref.at(clampi(u, 0, w - 1), v), gray_other.at(clampi(u + sign * d, 0, w - 1), v));
  }
  return sum;
}

void block_match(const Image<uint8_t>& gray_left, const Image<uint8_t>& gray_right, const Image<uint8_t>* mask_left,
                 const Image<uint8_t>* mask_right, Range range, int block_size, BlockWinners& left,
                 Image<int16_t>& right) {
  const int w = gray_left.width, h = gray_left.height;
  const int r = block_size / 2;
  const bool masks = mask_left != nullptr && mask_right != nullptr;
  std::vector<SweepWinner> sweep(static_cast<size_t>(w) * h);
  std::vector<int32_t> right_best(static_cast<size_t>(w) * h, kNoCost);
  right = Image<int16_t>(w, h, -1);

  // Only left pixels x >= d have a matched pixel in the image.
  const int lo = std::max(range.lo, 0), hi = std::min(range.hi, w);
  std::vector<int32_t> squares;  // row v, column u - (d - r), u in [d - r, w - 1 + r]
  std::vector<int32_t> columns;
  for (int d = lo; d < hi; ++d) {
    const int x0 = d;
    const int cols = (w - x0) + 2 * r;
    const int u0 = x0 - r;
    squares.assign(static_cast<size_t>(cols) * h, 0);
    for (int v = 0; v < h; ++v) {
      const uint8_t* lrow = &gray_left.pixels[static_cast<size_t>(v) * w];
      const uint8_t* rrow = &gray_right.pixels[static_cast<size_t>(v) * w];
      int32_t* srow = &squares[static_cast<size_t>(v) * cols];
      for (int i = 0; i < cols; ++i) {
        const int u = u0 + i;
        srow[i] = squared_difference(lrow[clampi(u, 0, w - 1)], rrow[clampi(u - d, 0, w - 1)]);
      }
    }
    // Column sums over rows [y - r, y + r] inside the image, for y = 0 first.
    columns.assign(cols, 0);
    for (int v = 0; v <= std::min(r, h - 1); ++v)
      for (int i = 0; i < cols; ++i) columns[i] += squares[static_cast<size_t>(v) * cols + i];
    for (int y = 0; y < h; ++y) {
      if (y > 0) {
        const int enter = y + r, leave = y - r - 1;
        if (enter < h)
          for (int i = 0; i < cols; ++i) columns[i] += squares[static_cast<size_t>(enter) * cols + i];
        if (leave >= 0)
          for (int i = 0; i < cols; ++i) columns[i] -= squares[static_cast<size_t>(leave) * cols + i];
      }
      int32_t sum = 0;
      for (int i = 0; i < 2 * r; ++i) sum += columns[i];
      const size_t row = static_cast<size_t>(y) * w;
      const uint8_t* ml = masks ? &mask_left->pixels[row] : nullptr;
      const uint8_t* mr = masks ? &mask_right->pixels[row] : nullptr;
      for (int x = x0; x < w; ++x) {
        // Block of left pixel x: columns x - r .. x + r, i.e. i = x - x0 .. x - x0 + 2r.
        sum += columns[x - x0 + 2 * r];
        const int32_t cost = sum;
        sum -= columns[x - x0];
        const int xr = x - d;
        const bool admissible = !masks || (ml[x] != 0 && mr[xr] != 0);
        sweep[row + x].visit(d, cost, admissible);
        // d ascends: a strict improvement keeps the smaller d on ties.
        if (admissible && cost < right_best[row + xr]) {
          right_best[row + xr] = cost;
          right.pixels[row + xr] = static_cast<int16_t>(d);
        }
      }
    }
  }

  left.disparity = Image<int16_t>(w, h, -1);
  left.best = Image<int32_t>(w, h, kNoCost);
  left.rival = Image<int32_t>(w, h, kNoCost);
  left.below = Image<int32_t>(w, h, kNoCost);
  left.above = Image<int32_t>(w, h, kNoCost);
  for (size_t p = 0; p < sweep.size(); ++p) {
    const SweepWinner& s = sweep[p];
    if (s.disparity < 0) continue;
    left.disparity.pixels[p] = s.disparity;
    left.best.pixels[p] = s.best;
    left.rival.pixels[p] = s.rival;
    left.below.pixels[p] = s.below;
    left.above.pixels[p] = s.above;
  }
}

void apply_uniqueness(const BlockWinners& winners, int uniqueness_ratio, Image<int16_t>& disparity) {
  if (uniqueness_ratio <= 0) return;
  for (size_t p = 0; p < disparity.pixels.size(); ++p)
    if (disparity.pixels[p] >= 0 && !passes_uniqueness(winners.best.pixels[p], winners.rival.pixels[p], uniqueness_ratio))
      disparity.pixels[p] = -1;
}

void finish_block_disparity(const BlockWinners& winners, const Image<int16_t>& disparity, Range range,
                            bool subpixel, ImageView<uint16_t> disparity_q4) {
  const int w = disparity.width, h = disparity.height;
  for (int y = 0; y < h; ++y) {
    uint16_t* out = disparity_q4.row(y);
    for (int x = 0; x < w; ++x) {
      const int d = disparity.at(x, y);
      if (d < 0) {
        out[x] = kInvalidDisparity;
        continue;
      }
      int q = d * 16;
      if (subpixel && subpixel_neighbours_in_range(d, x, range.lo, range.hi))
        q += subpixel_offset_q4(winners.below.at(x, y), winners.best.at(x, y), winners.above.at(x, y));
      out[x] = static_cast<uint16_t>(q < 0 ? 0 : q);
    }
  }
}

void block_confidence(const BlockWinners& winners, const Image<int16_t>& disparity, Image<uint8_t>& confidence) {
  confidence = Image<uint8_t>(disparity.width, disparity.height, 0);
  for (size_t p = 0; p < disparity.pixels.size(); ++p)
    if (disparity.pixels[p] >= 0)
      confidence.pixels[p] = confidence_from_costs(winners.best.pixels[p], winners.rival.pixels[p]);
}

}  // namespace cs
