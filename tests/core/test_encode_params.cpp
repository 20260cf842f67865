// Output encodings, colour maps, parameter validation and the CPU engine.
#include <gtest/gtest.h>

#include <cstring>

#include "encode.h"
#include "engine.h"
#include "error_text.h"
#include "stages.h"
#include "synthetic.h"

using namespace cs;

TEST(Encode, Gray8AndDepthFollowTheConfiguredRange) {
  EXPECT_EQ(gray8_from_q4(0, 64), 0);
  EXPECT_EQ(gray8_from_q4(1, 64), 1);
  EXPECT_EQ(gray8_from_q4(64 * 16, 64), 255);
  EXPECT_EQ(gray8_from_q4(32 * 16, 64), 128);  // 1 + 127
  EXPECT_EQ(depth_mm_from_q4(0, 1000.0), 0);
  EXPECT_EQ(depth_mm_from_q4(16, 100.0 * 700.0 * 16), 70000 > 65535 ? 65535 : 70000);
  EXPECT_EQ(depth_mm_from_q4(32 * 16, 100.0 * 700.0 * 16), 2188);  // 70000 / 32 = 2187.5
}

TEST(Encode, EveryFormatWithPitchAndMask) {
  const int w = 4, h = 2;
  Image<uint16_t> q4(w, h);
  q4.at(0, 0) = 0;
  q4.at(1, 0) = 64 * 16;  // max -> colour index 255
  q4.at(2, 0) = 1;        // smallest valid -> index 1
  q4.at(3, 0) = 32 * 16;  // -> 128
  q4.at(0, 1) = 10 * 16;
  q4.at(1, 1) = 20 * 16;
  q4.at(2, 1) = 40 * 16;
  q4.at(3, 1) = 63 * 16;
  Image<uint8_t> mask(w, h, 255);
  mask.at(3, 0) = 0;
  const ImageView<const uint8_t> mv = static_cast<const Image<uint8_t>&>(mask).view();
  const ImageView<const uint16_t> qv = static_cast<const Image<uint16_t>&>(q4).view();
  EncodeParams ep;
  ep.max_disparity = 64;
  ep.baseline_mm = 100.0;
  ep.focal_px = 700.0;
  ep.invalid_rgb[0] = 1;
  ep.invalid_rgb[1] = 2;
  ep.invalid_rgb[2] = 3;
  for (OutputFormat f : {OutputFormat::DisparityQ4, OutputFormat::DepthMm, OutputFormat::Gray8, OutputFormat::RGBA,
                         OutputFormat::BGRA, OutputFormat::RGBx, OutputFormat::BGRx}) {
    ep.format = f;
    ep.alpha_from_mask = true;
    const int bpp = output_bytes_per_pixel(f);
    const int pitch = w * bpp + 3;
    std::vector<uint8_t> dst(pitch * h, 0xcd);
    encode_output(qv, &mv, ep, dst.data(), pitch);
    EXPECT_EQ(dst[w * bpp], 0xcd) << output_format_name(f);  // padding untouched
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const uint8_t* px = &dst[y * pitch + x * bpp];
        const int q = q4.at(x, y);
        const uint8_t g = gray8_from_q4(q, 64);
        if (f == OutputFormat::DisparityQ4) {
          uint16_t v;
          std::memcpy(&v, px, 2);
          EXPECT_EQ(v, q);
        } else if (f == OutputFormat::DepthMm) {
          uint16_t v;
          std::memcpy(&v, px, 2);
          EXPECT_EQ(v, depth_mm_from_q4(q, 100.0 * 700.0 * 16));
        } else if (f == OutputFormat::Gray8) {
          EXPECT_EQ(px[0], g);
        } else {
          const bool bgr = f == OutputFormat::BGRA || f == OutputFormat::BGRx;
          const uint8_t* c = g == 0 ? ep.invalid_rgb : colormap_lut(Colormap::Turbo) + 3 * g;
          EXPECT_EQ(px[bgr ? 2 : 0], c[0]) << output_format_name(f) << " " << x << "," << y;
          EXPECT_EQ(px[1], c[1]);
          EXPECT_EQ(px[bgr ? 0 : 2], c[2]);
          const bool alpha = f == OutputFormat::RGBA || f == OutputFormat::BGRA;
          EXPECT_EQ(px[3], (alpha && mask.at(x, y) == 0) ? 0 : 255) << output_format_name(f);
        }
      }
  }
}

TEST(Encode, ColormapEndpoints) {
  const uint8_t* grey = colormap_lut(Colormap::Grey);
  EXPECT_EQ(grey[0], 0);
  EXPECT_EQ(grey[255 * 3 + 2], 255);
  const uint8_t* jet = colormap_lut(Colormap::Jet);
  EXPECT_EQ(jet[0], 0);  // dark blue (0, 0, 128)
  EXPECT_EQ(jet[1], 0);
  EXPECT_EQ(jet[2], 128);
  EXPECT_EQ(jet[255 * 3 + 0], 128);  // dark red
  EXPECT_EQ(jet[255 * 3 + 2], 0);
  const uint8_t* turbo = colormap_lut(Colormap::Turbo);
  EXPECT_EQ(turbo[0], 48);  // Turbo starts dark blue-violet, ends dark red
  EXPECT_EQ(turbo[2], 59);
  EXPECT_EQ(turbo[255 * 3], 122);
  EXPECT_GT(turbo[128 * 3 + 1], 200);  // green in the middle
  EXPECT_EQ(colormap_lut(Colormap::Turbo), turbo);  // computed once
}

// Entries of Google's published 256-entry table (turbo_srgb_bytes, Anton
// Mikhailov 2019), copied from the gist by hand for this test.
TEST(Encode, TurboIsThePublishedTable) {
  const struct {
    int index;
    uint8_t rgb[3];
  } published[] = {{0, {48, 18, 59}},      {1, {50, 21, 67}},     {32, {70, 107, 227}},  {64, {40, 188, 235}},
                   {100, {63, 246, 138}}, {128, {164, 252, 60}}, {160, {238, 207, 58}}, {192, {251, 126, 33}},
                   {224, {208, 47, 5}},   {254, {126, 5, 2}},    {255, {122, 4, 3}}};
  const uint8_t* turbo = colormap_lut(Colormap::Turbo);
  for (const auto& e : published)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(turbo[3 * e.index + c], e.rgb[c]) << "entry " << e.index << " channel " << c;
}

TEST(ErrorText, DetailGoesApartFromTheMessage) {
  const std::string text = with_detail("the GPU reported an error: out of memory (cudaErrorMemoryAllocation)",
                                       "../cuda/cuda_engine.cu:812: cudaMalloc(&m.buf[i], n) failed");
  const ErrorParts p = split_error_text("backend=cuda was requested but " + text);
  EXPECT_EQ(p.message,
            "backend=cuda was requested but the GPU reported an error: out of memory (cudaErrorMemoryAllocation)");
  EXPECT_EQ(p.detail, "../cuda/cuda_engine.cu:812: cudaMalloc(&m.buf[i], n) failed");
  EXPECT_EQ(with_detail("plain", ""), "plain");
  // Two details, one in the middle of the text.
  const ErrorParts two = split_error_text(with_detail("a", "x.cu:1: f failed") + ", then " + with_detail("b", "y"));
  EXPECT_EQ(two.message, "a, then b");
  EXPECT_EQ(two.detail, "x.cu:1: f failed; y");
}

TEST(ErrorText, StraySourceLocationsLeaveTheMessage) {
  ErrorParts p = split_error_text("/src/cuda/matching.cu:120: launch failed");
  EXPECT_EQ(p.message, "launch failed");
  EXPECT_EQ(p.detail, "/src/cuda/matching.cu:120");
  p = split_error_text("at common/matcher.cpp:33:7: view too small");
  EXPECT_EQ(p.message, "at view too small");
  EXPECT_EQ(p.detail, "common/matcher.cpp:33:7");
  // Times, ratios and versions are not source locations.
  const std::string plain = "frame at 0:00:00.040000000 (learning-rate 1.5, ratio 16:9, version 1.22.0)";
  p = split_error_text(plain);
  EXPECT_EQ(p.message, plain);
  EXPECT_EQ(p.detail, "");
}

TEST(Params, DefaultsAreValid) {
  Params p;
  EXPECT_EQ(p.validate(), "");
  EXPECT_EQ(p.validate_for_size(640, 480), "");
}

TEST(Params, MessagesNameTheParameterAndTheValue) {
  auto msg = [](void (*edit)(Params&)) {
    Params p;
    edit(p);
    return p.validate();
  };
  EXPECT_EQ(msg([](Params& p) { p.min_disparity = -1; }), "min-disparity (-1) must not be negative");
  EXPECT_EQ(msg([](Params& p) { p.max_disparity = 0; }),
            "max-disparity (0) must be greater than min-disparity (0)");
  EXPECT_EQ(msg([](Params& p) { p.levels = 9; }), "levels (9) must be between 0 (automatic) and 8");
  EXPECT_EQ(msg([](Params& p) { p.learning_rate = 0; }), "learning-rate (0) must be greater than 0 and at most 1");
  EXPECT_EQ(msg([](Params& p) { p.learning_rate = 1.5f; }),
            "learning-rate (1.5) must be greater than 0 and at most 1");
  EXPECT_NE(msg([](Params& p) { p.foreground_threshold = -2; }).find("foreground-threshold (-2)"), std::string::npos);
  EXPECT_NE(msg([](Params& p) { p.warmup_frames = -1; }).find("warmup-frames (-1)"), std::string::npos);
  EXPECT_EQ(msg([](Params& p) { p.lr_tolerance = -2; }),
            "lr-tolerance (-2) must be -1 (the method's default) or between 0 and max-disparity");
  EXPECT_EQ(msg([](Params& p) { p.lr_tolerance = -1; }), "");
  EXPECT_NE(msg([](Params& p) { p.subwindow_radius = 9; }).find("subwindow-radius (9)"), std::string::npos);
  EXPECT_EQ(msg([](Params& p) { p.absorb_delay = 127; }), "absorb-delay (127) must be between 0 and 126");
  EXPECT_EQ(msg([](Params& p) { p.absorb_delay = -1; }), "absorb-delay (-1) must be between 0 and 126");
  EXPECT_NE(msg([](Params& p) { p.morph_radius = -1; }).find("morph-radius (-1)"), std::string::npos);
  EXPECT_NE(msg([](Params& p) { p.hole_search_radius = 99; }).find("hole-search-radius (99)"), std::string::npos);
  EXPECT_NE(msg([](Params& p) { p.min_sigma = 0; }).find("min-sigma (0)"), std::string::npos);
  Params p;
  p.max_disparity = 300;
  EXPECT_EQ(p.validate_for_size(256, 200), "max-disparity (300) must not exceed the view width (256)");
  EXPECT_NE(p.validate_for_size(8, 200).find("at least 16x16"), std::string::npos);
  p.max_disparity = 64;
  p.levels = 6;
  EXPECT_NE(p.validate_for_size(320, 240).find("levels (6)"), std::string::npos);
}

TEST(Engine, CpuEngineEncodesAndRejectsBadOutputs) {
  const SyntheticPair s = make_plane_pair(64, 32, 5, 2);
  Params p;
  p.max_disparity = 16;
  std::unique_ptr<Engine> e = make_cpu_engine(p);
  EXPECT_STREQ(e->backend_name(), "cpu");
  EncodeParams ep;
  ep.format = OutputFormat::Gray8;
  ep.max_disparity = 16;
  std::vector<uint8_t> out(64 * 32, 0);
  OutputFrame of{out.data(), 64, 64, 32, Memory::Host};
  ASSERT_EQ(e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of), "");
  EXPECT_EQ(out[16 * 64 + 32], gray8_from_q4(5 * 16, 16));
  EXPECT_EQ(e->stats().frame_index, 1u);
  OutputFrame dev = of;
  dev.memory = Memory::Device;
  EXPECT_NE(e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, dev).find("device memory"),
            std::string::npos);
  OutputFrame small = of;
  small.width = 10;
  EXPECT_NE(e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, small).find("10x32"), std::string::npos);
  Params bad = p;
  bad.learning_rate = 2;
  EXPECT_NE(e->set_params(bad).find("learning-rate"), std::string::npos);
}

// Depth needs the calibration: EncodeParams starts with neither baseline nor
// focal length, and the engine names what is missing instead of guessing.
TEST(Engine, DepthNeedsBaselineAndFocalLength) {
  const SyntheticPair s = make_plane_pair(64, 32, 5, 2);
  Params p;
  p.max_disparity = 16;
  p.subpixel = false;
  std::unique_ptr<Engine> e = make_cpu_engine(p);
  EncodeParams ep;
  ep.format = OutputFormat::DepthMm;
  ep.max_disparity = 16;
  EXPECT_EQ(ep.baseline_mm, 0.0);
  EXPECT_EQ(ep.focal_px, 0.0);
  std::vector<uint16_t> out(64 * 32, 7);
  OutputFrame of{reinterpret_cast<uint8_t*>(out.data()), 128, 64, 32, Memory::Host};
  const std::string neither = e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of);
  EXPECT_NE(neither.find("baseline"), std::string::npos) << neither;
  EXPECT_NE(neither.find("focal length"), std::string::npos) << neither;
  ep.focal_px = 500.0;
  const std::string no_baseline = e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of);
  EXPECT_NE(no_baseline.find("baseline"), std::string::npos) << no_baseline;
  EXPECT_EQ(no_baseline.find("focal"), std::string::npos) << no_baseline;
  ep.focal_px = 0.0;
  ep.baseline_mm = 120.0;
  const std::string no_focal = e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of);
  EXPECT_NE(no_focal.find("focal length"), std::string::npos) << no_focal;
  EXPECT_EQ(no_focal.find("baseline"), std::string::npos) << no_focal;
  EXPECT_EQ(out[16 * 64 + 32], 7);  // nothing written
  ep.focal_px = 500.0;
  ASSERT_EQ(e->process(rgba_view(s.left_rgba), rgba_view(s.right_rgba), ep, of), "");
  EXPECT_EQ(out[16 * 64 + 32], 12000);  // 120 mm * 500 px / 5 px
}
