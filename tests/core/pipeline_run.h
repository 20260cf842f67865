// What the core tests take from one Matcher::process() call on a synthetic
// pair: the Q4 disparity, the foreground mask and the error text.
#pragma once

#include <string>

#include "stereo.h"
#include "synthetic.h"

namespace cs::test {

struct Result {
  Image<uint16_t> q4;
  Image<uint8_t> fg;
  std::string error;
};

inline Result run(Matcher& m, const SyntheticPair& s) {
  Result r;
  r.q4 = Image<uint16_t>(s.left_rgba.width, s.left_rgba.height);
  r.fg = Image<uint8_t>(s.left_rgba.width, s.left_rgba.height);
  Outputs o;
  o.disparity_q4 = r.q4.view();
  o.foreground = r.fg.view();
  r.error = m.process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), o);
  return r;
}

}  // namespace cs::test
