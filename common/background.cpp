// Background model (Zhao & Taubin 2011, section 3.2): a running Gaussian per
// pixel and HSV channel, tested coarse to fine so that blocks whose coarser
// neighbourhood agrees skip the per-pixel test.
#include <algorithm>

#include "stages.h"

namespace cs {

bool background_pixel(GaussQ8* model3, uint32_t rgb, const BackgroundParams& bp, int frames_seen, bool warming_up,
                      bool test, bool untested_foreground) {
  int hsv[3];
  hsv_from_rgb(rgb & 255, (rgb >> 8) & 255, (rgb >> 16) & 255, &hsv[0], &hsv[1], &hsv[2]);
  if (frames_seen == 0) {
    for (int c = 0; c < 3; ++c) model3[c] = {hsv[c] * 256, bp.var_min_q8};
    return true;
  }
  int32_t d[3];
  for (int c = 0; c < 3; ++c) d[c] = hsv_delta_q8(c, hsv[c], model3[c].mean, hsv[1]);
  bool foreground = untested_foreground;
  if (warming_up) {
    foreground = true;
  } else if (test) {
    foreground = false;
    for (int c = 0; c < 3; ++c) foreground = foreground || gauss_is_foreground(d[c], model3[c].var, bp.k2_q8);
  }
  // A foreground observation moves the mean at a quarter of the rate (so a
  // lasting change such as a light change is absorbed, while a passing object
  // leaves no ghost behind) and leaves the variance alone (a passing object
  // would otherwise inflate sigma and hide itself).
  const bool learn_variance = warming_up || !foreground;
  int32_t alpha = bp.alpha_q16;
  if (warming_up)
    alpha = warmup_alpha_q16(frames_seen, bp.alpha_q16);
  else if (foreground)
    alpha = foreground_alpha_q16(bp.alpha_q16);
  for (int c = 0; c < 3; ++c) {
    const int32_t var = model3[c].var;
    gauss_update(&model3[c], c, d[c], alpha, bp.var_min_q8);
    if (!learn_variance) model3[c].var = var;
  }
  return foreground;
}

uint64_t background_level(BackgroundModel& model, const Image<uint32_t>& rgb, const BackgroundParams& bp,
                          int frames_seen, bool warming_up, const Image<uint8_t>* coarser_mask, int block_size,
                          Image<uint8_t>& mask) {
  const int w = rgb.width, h = rgb.height;
  if (model.width != w || model.height != h || model.hsv.size() != static_cast<size_t>(w) * h * 3) {
    model.width = w;
    model.height = h;
    model.hsv.assign(static_cast<size_t>(w) * h * 3, GaussQ8{0, bp.var_min_q8});
  }
  mask = Image<uint8_t>(w, h);
  auto pixel_model = [&](int x, int y) { return &model.hsv[(static_cast<size_t>(y) * w + x) * 3]; };

  if (warming_up || frames_seen == 0) {
    // Learning only: every pixel foreground, no test counted.
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        background_pixel(pixel_model(x, y), rgb.at(x, y), bp, frames_seen, true, false);
        mask.at(x, y) = 255;
      }
    return 0;
  }

  uint64_t tests = 0;
  if (coarser_mask == nullptr || coarser_mask->width == 0 || coarser_mask->height == 0) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        mask.at(x, y) = background_pixel(pixel_model(x, y), rgb.at(x, y), bp, frames_seen, false, true) ? 255 : 0;
    return static_cast<uint64_t>(w) * h;
  }

  const Image<uint8_t>& cm = *coarser_mask;
  for (int by = 0; by < h; by += block_size) {
    const int y1 = std::min(by + block_size, h);
    const int cy0 = std::max(by / 2 - 1, 0), cy1 = std::min((y1 - 1) / 2 + 1, cm.height - 1);
    for (int bx = 0; bx < w; bx += block_size) {
      const int x1 = std::min(bx + block_size, w);
      const int cx0 = std::max(bx / 2 - 1, 0), cx1 = std::min((x1 - 1) / 2 + 1, cm.width - 1);
      // The parents' footprint, grown by one coarser pixel, decides.
      const uint8_t first = cm.at(std::min(cx0, cm.width - 1), std::min(cy0, cm.height - 1));
      bool uniform = true;
      for (int cy = cy0; cy <= cy1 && uniform; ++cy)
        for (int cx = cx0; cx <= cx1; ++cx)
          if (cm.at(cx, cy) != first) {
            uniform = false;
            break;
          }
      for (int y = by; y < y1; ++y)
        for (int x = bx; x < x1; ++x) {
          const bool fg = background_pixel(pixel_model(x, y), rgb.at(x, y), bp, frames_seen, false, !uniform,
                                           uniform && first != 0);
          mask.at(x, y) = fg ? 255 : 0;
        }
      if (!uniform) tests += static_cast<uint64_t>(x1 - bx) * (y1 - by);
    }
  }
  return tests;
}

void close_mask(const Image<uint8_t>& in, int radius, Image<uint8_t>& out) {
  if (radius <= 0) {
    out = in;
    return;
  }
  const int w = in.width, h = in.height;
  // A square max/min is separable: rows, then columns.
  auto filter = [&](const Image<uint8_t>& src, Image<uint8_t>& dst, bool take_max) {
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
  };
  Image<uint8_t> dilated;
  filter(in, dilated, true);
  filter(dilated, out, false);
}

}  // namespace cs
