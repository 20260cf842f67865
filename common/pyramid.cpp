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

}  // namespace cs
