// Helpers of the CUDA tests: host <-> device images with padded pitches,
// seeded random images, exact image comparison with the first difference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_engine.h"
#include "cuda_util.h"
#include "encode.h"
#include "synthetic.h"
#include "engine.h"
#include "matcher_debug.h"
#include "stereo.h"
#include "test_scenes.h"

namespace cs::cuda::test {

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

template <typename T>
DeviceImage<T> upload(const Image<T>& img) {
  DeviceImage<T> d;
  EXPECT_EQ(d.allocate(img.width, img.height), cudaSuccess);
  EXPECT_EQ(cudaMemcpy2D(d.view().data, d.view().pitch, img.pixels.data(), img.width * sizeof(T),
                         img.width * sizeof(T), img.height, cudaMemcpyHostToDevice),
            cudaSuccess);
  return d;
}

// The three colour maps on the device, 768 bytes each in Colormap order
// (the engine's layout, enqueue_encode's luts).
struct DeviceLuts {
  uint8_t* data = nullptr;
  DeviceLuts() {
    EXPECT_EQ(cudaMalloc(&data, 3 * 768), cudaSuccess);
    for (Colormap c : {Colormap::Turbo, Colormap::Jet, Colormap::Grey})
      EXPECT_EQ(cudaMemcpy(data + 768 * static_cast<int>(c), colormap_lut(c), 768, cudaMemcpyHostToDevice),
                cudaSuccess);
  }
  ~DeviceLuts() { cudaFree(data); }
  DeviceLuts(const DeviceLuts&) = delete;
  DeviceLuts& operator=(const DeviceLuts&) = delete;
};

// Every output format encoded from the Q4 map (all but the confidence map).
constexpr OutputFormat kEncodedFormats[] = {OutputFormat::DisparityQ4, OutputFormat::DepthMm, OutputFormat::Gray8,
                                            OutputFormat::RGBA,        OutputFormat::BGRA,    OutputFormat::RGBx,
                                            OutputFormat::BGRx};

template <typename T>
DeviceImage<T> make_device(int w, int h, uint8_t poison = 0xA5) {
  DeviceImage<T> d;
  EXPECT_EQ(d.allocate(w, h), cudaSuccess);
  EXPECT_EQ(cudaMemset2D(d.view().data, d.view().pitch, poison, w * sizeof(T), h), cudaSuccess);
  // The memset runs on the legacy stream, which the engine's non-blocking
  // streams do not wait for: done before the image is handed out.
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return d;
}

template <typename T>
Image<T> download(const DeviceImage<T>& d) {
  Image<T> img(d.view().width, d.view().height);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy2D(img.pixels.data(), img.width * sizeof(T), d.view().data, d.view().pitch,
                         img.width * sizeof(T), img.height, cudaMemcpyDeviceToHost),
            cudaSuccess);
  return img;
}

template <typename T>
::testing::AssertionResult same_image(const Image<T>& expected, const Image<T>& actual) {
  if (expected.width != actual.width || expected.height != actual.height)
    return ::testing::AssertionFailure() << "size " << actual.width << "x" << actual.height << " != expected "
                                         << expected.width << "x" << expected.height;
  size_t diffs = 0;
  std::ostringstream first;
  for (int y = 0; y < expected.height; ++y)
    for (int x = 0; x < expected.width; ++x)
      if (!(expected.at(x, y) == actual.at(x, y))) {
        if (diffs == 0)
          first << "first at (" << x << ", " << y << "): expected " << +expected.at(x, y) << ", got "
                << +actual.at(x, y);
        ++diffs;
      }
  if (diffs == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diffs << " of " << expected.pixels.size() << " pixels differ; "
                                       << first.str();
}

// A rendered view's matching intensity (stage 1's grey, as both engines
// make it from RGBA).
inline Image<uint8_t> grey_of(const Image<uint32_t>& rgba) {
  Image<uint8_t> g;
  convert_to_gray(rgba_view(rgba), g);
  return g;
}

// One frame through the CPU reference and the CUDA engine, as the method
// tests compare them: the CPU's Q4, foreground and confidence outputs; the
// engine's Q4 through its encoder into a pitched host frame, and its debug
// intermediates. Fails the test (and returns false) when either refuses.
struct FrameBoth {
  Image<uint16_t> cpu_q4, gpu_q4;
  Image<uint8_t> cpu_foreground, cpu_confidence;
  Matcher::Debug gpu_debug;
};
inline ::testing::AssertionResult run_frame_both(Matcher& cpu, CudaEngine& gpu, const FrameView& left,
                                                 const FrameView& right, FrameBoth* out) {
  const int w = left.width, h = left.height;
  out->cpu_q4 = Image<uint16_t>(w, h);
  out->cpu_foreground = Image<uint8_t>(w, h);
  out->cpu_confidence = Image<uint8_t>(w, h);
  Outputs co;
  co.disparity_q4 = out->cpu_q4.view();
  co.foreground = out->cpu_foreground.view();
  co.confidence = out->cpu_confidence.view();
  std::string e = cpu.process(left, right, co);
  if (!e.empty()) return ::testing::AssertionFailure() << "CPU: " << e;
  std::vector<uint8_t> frame(static_cast<size_t>(w * 2 + 6) * h, 0xEE);
  OutputFrame of{frame.data(), w * 2 + 6, w, h, Memory::Host};
  EncodeParams ep;
  ep.format = OutputFormat::DisparityQ4;
  e = gpu.process(left, right, ep, of);
  if (!e.empty()) return ::testing::AssertionFailure() << "CUDA: " << e;
  out->gpu_q4 = Image<uint16_t>(w, h);
  for (int y = 0; y < h; ++y) std::memcpy(&out->gpu_q4.at(0, y), frame.data() + y * of.pitch, w * 2);
  out->gpu_debug = Matcher::Debug();
  e = gpu.download_debug(&out->gpu_debug);
  if (!e.empty()) return ::testing::AssertionFailure() << "debug: " << e;
  return ::testing::AssertionSuccess();
}

// Every output format (confidence included) of the CPU and the CUDA engine
// with parameters p over two frames of the background sequence (120 x 80,
// the model warm after the first with warmup_frames 1): the same bytes, and
// not all zero.
inline void expect_every_format_matches_cpu_engine(const Params& p) {
  const SyntheticPair f0 = make_sequence_frame(120, 80, 0, 10, 30, 30, 20, 4, 0, 5);
  const SyntheticPair f1 = make_sequence_frame(120, 80, 3, 10, 30, 30, 20, 4, 0, 5);
  const OutputFormat formats[] = {OutputFormat::DisparityQ4, OutputFormat::DepthMm, OutputFormat::Gray8,
                                  OutputFormat::RGBA,        OutputFormat::BGRA,    OutputFormat::RGBx,
                                  OutputFormat::BGRx,        OutputFormat::Confidence};
  for (OutputFormat fmt : formats) {
    SCOPED_TRACE(output_format_name(fmt));
    auto cpu = make_cpu_engine(p);
    std::string err;
    auto gpu = make_cuda_engine(p, -1, &err);
    ASSERT_TRUE(gpu) << err;
    EncodeParams ep;
    ep.format = fmt;
    ep.colormap = Colormap::Jet;
    ep.alpha_from_mask = true;
    ep.max_disparity = 64;
    ep.baseline_mm = 100.0;
    ep.focal_px = 700.0;
    const int row = 120 * output_bytes_per_pixel(fmt);
    std::vector<uint8_t> a(static_cast<size_t>(row + 8) * 80, 1), b(a.size(), 2);
    OutputFrame oa{a.data(), row + 8, 120, 80, Memory::Host}, ob{b.data(), row + 8, 120, 80, Memory::Host};
    for (const SyntheticPair* f : {&f0, &f1}) {
      ASSERT_EQ(cpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, oa), "");
      ASSERT_EQ(gpu->process(rgba_view(f->left_rgba), rgba_view(f->right_rgba), ep, ob), "");
    }
    size_t diffs = 0, nonzero = 0;
    for (int y = 0; y < 80; ++y)
      for (int x = 0; x < row; ++x) {
        diffs += a[y * (row + 8) + x] != b[y * (row + 8) + x];
        nonzero += b[y * (row + 8) + x] != 0;
      }
    EXPECT_EQ(diffs, 0u);
    EXPECT_GT(nonzero, 0u);
  }
}

using test_scenes::random_gray;

}  // namespace cs::cuda::test
