// Each CUDA stage against its CPU specification (common/stages.h): random
// and synthetic inputs, odd sizes, pitched device images; integer outputs
// must be identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "background.h"
#include "census.h"
#include "convert.h"
#include "cross_check.h"
#include "encode_output.h"
#include "finish.h"
#include "frame_checks.h"
#include "gpu_test_util.h"
#include "foreground_tiles.h"
#include "graph_condition.h"
#include "matching.h"
#include "pyramid.h"
#include "stages.h"
#include "synthetic.h"

namespace cs::cuda::test {
namespace {

// "1,4,7" -> {1, 4, 7}; null or empty -> {} (every case).
std::vector<int> case_list(const char* text) {
  std::vector<int> out;
  std::stringstream in(text ? text : "");
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(std::atoi(item.c_str()));
  return out;
}

// A disparity map of w x h random values in [-1, values - 1) (-1: invalid).
Image<int16_t> random_disparities(int w, int h, int values, std::mt19937& rng) {
  Image<int16_t> m(w, h);
  for (auto& p : m.pixels) p = static_cast<int16_t>(static_cast<int>(rng() % values) - 1);
  return m;
}

// A random host frame with padded rows, and a device copy with other padding.
struct TestFrame {
  std::vector<uint8_t> planes[3];
  FrameView host;
  DeviceImage<uint8_t> dev[3];
  FrameView device;
};

// The finish (enqueue_finish) on the device into a fresh Q4 image (or, with
// encode.dst set, into that target alone: q4 stays empty) and fresh
// counters: what it wrote, downloaded.
struct DeviceFinish {
  Image<uint16_t> q4;
  FrameCounters counters{};
};
DeviceFinish finish_on_device(ImageView<const int16_t> disparity, ImageView<const int8_t> subpixel_offset,
                              ImageView<const int16_t> right = {}, int tolerance = 0,
                              const FinishConfidence& confidence = {}, ImageView<const uint8_t> mask = {},
                              const EncodeTarget& encode = {}, const unsigned long long* mask_pixels = nullptr) {
  auto q4 = make_device<uint16_t>(disparity.width, disparity.height);
  FrameCounters* counters = nullptr;
  DeviceFinish out;
  EXPECT_EQ(cudaMalloc(&counters, sizeof(FrameCounters)), cudaSuccess);
  EXPECT_EQ(cudaMemset(counters, 0, sizeof(FrameCounters)), cudaSuccess);
  EXPECT_EQ(enqueue_finish(disparity, subpixel_offset, mask, encode.dst ? ImageView<uint16_t>{} : q4.view(), counters,
                           nullptr, right, tolerance, confidence, encode, {}, mask_pixels),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpy(&out.counters, counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(counters);
  if (!encode.dst) out.q4 = download(q4);
  return out;
}

void make_frame(PixelFormat f, int w, int h, uint32_t seed, TestFrame* t) {
  std::mt19937 rng(seed);
  t->host = FrameView{};
  t->host.format = f;
  t->host.width = w;
  t->host.height = h;
  t->device = t->host;
  t->device.memory = Memory::Device;
  const PlaneShape shape = plane_shape(t->host);
  for (int i = 0; i < shape.count; ++i) {
    const int row_bytes = static_cast<int>(shape.row_bytes[i]), rows = shape.rows[i];
    const int pitch = row_bytes + 7;  // odd padding: a pitched view
    t->planes[i].resize(static_cast<size_t>(pitch) * rows);
    for (auto& b : t->planes[i]) b = static_cast<uint8_t>(rng());
    t->host.plane[i] = t->planes[i].data();
    t->host.pitch[i] = pitch;
    ASSERT_CUDA(t->dev[i].allocate(row_bytes, rows));
    ASSERT_CUDA(cudaMemcpy2D(t->dev[i].view().data, t->dev[i].view().pitch, t->planes[i].data(), pitch, row_bytes,
                             rows, cudaMemcpyHostToDevice));
    t->device.plane[i] = t->dev[i].view().data;
    t->device.pitch[i] = t->dev[i].view().pitch;
  }
}

// The background model of both views on the device (background.h
// ModelViews) and the frame count it reads.
struct DeviceModel {
  DeviceImage<BackgroundPixel> model[2], cells[2];
  DeviceImage<uint32_t> raw[2];
  DeviceImage<uint8_t> cell_fg[2], settled[2], work[2], raw_any[2];
  int* frames_seen = nullptr;
  ModelInput* input = nullptr;
  unsigned* pixel_tests = nullptr;
  ModelViews views;
  DeviceModel(int w, int h, const BackgroundParams& bp) {
    EXPECT_EQ(cudaMalloc(&frames_seen, sizeof(int)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&input, sizeof(ModelInput)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&pixel_tests, 2 * sizeof(unsigned)), cudaSuccess);
    const int cw = (w + kBackgroundCell - 1) / kBackgroundCell, ch = (h + kBackgroundCell - 1) / kBackgroundCell;
    for (int v = 0; v < 2; ++v) {
      model[v] = make_device<BackgroundPixel>(w, h);
      raw[v] = make_device<uint32_t>((w + 31) / 32, h);
      cells[v] = make_device<BackgroundPixel>(cw, ch);
      cell_fg[v] = make_device<uint8_t>(cw, ch, 0xAB);
      settled[v] = make_device<uint8_t>(cw, ch, 0);
      work[v] = make_device<uint8_t>(model_blocks_x(w), model_blocks_y(h), 0x5A);  // any value (the warm-up)
      raw_any[v] = make_device<uint8_t>(model_blocks_x(w), model_blocks_y(h), 0x5A);
      views.model[v] = model[v].view();
      views.raw[v] = raw[v].view();
      views.cells[v] = cells[v].view();
      views.cell_fg[v] = cell_fg[v].view();
      views.settled[v] = settled[v].view();
      views.work[v] = work[v].view();
      views.raw_any[v] = raw_any[v].view();
    }
    views.input = input;
    views.pixel_tests = pixel_tests;
    views.frames_seen = frames_seen;
    views.params = bp;
    clear_tests();
  }
  ~DeviceModel() {
    cudaFree(frames_seen);
    cudaFree(input);
    cudaFree(pixel_tests);
  }
  void set_frames_seen(int n) { EXPECT_EQ(cudaMemcpy(frames_seen, &n, sizeof(int), cudaMemcpyHostToDevice), cudaSuccess); }
  void clear_tests() { EXPECT_EQ(cudaMemset(pixel_tests, 0, 2 * sizeof(unsigned)), cudaSuccess); }
  unsigned tests(int view) const {
    unsigned t[2] = {0, 0};
    EXPECT_EQ(cudaMemcpy(t, pixel_tests, sizeof(t), cudaMemcpyDeviceToHost), cudaSuccess);
    return t[view];
  }
};

// An RGBA image as a frame in device memory: `pixels` is its upload.
FrameView device_rgba_view(const Image<uint32_t>& rgba, const DeviceImage<uint32_t>& pixels) {
  FrameView in = rgba_view(rgba);
  in.memory = Memory::Device;
  in.plane[0] = reinterpret_cast<const uint8_t*>(pixels.view().data);
  in.pitch[0] = pixels.view().pitch;
  return in;
}

// The raw test as the conversion packs it: a word for 32 pixels of a row,
// bit b of word j for pixel (32 j + b, y).
Image<uint32_t> raw_words(const Image<uint8_t>& raw) {
  Image<uint32_t> words((raw.width + 31) / 32, raw.height);
  for (int y = 0; y < raw.height; ++y)
    for (int x = 0; x < raw.width; ++x)
      if (raw.at(x, y)) words.at(x / 32, y) |= 1u << (x & 31);
  return words;
}

// The device model of view v against the CPU reference's.
::testing::AssertionResult same_model(const BackgroundModel& want, const DeviceImage<BackgroundPixel>& got) {
  Image<BackgroundPixel> expected(want.width, want.height);
  expected.pixels = want.pixels;
  return same_image(expected, download(got));
}

// The device cells' model of a view against the CPU reference's.
::testing::AssertionResult same_cells(const BackgroundModel& want, const DeviceImage<BackgroundPixel>& got) {
  Image<BackgroundPixel> expected((want.width + kBackgroundCell - 1) / kBackgroundCell,
                                  (want.height + kBackgroundCell - 1) / kBackgroundCell);
  expected.pixels = want.cells;
  return same_image(expected, download(got));
}

// A random frame and the CPU reference's conversion of it.
struct ConvertCase {
  TestFrame frame;
  Image<uint8_t> gray;
  Image<uint32_t> rgb;
};

void make_convert_case(PixelFormat f, int w, int h, uint32_t seed, ConvertCase* c) {
  make_frame(f, w, h, seed, &c->frame);
  convert_to_gray(c->frame.host, c->gray);
  convert_to_rgb(c->frame.host, c->rgb);
}

// The model's first frame (frames_seen 0) starts each pixel's means at its
// colour: the conversion's colour of every format, through the model.
::testing::AssertionResult model_of_colour(const Image<uint32_t>& rgb, const DeviceImage<BackgroundPixel>& got,
                                           const DeviceImage<uint32_t>& raw, int view) {
  BackgroundModel want;
  Image<uint8_t> want_raw;
  background_view(want, rgb, background_params(Params()), 0, view, want_raw);
  ::testing::AssertionResult model = same_model(want, got);
  if (!model) return model << " (model)";
  return same_image(raw_words(want_raw), download(raw)) << " (raw test)";
}

TEST(CudaStages, ConvertEveryFormat) {
  const PixelFormat formats[] = {PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::RGBx, PixelFormat::BGRx,
                                 PixelFormat::xRGB, PixelFormat::xBGR, PixelFormat::ARGB, PixelFormat::ABGR,
                                 PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::GRAY8, PixelFormat::I420,
                                 PixelFormat::NV12, PixelFormat::YUY2, PixelFormat::UYVY};
  for (PixelFormat f : formats)
    for (auto size : {std::pair<int, int>{37, 23}, std::pair<int, int>{64, 16}, std::pair<int, int>{262, 45}}) {
      SCOPED_TRACE(pixel_format_name(f));
      ConvertCase first;
      make_convert_case(f, size.first, size.second, 11 + static_cast<int>(f), &first);
      const TestFrame& t = first.frame;
      const Image<uint8_t>& gray = first.gray;
      auto dgray = make_device<uint8_t>(size.first, size.second);
      DeviceModel model(size.first, size.second, background_params(Params()));
      model.set_frames_seen(0);
      ASSERT_CUDA(enqueue_convert(t.device, dgray.view(), &model.views, nullptr));
      EXPECT_TRUE(same_image(gray, download(dgray)));
      EXPECT_TRUE(model_of_colour(first.rgb, model.model[0], model.raw[0], 0));
      auto gray_only = make_device<uint8_t>(size.first, size.second);
      ASSERT_CUDA(enqueue_convert(t.device, gray_only.view(), nullptr, nullptr));
      EXPECT_TRUE(same_image(gray, download(gray_only))) << "without the model";

      // A pair in one launch: a second frame on the left, the first on the
      // right with its first plane at an odd address (byte loads).
      ConvertCase second;
      make_convert_case(f, size.first, size.second, 77 + static_cast<int>(f), &second);
      const auto& plane0 = t.dev[0].view();
      const int plane0_rows = plane0.height;
      uint8_t* odd = nullptr;
      ASSERT_CUDA(cudaMalloc(&odd, plane0.pitch * plane0_rows + 1));
      ASSERT_CUDA(cudaMemcpy(odd + 1, plane0.data, plane0.pitch * plane0_rows, cudaMemcpyDeviceToDevice));
      FrameView right = t.device;
      right.plane[0] = odd + 1;

      // The pair with the first pyramid levels made in the same pass: each
      // level must equal the reference's downsample of the one above (the
      // right view at an aligned and at an odd address).
      for (int levels = 1; levels <= kMaxConvertLevels; ++levels) {
        const FrameView& right_in = levels == 2 ? right : t.device;
        Image<uint8_t> want[2][kMaxConvertLevels];
        want[0][0] = second.gray;
        want[1][0] = gray;
        DeviceImage<uint8_t> got[2][kMaxConvertLevels];
        ImageView<uint8_t> views[2][kMaxConvertLevels];
        for (int v = 0; v < 2; ++v)
          for (int l = 0; l < levels; ++l) {
            if (l > 0) downsample(want[v][l - 1], want[v][l]);
            got[v][l] = make_device<uint8_t>(size.first >> l, size.second >> l, 0xAB);
            views[v][l] = got[v][l].view();
          }
        // The frame's counters, which the conversion zeroes in passing.
        auto clear = make_device<uint8_t>(kFrameCounterWords * 8, 1, 0xEE);
        auto* clear_words = reinterpret_cast<unsigned long long*>(clear.view().data);
        ASSERT_CUDA(enqueue_convert_pair(second.frame.device, right_in, views[0], views[1], levels, &model.views,
                                         nullptr, clear_words, kFrameCounterWords));
        EXPECT_TRUE(same_image(Image<uint8_t>(kFrameCounterWords * 8, 1), download(clear))) << "counters zeroed";
        for (int v = 0; v < 2; ++v)
          for (int l = 0; l < levels; ++l)
            EXPECT_TRUE(same_image(want[v][l], download(got[v][l])))
                << "pair with " << levels << " levels, view " << v << ", level " << l;
        EXPECT_TRUE(model_of_colour(second.rgb, model.model[0], model.raw[0], 0)) << "pair, left";
        EXPECT_TRUE(model_of_colour(first.rgb, model.model[1], model.raw[1], 1)) << "pair, right";
      }
      cudaFree(odd);
    }
}

// Every 24-bit colour through the conversion's model (a 4096 x 4096 frame,
// frames_seen 0): its means are the colour's HSV in Q4, which the GPU
// divides in its own way (stereo_math.h div_small); they must be the
// reference's for every colour.
TEST(CudaStages, ModelSeesEveryColourAsTheReference) {
  const int side = 4096;
  Image<uint32_t> colours(side, side);
  for (uint32_t i = 0; i < colours.pixels.size(); ++i) colours.pixels[i] = i | 0xFF000000u;
  DeviceImage<uint32_t> pixels = upload(colours);
  const FrameView in = device_rgba_view(colours, pixels);
  auto gray = make_device<uint8_t>(side, side);
  DeviceModel model(side, side, background_params(Params()));
  model.set_frames_seen(0);
  ASSERT_CUDA(enqueue_convert(in, gray.view(), &model.views, nullptr));
  const Image<BackgroundPixel> got = download(model.model[0]);
  size_t wrong = 0;
  for (uint32_t i = 0; i < got.pixels.size(); ++i) {
    int h, s, v;
    hsv_from_rgb(i & 255, (i >> 8) & 255, (i >> 16) & 255, &h, &s, &v);
    const BackgroundFields f = unpack_background(got.pixels[i]);
    if (f.mean[0] != 16 * h || f.mean[1] != 16 * s || f.mean[2] != 16 * v) {
      if (wrong++ < 5) ADD_FAILURE() << "colour " << std::hex << i << std::dec << ": HSV " << h << " " << s << " " << v;
    }
  }
  EXPECT_EQ(wrong, 0u);
}

// YUY2 and UYVY at odd and even widths, on device rows at every alignment
// the kernel distinguishes: 8-byte aligned (a thread's four pixels in one
// load), 4- and 2-byte aligned pitches, an odd start; the background model
// and the first pyramid levels made in the same pass.
TEST(CudaStages, ConvertPackedYuv422OddWidthsAndPitches) {
  const std::pair<int, int> sizes[] = {{1, 1}, {5, 3}, {6, 2}, {37, 23}, {64, 16}, {131, 9}, {262, 45}};
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY})
    for (auto size : sizes)
      for (int shift : {0, 1, 2, 4}) {  // device pitch padding and start offset, bytes
        const int w = size.first, h = size.second;
        SCOPED_TRACE(::testing::Message() << pixel_format_name(f) << " " << w << "x" << h << " shift " << shift);
        ConvertCase c;
        make_convert_case(f, w, h, 500 + w + shift, &c);
        const int row_bytes = static_cast<int>(plane_shape(c.frame.host).row_bytes[0]);
        ASSERT_EQ(row_bytes, 4 * ((w + 1) / 2));
        // The host rows at a pitch of row_bytes + shift, copied to a device
        // block starting `shift & 1` bytes in (an odd start for shift 1).
        const int pitch = row_bytes + shift;
        uint8_t* block = nullptr;
        ASSERT_CUDA(cudaMalloc(&block, static_cast<size_t>(pitch) * h + 8));
        ASSERT_CUDA(cudaMemset(block, 0x5C, static_cast<size_t>(pitch) * h + 8));
        uint8_t* start = block + (shift & 1);
        ASSERT_CUDA(cudaMemcpy2D(start, pitch, c.frame.host.plane[0], c.frame.host.pitch[0], row_bytes, h,
                                 cudaMemcpyHostToDevice));
        FrameView dev = c.frame.device;
        dev.plane[0] = start;
        dev.pitch[0] = pitch;
        const int levels = std::min(kMaxConvertLevels, 1 + (w >= 4 && h >= 4 ? 2 : 0));
        Image<uint8_t> want[kMaxConvertLevels];
        want[0] = c.gray;
        DeviceImage<uint8_t> got[2][kMaxConvertLevels];
        ImageView<uint8_t> views[2][kMaxConvertLevels];
        for (int l = 0; l < levels; ++l) {
          if (l > 0) downsample(want[l - 1], want[l]);
          for (int v = 0; v < 2; ++v) {
            got[v][l] = make_device<uint8_t>(w >> l, h >> l, 0xAB);
            views[v][l] = got[v][l].view();
          }
        }
        DeviceModel model(w, h, background_params(Params()));
        model.set_frames_seen(0);
        // Left: the aligned upload; right: the same picture at this pitch.
        ASSERT_CUDA(enqueue_convert_pair(c.frame.device, dev, views[0], views[1], levels, &model.views, nullptr));
        for (int v = 0; v < 2; ++v)
          for (int l = 0; l < levels; ++l)
            EXPECT_TRUE(same_image(want[l], download(got[v][l]))) << "view " << v << ", level " << l;
        EXPECT_TRUE(model_of_colour(c.rgb, model.model[0], model.raw[0], 0)) << "left colour";
        EXPECT_TRUE(model_of_colour(c.rgb, model.model[1], model.raw[1], 1)) << "right colour";
        // Intensity only (no background model): the path without colour,
        // from this pitch and from the aligned upload.
        for (const FrameView& in : {dev, c.frame.device}) {
          auto gray_only = make_device<uint8_t>(w, h, 0xAB);
          ASSERT_CUDA(enqueue_convert(in, gray_only.view(), nullptr, nullptr));
          EXPECT_TRUE(same_image(c.gray, download(gray_only))) << "intensity only, pitch " << in.pitch[0];
        }
        cudaFree(block);
      }
}

TEST(CudaStages, Downsample) {
  for (auto size : {std::pair<int, int>{37, 23}, std::pair<int, int>{128, 65}}) {
    const Image<uint8_t> gray = random_gray(size.first, size.second, 3);
    Image<uint8_t> cg;
    downsample(gray, cg);
    auto dg = upload(gray);
    auto og = make_device<uint8_t>(cg.width, cg.height);
    ASSERT_CUDA(enqueue_downsample(dg.cview(), og.view(), nullptr));
    EXPECT_TRUE(same_image(cg, download(og)));
  }
}

TEST(CudaStages, Census) {
  for (auto size : {std::pair<int, int>{37, 23}, std::pair<int, int>{3, 2}, std::pair<int, int>{100, 41}}) {
    // Few grey levels: many equal neighbours exercise the strict "darker" rule.
    Image<uint8_t> gray = random_gray(size.first, size.second, 5);
    for (auto& p : gray.pixels) p &= 0xC0;
    Image<uint32_t> expected;
    census_transform(gray, expected);
    auto dg = upload(gray);
    auto dc = make_device<uint32_t>(size.first, size.second);
    ASSERT_CUDA(enqueue_census(dg.cview(), dc.view(), nullptr));
    EXPECT_TRUE(same_image(expected, download(dc)));
    // A batch that also sets a buffer to all ones (the right view's match
    // keys): the same census, and every word of the buffer set.
    auto again = make_device<uint32_t>(size.first, size.second);
    auto keys = make_device<uint32_t>(size.first, size.second, 0x12);
    const ImageView<const uint8_t> g = dg.cview();
    const ImageView<uint32_t> c = again.view(), k = keys.view();
    ASSERT_CUDA(enqueue_census_batch(&g, &c, 1, nullptr, &k));
    EXPECT_TRUE(same_image(expected, download(again)));
    Image<uint32_t> ones(size.first, size.second);
    for (auto& p : ones.pixels) p = 0xFFFFFFFFu;
    EXPECT_TRUE(same_image(ones, download(keys)));
  }
}

// The occupancy of a level's mask as background.h states it: a byte a
// cell of kOccupancyCell pixels, 1 where one is foreground.
Image<uint8_t> occupancy_of(const Image<uint8_t>& mask) {
  Image<uint8_t> o((mask.width + kOccupancyCell - 1) / kOccupancyCell,
                   (mask.height + kOccupancyCell - 1) / kOccupancyCell);
  for (int y = 0; y < mask.height; ++y)
    for (int x = 0; x < mask.width; ++x)
      if (mask.at(x, y)) o.at(x / kOccupancyCell, y / kOccupancyCell) = 1;
  return o;
}

// The mask pass (enqueue_masks) against clean_mask and pool_mask: every
// level and its occupancy, both views, the left view's foreground counts,
// radius 0 to the largest, sizes that cut regions; then regions that empty
// out are cleared once and left alone while they stay empty, and that
// holds too for raw foreground that the speckle filter keeps and the
// opening removes (2 x 2 squares): such a region is cleared where it held
// foreground, and is empty after, not dirty.
TEST(CudaStages, MasksFromTheRawTest) {
  struct Case {
    int w, h, levels, radius;
  };
  const Case cases[] = {{37, 23, 1, 1}, {300, 170, 3, 1}, {131, 257, 4, 0}, {260, 140, 5, 2}, {517, 133, 6, 8}};
  std::mt19937 rng(21);
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << ", " << c.levels << " levels, radius " << c.radius);
    ASSERT_CUDA(prepare_masks(c.radius));
    DeviceImage<uint32_t> raw_dev[2];
    DeviceImage<uint8_t> mask_dev[kMaxLevels][2], occ_dev[kOccupancyLevels][2];
    MaskViews mv;
    mv.levels = c.levels;
    for (int v = 0; v < 2; ++v)
      for (int l = 0; l < c.levels; ++l) {
        mask_dev[l][v] = make_device<uint8_t>(c.w >> l, c.h >> l);
        mv.mask[l][v] = mask_dev[l][v].view();
        if (l < kOccupancyLevels) {
          occ_dev[l][v] = make_device<uint8_t>(((c.w >> l) + 7) / 8, ((c.h >> l) + 7) / 8);
          mv.occupancy[l][v] = occ_dev[l][v].view();
        }
      }
    mv.regions_x = mask_regions_x(c.w);
    const int regions = mv.regions_x * mask_regions_y(c.h) * 2;
    auto dirty = make_device<uint8_t>(regions, 1, 1);
    mv.dirty = dirty.view().data;
    int* frames_seen = nullptr;
    unsigned long long* matched = nullptr;  // the left view's levels, then the right view's level 0
    ASSERT_CUDA(cudaMalloc(&frames_seen, sizeof(int)));
    ASSERT_CUDA(cudaMalloc(&matched, (kMaxLevels + 1) * sizeof(unsigned long long)));
    ASSERT_CUDA(cudaMemset(frames_seen, 0, sizeof(int)));
    mv.frames_seen = frames_seen;
    mv.matched = matched;
    mv.right_foreground = matched + kMaxLevels;
    // Rounds: speckled blobs; everything foreground; 2 x 2 squares (the
    // masks empty); nothing; the squares again (outputs poisoned before the
    // last two: an empty region that was empty writes nothing).
    auto left_alone = [](int round) { return round >= 3; };
    for (int round = 0; round < 5; ++round) {
      SCOPED_TRACE(::testing::Message() << "round " << round);
      Image<uint8_t> raw[2];
      for (int v = 0; v < 2; ++v) {
        raw[v] = Image<uint8_t>(c.w, c.h);
        if (round == 0) {
          for (auto& px : raw[v].pixels) px = rng() % 23 == 0 ? 255 : 0;  // noise
          for (int b = 0; b < 6; ++b) {
            const int bx = static_cast<int>(rng() % c.w), by = static_cast<int>(rng() % c.h);
            const int bw = 3 + static_cast<int>(rng() % 40), bh = 3 + static_cast<int>(rng() % 30);
            for (int y = by; y < std::min(by + bh, c.h); ++y)
              for (int x = bx; x < std::min(bx + bw, c.w); ++x) raw[v].at(x, y) = rng() % 9 ? 255 : 0;
          }
        } else if (round == 1) {
          for (auto& px : raw[v].pixels) px = 255;
        } else if (round == 2 || round == 4) {
          // Squares far enough apart and from the edges that the closing
          // joins none: each has 3 foreground neighbours a pixel (kept by
          // the speckle filter) and no 3 x 3 square (gone after the opening).
          const int margin = 2 * c.radius + 4, step = 4 * c.radius + 12;
          for (int y = margin; y + 2 + margin <= c.h; y += step)
            for (int x = margin; x + 2 + margin <= c.w; x += step)
              for (int k = 0; k < 4; ++k) raw[v].at(x + k % 2, y + k / 2) = 255;
          Image<uint8_t> cleaned;
          clean_mask(raw[v], c.radius, cleaned);
          ASSERT_EQ(std::count(cleaned.pixels.begin(), cleaned.pixels.end(), 255), 0) << "the squares' mask is empty";
        }
        raw_dev[v] = upload(raw_words(raw[v]));
        mv.raw[v] = raw_dev[v].cview();
      }
      if (left_alone(round))
        for (int v = 0; v < 2; ++v)
          for (int l = 0; l < c.levels; ++l) ASSERT_CUDA(cudaMemset2D(mask_dev[l][v].view().data, mask_dev[l][v].view().pitch, 0x77, c.w >> l, c.h >> l));
      ASSERT_CUDA(cudaMemset(matched, 0, (kMaxLevels + 1) * sizeof(unsigned long long)));
      ASSERT_CUDA(enqueue_masks(mv, c.w, c.h, c.radius, nullptr));
      unsigned long long got_matched[kMaxLevels + 1];
      ASSERT_CUDA(cudaMemcpy(got_matched, matched, sizeof(got_matched), cudaMemcpyDeviceToHost));
      for (int v = 0; v < 2; ++v) {
        Image<uint8_t> full;
        clean_mask(raw[v], c.radius, full);
        for (int l = 0; l < c.levels; ++l) {
          Image<uint8_t> want;
          pool_mask(full, l, want);
          if (left_alone(round)) {
            EXPECT_TRUE(same_image(Image<uint8_t>(c.w >> l, c.h >> l, 0x77), download(mask_dev[l][v])))
                << "left alone, view " << v << ", level " << l;
            continue;
          }
          EXPECT_TRUE(same_image(want, download(mask_dev[l][v]))) << "view " << v << ", level " << l;
          if (l < kOccupancyLevels)
            EXPECT_TRUE(same_image(occupancy_of(want), download(occ_dev[l][v]))) << "occupancy, view " << v << ", level " << l;
          const auto count = static_cast<unsigned long long>(std::count(want.pixels.begin(), want.pixels.end(), 255));
          if (v == 0) EXPECT_EQ(got_matched[l], count) << "level " << l;
          if (v == 1 && l == 0) EXPECT_EQ(got_matched[kMaxLevels], count) << "right view";
        }
      }
      int seen = 0;
      ASSERT_CUDA(cudaMemcpy(&seen, frames_seen, sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(seen, round + 1);
    }
    cudaFree(frames_seen);
    cudaFree(matched);
  }
}

// The foreground tile lists against the masks: every tile with a foreground
// pixel in it or its apron is listed (once), and every listed tile has a
// foreground pixel within a cell of it.
TEST(CudaStages, ForegroundTilesListWhatTheMasksHold) {
  const int w = 420, h = 250, levels = 6;
  std::mt19937 rng(5);
  Image<uint8_t> full[2];
  for (int v = 0; v < 2; ++v) {
    full[v] = Image<uint8_t>(w, h);
    for (int b = 0; b < 3; ++b) {
      const int bx = static_cast<int>(rng() % w), by = static_cast<int>(rng() % h);
      for (int y = by; y < std::min(by + 9, h); ++y)
        for (int x = bx; x < std::min(bx + 5, w); ++x) full[v].at(x, y) = 255;
    }
  }
  full[0].at(w - 1, h - 1) = 255;
  Image<uint8_t> masks[kMaxLevels][2];
  DeviceImage<uint8_t> occ[kOccupancyLevels][2];
  TilePlan plan;
  plan.width = w;
  plan.height = h;
  plan.levels = levels;
  for (int l = 0; l < levels; ++l)
    for (int v = 0; v < 2; ++v) {
      pool_mask(full[v], l, masks[l][v]);
      if (l < kOccupancyLevels) {
        occ[l][v] = upload(occupancy_of(masks[l][v]));
        plan.occupancy[l][v] = occ[l][v].cview();
      }
    }
  struct Grid {
    int level, tw, th, apron;
    bool either;
  };
  const Grid grids[] = {{0, 128, 8, 8, true}, {0, 50, 32, 0, false}, {1, 64, 16, 0, false}, {2, 50, 24, 3, true},
                        {4, 50, 8, 0, false}, {5, 128, 8, 8, true},  {5, 7, 3, 1, false}};
  const int count = static_cast<int>(std::size(grids));
  std::vector<DeviceImage<unsigned>> lists(count);
  unsigned* counts = nullptr;
  ASSERT_CUDA(cudaMalloc(&counts, count * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemset(counts, 0, count * sizeof(unsigned)));
  for (int g = 0; g < count; ++g) {
    const int lw = w >> grids[g].level, lh = h >> grids[g].level;
    TileGrid t;
    t.level = grids[g].level;
    t.tile_w = grids[g].tw;
    t.tile_h = grids[g].th;
    t.tiles_x = (lw + t.tile_w - 1) / t.tile_w;
    t.tiles_y = (lh + t.tile_h - 1) / t.tile_h;
    t.apron = grids[g].apron;
    t.either_view = grids[g].either;
    lists[g] = make_device<unsigned>(t.tiles_x * t.tiles_y, 1);
    t.list = lists[g].view().data;
    t.count = counts + g;
    ASSERT_TRUE(add_tile_grid(&plan, t));
  }
  ASSERT_CUDA(enqueue_foreground_tiles(plan, nullptr));
  std::vector<unsigned> got_counts(count);
  ASSERT_CUDA(cudaMemcpy(got_counts.data(), counts, count * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int g = 0; g < count; ++g) {
    SCOPED_TRACE(::testing::Message() << "grid " << g);
    const TileGrid& t = plan.grids[g];
    const int l = t.level, lw = w >> l, lh = h >> l;
    const Image<unsigned> listed = download(lists[g]);
    std::vector<int> seen(t.tiles_x * t.tiles_y, 0);
    for (unsigned i = 0; i < got_counts[g]; ++i) {
      ASSERT_LT(listed.pixels[i], seen.size());
      ++seen[listed.pixels[i]];
    }
    // The cell a level's pixel lies in, in pixels of the level.
    const int k = std::min(l, kOccupancyLevels - 1), cell = (kOccupancyCell << k) >> l;
    for (int ty = 0; ty < t.tiles_y; ++ty)
      for (int tx = 0; tx < t.tiles_x; ++tx) {
        const int x0 = tx * t.tile_w - t.apron, x1 = (tx + 1) * t.tile_w + t.apron;
        const int y0 = ty * t.tile_h - t.apron, y1 = (ty + 1) * t.tile_h + t.apron;
        bool exact = false, near = false;  // a foreground pixel in the tile and apron; in their cells
        for (int y = std::max(0, y0 / cell * cell - cell); y < std::min(lh, y1 + cell); ++y)
          for (int x = std::max(0, x0 / cell * cell - cell); x < std::min(lw, x1 + cell); ++x) {
            const bool fg = masks[l][0].at(x, y) || (t.either_view && masks[l][1].at(x, y));
            if (!fg) continue;
            if (x >= x0 && x < x1 && y >= y0 && y < y1) exact = true;
            if (x >= x0 - cell && x < x1 + cell && y >= y0 - cell && y < y1 + cell) near = true;
          }
        const int n = seen[ty * t.tiles_x + tx];
        EXPECT_LE(n, 1) << "tile " << tx << "," << ty << " listed twice";
        if (exact) EXPECT_EQ(n, 1) << "tile " << tx << "," << ty << " holds foreground";
        if (n) EXPECT_TRUE(near) << "tile " << tx << "," << ty << " listed without foreground near";
      }
  }
  cudaFree(counts);
}

// frame_switch.h's rule at its edges (whole_from 13/16 of a 256 x 128 view).
static_assert(frame_body(0, 0, 100, 26624) == kNoTiles, "nothing foreground: no body");
static_assert(frame_body(0, 1, 100, 26624) == kFewTiles, "the right view alone: its census and check");
static_assert(frame_body(99, 0, 100, 26624) == kFewTiles && frame_body(100, 0, 100, 26624) == kManyTiles,
              "few below few_below");
static_assert(frame_body(26624, 26623, 100, 26624) == kManyTiles && frame_body(26623, 32768, 100, 26624) == kManyTiles,
              "matched whole only where both views reach whole_from");
static_assert(frame_body(26624, 26624, 100, 26624) == kAllForeground, "both views at whole_from");

// The mask pass's choice of a captured graph's SWITCH body (MaskViews::
// choice, frame_switch.h), made by its last block from the counts of every
// block: none where the cleaned masks hold nothing (also where the raw test
// held camera noise alone, and where the last frame's foreground left),
// the body for few tiles below few_below left pixels (or with the right
// view's foreground alone), the whole grid's above it, and the body without
// masks only where both views hold 13/16 of the view or more.
TEST(CudaStages, MasksChooseTheBody) {
  const int w = 256, h = 128, radius = 1;
  const unsigned long long pixels = static_cast<unsigned long long>(w) * h;
  const unsigned long long whole = whole_frame_foreground(w, h);
  ASSERT_CUDA(prepare_masks(radius));
  cudaStream_t s = nullptr, body = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&body, cudaStreamNonBlocking));
  DeviceImage<uint32_t> raw_dev[2] = {make_device<uint32_t>((w + 31) / 32, h), make_device<uint32_t>((w + 31) / 32, h)};
  DeviceImage<uint8_t> mask_dev[2] = {make_device<uint8_t>(w, h), make_device<uint8_t>(w, h)};
  DeviceImage<uint8_t> occ_dev[2] = {make_device<uint8_t>(w / kOccupancyCell, h / kOccupancyCell),
                                     make_device<uint8_t>(w / kOccupancyCell, h / kOccupancyCell)};
  MaskViews mv;
  mv.levels = 1;
  for (int v = 0; v < 2; ++v) {
    mv.raw[v] = raw_dev[v].cview();
    mv.mask[0][v] = mask_dev[v].view();
    mv.occupancy[0][v] = occ_dev[v].view();
  }
  mv.regions_x = mask_regions_x(w);
  auto dirty = make_device<uint8_t>(mv.regions_x * mask_regions_y(h) * 2, 1, 1);
  mv.dirty = dirty.view().data;
  int* frames_seen = nullptr;
  unsigned long long* counts = nullptr;  // left level 0, right level 0
  unsigned* done = nullptr;
  uint8_t* chosen = nullptr;  // the body that ran, + 1; 0 none
  ASSERT_CUDA(cudaMalloc(&frames_seen, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&counts, 2 * sizeof(unsigned long long)));
  ASSERT_CUDA(cudaMalloc(&done, sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&chosen, 1));
  ASSERT_CUDA(cudaMemset(frames_seen, 0, sizeof(int)));
  mv.frames_seen = frames_seen;
  mv.matched = &counts[0];
  mv.right_foreground = &counts[1];

  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  GraphCondition c;
  ASSERT_CUDA(make_graph_condition(s, kNoTiles, &c));
  cudaGraph_t graph = nullptr;
  if (!c.on) {
    (void)cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    GTEST_SKIP() << "the runtime has no conditional nodes";
  }
  mv.choice.on = true;
  mv.choice.condition = c.handle;
  mv.choice.few_below = pixels / 5;
  mv.choice.whole_from = whole;
  mv.choice.done = done;
  ASSERT_CUDA(enqueue_masks(mv, w, h, radius, s));
  cudaGraph_t bodies[kFrameBodies] = {nullptr, nullptr, nullptr};
  ASSERT_CUDA(add_graph_switch(s, c, kFrameBodies, bodies));
  for (int k = 0; k < kFrameBodies; ++k) {
    ASSERT_CUDA(begin_graph_body(body, bodies[k]));
    ASSERT_CUDA(cudaMemsetAsync(chosen, k + 1, 1, body));
    ASSERT_CUDA(end_graph_body(body));
  }
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));

  // Raw foreground: columns [x0, x1) of rows [y0, y1), or single pixels a
  // few apart (noise the speckle filter removes).
  struct Rect {
    int x0, x1, y0, y1;
  };
  struct Case {
    const char* what;
    Rect left, right;
    bool noise;
    unsigned want;
  };
  const Rect none{0, 0, 0, 0}, all{0, w, 0, h}, small{40, 70, 30, 60}, half{0, w / 2, 0, h};
  const Case cases[] = {{"nothing", none, none, false, kNoTiles},
                        {"camera noise alone", none, none, true, kNoTiles},
                        {"a small object", small, small, false, kFewTiles},
                        {"the right view's object alone", none, small, false, kFewTiles},
                        {"the object gone", none, none, false, kNoTiles},
                        {"half of both views", half, half, false, kManyTiles},
                        {"every left pixel, half the right view", all, half, false, kManyTiles},
                        {"every pixel of both views", all, all, false, kAllForeground},
                        {"a small object again", small, none, false, kFewTiles},
                        {"nothing again", none, none, true, kNoTiles}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    unsigned long long want_counts[2];
    for (int v = 0; v < 2; ++v) {
      const Rect& r = v == 0 ? k.left : k.right;
      Image<uint8_t> raw(w, h);
      for (int y = r.y0; y < r.y1; ++y)
        for (int x = r.x0; x < r.x1; ++x) raw.at(x, y) = 255;
      if (k.noise)
        for (int y = 3; y < h; y += 7)
          for (int x = 5 + y % 3; x < w; x += 9) raw.at(x, y) = 255;
      Image<uint8_t> cleaned;
      clean_mask(raw, radius, cleaned);
      want_counts[v] = static_cast<unsigned long long>(std::count(cleaned.pixels.begin(), cleaned.pixels.end(), 255));
      const Image<uint32_t> words = raw_words(raw);
      ASSERT_CUDA(cudaMemcpy2D(raw_dev[v].view().data, raw_dev[v].view().pitch, words.pixels.data(),
                               words.width * sizeof(uint32_t), words.width * sizeof(uint32_t), words.height,
                               cudaMemcpyHostToDevice));
    }
    ASSERT_EQ(frame_body(want_counts[0], want_counts[1], pixels / 5, whole), k.want) << "the case's own counts";
    ASSERT_CUDA(cudaMemset(counts, 0, 2 * sizeof(unsigned long long)));
    ASSERT_CUDA(cudaMemset(done, 0, sizeof(unsigned)));
    ASSERT_CUDA(cudaMemset(chosen, 0, 1));
    ASSERT_CUDA(cudaGraphLaunch(exec, s));
    ASSERT_CUDA(cudaStreamSynchronize(s));
    uint8_t got = 0;
    unsigned long long got_counts[2] = {};
    ASSERT_CUDA(cudaMemcpy(&got, chosen, 1, cudaMemcpyDeviceToHost));
    ASSERT_CUDA(cudaMemcpy(got_counts, counts, sizeof(got_counts), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got_counts[0], want_counts[0]) << "left";
    EXPECT_EQ(got_counts[1], want_counts[1]) << "right";
    EXPECT_EQ(got, k.want == kNoTiles ? 0u : k.want + 1);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(frames_seen);
  cudaFree(counts);
  cudaFree(done);
  cudaFree(chosen);
  cudaStreamDestroy(s);
  cudaStreamDestroy(body);
}

TEST(CudaStages, CheckAndSupport) {
  std::mt19937 rng(11);
  // Values from a few smooth patches with noise and holes, so neighbours
  // agree in places and not in others; odd size.
  Image<int16_t> left(67, 23), right(67, 23);
  for (Image<int16_t>* m : {&left, &right})
    for (int y = 0; y < m->height; ++y)
      for (int x = 0; x < m->width; ++x) {
        const int base = 6 + (x / 9 + y / 7) % 5;
        const unsigned r = rng() % 10;
        m->at(x, y) = static_cast<int16_t>(r == 0 ? -1 : (r == 1 ? static_cast<int>(rng() % 20) : base + static_cast<int>(rng() % 2)));
      }
  for (bool lr : {true, false})
    for (int tol : {0, 2})
      for (int support = 0; support <= 8; ++support) {
        SCOPED_TRACE(::testing::Message() << "lr " << lr << " tol " << tol << " support " << support);
        Image<int16_t> el = left, er = right;
        if (lr) cross_check(el, er, tol);
        support_filter(el, support);
        support_filter(er, support);
        auto dl = upload(left), dr = upload(right);
        auto ol = make_device<int16_t>(67, 23), orr = make_device<int16_t>(67, 23);
        ASSERT_CUDA(enqueue_check_and_support(dl.cview(), dr.cview(), lr, tol, support, ol.view(), orr.view(), nullptr));
        EXPECT_TRUE(same_image(el, download(ol)));
        EXPECT_TRUE(same_image(er, download(orr)));
        // The right map as the match keys it comes from at the coarsest
        // level (cost << 16 | d, all ones for none): the same maps, and the
        // raw right map written out.
        Image<uint32_t> keys(67, 23);
        for (size_t i = 0; i < keys.pixels.size(); ++i)
          keys.pixels[i] = right.pixels[i] < 0 ? 0xFFFFFFFFu
                                               : (static_cast<uint32_t>(i % 1801) << 16 | static_cast<uint32_t>(right.pixels[i]));
        auto dk = upload(keys);
        auto raw = make_device<int16_t>(67, 23), kl = make_device<int16_t>(67, 23), kr = make_device<int16_t>(67, 23);
        ASSERT_CUDA(enqueue_check_and_support_keys(dl.cview(), dk.cview(), lr, tol, support, raw.view(), kl.view(),
                                                   kr.view(), nullptr));
        EXPECT_TRUE(same_image(right, download(raw))) << "raw right from the keys";
        EXPECT_TRUE(same_image(el, download(kl))) << "left, right map as keys";
        EXPECT_TRUE(same_image(er, download(kr))) << "right, right map as keys";
      }
}

TEST(CudaStages, CrossCheck) {
  std::mt19937 rng(7);
  const Image<int16_t> left = random_disparities(61, 17, 22, rng);
  const Image<int16_t> right = random_disparities(61, 17, 22, rng);
  for (int tol : {0, 1, 3}) {
    Image<int16_t> el = left, er = right;
    cross_check(el, er, tol);
    auto dl = upload(left), dr = upload(right);
    auto ol = make_device<int16_t>(61, 17), orr = make_device<int16_t>(61, 17);
    ASSERT_CUDA(enqueue_cross_check(dl.cview(), dr.cview(), tol, ol.view(), orr.view(), nullptr));
    EXPECT_TRUE(same_image(el, download(ol)));
    EXPECT_TRUE(same_image(er, download(orr)));

    // The finish with the level-0 check folded in: the Q4 map and the valid
    // count of the checked left map.
    Image<uint16_t> want_q4(61, 17);
    unsigned long long want_valid = 0;
    for (size_t i = 0; i < el.pixels.size(); ++i) {
      want_q4.pixels[i] = static_cast<uint16_t>(el.pixels[i] >= 0 ? el.pixels[i] * 16 : 0);
      want_valid += el.pixels[i] >= 0;
    }
    const DeviceFinish got = finish_on_device(dl.cview(), {}, dr.cview(), tol);
    EXPECT_TRUE(same_image(want_q4, got.q4)) << "finish with the check, tolerance " << tol;
    EXPECT_EQ(got.counters.valid_pixels, want_valid) << "finish with the check, tolerance " << tol;
  }
}

struct MatchInputs {
  Image<uint32_t> census_left, census_right;
  Image<uint8_t> mask_left, mask_right;
};

// MatchInputs on the device ([0] left, [1] right; masks only where given),
// and the MatchViews of either reference over them.
struct DeviceMatchInputs {
  DeviceImage<uint32_t> census[2];
  DeviceImage<uint8_t> mask[2];

  DeviceMatchInputs(const MatchInputs& in, bool masks) {
    census[0] = upload(in.census_left);
    census[1] = upload(in.census_right);
    if (masks) {
      mask[0] = upload(in.mask_left);
      mask[1] = upload(in.mask_right);
    }
  }
  MatchViews views(bool left) const {
    const int r = left ? 0 : 1;
    MatchViews v;
    v.census_ref = census[r].cview();
    v.census_other = census[1 - r].cview();
    if (!mask[0].empty()) {
      v.mask_ref = mask[r].cview();
      v.mask_other = mask[1 - r].cview();
    }
    return v;
  }
};

MatchInputs scene_inputs(int w, int h, uint32_t seed, bool masks) {
  const SyntheticPair pair = make_step_pair(w, h, 5, 13, seed);
  Image<uint8_t> gl, gr;
  convert_to_gray(rgba_view(pair.left_rgba), gl);
  convert_to_gray(rgba_view(pair.right_rgba), gr);
  MatchInputs in;
  census_transform(gl, in.census_left);
  census_transform(gr, in.census_right);
  if (masks) {
    std::mt19937 rng(seed);
    in.mask_left = Image<uint8_t>(w, h, 255);
    in.mask_right = Image<uint8_t>(w, h, 255);
    for (int k = 0; k < 6; ++k) {  // background rectangles
      const int x0 = rng() % w, y0 = rng() % h, bw = 3 + rng() % 20, bh = 3 + rng() % 10;
      for (int y = y0; y < std::min(h, y0 + bh); ++y)
        for (int x = x0; x < std::min(w, x0 + bw); ++x) (k % 2 ? in.mask_left : in.mask_right).at(x, y) = 0;
    }
  }
  return in;
}

TEST(CudaStages, MatchFullRangeAndRefine) {
  struct Case {
    int w, h, radius, best;
    bool masks;
    Range range;
    int hole_span = 0;  // 0: a hole searches its whole span (the wide-pixel paths)
  };
  const Case cases[] = {{75, 41, 2, 2, false, {0, 24}}, {75, 41, 1, 0, true, {3, 30}}, {50, 37, 2, 4, true, {0, 17}},
                        {93, 20, 3, 1, false, {2, 40}}, {40, 33, 0, 2, false, {0, 9}},
                        // r = 2 (the streaming kernel): several tiles, wide hole spans.
                        {163, 71, 2, 2, true, {0, 90}}, {131, 75, 2, 1, false, {3, 70}},
                        {120, 40, 2, 0, false, {0, 60}},
                        // D = 512 scale: hole spans of hundreds of disparities, dense holes on
                        // the left half (tiles stream them), sparse on the right (tiles list them).
                        {530, 36, 2, 2, false, {0, 512}}, {300, 70, 2, 1, true, {2, 300}},
                        // Bounded hole spans (Params::hole_span): the default 16, an odd
                        // 7, on the streaming kernel with and without masks and the generic one.
                        {163, 71, 2, 2, true, {0, 90}, kDefaultHoleSpan}, {300, 70, 2, 1, false, {2, 300}, 16},
                        {131, 75, 2, 0, true, {3, 70}, 7}, {75, 41, 1, 2, true, {0, 60}, 16}};
  // CS_CASES=i,j,... runs only those cases (compute-sanitizer's racecheck
  // takes minutes a case: scripts/gpu-tests.sh runs them in parallel groups).
  const std::vector<int> only = case_list(std::getenv("CS_CASES"));
  for (int index = 0; index < static_cast<int>(std::size(cases)); ++index) {
    if (!only.empty() && std::find(only.begin(), only.end(), index) == only.end()) continue;
    const Case& c = cases[index];
    SCOPED_TRACE(::testing::Message() << "case " << index << ": " << c.w << "x" << c.h << " r=" << c.radius
                                      << " best=" << c.best << " masks=" << c.masks << " hole_span=" << c.hole_span);
    ASSERT_CUDA(prepare_match(c.radius));
    const MatchInputs in = scene_inputs(c.w, c.h, 100 + c.w, c.masks);
    const DeviceMatchInputs din(in, c.masks);
    // A coarser map with holes for the refinement.
    std::mt19937 rng(c.w);
    Image<int16_t> coarser(c.w / 2, c.h / 2);
    const bool wide_scale = c.range.hi >= 256;
    for (int y = 0; y < coarser.height; ++y)
      for (int x = 0; x < coarser.width; ++x) {
        const unsigned hole_odds = wide_scale && x >= coarser.width / 2 ? 60 : 7;
        coarser.at(x, y) = static_cast<int16_t>(rng() % hole_odds == 0 ? -1 : (rng() % (c.range.hi / 2 + 1)));
      }
    auto dcoarse = upload(coarser);
    for (Reference ref : {Reference::Left, Reference::Right}) {
      const bool left = ref == Reference::Left;
      const Image<uint32_t>& cref = left ? in.census_left : in.census_right;
      const Image<uint32_t>& coth = left ? in.census_right : in.census_left;
      const Image<uint8_t>* mref = c.masks ? (left ? &in.mask_left : &in.mask_right) : nullptr;
      const Image<uint8_t>* moth = c.masks ? (left ? &in.mask_right : &in.mask_left) : nullptr;
      MatchViews v = din.views(left);
      MatchParams mp;
      mp.reference = ref;
      mp.range = c.range;
      mp.radius = c.radius;
      mp.best = c.best;
      mp.hole_radius = 2;
      mp.hole_span = c.hole_span;

      // Sub-pixel: the offsets the matcher kept give finish_disparity's Q4.
      auto check_subpixel = [&](const Image<int16_t>& disparity, const DeviceImage<int16_t>& out,
                                const DeviceImage<int8_t>& offsets, const char* what) {
        Image<uint16_t> q4(c.w, c.h);
        finish_disparity(in.census_left, in.census_right, disparity, c.range, c.radius, c.best, true, q4.view());
        const DeviceFinish got = finish_on_device(out.cview(), offsets.cview());
        EXPECT_TRUE(same_image(q4, got.q4)) << "sub-pixel, " << what;
        size_t valid = 0;
        for (auto d : disparity.pixels) valid += d >= 0;
        EXPECT_EQ(got.counters.valid_pixels, valid) << what;
        EXPECT_EQ(got.counters.foreground_pixels, static_cast<unsigned long long>(c.w) * c.h) << what;
      };

      // The radius-2 kernels come in two tile heights a level, chosen per
      // grid; each is forced in turn (other kernels ignore the choice).
      const bool streaming_kernel = c.radius == 2 && c.best != 4;
      Image<int16_t> expected;
      match_full_range(cref, coth, ref, mref, moth, c.range, c.radius, c.best, expected);
      auto out = make_device<int16_t>(c.w, c.h);
      auto sub_full = make_device<int8_t>(c.w, c.h);
      v.disparity = out.view();
      for (int rows : {24, 32, 40, 48}) {
        mp.tile_rows = streaming_kernel ? rows : 0;
        // Both register forms; the cost slots (sub-pixel) have the plain one only.
        for (int form : {MatchParams::kPlainForm, MatchParams::kDenseForm}) {
          mp.kernel_form = streaming_kernel ? form : MatchParams::kChosenForm;
          ASSERT_CUDA(enqueue_match(v, mp, nullptr));
          EXPECT_TRUE(same_image(expected, download(out))) << "full range, tile rows " << rows << ", form " << form;
        }
        mp.kernel_form = MatchParams::kChosenForm;
        // The coarsest level is also the finest when there is one level
        // (the cost slots have no low tiles).
        if (left && !(streaming_kernel && rows == 24)) {
          MatchViews vs = v;
          vs.subpixel_offset = sub_full.view();
          ASSERT_CUDA(enqueue_match(vs, mp, nullptr));
          EXPECT_TRUE(same_image(expected, download(out))) << "full range with sub-pixel, tile rows " << rows;
          check_subpixel(expected, out, sub_full, "full range");
        }
      }
      if (streaming_kernel) {
        // The generic tile kernel, which the engine takes where no radius-2
        // tile fits the GPU.
        MatchParams mg = mp;
        mg.tile_rows = 0;
        mg.generic_kernel = true;
        auto out_g = make_device<int16_t>(c.w, c.h);
        auto sub_g = make_device<int8_t>(c.w, c.h);
        MatchViews vg = v;
        vg.disparity = out_g.view();
        if (left) vg.subpixel_offset = sub_g.view();
        ASSERT_CUDA(enqueue_match(vg, mg, nullptr));
        EXPECT_TRUE(same_image(expected, download(out_g))) << "full range, generic kernel";
        if (left) check_subpixel(expected, out_g, sub_g, "full range, generic kernel");
      }

      refine_level(cref, coth, ref, mref, moth, coarser, c.range, c.radius, c.best, 2, c.hole_span, expected);
      auto out2 = make_device<int16_t>(c.w, c.h);
      auto sub = make_device<int8_t>(c.w, c.h);
      v.coarser = dcoarse.cview();
      v.disparity = out2.view();
      if (left) v.subpixel_offset = sub.view();
      // Each tile height in both forms of the kernel (plain and
      // register-capped), each forced.
      for (int form : {MatchParams::kPlainForm, MatchParams::kDenseForm})
        for (int rows : {32, 28, 24, 16, 8}) {
          if (rows == 8 && form == MatchParams::kDenseForm) continue;  // tiny tiles: plain form only
          mp.tile_rows = streaming_kernel ? rows : 0;
          mp.kernel_form = streaming_kernel ? form : MatchParams::kChosenForm;
          ASSERT_CUDA(enqueue_match(v, mp, nullptr));
          EXPECT_TRUE(same_image(expected, download(out2))) << "refine, tile rows " << rows << ", form " << form;
        }
      mp.kernel_form = MatchParams::kChosenForm;
      if (streaming_kernel) {
        MatchParams mg = mp;
        mg.tile_rows = 0;
        mg.generic_kernel = true;
        auto out_g = make_device<int16_t>(c.w, c.h);
        auto sub_g = make_device<int8_t>(c.w, c.h);
        MatchViews vg = v;
        vg.disparity = out_g.view();
        if (left) vg.subpixel_offset = sub_g.view();
        ASSERT_CUDA(enqueue_match(vg, mg, nullptr));
        EXPECT_TRUE(same_image(expected, download(out_g))) << "refine, generic kernel";
        if (left) check_subpixel(expected, out_g, sub_g, "refine, generic kernel");
      }

      // Again with a list of wide pixels (its kernel, and a list too short
      // for them all: the tiles that do not fit match their own).
      Image<int8_t> sub_without_list;
      if (left) sub_without_list = download(sub);
      if (streaming_kernel) {
        constexpr unsigned kCapacity = 40;
        uint32_t* wide = nullptr;
        unsigned* counters = nullptr;
        ASSERT_CUDA(cudaMalloc(&wide, kCapacity * sizeof(uint32_t)));
        ASSERT_CUDA(cudaMalloc(&counters, 2 * sizeof(unsigned)));
        ASSERT_CUDA(cudaMemset(counters, 0, 2 * sizeof(unsigned)));
        MatchViews vl = v;
        auto out3 = make_device<int16_t>(c.w, c.h);
        auto sub3 = make_device<int8_t>(c.w, c.h);
        vl.disparity = out3.view();
        if (left) vl.subpixel_offset = sub3.view();
        vl.scratch.wide_pixels = wide;
        vl.scratch.wide_capacity = kCapacity;
        vl.scratch.wide_counters = counters;
        for (int run = 0; run < 4; ++run) {  // later runs check the scratch was left reset
          mp.tile_rows = run % 2 ? 24 : run ? 28 : 32;
          mp.kernel_form = run >= 2 ? MatchParams::kDenseForm : MatchParams::kPlainForm;
          ASSERT_CUDA(enqueue_match(vl, mp, nullptr));
          EXPECT_TRUE(same_image(expected, download(out3))) << "refine with wide list, run " << run;
          if (left) {
            EXPECT_TRUE(same_image(sub_without_list, download(sub3))) << "sub-pixel with wide list, run " << run;
          }
        }
        cudaFree(wide);
        cudaFree(counters);
        mp.kernel_form = MatchParams::kChosenForm;
      }

      if (left) check_subpixel(expected, out2, sub, "refine");
    }
  }
}

// Both views of a level in one call (enqueue_match_pair), as the engine
// makes it: the radius-2 kernels evaluate each window once for both views
// (stages.h: one cost volume). Each view must equal its own reference run;
// a second run checks that the per-pixel keys were left reset.
TEST(CudaStages, MatchPairSharesTheCostVolume) {
  struct Case {
    int w, h, best;
    bool masks, subpixel;
    Range range;
  };
  const Case cases[] = {{163, 71, 2, true, false, {0, 90}},  {131, 75, 1, false, true, {3, 70}},
                        {120, 40, 0, false, false, {0, 60}}, {530, 36, 2, false, false, {0, 512}},
                        {300, 70, 2, true, true, {2, 300}},  {75, 41, 2, false, false, {0, 24}}};
  ASSERT_CUDA(prepare_match(2));
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " best=" << c.best << " masks=" << c.masks
                                      << " subpixel=" << c.subpixel);
    const MatchInputs in = scene_inputs(c.w, c.h, 300 + c.w, c.masks);
    const DeviceMatchInputs din(in, c.masks);
    const Image<uint8_t>* ml = c.masks ? &in.mask_left : nullptr;
    const Image<uint8_t>* mr = c.masks ? &in.mask_right : nullptr;
    Image<int16_t> want_left, want_right;
    match_full_range(in.census_left, in.census_right, Reference::Left, ml, mr, c.range, 2, c.best, want_left);
    match_full_range(in.census_right, in.census_left, Reference::Right, mr, ml, c.range, 2, c.best, want_right);

    DeviceImage<uint32_t> keys[2];
    DeviceImage<unsigned> tiles[2];
    DeviceImage<int16_t> out[2];
    MatchViews v[2];
    for (int i = 0; i < 2; ++i) {
      keys[i] = make_device<uint32_t>(c.w, c.h, 0xFF);
      tiles[i] = make_device<unsigned>(match_tile_count(c.w, c.h), 1, 0);
      out[i] = make_device<int16_t>(c.w, c.h);
      v[i] = din.views(i == 0);
      v[i].disparity = out[i].view();
      v[i].scratch.best_keys = keys[i].view();
      v[i].scratch.tiles_done = tiles[i].view().data;
    }
    auto sub = make_device<int8_t>(c.w, c.h);
    if (c.subpixel) v[0].subpixel_offset = sub.view();
    MatchParams mp;
    mp.range = c.range;
    mp.radius = 2;
    mp.best = c.best;
    // Runs 2 and 3 take the register-capped form (none with sub-pixel).
    for (int run = 0; run < 4; ++run)
      for (int rows : {24, 32, 40, 48}) {
        if (rows == 24 && c.subpixel) continue;  // no low tiles with the cost slots
        mp.tile_rows = rows;
        mp.kernel_form = run >= 2 && !c.subpixel ? MatchParams::kDenseForm : MatchParams::kPlainForm;
        ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
        EXPECT_TRUE(same_image(want_left, download(out[0]))) << "left, run " << run << ", tile rows " << rows;
        EXPECT_TRUE(same_image(want_right, download(out[1]))) << "right, run " << run << ", tile rows " << rows;
      }
    mp.kernel_form = MatchParams::kChosenForm;
    // The generic kernel for both (no radius-2 tile fits the GPU).
    mp.tile_rows = 0;
    mp.generic_kernel = true;
    ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
    EXPECT_TRUE(same_image(want_left, download(out[0]))) << "left, generic kernel";
    EXPECT_TRUE(same_image(want_right, download(out[1]))) << "right, generic kernel";

  }
}

// A level's pair as the engine matches it (offer_right, the right view's
// keys): only the left view is matched and the right map is what its
// winners offer (stages.h match_full_range and refine_level, offered). At
// the coarsest level and a refined one, every tile height and form, the
// generic kernel, a list of wide pixels (its kernel offers too, and a list
// too short for them all), the rival forms; the keys kept for the caller
// or resolved (and left all ones again).
TEST(CudaStages, PairOffersTheRightMap) {
  struct Case {
    int w, h, radius, best;
    bool masks;
    Range range;
    int hole_span, ratio;
  };
  const Case cases[] = {{163, 71, 2, 2, true, {0, 90}, kDefaultHoleSpan, 0}, {300, 70, 2, 1, false, {2, 300}, 0, 0},
                        {131, 75, 2, 0, false, {3, 70}, 7, 10},              {120, 40, 2, 1, true, {0, 60}, 0, 25},
                        {75, 41, 1, 2, true, {0, 40}, 16, 0},                {50, 37, 2, 4, false, {0, 17}, 0, 10},
                        {240, 135, 2, 1, false, {0, 32}, kDefaultHoleSpan, 0}};  // spread on the H100 (1080p x 256's coarsest)
  for (const Case& c : cases)
    for (bool refine : {true, false}) {
      SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " r=" << c.radius << " best=" << c.best
                                        << " masks=" << c.masks << " hole_span=" << c.hole_span << " ratio=" << c.ratio
                                        << (refine ? " refine" : " full range"));
      ASSERT_CUDA(prepare_match(c.radius));
      const MatchInputs in = scene_inputs(c.w, c.h, 700 + c.w, c.masks);
      const DeviceMatchInputs din(in, c.masks);
      std::mt19937 rng(c.h + 3);
      Image<int16_t> coarser(c.w / 2, c.h / 2);
      for (auto& d : coarser.pixels) d = static_cast<int16_t>(rng() % 9 == 0 ? -1 : rng() % (c.range.hi / 2 + 1));
      auto dcoarse = upload(coarser);
      const Image<uint8_t>* ml = c.masks ? &in.mask_left : nullptr;
      const Image<uint8_t>* mr = c.masks ? &in.mask_right : nullptr;
      Image<int16_t> want_left, want_right;
      if (refine)
        refine_level(in.census_left, in.census_right, Reference::Left, ml, mr, coarser, c.range, c.radius, c.best, 2,
                     c.hole_span, want_left, c.ratio, nullptr, &want_right);
      else
        match_full_range(in.census_left, in.census_right, Reference::Left, ml, mr, c.range, c.radius, c.best,
                         want_left, c.ratio, nullptr, &want_right);
      size_t offered = 0;
      for (int16_t d : want_right.pixels) offered += d >= 0;
      EXPECT_GT(offered, want_right.pixels.size() / 3);

      auto keys = make_device<uint32_t>(c.w, c.h, 0xFF);
      auto left_keys = make_device<uint32_t>(c.w, c.h, 0xFF);
      auto tiles = make_device<unsigned>(match_tile_count(c.w, c.h), 1, 0);
      DeviceImage<int16_t> out[2];
      MatchViews v[2];
      for (int i = 0; i < 2; ++i) {
        out[i] = make_device<int16_t>(c.w, c.h);
        v[i] = din.views(i == 0);
        if (refine) v[i].coarser = dcoarse.cview();
        v[i].disparity = out[i].view();
      }
      if (!refine) {  // the full-range search's split over blocks
        v[0].scratch.best_keys = left_keys.view();
        v[0].scratch.tiles_done = tiles.view().data;
      }
      v[1].scratch.best_keys = keys.view();
      MatchParams mp;
      mp.range = c.range;
      mp.radius = c.radius;
      mp.best = c.best;
      mp.hole_radius = 2;
      mp.hole_span = c.hole_span;
      mp.uniqueness_ratio = c.ratio;
      mp.offer_right = true;
      const Image<int16_t> stale(c.w, c.h, 77);
      auto run = [&](const MatchParams& p, const MatchViews& left, const std::string& what) {
        // The right map resolved from the keys (which are left all ones).
        ASSERT_CUDA(cudaMemcpy2D(out[1].view().data, out[1].view().pitch, stale.pixels.data(), c.w * sizeof(int16_t),
                                 c.w * sizeof(int16_t), c.h, cudaMemcpyHostToDevice));
        ASSERT_CUDA(enqueue_match_pair(left, v[1], p, nullptr));
        EXPECT_TRUE(same_image(want_left, download(out[0]))) << "left, " << what;
        EXPECT_TRUE(same_image(want_right, download(out[1]))) << "right, " << what;
        // Kept as keys for the caller.
        bool kept = false;
        ASSERT_CUDA(enqueue_match_pair(left, v[1], p, nullptr, &kept));
        EXPECT_TRUE(kept) << what;
        const Image<uint32_t> k = download(keys);
        Image<int16_t> from_keys(c.w, c.h);
        for (size_t i = 0; i < k.pixels.size(); ++i)
          from_keys.pixels[i] = static_cast<int16_t>(key_disparity(k.pixels[i]));
        EXPECT_TRUE(same_image(want_right, from_keys)) << "right from the kept keys, " << what;
        ASSERT_CUDA(enqueue_resolve_keys(keys.view(), out[1].view(), nullptr));
        EXPECT_TRUE(same_image(want_right, download(out[1]))) << "right resolved, " << what;
      };
      const bool streaming_kernel = c.radius == 2 && c.best != 4;
      const bool rival = c.ratio > 0;
      if (streaming_kernel) {
        const std::vector<int> heights =
            rival ? std::vector<int>{28, 24} : refine ? std::vector<int>{32, 28, 24, 16, 8} : std::vector<int>{24, 32, 40, 48};
        for (int form : {MatchParams::kPlainForm, MatchParams::kDenseForm})
          for (int rows : heights) {
            if (rival && form == MatchParams::kDenseForm) continue;  // the rival forms have no capped form
            if (rows == 8 && form == MatchParams::kDenseForm) continue;  // tiny tiles: plain form only
            mp.tile_rows = rows;
            mp.kernel_form = form;
            run(mp, v[0], "tile rows " + std::to_string(rows) + ", form " + std::to_string(form));
          }
        mp.tile_rows = 0;
        mp.kernel_form = MatchParams::kChosenForm;
        // The full range's warps a pair (spread_rows takes four where the
        // grid leaves half the GPU's slots empty), forced.
        if (!refine && !rival)
          for (int seg : {1, 2, 4}) {
            mp.segments = seg;
            run(mp, v[0], "warps a pair " + std::to_string(seg));
          }
        mp.segments = 0;
        if (refine) {
          // A list of wide pixels too short for them all.
          constexpr unsigned kCapacity = 40;
          auto wide = make_device<uint32_t>(kCapacity, 1, 0);
          auto counters = make_device<unsigned>(2, 1, 0);
          MatchViews vl = v[0];
          vl.scratch.wide_pixels = wide.view().data;
          vl.scratch.wide_capacity = kCapacity;
          vl.scratch.wide_counters = counters.view().data;
          run(mp, vl, "wide list");
        }
      }
      MatchParams mg = mp;
      mg.generic_kernel = true;
      run(mg, v[0], "generic kernel");
    }
}

// The refinement in any tile order (matching.h MatchScratch::schedule,
// tile_order.h): which block takes which tile must never change a result.
// The first launch records each tile's time; enqueue_tile_order sorts them
// longest first; launches in that order, in reverse grid order and with an
// order made for another grid all equal the reference.
TEST(CudaStages, RefineInAnyTileOrder) {
  struct Case {
    int w, h, best;
    bool masks;
    Range range;
    int hole_span;
  };
  const Case cases[] = {{163, 71, 2, true, {0, 90}, kDefaultHoleSpan}, {300, 70, 1, false, {2, 300}, 0},
                        {131, 75, 2, false, {3, 70}, 7}};
  ASSERT_CUDA(prepare_match(2));
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " best=" << c.best << " masks=" << c.masks
                                      << " hole_span=" << c.hole_span);
    const MatchInputs in = scene_inputs(c.w, c.h, 500 + c.w, c.masks);
    const DeviceMatchInputs din(in, c.masks);
    std::mt19937 rng(c.h);
    Image<int16_t> coarser(c.w / 2, c.h / 2);
    for (auto& d : coarser.pixels) d = static_cast<int16_t>(rng() % 9 == 0 ? -1 : rng() % (c.range.hi / 2 + 1));
    auto dcoarse = upload(coarser);
    const Image<uint8_t>* ml = c.masks ? &in.mask_left : nullptr;
    const Image<uint8_t>* mr = c.masks ? &in.mask_right : nullptr;
    Image<int16_t> want[2];
    refine_level(in.census_left, in.census_right, Reference::Left, ml, mr, coarser, c.range, 2, c.best, 2,
                 c.hole_span, want[0]);
    refine_level(in.census_right, in.census_left, Reference::Right, mr, ml, coarser, c.range, 2, c.best, 2,
                 c.hole_span, want[1]);
    Image<uint16_t> want_q4(c.w, c.h);
    finish_disparity(in.census_left, in.census_right, want[0], c.range, 2, c.best, true, want_q4.view());

    const unsigned capacity = refine_tile_capacity(c.w, c.h);
    auto costs = make_device<uint32_t>(static_cast<int>(capacity), 1, 0);
    auto order = make_device<uint32_t>(static_cast<int>(capacity), 1, 0);
    auto counts = make_device<unsigned>(2, 1, 0);
    TileSchedule schedule;
    schedule.costs = costs.view().data;
    schedule.order = order.view().data;
    schedule.counts = counts.view().data;
    schedule.capacity = capacity;
    DeviceImage<int16_t> out[2];
    MatchViews v[2];
    auto sub = make_device<int8_t>(c.w, c.h);
    for (int i = 0; i < 2; ++i) {
      out[i] = make_device<int16_t>(c.w, c.h);
      v[i] = din.views(i == 0);
      v[i].coarser = dcoarse.cview();
      v[i].disparity = out[i].view();
      v[i].scratch.schedule = schedule;
    }
    v[0].subpixel_offset = sub.view();
    MatchParams mp;
    mp.range = c.range;
    mp.radius = 2;
    mp.best = c.best;
    mp.hole_radius = 2;
    mp.hole_span = c.hole_span;
    auto check = [&](const char* what) {
      EXPECT_TRUE(same_image(want[0], download(out[0]))) << "left, " << what;
      EXPECT_TRUE(same_image(want[1], download(out[1]))) << "right, " << what;
      EXPECT_TRUE(same_image(want_q4, finish_on_device(out[0].cview(), sub.cview()).q4)) << "sub-pixel, " << what;
    };
    auto host_counts = [&] {
      unsigned h[2] = {0, 0};
      EXPECT_EQ(cudaMemcpy(h, counts.view().data, sizeof(h), cudaMemcpyDeviceToHost), cudaSuccess);
      return std::vector<unsigned>{h[0], h[1]};
    };
    auto host_words = [&](const DeviceImage<uint32_t>& d, unsigned n) {
      std::vector<uint32_t> h(n);
      EXPECT_EQ(cudaMemcpy(h.data(), d.view().data, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
      return h;
    };

    for (int rows : {32, 24, 16, 8}) {
      SCOPED_TRACE(::testing::Message() << "tile rows " << rows);
      mp.tile_rows = rows;
      ASSERT_CUDA(cudaMemset(counts.view().data, 0, 2 * sizeof(unsigned)));
      ASSERT_CUDA(cudaMemset(costs.view().data, 0, capacity * sizeof(uint32_t)));
      // No order yet: grid order, and every tile's time recorded.
      ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
      check("grid order");
      const unsigned n = host_counts()[0];
      const unsigned tiles = static_cast<unsigned>((c.w + 49) / 50 * ((c.h + rows - 1) / rows) * 2);
      ASSERT_EQ(n, tiles) << "blocks of the last launch";
      const std::vector<uint32_t> times = host_words(costs, n);
      EXPECT_EQ(std::count(times.begin(), times.end(), 0u), 0) << "a tile without a time";

      // The order from those times: a permutation, longest first within a
      // quarter of an octave (the kernel's buckets).
      ASSERT_CUDA(enqueue_tile_order(schedule, nullptr));
      ASSERT_EQ(host_counts()[1], n);
      const std::vector<uint32_t> sorted = host_words(order, n);
      std::vector<uint32_t> seen(sorted);
      std::sort(seen.begin(), seen.end());
      for (unsigned i = 0; i < n; ++i) ASSERT_EQ(seen[i], i) << "not a permutation";
      uint64_t least = UINT32_MAX;
      for (unsigned i = 0; i < n; ++i) {
        const uint64_t t = times[sorted[i]];
        EXPECT_LT(4 * t, 5 * least) << "place " << i << " takes a longer tile than one before it";
        least = std::min(least, t);
      }
      ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
      check("longest first");

      // Reverse grid order, written by hand.
      std::vector<uint32_t> reverse(n);
      for (unsigned i = 0; i < n; ++i) reverse[i] = n - 1 - i;
      ASSERT_CUDA(cudaMemcpy(order.view().data, reverse.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
      ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
      check("reverse order");

      // An order for a grid of another size is not used.
      const unsigned other[2] = {n, n + 1};
      std::vector<uint32_t> junk(capacity, 0);
      ASSERT_CUDA(cudaMemcpy(order.view().data, junk.data(), capacity * sizeof(uint32_t), cudaMemcpyHostToDevice));
      ASSERT_CUDA(cudaMemcpy(counts.view().data, other, sizeof(other), cudaMemcpyHostToDevice));
      ASSERT_CUDA(enqueue_match_pair(v[0], v[1], mp, nullptr));
      check("an order for another grid");

      // Times of more tiles than the buffers hold give no order.
      const unsigned too_many[2] = {capacity + 1, n};
      ASSERT_CUDA(cudaMemcpy(counts.view().data, too_many, sizeof(too_many), cudaMemcpyHostToDevice));
      ASSERT_CUDA(enqueue_tile_order(schedule, nullptr));
      EXPECT_EQ(host_counts()[1], 0u);
    }
  }
}

// Uniqueness and the sweep's costs (stages.h, stages 6 and 7 with
// uniqueness_ratio and SweepCosts; B3): every kernel form that tracks the
// rival against the reference, at ratios 0 (the costs alone: what the
// confidence reads), 10 and 25, with and without the cost outputs. The
// radius-2 kernels take the refine kernel's rival form at the coarsest level
// too, in both of its tile heights; the generic kernel's rival form runs
// where no radius-2 kernel applies (radius 1, best 4) or when forced; wide
// hole spans exercise the wide kernel's and the in-place wide pixels' forms.
TEST(CudaStages, MatchUniquenessAndSweepCosts) {
  struct Case {
    int w, h, radius, best;
    bool masks;
    Range range;
    int hole_span;  // 0: a hole searches its whole span (the wide-pixel paths)
  };
  const Case cases[] = {{163, 71, 2, 2, true, {0, 90}, kDefaultHoleSpan}, {131, 75, 2, 1, false, {3, 70}, 0},
                        {120, 40, 2, 0, false, {0, 60}, 7},               {300, 70, 2, 2, true, {2, 300}, 0},
                        {75, 41, 1, 2, true, {0, 40}, 16},                {50, 37, 2, 4, false, {0, 17}, 16}};
  // CS_CASES=i,j,... runs only those cases (compute-sanitizer's racecheck
  // takes minutes a case: scripts/gpu-tests.sh runs them in parallel groups).
  const std::vector<int> only = case_list(std::getenv("CS_CASES"));
  for (int index = 0; index < static_cast<int>(std::size(cases)); ++index) {
    if (!only.empty() && std::find(only.begin(), only.end(), index) == only.end()) continue;
    const Case& c = cases[index];
    SCOPED_TRACE(::testing::Message() << "case " << index << ": " << c.w << "x" << c.h << " r=" << c.radius
                                      << " best=" << c.best << " masks=" << c.masks << " hole_span=" << c.hole_span);
    ASSERT_CUDA(prepare_match(c.radius));
    const MatchInputs in = scene_inputs(c.w, c.h, 500 + c.w, c.masks);
    const DeviceMatchInputs din(in, c.masks);
    std::mt19937 rng(c.w + 1);
    Image<int16_t> coarser(c.w / 2, c.h / 2);
    for (int y = 0; y < coarser.height; ++y)
      for (int x = 0; x < coarser.width; ++x)
        coarser.at(x, y) = static_cast<int16_t>(rng() % 7 == 0 ? -1 : (rng() % (c.range.hi / 2 + 1)));
    auto dcoarse = upload(coarser);
    const bool streaming_kernel = c.radius == 2 && c.best != 4;
    for (Reference ref : {Reference::Left, Reference::Right}) {
      const bool left = ref == Reference::Left;
      const Image<uint32_t>& cref = left ? in.census_left : in.census_right;
      const Image<uint32_t>& coth = left ? in.census_right : in.census_left;
      const Image<uint8_t>* mref = c.masks ? (left ? &in.mask_left : &in.mask_right) : nullptr;
      const Image<uint8_t>* moth = c.masks ? (left ? &in.mask_right : &in.mask_left) : nullptr;
      for (int ratio : {0, 10, 25}) {
        SCOPED_TRACE(::testing::Message() << (left ? "left" : "right") << ", ratio " << ratio);
        for (bool refine : {false, true}) {
          Image<int16_t> want;
          SweepCosts costs;
          if (refine)
            refine_level(cref, coth, ref, mref, moth, coarser, c.range, c.radius, c.best, 2, c.hole_span, want, ratio,
                         &costs);
          else
            match_full_range(cref, coth, ref, mref, moth, c.range, c.radius, c.best, want, ratio, &costs);
          size_t valid = 0, with_rival = 0;
          for (size_t i = 0; i < want.pixels.size(); ++i) {
            valid += want.pixels[i] >= 0;
            with_rival += costs.rival.pixels[i] != kNoCost;
          }
          EXPECT_GT(valid, 0u);
          EXPECT_GT(with_rival, 0u);
          // Sub-pixel (left reference): the offsets kept alongside give
          // finish_disparity's Q4 of the map after uniqueness.
          Image<uint16_t> want_q4(c.w, c.h);
          if (left)
            finish_disparity(in.census_left, in.census_right, want, c.range, c.radius, c.best, true, want_q4.view());

          MatchParams mp;
          mp.reference = ref;
          mp.range = c.range;
          mp.radius = c.radius;
          mp.best = c.best;
          mp.hole_radius = 2;
          mp.hole_span = c.hole_span;
          mp.uniqueness_ratio = ratio;
          // Forced tile heights of the rival forms (0: chosen), the generic
          // kernel, and below the coarsest level a short wide-pixel list.
          struct Variant {
            int rows;
            bool generic, wide_list;
          };
          std::vector<Variant> variants = {{0, false, false}};
          if (streaming_kernel) {
            variants.push_back({28, false, false});
            variants.push_back({24, false, false});
            variants.push_back({0, true, false});
            if (refine) variants.push_back({0, false, true});
          }
          for (const Variant& var : variants)
            for (bool with_costs : {true, false}) {
              if (!with_costs && ratio == 0) continue;  // the plain kernels: tested above
              SCOPED_TRACE(::testing::Message() << (refine ? "refine" : "full range") << ", rows " << var.rows
                                                << (var.generic ? ", generic" : "") << (var.wide_list ? ", wide list" : "")
                                                << (with_costs ? ", costs out" : ""));
              MatchParams m = mp;
              m.tile_rows = var.rows;
              m.generic_kernel = var.generic;
              MatchViews v = din.views(left);
              auto out = make_device<int16_t>(c.w, c.h);
              auto best = make_device<int32_t>(c.w, c.h), rival = make_device<int32_t>(c.w, c.h);
              auto offsets = make_device<int8_t>(c.w, c.h);
              v.disparity = out.view();
              if (with_costs) {
                v.best_cost = best.view();
                v.rival_cost = rival.view();
              }
              if (left) v.subpixel_offset = offsets.view();
              if (refine) v.coarser = dcoarse.cview();
              constexpr unsigned kCapacity = 40;  // 20 wide pixels: the rest stream in their tiles
              uint32_t* wide = nullptr;
              unsigned* counters = nullptr;
              if (var.wide_list) {
                ASSERT_CUDA(cudaMalloc(&wide, kCapacity * sizeof(uint32_t)));
                ASSERT_CUDA(cudaMalloc(&counters, 2 * sizeof(unsigned)));
                ASSERT_CUDA(cudaMemset(counters, 0, 2 * sizeof(unsigned)));
                v.scratch.wide_pixels = wide;
                v.scratch.wide_capacity = kCapacity;
                v.scratch.wide_counters = counters;
              }
              if (streaming_kernel && !var.generic) {
                MatchConfig config;
                ASSERT_CUDA(choose_match_config(&v, 1, m, &config));
                EXPECT_EQ(config.kernel, MatchConfig::Refine);
                EXPECT_TRUE(config.rival);
              }
              for (int run = 0; run < (var.wide_list ? 2 : 1); ++run) {  // the list left reset
                ASSERT_CUDA(enqueue_match(v, m, nullptr));
                EXPECT_TRUE(same_image(want, download(out))) << "disparity, run " << run;
              }
              if (with_costs) {
                EXPECT_TRUE(same_image(costs.best, download(best))) << "best";
                EXPECT_TRUE(same_image(costs.rival, download(rival))) << "rival";
              }
              if (left) {
                EXPECT_TRUE(same_image(want_q4, finish_on_device(out.cview(), offsets.cview()).q4)) << "sub-pixel";
              }
              if (wide) cudaFree(wide);
              if (counters) cudaFree(counters);
            }
        }
      }
    }
  }
}

// Both views of a level in one call with uniqueness and the left view's
// costs, as the engine makes it at level 0 with the confidence: each view
// equals its reference. The coarsest level's scratch (per-pixel keys for a
// shared cost volume, split tiles) is not used by the rival forms and stays
// reset: a plain call afterwards still matches.
TEST(CudaStages, MatchPairWithUniquenessAndCosts) {
  struct Case {
    int w, h, best;
    bool masks;
    Range range;
  };
  const Case cases[] = {{163, 71, 2, true, {0, 90}}, {131, 75, 1, false, {3, 70}}, {300, 70, 0, true, {2, 300}}};
  ASSERT_CUDA(prepare_match(2));
  for (const Case& c : cases) {
    const MatchInputs in = scene_inputs(c.w, c.h, 700 + c.w, c.masks);
    const DeviceMatchInputs din(in, c.masks);
    const Image<uint8_t>* ml = c.masks ? &in.mask_left : nullptr;
    const Image<uint8_t>* mr = c.masks ? &in.mask_right : nullptr;
    std::mt19937 rng(c.w + 2);
    Image<int16_t> coarse_l(c.w / 2, c.h / 2), coarse_r(c.w / 2, c.h / 2);
    for (Image<int16_t>* m : {&coarse_l, &coarse_r})
      for (auto& d : m->pixels) d = static_cast<int16_t>(rng() % 9 == 0 ? -1 : (rng() % (c.range.hi / 2 + 1)));
    auto dcoarse_l = upload(coarse_l), dcoarse_r = upload(coarse_r);
    for (int ratio : {0, 10, 25})
      for (bool refine : {false, true}) {
        SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " best=" << c.best << " masks=" << c.masks
                                          << " ratio " << ratio << (refine ? " refine" : " full range"));
        Image<int16_t> want_left, want_right, plain_left, plain_right;
        SweepCosts costs;
        if (refine) {
          refine_level(in.census_left, in.census_right, Reference::Left, ml, mr, coarse_l, c.range, 2, c.best, 2,
                       kDefaultHoleSpan, want_left, ratio, &costs);
          refine_level(in.census_right, in.census_left, Reference::Right, mr, ml, coarse_r, c.range, 2, c.best, 2,
                       kDefaultHoleSpan, want_right, ratio);
          refine_level(in.census_left, in.census_right, Reference::Left, ml, mr, coarse_l, c.range, 2, c.best, 2,
                       kDefaultHoleSpan, plain_left);
          refine_level(in.census_right, in.census_left, Reference::Right, mr, ml, coarse_r, c.range, 2, c.best, 2,
                       kDefaultHoleSpan, plain_right);
        } else {
          match_full_range(in.census_left, in.census_right, Reference::Left, ml, mr, c.range, 2, c.best, want_left,
                           ratio, &costs);
          match_full_range(in.census_right, in.census_left, Reference::Right, mr, ml, c.range, 2, c.best, want_right,
                           ratio);
          match_full_range(in.census_left, in.census_right, Reference::Left, ml, mr, c.range, 2, c.best, plain_left);
          match_full_range(in.census_right, in.census_left, Reference::Right, mr, ml, c.range, 2, c.best,
                           plain_right);
        }
        DeviceImage<uint32_t> keys[2];
        DeviceImage<unsigned> tiles[2];
        DeviceImage<int16_t> out[2];
        MatchViews v[2];
        uint32_t* wide = nullptr;
        unsigned* counters = nullptr;
        ASSERT_CUDA(cudaMalloc(&wide, 4096 * sizeof(uint32_t)));
        ASSERT_CUDA(cudaMalloc(&counters, 2 * sizeof(unsigned)));
        ASSERT_CUDA(cudaMemset(counters, 0, 2 * sizeof(unsigned)));
        for (int i = 0; i < 2; ++i) {
          out[i] = make_device<int16_t>(c.w, c.h);
          v[i] = din.views(i == 0);
          v[i].disparity = out[i].view();
          if (refine) {
            v[i].coarser = i == 0 ? dcoarse_l.cview() : dcoarse_r.cview();
            v[i].scratch.wide_pixels = wide;
            v[i].scratch.wide_capacity = 4096;
            v[i].scratch.wide_counters = counters;
          } else {
            keys[i] = make_device<uint32_t>(c.w, c.h, 0xFF);
            tiles[i] = make_device<unsigned>(match_tile_count(c.w, c.h), 1, 0);
            v[i].scratch.best_keys = keys[i].view();
            v[i].scratch.tiles_done = tiles[i].view().data;
          }
        }
        auto best = make_device<int32_t>(c.w, c.h), rival = make_device<int32_t>(c.w, c.h);
        MatchViews with_costs = v[0];
        with_costs.best_cost = best.view();
        with_costs.rival_cost = rival.view();
        MatchParams mp;
        mp.range = c.range;
        mp.radius = 2;
        mp.best = c.best;
        mp.hole_radius = 2;
        mp.hole_span = kDefaultHoleSpan;
        mp.uniqueness_ratio = ratio;
        for (int run = 0; run < 2; ++run) {
          ASSERT_CUDA(enqueue_match_pair(with_costs, v[1], mp, nullptr));
          EXPECT_TRUE(same_image(want_left, download(out[0]))) << "left, run " << run;
          EXPECT_TRUE(same_image(want_right, download(out[1]))) << "right, run " << run;
          EXPECT_TRUE(same_image(costs.best, download(best))) << "best, run " << run;
          EXPECT_TRUE(same_image(costs.rival, download(rival))) << "rival, run " << run;
        }
        MatchParams plain = mp;
        plain.uniqueness_ratio = 0;
        ASSERT_CUDA(enqueue_match_pair(v[0], v[1], plain, nullptr));
        EXPECT_TRUE(same_image(plain_left, download(out[0]))) << "left, plain kernels after";
        EXPECT_TRUE(same_image(plain_right, download(out[1]))) << "right, plain kernels after";
        cudaFree(wide);
        cudaFree(counters);
      }
  }
}

// The finish's confidence (stages.h confidence_map) of the final left map,
// with the level-0 check folded in or without it; costs with and without a
// rival, a rival of 0, and winners as good as their rival.
TEST(CudaStages, FinishConfidence) {
  std::mt19937 rng(23);
  const int w = 67, h = 29;
  const Image<int16_t> left = random_disparities(w, h, 22, rng);
  const Image<int16_t> right = random_disparities(w, h, 22, rng);
  SweepCosts costs;
  costs.best = Image<int32_t>(w, h);
  costs.rival = Image<int32_t>(w, h);
  for (size_t i = 0; i < costs.best.pixels.size(); ++i) {
    const int32_t best = static_cast<int32_t>(rng() % 1800);
    const unsigned kind = rng() % 6;
    costs.best.pixels[i] = kind == 1 ? 0 : best;
    costs.rival.pixels[i] = kind == 0   ? kNoCost
                            : kind == 1 ? 0
                            : kind == 2 ? best
                                        : best + static_cast<int32_t>(rng() % 1800);
  }
  auto dl = upload(left), dr = upload(right);
  auto db = upload(costs.best), drv = upload(costs.rival);
  for (bool lr : {false, true})
    for (int tol : {0, 2}) {
      SCOPED_TRACE(::testing::Message() << "check " << lr << ", tolerance " << tol);
      Image<int16_t> el = left, er = right;
      if (lr) cross_check(el, er, tol);
      Image<uint8_t> want;
      confidence_map(costs, el, want);
      auto conf = make_device<uint8_t>(w, h);
      const FinishConfidence fc{db.cview(), drv.cview(), conf.view()};
      const DeviceFinish got =
          finish_on_device(dl.cview(), {}, lr ? dr.cview() : ImageView<const int16_t>{}, tol, fc);
      EXPECT_TRUE(same_image(want, download(conf)));
      Image<uint16_t> want_q4(w, h);
      for (size_t i = 0; i < el.pixels.size(); ++i)
        want_q4.pixels[i] = static_cast<uint16_t>(el.pixels[i] >= 0 ? el.pixels[i] * 16 : 0);
      EXPECT_TRUE(same_image(want_q4, got.q4));
    }
}

// The finish's encoded output (EncodeTarget) is what the encoding pass makes
// of the Q4 map it writes otherwise, in every format, with and without the
// confidence form; the counts are the same.
TEST(CudaStages, FinishEncodesEveryFormat) {
  std::mt19937 rng(31);
  const int w = 83, h = 19;
  const Image<int16_t> left = random_disparities(w, h, 40, rng);
  const Image<int16_t> right = random_disparities(w, h, 40, rng);
  Image<int8_t> offset(w, h);
  for (auto& o : offset.pixels) o = static_cast<int8_t>(static_cast<int>(rng() % 17) - 8);
  Image<uint8_t> mask(w, h);
  for (auto& m : mask.pixels) m = rng() % 3 == 0 ? 0 : 255;
  Image<int32_t> best(w, h), rival(w, h);
  for (size_t i = 0; i < best.pixels.size(); ++i) {
    best.pixels[i] = static_cast<int32_t>(rng() % 900);
    rival.pixels[i] = best.pixels[i] + static_cast<int32_t>(rng() % 900);
  }
  auto dl = upload(left), dr = upload(right);
  auto doff = upload(offset);
  auto dmask = upload(mask);
  auto db = upload(best), drv = upload(rival);
  const DeviceLuts device_luts;
  const uint8_t* luts = device_luts.data;
  for (OutputFormat f : kEncodedFormats)
    for (bool with_confidence : {false, true}) {
      SCOPED_TRACE(::testing::Message() << output_format_name(f) << ", confidence " << with_confidence);
      EncodeParams ep;
      ep.format = f;
      ep.colormap = Colormap::Jet;
      ep.max_disparity = 40;
      ep.baseline_mm = 95.0;
      ep.focal_px = 701.25;
      ep.alpha_from_mask = true;
      ep.invalid_rgb[1] = 90;
      const int bpp = output_bytes_per_pixel(f);
      auto out = make_device<uint8_t>(w * bpp, h);
      ASSERT_CUDA(cudaMemset2D(out.view().data, out.view().pitch, 0xA5, w * bpp, h));
      EncodeTarget target;
      target.args = encode_args(ep, luts);
      target.dst = out.view().data;
      target.pitch = out.view().pitch;
      auto conf = make_device<uint8_t>(w, h);
      FinishConfidence fc;
      if (with_confidence) fc = {db.cview(), drv.cview(), conf.view()};
      const DeviceFinish plain = finish_on_device(dl.cview(), doff.cview(), dr.cview(), 1, fc, dmask.cview());
      const DeviceFinish got = finish_on_device(dl.cview(), doff.cview(), dr.cview(), 1, fc, dmask.cview(), target);
      Image<uint8_t> want(w * bpp, h);
      const ImageView<const uint8_t> mv = static_cast<const Image<uint8_t>&>(mask).view();
      encode_output(static_cast<const Image<uint16_t>&>(plain.q4).view(), &mv, ep, want.pixels.data(), w * bpp);
      EXPECT_TRUE(same_image(want, download(out)));
      unsigned long long fg = 0;
      for (uint8_t m : mask.pixels) fg += m != 0;
      EXPECT_EQ(got.counters.foreground_pixels, fg);
      EXPECT_EQ(got.counters.valid_pixels, plain.counters.valid_pixels);
    }
}

// The finish given the mask's pixel count (mask_pixels): with a count of 0
// it reads neither the maps nor the mask and gives what reading them gives
// for a mask without a pixel, whatever the maps (and the mask) hold; with
// the mask's true count it reads them as without a count. The Q4 map and every encoding,
// with and without the confidence.
TEST(CudaStages, FinishTakesTheMaskCount) {
  std::mt19937 rng(37);
  const int w = 77, h = 23;
  const Image<int16_t> left = random_disparities(w, h, 40, rng), other = random_disparities(w, h, 40, rng);
  const Image<int16_t> right = random_disparities(w, h, 40, rng);
  Image<int8_t> offset(w, h);
  for (auto& o : offset.pixels) o = static_cast<int8_t>(static_cast<int>(rng() % 17) - 8);
  Image<uint8_t> empty(w, h), mask(w, h);
  for (auto& m : mask.pixels) m = rng() % 3 == 0 ? 0 : 255;
  unsigned long long counts[2] = {0, 0};
  for (uint8_t m : mask.pixels) counts[1] += m != 0;
  Image<int32_t> best(w, h), rival(w, h);
  for (size_t i = 0; i < best.pixels.size(); ++i) {
    best.pixels[i] = static_cast<int32_t>(rng() % 900);
    rival.pixels[i] = best.pixels[i] + static_cast<int32_t>(rng() % 900);
  }
  auto dl = upload(left), dother = upload(other), dr = upload(right);
  auto doff = upload(offset);
  auto dempty = upload(empty), dmask = upload(mask);
  auto db = upload(best), drv = upload(rival);
  unsigned long long* dcounts = nullptr;
  ASSERT_CUDA(cudaMalloc(&dcounts, sizeof counts));
  ASSERT_CUDA(cudaMemcpy(dcounts, counts, sizeof counts, cudaMemcpyHostToDevice));
  const DeviceLuts device_luts;
  std::vector<int> formats = {-1};  // -1: the Q4 map
  for (OutputFormat f : kEncodedFormats) formats.push_back(static_cast<int>(f));
  for (int f : formats)
    for (bool with_confidence : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (f < 0 ? "disparity-q4" : output_format_name(static_cast<OutputFormat>(f)))
                                        << ", confidence " << with_confidence);
      EncodeParams ep;
      if (f >= 0) ep.format = static_cast<OutputFormat>(f);
      ep.colormap = Colormap::Jet;
      ep.max_disparity = 40;
      ep.baseline_mm = 95.0;
      ep.focal_px = 701.25;
      ep.alpha_from_mask = true;
      ep.invalid_rgb[1] = 90;
      const int bpp = f < 0 ? 2 : output_bytes_per_pixel(ep.format);
      auto conf = make_device<uint8_t>(w, h);
      FinishConfidence fc;
      if (with_confidence) fc = {db.cview(), drv.cview(), conf.view()};
      // One run: its output (the Q4 map or the encoding) and counts.
      auto run = [&](const auto& map, const auto& m, const unsigned long long* count,
                     Image<uint8_t>* bytes, Image<uint8_t>* confidence) {
        auto out = make_device<uint8_t>(w * bpp, h);
        EXPECT_EQ(cudaMemset2D(out.view().data, out.view().pitch, 0xA5, w * bpp, h), cudaSuccess);
        EXPECT_EQ(cudaMemset2D(conf.view().data, conf.view().pitch, 0x5A, w, h), cudaSuccess);
        EncodeTarget target;
        if (f >= 0) {
          target.args = encode_args(ep, device_luts.data);
          target.dst = out.view().data;
          target.pitch = out.view().pitch;
        }
        const DeviceFinish d = finish_on_device(map.cview(), doff.cview(), dr.cview(), 1, fc, m.cview(), target, count);
        if (f >= 0) {
          *bytes = download(out);
        } else {
          bytes->width = w * 2;
          bytes->height = h;
          bytes->pixels.resize(d.q4.pixels.size() * 2);
          std::memcpy(bytes->pixels.data(), d.q4.pixels.data(), bytes->pixels.size());
        }
        if (with_confidence) *confidence = download(conf);
        return d.counters;
      };
      Image<uint8_t> read, skipped, read_conf, skipped_conf;
      const FrameCounters r = run(dl, dempty, nullptr, &read, &read_conf);
      const FrameCounters s = run(dother, dempty, &dcounts[0], &skipped, &skipped_conf);
      EXPECT_TRUE(same_image(read, skipped)) << "an empty mask, its count 0";
      if (with_confidence) {
        EXPECT_TRUE(same_image(read_conf, skipped_conf));
      }
      EXPECT_EQ(s.valid_pixels, 0u);
      EXPECT_EQ(s.foreground_pixels, 0u);
      EXPECT_EQ(r.valid_pixels, 0u);
      // A count of 0 is taken at its word: a mask with pixels is not read.
      Image<uint8_t> unread, unread_conf;
      run(dl, dmask, &dcounts[0], &unread, &unread_conf);
      EXPECT_TRUE(same_image(read, unread)) << "a mask with pixels, its count 0";
      Image<uint8_t> counted, counted_conf;
      const FrameCounters a = run(dl, dmask, nullptr, &read, &read_conf);
      const FrameCounters b = run(dl, dmask, &dcounts[1], &counted, &counted_conf);
      EXPECT_TRUE(same_image(read, counted)) << "a mask with its true count";
      if (with_confidence) {
        EXPECT_TRUE(same_image(read_conf, counted_conf));
      }
      EXPECT_EQ(b.valid_pixels, a.valid_pixels);
      EXPECT_GT(b.valid_pixels, 0u);
      EXPECT_EQ(b.foreground_pixels, counts[1]);
    }
  cudaFree(dcounts);
}

// The model over frames (warm-up, tests, turns, foreground runs): the
// conversion's model and raw test against background_view's, both views.
TEST(CudaStages, BackgroundModelOverFrames) {
  Params p;
  p.warmup_frames = 3;
  p.learning_rate = 0.05f;
  p.absorb_delay = 2;
  const BackgroundParams bp = background_params(p);
  const int w = 45, h = 27;
  BackgroundModel model[2];
  DeviceModel dev(w, h, bp);
  std::mt19937 rng(9);
  Image<uint32_t> base(w, h);
  for (auto& px : base.pixels) px = rng() & 0xffffff;
  for (int frame = 0; frame < 12; ++frame) {
    SCOPED_TRACE(::testing::Message() << "frame " << frame);
    // The same scene with noise and a moving patch: real tests and updates.
    Image<uint32_t> rgb[2];
    for (int v = 0; v < 2; ++v) {
      rgb[v] = base;
      for (auto& px : rgb[v].pixels) px ^= rng() & 0x030303;
      for (int y = 5; y < 15; ++y)
        for (int x = 2 * frame + v; x < 2 * frame + 12 + v && x < w; ++x) rgb[v].at(x, y) = rng() & 0xffffff;
    }
    // The views as RGBA frames in device memory.
    DeviceImage<uint32_t> pixels[2] = {upload(rgb[0]), upload(rgb[1])};
    const FrameView in[2] = {device_rgba_view(rgb[0], pixels[0]), device_rgba_view(rgb[1], pixels[1])};
    auto gl = make_device<uint8_t>(w, h), gr = make_device<uint8_t>(w, h);
    const ImageView<uint8_t> gl_view = gl.view(), gr_view = gr.view();
    dev.set_frames_seen(frame);
    dev.clear_tests();
    ASSERT_CUDA(enqueue_convert_pair(in[0], in[1], &gl_view, &gr_view, 1, &dev.views, nullptr));
    for (int v = 0; v < 2; ++v) {
      Image<uint8_t> raw;
      const uint64_t tests = background_view(model[v], rgb[v], bp, frame, v, raw);
      EXPECT_TRUE(same_image(raw_words(raw), download(dev.raw[v]))) << "raw test, view " << v;
      EXPECT_TRUE(same_model(model[v], dev.model[v])) << "model, view " << v;
      EXPECT_TRUE(same_cells(model[v], dev.cells[v])) << "cells, view " << v;
      const uint64_t cells = model[v].cells.size();
      EXPECT_EQ(tests, frame >= p.warmup_frames ? cells + dev.tests(v) : 0u) << "tests, view " << v;
      if (frame >= p.warmup_frames) {
        // Every label happens: cells settle background and foreground,
        // the patch's edge is tested.
        EXPECT_GT(dev.tests(v), 0u);
        EXPECT_LT(dev.tests(v), static_cast<unsigned>(w * h));
      }
    }
  }
}

// The pixels' pass skips the blocks with no work (ModelViews::work) and
// marks the blocks whose raw words hold foreground (raw_any), which the mask
// pass reads: over a scene larger than a block and a region, still, then a
// patch crossing block and region boundaries, then still again, every
// frame's model, cells and raw test equal the CPU reference's; each block's
// work is exactly "a cell of it not settled" after the pass, its raw_any
// exactly "a raw bit in it"; and the masks made with them equal clean_mask
// and pool_mask of the reference's raw test. On the still frames a block's
// only work is its turn's row (the pass's threads take two of its pixels
// each); a width that ends inside a cell leaves a thread one pixel or none.
void model_skips_blocks(int w, int h) {
  SCOPED_TRACE(::testing::Message() << w << "x" << h);
  Params p;
  p.warmup_frames = 3;
  p.learning_rate = 0.05f;
  p.absorb_delay = 100;
  const BackgroundParams bp = background_params(p);
  const int levels = 3, radius = 2;
  ASSERT_CUDA(prepare_masks(radius));
  BackgroundModel model[2];
  DeviceModel dev(w, h, bp);
  const int rx = mask_regions_x(w), ry = mask_regions_y(h);
  const int block_w = kModelBlockCells * kBackgroundCell, block_h = kModelBlockCellRows * kBackgroundCell;
  auto dirty = make_device<uint8_t>(rx * ry * 2, 1, 1);
  int* mask_frames = nullptr;
  ASSERT_CUDA(cudaMalloc(&mask_frames, sizeof(int)));
  ASSERT_CUDA(cudaMemset(mask_frames, 0, sizeof(int)));
  DeviceImage<uint8_t> mask_dev[kMaxLevels][2], occ_dev[kOccupancyLevels][2];
  MaskViews mv;
  mv.levels = levels;
  for (int v = 0; v < 2; ++v) {
    mv.raw[v] = dev.raw[v].cview();
    for (int l = 0; l < levels; ++l) {
      mask_dev[l][v] = make_device<uint8_t>(w >> l, h >> l);
      mv.mask[l][v] = mask_dev[l][v].view();
      occ_dev[l][v] = make_device<uint8_t>(((w >> l) + 7) / 8, ((h >> l) + 7) / 8);
      mv.occupancy[l][v] = occ_dev[l][v].view();
    }
  }
  mv.dirty = dirty.view().data;
  mv.regions_x = rx;
  mv.frames_seen = mask_frames;
  for (int v = 0; v < 2; ++v) mv.raw_any[v] = dev.raw_any[v].cview();
  std::mt19937 rng(31);
  Image<uint32_t> base(w, h);
  for (auto& px : base.pixels) px = rng() & 0xffffff;
  int skipped_frames = 0;  // frames after the warm-up where some block had no work before the pass
  for (int frame = 0; frame < 48; ++frame) {
    SCOPED_TRACE(::testing::Message() << "frame " << frame);
    // Frames 10 to 29: a 24 x 20 patch from (96, 100), 5 px right and 2 down
    // a frame, across the blocks' columns (128 px) and rows (8 px) and the
    // regions' (128 px); the right view's 3 px to the left.
    const bool patch = frame >= 10 && frame < 30;
    Image<uint32_t> rgb[2];
    for (int v = 0; v < 2; ++v) {
      rgb[v] = base;
      for (auto& px : rgb[v].pixels) px ^= rng() & 0x010101;
      if (!patch) continue;
      const int px0 = 96 + 5 * (frame - 10) - 3 * v, py0 = 100 + 2 * (frame - 10);
      for (int y = py0; y < std::min(py0 + 20, h); ++y)
        for (int x = px0; x < std::min(px0 + 24, w); ++x) rgb[v].at(x, y) = rng() & 0xffffff;
    }
    DeviceImage<uint32_t> pixels[2] = {upload(rgb[0]), upload(rgb[1])};
    const FrameView in[2] = {device_rgba_view(rgb[0], pixels[0]), device_rgba_view(rgb[1], pixels[1])};
    const Image<uint8_t> work_before[2] = {download(dev.work[0]), download(dev.work[1])};
    auto gl = make_device<uint8_t>(w, h), gr = make_device<uint8_t>(w, h);
    const ImageView<uint8_t> gl_view = gl.view(), gr_view = gr.view();
    dev.set_frames_seen(frame);
    dev.clear_tests();
    ASSERT_CUDA(enqueue_convert_pair(in[0], in[1], &gl_view, &gr_view, 1, &dev.views, nullptr));
    ASSERT_CUDA(enqueue_masks(mv, w, h, radius, nullptr));
    bool skipped = false, marked = false;
    for (int v = 0; v < 2; ++v) {
      Image<uint8_t> raw;
      background_view(model[v], rgb[v], bp, frame, v, raw);
      ASSERT_TRUE(same_image(raw_words(raw), download(dev.raw[v]))) << "raw test, view " << v;
      ASSERT_TRUE(same_model(model[v], dev.model[v])) << "model, view " << v;
      ASSERT_TRUE(same_cells(model[v], dev.cells[v])) << "cells, view " << v;
      // The blocks' work: a cell of the block not settled.
      const Image<uint8_t> settled = download(dev.settled[v]);
      Image<uint8_t> want_work(model_blocks_x(w), model_blocks_y(h));
      for (int cy = 0; cy < settled.height; ++cy)
        for (int cx = 0; cx < settled.width; ++cx)
          if (!settled.at(cx, cy)) want_work.at(cx / kModelBlockCells, cy / kModelBlockCellRows) = 1;
      EXPECT_TRUE(same_image(want_work, download(dev.work[v]))) << "work, view " << v;
      if (frame > p.warmup_frames)
        for (uint8_t b : work_before[v].pixels) skipped = skipped || b == 0;
      // The blocks' raw_any: a raw bit in the block.
      Image<uint8_t> want_any(model_blocks_x(w), model_blocks_y(h));
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          if (raw.at(x, y)) want_any.at(x / block_w, y / block_h) = 1;
      EXPECT_TRUE(same_image(want_any, download(dev.raw_any[v]))) << "raw_any, view " << v;
      for (uint8_t b : want_any.pixels) marked = marked || b;
      // The masks, made with the marks.
      Image<uint8_t> full;
      clean_mask(raw, radius, full);
      for (int l = 0; l < levels; ++l) {
        Image<uint8_t> want;
        pool_mask(full, l, want);
        EXPECT_TRUE(same_image(want, download(mask_dev[l][v]))) << "mask, view " << v << ", level " << l;
      }
    }
    skipped_frames += skipped;
    if (patch) EXPECT_TRUE(marked) << "the patch marks a block";
  }
  // After the patch the scene is still: blocks off their turn go idle.
  EXPECT_GT(skipped_frames, 20);
  cudaFree(mask_frames);
}

TEST(CudaStages, ModelSkipsBlocksWithoutWork) {
  model_skips_blocks(300, 150);
  model_skips_blocks(301, 150);  // the last cell one pixel wide
  model_skips_blocks(303, 149);  // three pixels wide, a short last row of cells
}

TEST(CudaStages, EncodeEveryFormat) {
  const int w = 39, h = 21;
  std::mt19937 rng(12);
  Image<uint16_t> q4(w, h);
  for (auto& q : q4.pixels) q = rng() % 5 == 0 ? 0 : static_cast<uint16_t>(rng() % (70 * 16));
  Image<uint8_t> mask(w, h);
  for (auto& m : mask.pixels) m = rng() % 3 == 0 ? 0 : 255;
  auto dq4 = upload(q4);
  auto dmask = upload(mask);
  const DeviceLuts device_luts;
  const uint8_t* luts = device_luts.data;
  for (OutputFormat f : kEncodedFormats)
    for (Colormap cm : {Colormap::Turbo, Colormap::Jet, Colormap::Grey}) {
      SCOPED_TRACE(::testing::Message() << output_format_name(f) << " map " << static_cast<int>(cm));
      EncodeParams ep;
      ep.format = f;
      ep.colormap = cm;
      ep.max_disparity = 64;
      ep.baseline_mm = 120.0;
      ep.focal_px = 650.5;
      ep.alpha_from_mask = true;
      ep.invalid_rgb[0] = 7;
      ep.invalid_rgb[2] = 200;
      const int row = w * output_bytes_per_pixel(f);
      Image<uint8_t> expected(row, h);
      const ImageView<const uint8_t> mv = static_cast<const Image<uint8_t>&>(mask).view();
      encode_output(static_cast<const Image<uint16_t>&>(q4).view(), &mv, ep, expected.pixels.data(), row);
      auto out = make_device<uint8_t>(row, h);
      ASSERT_CUDA(enqueue_encode(dq4.cview(), dmask.cview(), ep, luts, out.view().data, out.view().pitch, nullptr));
      EXPECT_TRUE(same_image(expected, download(out)));
      // Rows starting one pixel into the allocation (no wide stores).
      const int bpp = output_bytes_per_pixel(f);
      auto shifted = make_device<uint8_t>(row + bpp, h);
      ASSERT_CUDA(enqueue_encode(dq4.cview(), dmask.cview(), ep, luts, shifted.view().data + bpp,
                                 shifted.view().pitch, nullptr));
      const Image<uint8_t> got = download(shifted);
      Image<uint8_t> inner(row, h);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < row; ++x) inner.at(x, y) = got.at(x + bpp, y);
      EXPECT_TRUE(same_image(expected, inner)) << "output rows one pixel in";
    }
}

}  // namespace
}  // namespace cs::cuda::test
