// Helpers of the CUDA tests: host <-> device images with padded pitches,
// seeded random images, exact image comparison with the first difference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "cuda_util.h"
#include "encode.h"
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

using test_scenes::random_gray;

}  // namespace cs::cuda::test
