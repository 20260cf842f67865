// 5x5 census transform with edge-clamped reads.
#include "stages.h"

namespace cs {

void census_transform(const Image<uint8_t>& gray, Image<uint32_t>& census) {
  const int w = gray.width, h = gray.height;
  census = Image<uint32_t>(w, h);
  for (int y = 0; y < h; ++y) {
    int rows[5];
    for (int j = 0; j < 5; ++j) rows[j] = clampi(y + j - kCensusRadius, 0, h - 1);
    for (int x = 0; x < w; ++x) {
      const int centre = gray.at(x, y);
      uint32_t code = 0;
      int bit = 0;
      for (int j = 0; j < 5; ++j) {
        const uint8_t* row = &gray.pixels[static_cast<size_t>(rows[j]) * w];
        for (int i = 0; i < 5; ++i) {
          if (i == kCensusRadius && j == kCensusRadius) continue;
          const int v = row[clampi(x + i - kCensusRadius, 0, w - 1)];
          if (v < centre) code |= 1u << bit;
          ++bit;
        }
      }
      census.at(x, y) = code;
    }
  }
}

}  // namespace cs
