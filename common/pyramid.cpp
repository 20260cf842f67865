// Image pyramid: 2x2 rounded means, odd last row/column dropped.
#include "stages.h"

namespace cs {

void downsample(const Image<uint8_t>& fine, Image<uint8_t>& coarse) {
  coarse = Image<uint8_t>(fine.width / 2, fine.height / 2);
  for (int y = 0; y < coarse.height; ++y) {
    const uint8_t* a = &fine.pixels[static_cast<size_t>(2 * y) * fine.width];
    const uint8_t* b = a + fine.width;
    for (int x = 0; x < coarse.width; ++x)
      coarse.at(x, y) = average4(a[2 * x], a[2 * x + 1], b[2 * x], b[2 * x + 1]);
  }
}

void downsample(const Image<uint32_t>& fine, Image<uint32_t>& coarse) {
  coarse = Image<uint32_t>(fine.width / 2, fine.height / 2);
  for (int y = 0; y < coarse.height; ++y) {
    for (int x = 0; x < coarse.width; ++x) {
      const uint32_t p[4] = {fine.at(2 * x, 2 * y), fine.at(2 * x + 1, 2 * y), fine.at(2 * x, 2 * y + 1),
                             fine.at(2 * x + 1, 2 * y + 1)};
      uint32_t out = 0;
      for (int c = 0; c < 3; ++c) {
        const int s = 8 * c;
        out |= static_cast<uint32_t>(average4((p[0] >> s) & 255, (p[1] >> s) & 255, (p[2] >> s) & 255,
                                              (p[3] >> s) & 255))
               << s;
      }
      coarse.at(x, y) = out;
    }
  }
}

}  // namespace cs
