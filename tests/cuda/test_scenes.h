// Generated grey views for the CUDA tests, with no CUDA header: the GPU tests
// (through gpu_test_util.h) and the CPU emulation of method block's kernel
// code (test_block_emulation.cpp) draw the same pictures.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

#include "stereo.h"

namespace cs::test_scenes {

inline Image<uint8_t> random_gray(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  Image<uint8_t> img(w, h);
  for (auto& p : img.pixels) p = static_cast<uint8_t>(rng() & 255);
  return img;
}

// A textured pair: the right view is the left shifted by `shift`, with flat
// patches (ties) and repeated stripes (near rivals), plus noise.
inline void structured_pair(int w, int h, int shift, uint32_t seed, Image<uint8_t>* left, Image<uint8_t>* right) {
  std::mt19937 rng(seed);
  auto tex = [&](int u, int y) {
    if (u % 37 < 6) return 128;                     // flat: ties everywhere
    if (y % 23 < 4) return (u % 8) < 4 ? 60 : 190;  // repeated: near rivals
    return static_cast<int>((u * 73 + y * 151 + (u * y) % 97) & 255);
  };
  *left = Image<uint8_t>(w, h);
  *right = Image<uint8_t>(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      left->at(x, y) = static_cast<uint8_t>(tex(x + 1000, y));
      right->at(x, y) = static_cast<uint8_t>(std::min(255, tex(x + shift + 1000, y) + static_cast<int>(rng() % 3)));
    }
}

// A mask of blobs rather than salt: runs of foreground and background along
// each row.
inline Image<uint8_t> random_mask(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  Image<uint8_t> m(w, h);
  for (int y = 0; y < h; ++y) {
    int x = 0;
    bool fg = rng() % 2;
    while (x < w) {
      const int run = 1 + static_cast<int>(rng() % 17);
      for (int i = 0; i < run && x < w; ++i, ++x) m.at(x, y) = fg ? 255 : 0;
      fg = !fg;
    }
  }
  return m;
}

}  // namespace cs::test_scenes
