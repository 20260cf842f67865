// Background model (stages.h stage 3): a model of cells and one at full size
// a view, the pixels tested where their cells disagree; the mask cleaned by
// a speckle and pinhole filter, a closing and an opening, and pooled to the
// coarser levels.
#include <algorithm>

#include "stages.h"

namespace cs {

uint64_t background_view(BackgroundModel& model, const Image<uint32_t>& rgb, const BackgroundParams& bp,
                         int frames_seen, int view, Image<uint8_t>& raw) {
  const int w = rgb.width, h = rgb.height;
  const int cw = (w + kBackgroundCell - 1) / kBackgroundCell, ch = (h + kBackgroundCell - 1) / kBackgroundCell;
  if (model.width != w || model.height != h || model.pixels.size() != static_cast<size_t>(w) * h) {
    model.width = w;
    model.height = h;
    model.pixels.assign(static_cast<size_t>(w) * h, 0);
    model.cells.assign(static_cast<size_t>(cw) * ch, 0);
  }
  // The cells: each its pixels' mean colour through its own model.
  Image<uint8_t> cell_fg(cw, ch), label(cw, ch);
  for (int cy = 0; cy < ch; ++cy)
    for (int cx = 0; cx < cw; ++cx) {
      int sum[3] = {0, 0, 0}, n = 0;
      for (int y = cy * kBackgroundCell; y < std::min((cy + 1) * kBackgroundCell, h); ++y)
        for (int x = cx * kBackgroundCell; x < std::min((cx + 1) * kBackgroundCell, w); ++x, ++n)
          for (int c = 0; c < 3; ++c) sum[c] += (rgb.at(x, y) >> (8 * c)) & 255;
      BackgroundPixel& m = model.cells[static_cast<size_t>(cy) * cw + cx];
      cell_fg.at(cx, cy) =
          background_pixel(&m, cell_colour(sum[0], sum[1], sum[2], n), bp, frames_seen, cx, cy, view + 2) ? 1 : 0;
    }
  // Each cell's label for its pixels, from its 3 x 3 cells (stored as
  // label + 1: kLabelTest is -1).
  for (int cy = 0; cy < ch; ++cy)
    for (int cx = 0; cx < cw; ++cx) {
      int fg = 0, cells = 0;
      for (int j = std::max(cy - 1, 0); j <= std::min(cy + 1, ch - 1); ++j)
        for (int i = std::max(cx - 1, 0); i <= std::min(cx + 1, cw - 1); ++i, ++cells) fg += cell_fg.at(i, j);
      label.at(cx, cy) = static_cast<uint8_t>(cells_label(fg, cells) + 1);
    }
  // The pixels, with their cells' label.
  const bool tested = frames_seen > 0 && frames_seen >= bp.warmup_frames;
  uint64_t tests = tested ? static_cast<uint64_t>(cw) * ch : 0;
  raw = Image<uint8_t>(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int l = label.at(x / kBackgroundCell, y / kBackgroundCell) - 1;
      tests += tested && l == kLabelTest;
      BackgroundPixel& m = model.pixels[static_cast<size_t>(y) * w + x];
      raw.at(x, y) = background_pixel(&m, rgb.at(x, y), bp, frames_seen, x, y, view, l) ? 255 : 0;
    }
  return tests;
}

void clean_mask(const Image<uint8_t>& raw, int radius, Image<uint8_t>& mask) {
  const int w = raw.width, h = raw.height;
  Image<uint8_t> filtered(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int n = 0;  // foreground neighbours (8), outside the image counting as background
      for (int j = std::max(y - 1, 0); j <= std::min(y + 1, h - 1); ++j)
        for (int i = std::max(x - 1, 0); i <= std::min(x + 1, w - 1); ++i)
          if (i != x || j != y) n += raw.at(i, j) != 0;
      filtered.at(x, y) = (raw.at(x, y) ? n >= 2 : n >= 5) ? 255 : 0;
    }
  Image<uint8_t> closed;
  close_mask(filtered, radius, closed);
  open_mask(closed, 1, mask);
}

namespace {

// A square max (dilation) or min (erosion) of radius r over the window's
// pixels inside the image, rows then columns.
void square_filter(const Image<uint8_t>& src, int radius, bool take_max, Image<uint8_t>& dst) {
  const int w = src.width, h = src.height;
  Image<uint8_t> tmp(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = take_max ? 0 : 255;
      for (int i = std::max(x - radius, 0); i <= std::min(x + radius, w - 1); ++i)
        v = take_max ? std::max<int>(v, src.at(i, y)) : std::min<int>(v, src.at(i, y));
      tmp.at(x, y) = static_cast<uint8_t>(v);
    }
  dst = Image<uint8_t>(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = take_max ? 0 : 255;
      for (int j = std::max(y - radius, 0); j <= std::min(y + radius, h - 1); ++j)
        v = take_max ? std::max<int>(v, tmp.at(x, j)) : std::min<int>(v, tmp.at(x, j));
      dst.at(x, y) = static_cast<uint8_t>(v);
    }
}

}  // namespace

void dilate_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out) {
  if (radius <= 0) {
    out = in;
    return;
  }
  square_filter(in, radius, true, out);
}

void open_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out) {
  if (radius <= 0) {
    out = in;
    return;
  }
  Image<uint8_t> eroded;
  square_filter(in, radius, false, eroded);
  square_filter(eroded, radius, true, out);
}

void close_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out) {
  if (radius <= 0) {
    out = in;
    return;
  }
  Image<uint8_t> dilated;
  square_filter(in, radius, true, dilated);
  square_filter(dilated, radius, false, out);
}

void pool_mask(const Image<uint8_t>& full, int level, Image<uint8_t>& mask) {
  const int w = level_size(full.width, level), h = level_size(full.height, level), s = 1 << level;
  mask = Image<uint8_t>(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t any = 0;
      for (int j = 0; j < s && !any; ++j)
        for (int i = 0; i < s; ++i)
          if (full.at(x * s + i, y * s + j)) {
            any = 255;
            break;
          }
      mask.at(x, y) = any;
    }
}

}  // namespace cs
