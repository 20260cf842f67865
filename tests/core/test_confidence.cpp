// Confidence (stages.h, "confidence (every method)"): the sweep costs behind
// it against brute force, the pipeline's map for both methods, and the
// encoder's and the CPU engine's GRAY8 confidence output.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <vector>

#include "engine.h"
#include "matcher_debug.h"
#include "pipeline_run.h"
#include "stages.h"
#include "synthetic.h"

using namespace cs;

namespace {

// Winner, best and rival of one pixel's candidate interval by brute force.
struct Brute {
  int winner = -1;
  int32_t best = kNoCost, rival = kNoCost;
};
Brute brute_costs(const Image<uint32_t>& a, const Image<uint32_t>& b, Reference ref, const Image<uint8_t>* moth,
                  int x, int y, int lo, int hi, int r, int best) {
  const int w = a.width;
  auto admissible = [&](int d) {
    const int m = ref == Reference::Left ? x - d : x + d;
    return d >= 0 && m >= 0 && m < w && (!moth || moth->at(m, y) != 0);
  };
  Brute out;
  for (int d = lo; d < hi; ++d)
    if (admissible(d)) {
      const int c = window_cost(a, b, ref, x, y, d, r, best);
      if (c < out.best) out.best = c, out.winner = d;
    }
  if (out.winner < 0) return out;
  for (int d = lo; d < hi; ++d)
    if (admissible(d) && std::abs(d - out.winner) >= 2)
      out.rival = std::min<int32_t>(out.rival, window_cost(a, b, ref, x, y, d, r, best));
  return out;
}

// Stripes of period 8 shifted by 12: every window fits at 4, 12 and 20 alike.
SyntheticPair striped_pair(int w, int h, int shift) {
  SyntheticPair s;
  s.left_rgba = Image<uint32_t>(w, h);
  s.right_rgba = Image<uint32_t>(w, h);
  auto stripe = [](int u, int y) { return static_cast<uint32_t>(((u % 8) < 4) ? 60 + (y % 3) * 20 : 180); };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint32_t a = stripe(x, y), b = stripe(x + shift, y);
      s.left_rgba.at(x, y) = a | a << 8 | a << 16 | 0xffu << 24;
      s.right_rgba.at(x, y) = b | b << 8 | b << 16 | 0xffu << 24;
    }
  return s;
}

Image<uint8_t> run_confidence(Matcher& m, const SyntheticPair& s, Image<uint16_t>* q4 = nullptr) {
  const int w = s.left_rgba.width, h = s.left_rgba.height;
  Image<uint16_t> d(w, h);
  // A pitched confidence output: rows 5 bytes longer, the padding untouched.
  const int pitch = w + 5;
  std::vector<uint8_t> buf(static_cast<size_t>(pitch) * h, 0xEE);
  Outputs o;
  o.disparity_q4 = d.view();
  o.confidence = {buf.data(), w, h, pitch};
  EXPECT_EQ(m.process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), o), "");
  Image<uint8_t> c(w, h);
  for (int y = 0; y < h; ++y) {
    std::memcpy(&c.at(0, y), &buf[static_cast<size_t>(y) * pitch], w);
    for (int i = w; i < pitch; ++i) EXPECT_EQ(buf[static_cast<size_t>(y) * pitch + i], 0xEE);
  }
  if (q4) *q4 = d;
  return c;
}

// Mean confidence of the valid pixels away from the left edge (where few
// candidates exist) and the block borders.
double mean_where_valid(const Image<uint8_t>& c, const Image<uint16_t>& q4) {
  double sum = 0;
  long n = 0;
  for (int y = 8; y < c.height - 8; ++y)
    for (int x = 40; x < c.width - 8; ++x)
      if (q4.at(x, y) != 0) sum += c.at(x, y), ++n;
  return n ? sum / n : 0.0;
}

}  // namespace

// Stages 6 and 7 leave each pixel's best and rival as brute force finds
// them over its own interval, masks and borders included, whatever the
// uniqueness ratio does to the map.
TEST(ProgressiveConfidence, SweepCostsEqualBruteForce) {
  const int w = 41, h = 19;
  std::mt19937 rng(5);
  Image<uint32_t> a(w, h), b(w, h);
  for (auto& v : a.pixels) v = rng() & 0xff;
  for (auto& v : b.pixels) v = rng() & 0xff;
  Image<uint8_t> mb(w, h);
  for (auto& v : mb.pixels) v = (rng() % 4) ? 255 : 0;
  Image<int16_t> coarser(w / 2, h / 2, -1);
  for (auto& v : coarser.pixels) v = (rng() % 3) ? static_cast<int16_t>(rng() % 9) : -1;
  const Range range{2, 18};
  for (Reference ref : {Reference::Left, Reference::Right})
    for (bool masks : {false, true})
      for (int ratio : {0, 30})
        for (int span : {0, 5}) {
        const Image<uint8_t>* mo = masks ? &mb : nullptr;
        Image<int16_t> full, refined;
        SweepCosts fc, rc;
        match_full_range(a, b, ref, nullptr, mo, range, 1, 2, full, ratio, &fc);
        refine_level(a, b, ref, nullptr, mo, coarser, range, 1, 2, 1, span, refined, ratio, &rc);
        ASSERT_EQ(fc.best.width, w);
        ASSERT_EQ(rc.rival.height, h);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            const Brute f = brute_costs(a, b, ref, mo, x, y, range.lo, range.hi, 1, 2);
            ASSERT_EQ(fc.best.at(x, y), f.best) << x << "," << y;
            ASSERT_EQ(fc.rival.at(x, y), f.rival) << x << "," << y;
            const int px = std::min(x / 2, w / 2 - 1), py = std::min(y / 2, h / 2 - 1);
            int lo = 0, hi = 0;
            if (coarser.at(px, py) >= 0) {
              lo = 2 * coarser.at(px, py) - 2;
              hi = 2 * coarser.at(px, py) + 3;
            } else {
              int mn = 1000, mx = -1;
              for (int v = std::max(py - 1, 0); v <= std::min(py + 1, h / 2 - 1); ++v)
                for (int u = std::max(px - 1, 0); u <= std::min(px + 1, w / 2 - 1); ++u)
                  if (coarser.at(u, v) >= 0) {
                    mn = std::min<int>(mn, coarser.at(u, v));
                    mx = std::max<int>(mx, coarser.at(u, v));
                  }
              if (mx >= 0) lo = 2 * mn - 2, hi = 2 * mx + 3;
              if (span > 0 && hi - lo > span) hi = lo + span;  // a hole's bounded span
            }
            const Brute r = brute_costs(a, b, ref, mo, x, y, std::max(lo, range.lo), std::min(hi, range.hi), 1, 2);
            ASSERT_EQ(rc.best.at(x, y), r.best) << "refined " << x << "," << y;
            ASSERT_EQ(rc.rival.at(x, y), r.rival) << "refined " << x << "," << y;
          }
        }
}

TEST(ProgressiveConfidence, MapRule) {
  SweepCosts c;
  c.best = Image<int32_t>(4, 1);
  c.rival = Image<int32_t>(4, 1);
  c.best.pixels = {0, 10, 5, 1};
  c.rival.pixels = {100, 20, kNoCost, 3};
  Image<int16_t> d(4, 1);
  d.pixels = {3, 4, 5, -1};
  Image<uint8_t> conf;
  confidence_map(c, d, conf);
  EXPECT_EQ(conf.pixels, (std::vector<uint8_t>{255, 127, 0, 0}));
}

// The pipeline's confidence is confidence_map of level 0's left costs and
// final map, for several pyramids, with and without the check; invalid
// pixels read 0; Outputs::confidence equals the debug map.
TEST(ProgressiveConfidence, PipelineMapFromLevelZeroCosts) {
  struct Case {
    SyntheticPair s;
    Params p;
  };
  std::vector<Case> cases;
  {
    Params p;
    p.max_disparity = 48;
    cases.push_back({make_step_pair(131, 77, 6, 30, 3), p});
  }
  {
    Params p;
    p.max_disparity = 40;
    p.levels = 1;  // a single level: the full range at level 0
    p.lr_check = false;
    cases.push_back({make_slanted_pair(97, 61, 8.0f, 0.1f, 4), p});
  }
  {
    Params p;
    p.min_disparity = 6;
    p.max_disparity = 64;
    p.uniqueness_ratio = 20;
    cases.push_back({make_step_pair(160, 90, 10, 40, 8), p});
  }
  for (const Case& c : cases) {
    Matcher m(c.p);
    Image<uint16_t> q4;
    const Image<uint8_t> conf = run_confidence(m, c.s, &q4);
    const Matcher::Debug& dbg = m.debug();
    Image<uint8_t> want;
    confidence_map(dbg.costs, dbg.levels[0].disparity_left, want);
    EXPECT_EQ(conf.pixels, want.pixels);
    EXPECT_EQ(dbg.confidence.pixels, want.pixels);
    long invalid = 0, nonzero = 0;
    for (size_t p = 0; p < conf.pixels.size(); ++p) {
      if (dbg.levels[0].disparity_left.pixels[p] < 0) {
        EXPECT_EQ(conf.pixels[p], 0);
        ++invalid;
      }
      nonzero += conf.pixels[p] != 0;
    }
    EXPECT_GT(nonzero, static_cast<long>(conf.pixels.size()) / 2);
  }
}

// Textured planes give distinct winners (a high confidence), a repeated
// pattern several equal fits (about none), for both methods.
TEST(Confidence, TexturedPlaneHighRepeatedPatternLow) {
  for (Method method : {Method::Progressive, Method::Block}) {
    SCOPED_TRACE(method == Method::Block ? "block" : "progressive");
    Params p;
    p.method = method;
    p.max_disparity = 32;
    p.lr_check = false;
    p.uniqueness_ratio = 0;
    Matcher plane(p), stripes(p);
    Image<uint16_t> q4p, q4s;
    const Image<uint8_t> cp = run_confidence(plane, make_plane_pair(128, 64, 9, 12), &q4p);
    const Image<uint8_t> cs = run_confidence(stripes, striped_pair(128, 64, 12), &q4s);
    EXPECT_GT(mean_where_valid(cp, q4p), 100.0);
    EXPECT_LT(mean_where_valid(cs, q4s), 10.0);
  }
}

// Method block: the map is block_confidence of the winners and the final map.
TEST(Confidence, BlockMapIsBlockConfidence) {
  Params p;
  p.method = Method::Block;
  p.max_disparity = 48;
  p.match_block_size = 7;
  Matcher m(p);
  const Image<uint8_t> conf = run_confidence(m, make_step_pair(120, 70, 5, 25, 2));
  Image<uint8_t> want;
  block_confidence(m.debug().block.winners, m.debug().levels[0].disparity_left, want);
  EXPECT_EQ(conf.pixels, want.pixels);
  EXPECT_EQ(m.debug().costs.best.pixels, m.debug().block.winners.best.pixels);
}

TEST(Confidence, EncoderCopiesTheMapOrWritesZeros) {
  EXPECT_EQ(output_bytes_per_pixel(OutputFormat::Confidence), 1);
  EXPECT_STREQ(output_format_name(OutputFormat::Confidence), "confidence");
  const int w = 7, h = 3, pitch = 10;
  Image<uint16_t> q4(w, h, 160);
  Image<uint8_t> conf(w, h);
  for (size_t i = 0; i < conf.pixels.size(); ++i) conf.pixels[i] = static_cast<uint8_t>(i * 11);
  EncodeParams ep;
  ep.format = OutputFormat::Confidence;
  std::vector<uint8_t> dst(pitch * h, 0xEE);
  const ImageView<const uint8_t> cv = static_cast<const Image<uint8_t>&>(conf).view();
  encode_output(static_cast<const Image<uint16_t>&>(q4).view(), nullptr, ep, dst.data(), pitch, &cv);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < pitch; ++x)
      EXPECT_EQ(dst[y * pitch + x], x < w ? conf.at(x, y) : 0xEE) << x << "," << y;
  encode_output(static_cast<const Image<uint16_t>&>(q4).view(), nullptr, ep, dst.data(), pitch);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) EXPECT_EQ(dst[y * pitch + x], 0);
}

// The CPU engine's GRAY8 confidence frame is the Matcher's map, both methods.
TEST(Confidence, CpuEngineOutputsTheMatchersMap) {
  const SyntheticPair s = make_step_pair(100, 60, 4, 20, 6);
  for (Method method : {Method::Progressive, Method::Block}) {
    Params p;
    p.method = method;
    p.max_disparity = 32;
    Matcher m(p);
    const Image<uint8_t> want = run_confidence(m, s);
    auto engine = make_cpu_engine(p);
    EncodeParams ep;
    ep.format = OutputFormat::Confidence;
    ep.max_disparity = 32;
    std::vector<uint8_t> out(104 * 60, 0xEE);
    OutputFrame of{out.data(), 104, 100, 60, Memory::Host};
    ASSERT_EQ(engine->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of), "");
    for (int y = 0; y < 60; ++y)
      for (int x = 0; x < 100; ++x) ASSERT_EQ(out[y * 104 + x], want.at(x, y)) << x << "," << y;
  }
}
