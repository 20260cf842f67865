// The moving-objects sequence (common/moving_objects.h): its truth against
// the pictures it draws, the fraction helper's constant area, determinism and
// the noise's statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "moving_objects.h"
#include "synthetic.h"

namespace {

using cs::Image;
using cs::MovingObject;
using cs::MovingObjectsFrame;
using cs::MovingObjectsSpec;

// A background whose every pixel says where it is: R = x & 255, G = y & 255,
// B = (x >> 8) | (y >> 8) << 4, so a texel of an object names its source.
Image<uint32_t> coordinate_picture(int w, int h) {
  Image<uint32_t> img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.at(x, y) = static_cast<uint32_t>(x & 255) | static_cast<uint32_t>(y & 255) << 8 |
                     static_cast<uint32_t>((x >> 8) | (y >> 8) << 4) << 16 | 0xff000000u;
  return img;
}
int source_x(uint32_t p) { return static_cast<int>((p & 255) | ((p >> 16) & 15) << 8); }
int source_y(uint32_t p) { return static_cast<int>(((p >> 8) & 255) | ((p >> 20) & 15) << 8); }

double fraction(const Image<uint8_t>& mask) {
  size_t n = 0;
  for (uint8_t m : mask.pixels) n += m != 0;
  return static_cast<double>(n) / mask.pixels.size();
}

MovingObjectsFrame render(const cs::SyntheticPair& bg, const MovingObjectsSpec& spec, int frame) {
  MovingObjectsFrame f;
  const std::string err = cs::render_moving_objects(bg.left_rgba, bg.right_rgba, spec, frame, &f);
  EXPECT_EQ(err, "");
  return f;
}

TEST(MovingObjects, TruthMatchesWhatIsDrawn) {
  // A textured plane at disparity 12 behind two objects at 30 (the second
  // over the first where they meet), no noise.
  const int W = 200, H = 120, d = 30;
  const cs::SyntheticPair bg = cs::make_plane_pair(W, H, 12, 3);
  MovingObjectsSpec spec;
  spec.noise_sigma = 0;
  spec.warmup_frames = 2;
  spec.objects = {{50, 40, 10, d, 40, 3.0}, {30, 30, 35, d, 70, -2.0}};
  for (int frame : {0, 1}) {  // warm-up: the background alone
    const MovingObjectsFrame f = render(bg, spec, frame);
    EXPECT_EQ(f.left_rgba.pixels, bg.left_rgba.pixels);
    EXPECT_EQ(f.right_rgba.pixels, bg.right_rgba.pixels);
    EXPECT_EQ(fraction(f.mask_left), 0.0);
    EXPECT_EQ(fraction(f.mask_right), 0.0);
  }
  for (int frame = 2; frame < 12; ++frame) {
    const MovingObjectsFrame f = render(bg, spec, frame);
    long masked = 0, changed = 0;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        for (int view = 0; view < 2; ++view) {
          const auto& pic = view ? f.right_rgba : f.left_rgba;
          const auto& mask = view ? f.mask_right : f.mask_left;
          const auto& background = view ? bg.right_rgba : bg.left_rgba;
          if (!mask.at(x, y)) {
            ASSERT_EQ(pic.at(x, y), background.at(x, y)) << "view " << view << " at " << x << "," << y;
          } else {
            ++masked;
            changed += pic.at(x, y) != background.at(x, y);
          }
        }
        ASSERT_EQ(f.disparity_left.at(x, y), f.mask_left.at(x, y) ? d : -1);
        // The right view is the left one shifted by -d.
        if (x + d < W) {
          ASSERT_EQ(f.mask_right.at(x, y), f.mask_left.at(x + d, y)) << x << "," << y;
        }
        if (x + d < W && f.mask_left.at(x + d, y)) {
          ASSERT_EQ(f.right_rgba.at(x, y), f.left_rgba.at(x + d, y));
        }
      }
    // Both views whole (the objects stay inside both), their overlap counted once.
    long expected = 0;
    const int t = frame - 2, x0 = 40 + 3 * t, x1 = 70 - 2 * t;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        expected += (y >= 10 && y < 50 && x >= x0 && x < x0 + 50) || (y >= 35 && y < 65 && x >= x1 && x < x1 + 30);
    EXPECT_EQ(masked, 2 * expected);
    EXPECT_GT(changed, masked * 95 / 100);  // an object's texel rarely equals the one behind it
  }
}

TEST(MovingObjects, TextureIsAFlippedPatchOfTheLeftView) {
  const int W = 300, H = 200;
  const Image<uint32_t> left = coordinate_picture(W, H);
  MovingObjectsSpec spec;
  spec.objects = {{64, 48, 0, 5, 0, 0.0}, {70, 50, 0, 5, 0, 0.0}};
  for (int i = 0; i < 2; ++i) {
    const Image<uint32_t> t = cs::object_texture(left, spec, i);
    ASSERT_EQ(t.width, spec.objects[i].width);
    const int sx0 = source_x(t.at(0, 0)), sy0 = source_y(t.at(0, 0));
    EXPECT_GE(sx0 - (t.width - 1), 0);
    EXPECT_GE(sy0 - (t.height - 1), 0);
    for (int v = 0; v < t.height; ++v)
      for (int u = 0; u < t.width; ++u) {
        ASSERT_EQ(source_x(t.at(u, v)), sx0 - u);
        ASSERT_EQ(source_y(t.at(u, v)), sy0 - v);
      }
  }
  // The two objects take different places (the seed chooses them).
  EXPECT_NE(cs::object_texture(left, spec, 0).at(0, 0), cs::object_texture(left, spec, 1).at(0, 0));
  // Larger than the picture: mirrored across its edges.
  spec.objects = {{W + 20, H, 0, 20, 0, 0.0}};
  const Image<uint32_t> big = cs::object_texture(left, spec, 0);
  for (int u = 0; u < W + 20; ++u) {
    const int i = W + 19 - u;  // flipped
    ASSERT_EQ(source_x(big.at(u, 0)), i < W ? i : 2 * W - 1 - i);
    ASSERT_EQ(source_y(big.at(u, 0)), H - 1);
  }
}

TEST(MovingObjects, ObjectsAtTheEdgesAreClipped) {
  const int W = 160, H = 100, d = 12, w = 40, h = 30;
  const Image<uint32_t> left = coordinate_picture(W, H), right = coordinate_picture(W, H);
  MovingObjectsSpec spec;
  spec.warmup_frames = 0;
  spec.noise_sigma = 0;
  // Half in at the left edge; past the right edge in the left view but still
  // seen in the right one; cut by the top row.
  spec.objects = {{w, h, 10, d, -w / 2, 0.0}, {w, h, 60, d, W - 5, 0.0}, {w, h, -10, d, 70, 0.0}};
  MovingObjectsFrame f;
  ASSERT_EQ(cs::render_moving_objects(left, right, spec, 0, &f), "");
  const Image<uint32_t> t0 = cs::object_texture(left, spec, 0), t1 = cs::object_texture(left, spec, 1);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const bool rows0 = y >= 10 && y < 10 + h, rows1 = y >= 60 && y < 60 + h, rows2 = y < h - 10;
      const bool l0 = rows0 && x < w / 2, l1 = rows1 && x >= W - 5, l2 = rows2 && x >= 70 && x < 70 + w;
      const bool r0 = rows0 && x < w / 2 - d, r1 = rows1 && x >= W - 5 - d && x < W - 5 - d + w,
                 r2 = rows2 && x >= 70 - d && x < 70 - d + w;
      ASSERT_EQ(f.mask_left.at(x, y) != 0, l0 || l1 || l2) << x << "," << y;
      ASSERT_EQ(f.mask_right.at(x, y) != 0, r0 || r1 || r2) << x << "," << y;
      // The part seen is the texture's own part: its right half for the
      // object half in, its left end for the one leaving.
      if (l0) {
        ASSERT_EQ(f.left_rgba.at(x, y), t0.at(x + w / 2, y - 10));
      }
      if (r0) {
        ASSERT_EQ(f.right_rgba.at(x, y), t0.at(x + w / 2 + d, y - 10));
      }
      if (l1) {
        ASSERT_EQ(f.left_rgba.at(x, y), t1.at(x - (W - 5), y - 60));
      }
      if (r1) {
        ASSERT_EQ(f.right_rgba.at(x, y), t1.at(x - (W - 5 - d), y - 60));
      }
    }
}

TEST(MovingObjects, SameSeedSameBytesOtherSeedOtherNoise) {
  const cs::SyntheticPair bg = cs::make_plane_pair(96, 64, 8, 11);
  MovingObjectsSpec spec = cs::crossing_objects_spec(96, 64, 2, 16, 3, 42);
  const MovingObjectsFrame a = render(bg, spec, 6), b = render(bg, spec, 6);
  EXPECT_EQ(a.left_rgba.pixels, b.left_rgba.pixels);
  EXPECT_EQ(a.right_rgba.pixels, b.right_rgba.pixels);
  EXPECT_EQ(a.mask_left.pixels, b.mask_left.pixels);
  // A frame does not depend on the frames rendered before it.
  render(bg, spec, 2);
  EXPECT_EQ(render(bg, spec, 6).left_rgba.pixels, a.left_rgba.pixels);
  spec.seed = 43;
  const MovingObjectsFrame c = render(bg, spec, 6);
  EXPECT_NE(c.left_rgba.pixels, a.left_rgba.pixels);
  EXPECT_EQ(c.mask_left.pixels, a.mask_left.pixels);  // the motion is the spec's, not the seed's
}

// FNV-1a over the frame's pictures and truth.
uint64_t digest(const MovingObjectsFrame& f) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  };
  add(f.left_rgba.pixels.data(), f.left_rgba.pixels.size() * 4);
  add(f.right_rgba.pixels.data(), f.right_rgba.pixels.size() * 4);
  add(f.mask_left.pixels.data(), f.mask_left.pixels.size());
  add(f.mask_right.pixels.data(), f.mask_right.pixels.size());
  add(f.disparity_left.pixels.data(), f.disparity_left.pixels.size() * 2);
  return h;
}

TEST(MovingObjects, FramesAreTheSameOnEveryMachine) {
  // A fixed frame's bytes, recorded once: a change here changes every
  // benchmark sequence (a new generator, table or motion rule), so it must
  // be deliberate.
  // The background is integer-made too (make_plane_pair's texture is
  // floating point).
  const Image<uint32_t> bg = coordinate_picture(64, 48);
  const MovingObjectsSpec spec = cs::crossing_objects_spec(64, 48, 2, 10, 2, 2024, 3.5);
  MovingObjectsFrame f;
  ASSERT_EQ(cs::render_moving_objects(bg, bg, spec, 9, &f), "");
  EXPECT_EQ(digest(f), 8865134831739811971ull);
}

TEST(MovingObjects, NoiseIsRoundedGaussianIndependentPerViewAndFrame) {
  const int W = 256, H = 256;
  const Image<uint32_t> grey(W, H, 128u | 128u << 8 | 128u << 16 | 0xff000000u);
  MovingObjectsSpec spec;  // sigma 2 by default
  ASSERT_EQ(spec.noise_sigma, 2.0);
  MovingObjectsFrame f0, f1;
  ASSERT_EQ(cs::render_moving_objects(grey, grey, spec, 0, &f0), "");
  ASSERT_EQ(cs::render_moving_objects(grey, grey, spec, 1, &f1), "");
  auto channel = [](uint32_t p, int c) { return static_cast<int>((p >> (8 * c)) & 255) - 128; };
  double sum = 0, sum2 = 0, cross_views = 0, cross_frames = 0, cross_channels = 0;
  long n = 0;
  for (size_t i = 0; i < f0.left_rgba.pixels.size(); ++i) {
    ASSERT_EQ(f0.left_rgba.pixels[i] >> 24, 255u);
    for (int c = 0; c < 3; ++c) {
      const int a = channel(f0.left_rgba.pixels[i], c);
      sum += a;
      sum2 += a * a;
      cross_views += a * channel(f0.right_rgba.pixels[i], c);
      cross_frames += a * channel(f1.left_rgba.pixels[i], c);
      cross_channels += a * channel(f0.left_rgba.pixels[i], (c + 1) % 3);
      ++n;
    }
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Rounding adds 1/12 to the variance: sigma 2 -> 2.0207.
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(var), std::sqrt(4.0 + 1.0 / 12), 0.02);
  EXPECT_NEAR(cross_views / n / var, 0.0, 0.02);
  EXPECT_NEAR(cross_frames / n / var, 0.0, 0.02);
  EXPECT_NEAR(cross_channels / n / var, 0.0, 0.02);
  // Clamped at the ends of the range.
  const Image<uint32_t> black(64, 64, 0xff000000u);
  ASSERT_EQ(cs::render_moving_objects(black, black, spec, 0, &f0), "");
  for (uint32_t p : f0.left_rgba.pixels)
    for (int c = 0; c < 3; ++c) ASSERT_LE((p >> (8 * c)) & 255, 17u);  // the table ends at 8 sigma + 1
  // sigma 0: the background as is.
  spec.noise_sigma = 0;
  ASSERT_EQ(cs::render_moving_objects(grey, grey, spec, 0, &f0), "");
  EXPECT_EQ(f0.left_rgba.pixels, grey.pixels);
}

TEST(MovingObjects, FractionHelperCoversTheAskedAreaOnEveryFrame) {
  const cs::SyntheticPair small = cs::make_plane_pair(641, 479, 10, 5);
  const cs::SyntheticPair hd = cs::make_plane_pair(1920, 1080, 10, 5);
  for (const cs::SyntheticPair* bg : {&small, &hd}) {
    const int W = bg->left_rgba.width, H = bg->left_rgba.height, d = W / 10;
    const int frames = W < 1000 ? 40 : 10;
    for (double f : {0.0, 0.01, 0.05, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0}) {
      MovingObjectsSpec spec = cs::fraction_objects_spec(W, H, f, d, 2, frames, 9);
      spec.noise_sigma = 0;  // the truth is what is checked; noise costs time
      if (f == 0) {
        EXPECT_TRUE(spec.objects.empty());
      }
      if (f == 1) {
        EXPECT_EQ(spec.objects.size(), 1u);
      }
      Image<uint8_t> first;
      bool moved = false;
      for (int t = 0; t < frames; ++t) {
        const MovingObjectsFrame fr = render(*bg, spec, spec.warmup_frames + t);
        ASSERT_NEAR(fraction(fr.mask_left), f, 0.01) << W << "x" << H << " f=" << f << " frame " << t;
        // The right view keeps its area where the objects fit beside their disparity.
        if (f <= 0.75 || f == 1) {
          ASSERT_NEAR(fraction(fr.mask_right), f, 0.01) << "f=" << f << " frame " << t;
        }
        if (t == 0) first = fr.mask_left;
        moved = moved || fr.mask_left.pixels != first.pixels;
      }
      EXPECT_EQ(moved, f > 0 && f < 1) << "f=" << f;
      if (f == 1) {
        // The whole frame's texture moves under the views.
        const MovingObjectsFrame a = render(*bg, spec, spec.warmup_frames), b = render(*bg, spec, spec.warmup_frames + 1);
        long same = 0;
        for (size_t i = 0; i < a.left_rgba.pixels.size(); ++i) same += a.left_rgba.pixels[i] == b.left_rgba.pixels[i];
        EXPECT_LT(same, static_cast<long>(a.left_rgba.pixels.size() / 20)) << W << "x" << H;
      }
    }
  }
}

TEST(MovingObjects, BouncingStaysInsideAndReachesBothEnds) {
  MovingObject o;
  o.bounce = true;
  o.bounce_min = 7;
  o.bounce_max = 100;
  o.start_x = 50;
  o.speed = -3.25;
  int lo = 1 << 30, hi = -(1 << 30);
  for (int t = 0; t < 200; ++t) {
    const int x = cs::object_left_edge(o, t);
    ASSERT_GE(x, 7);
    ASSERT_LE(x, 100);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    if (t > 0) {
      ASSERT_LE(std::abs(x - cs::object_left_edge(o, t - 1)), 4);
    }
  }
  EXPECT_LE(lo, 8);
  EXPECT_GE(hi, 99);
  o.bounce = false;
  EXPECT_EQ(cs::object_left_edge(o, 4), 37);  // 50 - 13
}

TEST(MovingObjects, CrossingObjectsEnterFromTheLeftAndLeave) {
  const int W = 160, H = 90, d = 24;
  const cs::SyntheticPair bg = cs::make_plane_pair(W, H, 4, 1);
  const MovingObjectsSpec spec = cs::crossing_objects_spec(W, H, 3, d, 1, 8, 0.0, 5);
  ASSERT_EQ(spec.objects.size(), 3u);
  // The first moving frame shows the first object's right end at the left edge.
  const MovingObjectsFrame first = render(bg, spec, 1);
  const MovingObject& o = spec.objects[0];
  EXPECT_EQ(first.mask_left.at(0, o.top), 255);
  EXPECT_EQ(first.mask_left.at(o.width, o.top), 0);
  bool each_seen_whole[3] = {false, false, false};
  for (int t = 0; t < spec.moving_frames; ++t) {
    const MovingObjectsFrame f = render(bg, spec, spec.warmup_frames + t);
    for (int i = 0; i < 3; ++i) {
      const int x = cs::object_left_edge(spec.objects[i], t);
      each_seen_whole[i] = each_seen_whole[i] || (x >= d && x + spec.objects[i].width <= W);
    }
    // The tail: every object has left both views.
    if (t >= spec.moving_frames - 5) {
      EXPECT_EQ(fraction(f.mask_left), 0.0) << t;
      EXPECT_EQ(fraction(f.mask_right), 0.0) << t;
    }
  }
  EXPECT_TRUE(each_seen_whole[0] && each_seen_whole[1] && each_seen_whole[2]);
  // Not yet gone one frame before the tail (the sequence is no longer than needed).
  const MovingObjectsFrame before = render(bg, spec, spec.warmup_frames + spec.moving_frames - 7);
  EXPECT_GT(fraction(before.mask_right), 0.0);
}

TEST(MovingObjects, BadInputIsRefused) {
  const Image<uint32_t> a(32, 32), b(31, 32);
  MovingObjectsSpec spec;
  MovingObjectsFrame f;
  EXPECT_NE(cs::render_moving_objects(a, b, spec, 0, &f), "");
  EXPECT_NE(cs::render_moving_objects(a, a, spec, -1, &f), "");
  spec.objects = {{0, 4, 0, 1, 0, 1.0}};
  EXPECT_NE(cs::render_moving_objects(a, a, spec, 0, &f), "");
  spec.objects = {{4, 4, 0, -1, 0, 1.0}};
  EXPECT_NE(cs::render_moving_objects(a, a, spec, 0, &f), "");
  spec.objects.clear();
  spec.noise_sigma = -1;
  EXPECT_NE(cs::render_moving_objects(a, a, spec, 0, &f), "");
}

}  // namespace
