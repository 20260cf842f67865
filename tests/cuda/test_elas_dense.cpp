// ELAS's dense matching and post-processing on the GPU (cuda/elas_matching.h)
// against the CPU reference (common/elas_dense.h), bit for bit at every
// step: E5's winners of both views (the left after uniqueness), best and
// rival, E6's checked maps, E7's final map and E8's confidence. Inputs (E1
// descriptors, E2 support grid, E4 priors) come from the reference's
// elas_match on generated pairs (steps, planes, slanted planes, textured
// and random views; sizes up to 1920 x 1080, odd ones, 1 x N and N x 1;
// ranges with min > 0 and max 16 .. 1000 or wider than the view; fill-all
// on and off; uniqueness 0 and 15; masks; flat and black frames), and from
// random inputs built to hit the rules' corners (ties, priors far off or
// absent, support points outside the range or the image). Then E6, E7's
// speckles and its gaps alone on random maps against elas_lr_check,
// elas_remove_speckles and elas_fill_gaps; a graph replay; the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "elas_dense.h"
#include "elas_matching.h"
#include "gpu_test_util.h"
#include "stages.h"
#include "stereo_math.h"
#include "synthetic.h"
#include "triangle_prior.h"

namespace cs::cuda::test {
namespace {

ElasParams elas_params(int min_disparity, int max_disparity) {
  ElasParams p;
  p.support.min_disparity = min_disparity;
  p.support.max_disparity = max_disparity;
  return p;
}

// What the dense steps read, as the CPU reference holds it.
struct Inputs {
  Image<ElasDescriptor> descriptors[2];
  Image<int16_t> support;
  Image<int32_t> mu_q4[2];
  Image<uint8_t> mask[2];  // empty: no background model
  bool masked() const { return !mask[0].pixels.empty(); }
};

// Every step's result.
struct Steps {
  Image<int16_t> raw[2];
  Image<int32_t> best, rival;
  Image<int16_t> checked[2];
  Image<int16_t> disparity;
  Image<uint8_t> confidence;
};

// elas_match's steps from its support grid on (common/elas_dense.cpp's order).
Steps reference_steps(const Inputs& in, const ElasParams& p) {
  const int w = in.descriptors[0].width, h = in.descriptors[0].height;
  const int s = std::max(1, p.support.candidate_step);
  std::vector<ElasSupportPoint> points, right_points;
  for (int j = 0; j < in.support.height; ++j)
    for (int i = 0; i < in.support.width; ++i)
      if (const int d = in.support.at(i, j); d >= 0) {
        points.push_back({s * i, s * j, d});
        right_points.push_back({s * i - d, s * j, d});
      }
  const std::vector<uint16_t> table = elas_prior_table(p.beta, p.gamma, p.sigma);
  const int lo = p.support.min_disparity, hi = p.support.max_disparity;
  const Image<uint8_t>* ml = in.masked() ? &in.mask[0] : nullptr;
  const Image<uint8_t>* mr = in.masked() ? &in.mask[1] : nullptr;
  Steps r;
  elas_dense(in.descriptors[0], in.descriptors[1], false, in.mu_q4[0], elas_grid(points, w, h, p.grid_size), table, lo,
             hi, p.sradius, ml, r.raw[0], &r.best, &r.rival);
  elas_dense(in.descriptors[1], in.descriptors[0], true, in.mu_q4[1], elas_grid(right_points, w, h, p.grid_size),
             table, lo, hi, p.sradius, mr, r.raw[1]);
  if (p.uniqueness_ratio > 0)
    for (size_t i = 0; i < r.raw[0].pixels.size(); ++i)
      if (r.raw[0].pixels[i] >= 0 && !passes_uniqueness(r.best.pixels[i], r.rival.pixels[i], p.uniqueness_ratio))
        r.raw[0].pixels[i] = -1;
  r.checked[0] = r.raw[0];
  r.checked[1] = r.raw[1];
  elas_lr_check(r.checked[0], r.checked[1], p.lr_threshold);
  r.disparity = r.checked[0];
  elas_remove_speckles(r.disparity, p.speckle_size, p.speckle_similarity);
  elas_fill_gaps(r.disparity, p.gap_width, p.fill_all, ml);
  elas_confidence(r.raw[0], r.best, r.rival, r.disparity, r.confidence);
  return r;
}

Image<uint4> as_words(const Image<ElasDescriptor>& d) {
  Image<uint4> out(d.width, d.height);
  static_assert(sizeof(uint4) == sizeof(ElasDescriptor), "16 bytes");
  for (size_t i = 0; i < d.pixels.size(); ++i) std::memcpy(&out.pixels[i], d.pixels[i].data(), 16);
  return out;
}

// The device side of one frame: inputs uploaded (pitched), outputs
// poisoned (every pixel must be written).
struct DeviceFrame {
  DeviceImage<uint4> descriptors[2];
  DeviceImage<int16_t> support;
  DeviceImage<int32_t> mu_q4[2];
  DeviceImage<uint8_t> mask[2];
  DeviceImage<int16_t> raw[2], checked[2], disparity;
  DeviceImage<int32_t> best, rival;
  DeviceImage<uint8_t> confidence;
  ElasDenseBuffers buffers;
  ElasDenseViews views;

  void poison() {
    const int w = disparity.view().width, h = disparity.view().height;
    for (const DeviceImage<int16_t>* d : {&raw[0], &raw[1], &checked[0], &checked[1], &disparity})
      EXPECT_EQ(cudaMemset2D(d->view().data, d->view().pitch, 0xA5, w * 2, h), cudaSuccess);
    for (const DeviceImage<int32_t>* d : {&best, &rival})
      EXPECT_EQ(cudaMemset2D(d->view().data, d->view().pitch, 0xA5, w * 4, h), cudaSuccess);
    EXPECT_EQ(cudaMemset2D(confidence.view().data, confidence.view().pitch, 0xA5, w, h), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
};

void prepare(const Inputs& in, const ElasParams& p, DeviceFrame* f) {
  const int w = in.descriptors[0].width, h = in.descriptors[0].height;
  for (int k = 0; k < 2; ++k) {
    f->descriptors[k] = upload(as_words(in.descriptors[k]));
    f->mu_q4[k] = upload(in.mu_q4[k]);
    if (in.masked()) f->mask[k] = upload(in.mask[k]);
    f->raw[k] = make_device<int16_t>(w, h);
    f->checked[k] = make_device<int16_t>(w, h);
  }
  f->support = upload(in.support);
  f->disparity = make_device<int16_t>(w, h);
  f->best = make_device<int32_t>(w, h);
  f->rival = make_device<int32_t>(w, h);
  f->confidence = make_device<uint8_t>(w, h);
  ASSERT_EQ(f->buffers.allocate(w, h, elas_dense_params(p), elas_prior_table(p.beta, p.gamma, p.sigma)), cudaSuccess);
  ElasDenseViews& v = f->views;
  for (int k = 0; k < 2; ++k) {
    v.descriptors[k] = f->descriptors[k].cview();
    v.mu_q4[k] = f->mu_q4[k].cview();
    v.mask[k] = f->mask[k].cview();
    v.raw[k] = f->raw[k].view();
    v.checked[k] = f->checked[k].view();
  }
  v.support = f->support.cview();
  v.best = f->best.view();
  v.rival = f->rival.view();
  v.disparity = f->disparity.view();
  v.confidence = f->confidence.view();
}

Steps download_steps(const DeviceFrame& f) {
  Steps g;
  for (int k = 0; k < 2; ++k) {
    g.raw[k] = download(f.raw[k]);
    g.checked[k] = download(f.checked[k]);
  }
  g.best = download(f.best);
  g.rival = download(f.rival);
  g.disparity = download(f.disparity);
  g.confidence = download(f.confidence);
  return g;
}

void run_gpu(const Inputs& in, const ElasParams& p, Steps* out) {
  DeviceFrame f;
  ASSERT_NO_FATAL_FAILURE(prepare(in, p, &f));
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const cudaError_t e = enqueue_elas_dense(f.views, elas_dense_params(p), f.buffers.scratch(), stream);
  EXPECT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  *out = download_steps(f);
}

void expect_same_steps(const Steps& cpu, const Steps& gpu) {
  EXPECT_TRUE(same_image(cpu.raw[0], gpu.raw[0])) << "E5 left winners (after uniqueness)";
  EXPECT_TRUE(same_image(cpu.raw[1], gpu.raw[1])) << "E5 right winners";
  EXPECT_TRUE(same_image(cpu.best, gpu.best)) << "E5 best energy";
  EXPECT_TRUE(same_image(cpu.rival, gpu.rival)) << "E5 rival energy";
  EXPECT_TRUE(same_image(cpu.checked[0], gpu.checked[0])) << "E6 left";
  EXPECT_TRUE(same_image(cpu.checked[1], gpu.checked[1])) << "E6 right";
  EXPECT_TRUE(same_image(cpu.disparity, gpu.disparity)) << "E7 final map";
  EXPECT_TRUE(same_image(cpu.confidence, gpu.confidence)) << "E8 confidence";
}

size_t valid_pixels(const Image<int16_t>& m) {
  return static_cast<size_t>(std::count_if(m.pixels.begin(), m.pixels.end(), [](int16_t d) { return d >= 0; }));
}

// One pair through elas_match (E1, E2, E4 and the reference's steps, in
// its debug copy) and through the GPU from the same inputs.
void check_pair(const Image<uint8_t>& left, const Image<uint8_t>& right, const ElasParams& p,
                const Image<uint8_t>* mask_left = nullptr, const Image<uint8_t>* mask_right = nullptr,
                bool expect_matches = true) {
  ElasDebug dbg;
  Image<int16_t> disparity;
  elas_match(left, right, p, disparity, nullptr, mask_left, mask_right, &dbg);
  Inputs in;
  for (int k = 0; k < 2; ++k) {
    in.descriptors[k] = dbg.descriptors[k];
    in.mu_q4[k] = dbg.mu_q4[k];
  }
  in.support = dbg.support.d;
  if (mask_left && mask_right) {
    in.mask[0] = *mask_left;
    in.mask[1] = *mask_right;
  }
  Steps cpu;
  for (int k = 0; k < 2; ++k) {
    cpu.raw[k] = dbg.raw[k];
    cpu.checked[k] = dbg.checked[k];
  }
  cpu.best = dbg.best;
  cpu.rival = dbg.rival;
  cpu.disparity = dbg.disparity;
  elas_confidence(dbg.raw[0], dbg.best, dbg.rival, dbg.disparity, cpu.confidence);
  if (expect_matches) {
    EXPECT_GT(valid_pixels(cpu.raw[0]), 0u) << "the case matches nothing: a weak test";
  }
  Steps gpu;
  ASSERT_NO_FATAL_FAILURE(run_gpu(in, p, &gpu));
  expect_same_steps(cpu, gpu);
}

Image<uint8_t> boxes_mask(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  Image<uint8_t> m(w, h, 0);
  for (int b = 0; b < 4; ++b) {
    const int x0 = static_cast<int>(rng() % w), y0 = static_cast<int>(rng() % h);
    const int x1 = std::min(w, x0 + 1 + static_cast<int>(rng() % (w / 2 + 1)));
    const int y1 = std::min(h, y0 + 1 + static_cast<int>(rng() % (h / 2 + 1)));
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) m.at(x, y) = 255;
  }
  return m;
}

// ---------------------------------------------------------------- the whole sequence

TEST(CudaElasDense, ReferenceStepsAreElasMatchs) {
  // The test's own sequence (reference_steps, used for the random inputs)
  // is elas_match's.
  const SyntheticPair pair = make_step_pair(160, 100, 6, 24, 3);
  for (int ratio : {0, 15}) {
    ElasParams p = elas_params(0, 48);
    p.uniqueness_ratio = ratio;
    ElasDebug dbg;
    Image<int16_t> d;
    const Image<uint8_t> m = test_scenes::random_mask(160, 100, 5), mr = test_scenes::random_mask(160, 100, 6);
    elas_match(grey_of(pair.left_rgba), grey_of(pair.right_rgba), p, d, nullptr, &m, &mr, &dbg);
    Inputs in;
    for (int k = 0; k < 2; ++k) {
      in.descriptors[k] = dbg.descriptors[k];
      in.mu_q4[k] = dbg.mu_q4[k];
    }
    in.support = dbg.support.d;
    in.mask[0] = m;
    in.mask[1] = mr;
    const Steps r = reference_steps(in, p);
    EXPECT_TRUE(same_image(dbg.raw[0], r.raw[0]));
    EXPECT_TRUE(same_image(dbg.raw[1], r.raw[1]));
    EXPECT_TRUE(same_image(dbg.best, r.best));
    EXPECT_TRUE(same_image(dbg.rival, r.rival));
    EXPECT_TRUE(same_image(dbg.checked[0], r.checked[0]));
    EXPECT_TRUE(same_image(dbg.checked[1], r.checked[1]));
    EXPECT_TRUE(same_image(dbg.disparity, r.disparity));
  }
}

TEST(CudaElasDense, GeneratedPairsMatchReference) {
  struct Case {
    std::string name;
    Image<uint8_t> left, right;
    ElasParams p;
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, const SyntheticPair& pair, const ElasParams& p) {
    cases.push_back({std::move(name), grey_of(pair.left_rgba), grey_of(pair.right_rgba), p});
  };
  add("step 203x131, 0..48", make_step_pair(203, 131, 6, 30, 1), elas_params(0, 48));
  {
    ElasParams p = elas_params(0, 64);
    p.uniqueness_ratio = 15;
    add("step 257x120, uniqueness 15", make_step_pair(257, 120, 10, 40, 4), p);
  }
  {
    ElasParams p = elas_params(0, 32);
    p.fill_all = false;
    add("plane 97x61 at 17, fill_all off", make_plane_pair(97, 61, 17, 3), p);
  }
  {
    ElasParams p = elas_params(12, 90);
    add("slanted 321x157, min 12", make_slanted_pair(321, 157, 20.0f, 0.1f, 7), p);
  }
  {
    ElasParams p = elas_params(33, 200);
    p.fill_all = false;
    p.uniqueness_ratio = 15;
    add("step 333x77, 33..200, fill_all off, uniqueness 15", make_step_pair(333, 77, 40, 90, 5), p);
  }
  add("plane 64x48, max 16", make_plane_pair(64, 48, 9, 11), elas_params(0, 16));
  add("step 150x90, max 1000 (beyond the width)", make_step_pair(150, 90, 8, 30, 8), elas_params(0, 1000));
  add("plane 101x37, max 300 (beyond the width)", make_plane_pair(101, 37, 21, 12), elas_params(0, 300));
  {
    Image<uint8_t> l, r;
    test_scenes::structured_pair(211, 93, 13, 21, &l, &r);
    ElasParams p = elas_params(0, 40);
    p.uniqueness_ratio = 15;
    cases.push_back({"structured 211x93 (flat patches, stripes)", l, r, p});
  }
  {
    const SyntheticPair f = make_sequence_frame(240, 160, 3, 10, 30, 60, 40, 4, 0, 9);
    add("sequence frame 240x160", f, elas_params(0, 64));
  }
  {
    ElasParams p = elas_params(0, 256);
    add("step 1920x1080, 0..256", make_step_pair(1920, 1080, 20, 90, 2), p);
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    check_pair(c.left, c.right, c.p);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CudaElasDense, MasksMatchReference) {
  const SyntheticPair pair = make_step_pair(223, 141, 7, 33, 17);
  const Image<uint8_t> l = grey_of(pair.left_rgba), r = grey_of(pair.right_rgba);
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind == 0 ? "random runs" : kind == 1 ? "boxes" : "all background");
    Image<uint8_t> ml, mr;
    if (kind == 0) {
      ml = test_scenes::random_mask(223, 141, 31);
      mr = test_scenes::random_mask(223, 141, 32);
    } else if (kind == 1) {
      ml = boxes_mask(223, 141, 33);
      mr = boxes_mask(223, 141, 34);
    } else {
      ml = mr = Image<uint8_t>(223, 141, 0);
    }
    for (bool fill_all : {true, false}) {
      ElasParams p = elas_params(0, 64);
      p.fill_all = fill_all;
      p.uniqueness_ratio = fill_all ? 0 : 15;
      check_pair(l, r, p, &ml, &mr, kind != 2);
    }
  }
}

TEST(CudaElasDense, DegenerateFramesMatchReference) {
  struct Case {
    const char* name;
    int w, h;
    int fill;  // -1: random grey, else a flat value
    int max_disparity;
  };
  const Case cases[] = {{"black 64x48", 64, 48, 0, 32},   {"flat 77x31", 77, 31, 128, 16},
                        {"1 x 40", 1, 40, -1, 16},         {"40 x 1", 40, 1, -1, 16},
                        {"1 x 1", 1, 1, -1, 16},           {"7 x 300", 7, 300, -1, 64},
                        {"300 x 7", 300, 7, -1, 64},       {"13 x 9 max 4096", 13, 9, -1, 4096}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Image<uint8_t> l = c.fill < 0 ? random_gray(c.w, c.h, 7) : Image<uint8_t>(c.w, c.h, c.fill);
    const Image<uint8_t> r = c.fill < 0 ? random_gray(c.w, c.h, 8) : l;
    check_pair(l, r, elas_params(0, c.max_disparity), nullptr, nullptr, false);
  }
}

// Random inputs: descriptors from a small alphabet (equal energies
// everywhere: the tie rules), support points in and outside the range and
// the image, priors absent, near, far and at the ends of int32.
Inputs random_inputs(int w, int h, const ElasParams& p, uint32_t seed, int mask_kind, int alphabet) {
  std::mt19937 rng(seed);
  Inputs in;
  const int lo = p.support.min_disparity, hi = p.support.max_disparity;
  for (int k = 0; k < 2; ++k) {
    in.descriptors[k] = Image<ElasDescriptor>(w, h);
    for (ElasDescriptor& d : in.descriptors[k].pixels)
      for (uint8_t& b : d) b = static_cast<uint8_t>(alphabet >= 256 ? rng() & 255 : 120 + rng() % alphabet);
  }
  const int s = std::max(1, p.support.candidate_step);
  in.support = Image<int16_t>((w + s - 1) / s, (h + s - 1) / s, int16_t{-1});
  for (int16_t& d : in.support.pixels) {
    const uint32_t r = rng() % 8;
    if (r < 3) d = static_cast<int16_t>(lo + static_cast<int>(rng() % std::max(1, std::min(hi - lo, 4096))));
    else if (r == 3) d = static_cast<int16_t>(rng() % (hi + 40));  // anywhere, beyond the range too
  }
  for (int k = 0; k < 2; ++k) {
    in.mu_q4[k] = Image<int32_t>(w, h);
    for (int32_t& mu : in.mu_q4[k].pixels) {
      const uint32_t r = rng() % 50;
      if (r < 10) mu = kNoPrior;
      else if (r == 10) mu = INT32_MAX - static_cast<int32_t>(rng() % 20);
      else if (r == 11) mu = INT32_MIN + 1 + static_cast<int32_t>(rng() % 20);
      else if (r == 12) mu = static_cast<int32_t>(rng() % 4000000) - 2000000;
      else if (r == 13) mu = -static_cast<int32_t>(rng() % 200);
      else mu = 16 * (lo - 8 + static_cast<int32_t>(rng() % (std::min(hi - lo, 2000) + 16))) +
                static_cast<int32_t>(rng() % 33) - 16;
    }
  }
  if (mask_kind == 1) {
    in.mask[0] = test_scenes::random_mask(w, h, seed + 1);
    in.mask[1] = test_scenes::random_mask(w, h, seed + 2);
  } else if (mask_kind == 2) {
    in.mask[0] = boxes_mask(w, h, seed + 3);
    in.mask[1] = boxes_mask(w, h, seed + 4);
  }
  return in;
}

TEST(CudaElasDense, RandomInputsMatchReference) {
  struct Case {
    int w, h, lo, hi, alphabet, mask_kind, ratio, sradius, grid;
    bool fill_all;
    int speckle_size, gap_width;
  };
  const Case cases[] = {
      {131, 77, 0, 64, 3, 0, 0, 2, 20, true, 200, 3},     {131, 77, 0, 64, 3, 0, 15, 2, 20, false, 200, 3},
      {200, 120, 5, 100, 256, 1, 15, 2, 20, true, 20, 3}, {97, 203, 40, 1000, 4, 2, 0, 3, 17, false, 5, 7},
      {61, 45, 0, 4096, 2, 0, 15, 2, 20, true, 1, 0},     {250, 64, 3, 35, 5, 1, 0, 0, 8, false, 50, 1},
      {1, 90, 0, 16, 3, 0, 0, 2, 20, true, 2, 3},         {90, 1, 0, 16, 3, 1, 0, 2, 20, true, 2, 3},
      {333, 200, 0, 128, 3, 0, 30, 5, 33, true, 30, 3},   {64, 64, 0, 33, 3, 2, 0, 1, 1, false, 3, 2},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " range " << c.lo << ".." << c.hi << " alphabet "
                                      << c.alphabet << " mask " << c.mask_kind << " ratio " << c.ratio
                                      << " sradius " << c.sradius << " grid " << c.grid << " fill_all "
                                      << c.fill_all);
    ElasParams p = elas_params(c.lo, c.hi);
    p.uniqueness_ratio = c.ratio;
    p.sradius = c.sradius;
    p.grid_size = c.grid;
    p.fill_all = c.fill_all;
    p.speckle_size = c.speckle_size;
    p.gap_width = c.gap_width;
    p.speckle_similarity = 3;
    const Inputs in = random_inputs(c.w, c.h, p, ++seed, c.mask_kind, c.alphabet);
    const Steps cpu = reference_steps(in, p);
    EXPECT_GT(valid_pixels(cpu.raw[0]), 0u);
    Steps gpu;
    ASSERT_NO_FATAL_FAILURE(run_gpu(in, p, &gpu));
    expect_same_steps(cpu, gpu);
    if (::testing::Test::HasFailure()) return;
  }
}

// The sequence captured into a CUDA graph and replayed (no allocation, no
// synchronisation inside): the same results each replay.
TEST(CudaElasDense, GraphReplayMatchesReference) {
  const SyntheticPair pair = make_step_pair(180, 120, 6, 28, 21);
  ElasParams p = elas_params(0, 48);
  p.uniqueness_ratio = 15;
  ElasDebug dbg;
  Image<int16_t> d;
  elas_match(grey_of(pair.left_rgba), grey_of(pair.right_rgba), p, d, nullptr, nullptr, nullptr, &dbg);
  Inputs in;
  for (int k = 0; k < 2; ++k) {
    in.descriptors[k] = dbg.descriptors[k];
    in.mu_q4[k] = dbg.mu_q4[k];
  }
  in.support = dbg.support.d;
  const Steps cpu = reference_steps(in, p);
  DeviceFrame f;
  ASSERT_NO_FATAL_FAILURE(prepare(in, p, &f));
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const cudaError_t e = enqueue_elas_dense(f.views, elas_dense_params(p), f.buffers.scratch(), stream);
  ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(e, cudaSuccess);
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    SCOPED_TRACE(::testing::Message() << "replay " << replay);
    f.poison();
    ASSERT_CUDA(cudaGraphLaunch(exec, stream));
    ASSERT_CUDA(cudaStreamSynchronize(stream));
    expect_same_steps(cpu, download_steps(f));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(CudaElasDense, RefusesWhatDoesNotFit) {
  Inputs in = random_inputs(40, 30, elas_params(0, 64), 5, 0, 3);
  DeviceFrame f;
  ASSERT_NO_FATAL_FAILURE(prepare(in, elas_params(0, 64), &f));
  const ElasDenseScratch& s = f.buffers.scratch();
  ElasDenseParams p = elas_dense_params(elas_params(0, 64));
  ElasDenseParams wide = p;
  wide.max_disparity = 65;  // one word more a cell than allocated
  EXPECT_EQ(enqueue_elas_dense(f.views, wide, s, nullptr), cudaErrorInvalidValue);
  ElasDenseParams negative = p;
  negative.min_disparity = -1;
  EXPECT_EQ(enqueue_elas_dense(f.views, negative, s, nullptr), cudaErrorInvalidValue);
  ElasDenseParams beyond = p;
  beyond.max_disparity = kMaxDisparity + 1;
  EXPECT_EQ(enqueue_elas_dense(f.views, beyond, s, nullptr), cudaErrorInvalidValue);
  ElasDenseViews v = f.views;
  v.support.width -= 1;
  EXPECT_EQ(enqueue_elas_dense(v, p, s, nullptr), cudaErrorInvalidValue);
  v = f.views;
  v.mask[0] = f.confidence.cview();  // a left mask without a right one
  EXPECT_EQ(enqueue_elas_dense(v, p, s, nullptr), cudaErrorInvalidValue);
  ElasDenseBuffers b;
  EXPECT_EQ(b.allocate(40, 30, p, std::vector<uint16_t>(10, 0)), cudaErrorInvalidValue);
}

// ---------------------------------------------------------------- steps alone on random maps

// Random maps of disparities: runs of -1 and of values in a band (0 ..
// spread - 1), so that similar neighbours form components and holes form
// gaps of every length.
Image<int16_t> random_map(int w, int h, uint32_t seed, int hole_pct, int spread) {
  std::mt19937 rng(seed);
  Image<int16_t> m(w, h);
  int left = 0, value = 0;
  for (int16_t& d : m.pixels) {
    if (left == 0) {
      left = 1 + static_cast<int>(rng() % 9);
      value = static_cast<int>(rng() % 100) < hole_pct ? -1 : static_cast<int>(rng() % spread);
    }
    --left;
    d = static_cast<int16_t>(value < 0 ? -1 : std::min(spread - 1, value + static_cast<int>(rng() % 2)));
  }
  return m;
}

TEST(CudaElasDense, LeftRightCheckMatchesReference) {
  const int sizes[][2] = {{1, 1}, {1, 50}, {50, 1}, {97, 61}, {640, 33}};
  uint32_t seed = 300;
  for (const auto& s : sizes)
    for (int threshold : {0, 1, 2, 5}) {
      SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << " threshold " << threshold);
      Image<int16_t> l = random_map(s[0], s[1], ++seed, 20, std::min(s[0] + 3, 40));
      Image<int16_t> r = random_map(s[0], s[1], ++seed, 20, std::min(s[0] + 3, 40));
      const DeviceImage<int16_t> dl = upload(l), dr = upload(r);
      DeviceImage<int16_t> cl = make_device<int16_t>(s[0], s[1]), cr = make_device<int16_t>(s[0], s[1]);
      ASSERT_EQ(enqueue_elas_lr_check(dl.cview(), dr.cview(), cl.view(), cr.view(), threshold, nullptr), cudaSuccess);
      elas_lr_check(l, r, threshold);
      EXPECT_TRUE(same_image(l, download(cl))) << "E6 left";
      EXPECT_TRUE(same_image(r, download(cr))) << "E6 right";
    }
}

TEST(CudaElasDense, SpecklesMatchReferenceOnRandomMaps) {
  struct Case {
    int w, h, hole_pct, spread;
  };
  // Sizes around the 32 x 32 tiles, lines, and components that snake over
  // many tiles (few holes, a narrow band of values).
  const Case cases[] = {{1, 1, 0, 3},      {1, 77, 10, 3},    {77, 1, 10, 3},    {32, 32, 20, 4},
                        {33, 33, 20, 4},   {65, 31, 30, 3},   {200, 150, 5, 2},  {200, 150, 40, 6},
                        {1920, 1080, 10, 3}, {37, 2000, 15, 2}, {3000, 40, 15, 3}};
  const std::vector<uint16_t> table = elas_prior_table(0.02, 3, 1);
  uint32_t seed = 500;
  for (const Case& c : cases) {
    ElasDenseBuffers buffers;
    ASSERT_EQ(buffers.allocate(c.w, c.h, ElasDenseParams(), table), cudaSuccess);
    const Image<int16_t> map = random_map(c.w, c.h, ++seed, c.hole_pct, c.spread);
    const DeviceImage<int16_t> in = upload(map);
    DeviceImage<int16_t> out = make_device<int16_t>(c.w, c.h);
    for (int similarity : {0, 1, 3})
      for (int size : {0, 1, 2, 7, 60, 200, 5000, INT_MAX}) {
        SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " holes " << c.hole_pct << "% spread " << c.spread
                                          << " similarity " << similarity << " speckle_size " << size);
        Image<int16_t> ref = map;
        elas_remove_speckles(ref, size, similarity);
        ASSERT_EQ(enqueue_elas_speckles(in.cview(), out.view(), size, similarity, buffers.scratch(), nullptr),
                  cudaSuccess);
        EXPECT_TRUE(same_image(ref, download(out))) << "E7 speckles";
        if (::testing::Test::HasFailure()) return;
      }
  }
}

// A snake one pixel wide through a big frame (every other row, joined at
// alternate ends): one component that crosses the tiles' seams hundreds of
// times, kept or removed whole.
TEST(CudaElasDense, SpecklesJoinASnakeAcrossTiles) {
  const int w = 700, h = 501;
  Image<int16_t> map(w, h, int16_t{-1});
  size_t length = 0;
  for (int y = 0; y < h; ++y) {
    if (y % 2 == 0) {
      for (int x = 0; x < w; ++x) map.at(x, y) = 7;
      length += w;
    } else {
      map.at(y % 4 == 1 ? w - 1 : 0, y) = 7;
      ++length;
    }
  }
  ElasDenseBuffers buffers;
  ASSERT_EQ(buffers.allocate(w, h, ElasDenseParams(), elas_prior_table(0.02, 3, 1)), cudaSuccess);
  const DeviceImage<int16_t> in = upload(map);
  DeviceImage<int16_t> out = make_device<int16_t>(w, h);
  for (int size : {200, 1 << 30}) {
    Image<int16_t> ref = map;
    elas_remove_speckles(ref, size, 0);
    ASSERT_EQ(enqueue_elas_speckles(in.cview(), out.view(), size, 0, buffers.scratch(), nullptr), cudaSuccess);
    EXPECT_TRUE(same_image(ref, download(out))) << "speckle_size " << size << ", snake of " << length;
  }
}

// The gap rule, each pass alone (W x 1: rows only; 1 x H: columns only)
// and both (2-D maps), on many random lines: holes of every length, masks
// that cut them, valid disparities on the background (the rule reads them
// as ends too), every gap width around the runs' lengths, fill_all on and off.
TEST(CudaElasDense, GapsMatchReferenceOnRandomLines) {
  const int sizes[][2] = {{1, 1},    {2, 1},   {1, 2},    {257, 1},  {1, 257},  {5000, 1}, {1, 5000},
                          {300, 200}, {1920, 40}, {37, 1100}, {255, 256}, {2049, 3}};
  uint32_t seed = 700;
  for (const auto& s : sizes)
    for (int hole_pct : {10, 60, 95})
      for (int mask_kind : {0, 1, 2}) {
        const int w = s[0], h = s[1];
        const Image<int16_t> map = random_map(w, h, ++seed, hole_pct, 50);
        Image<uint8_t> mask;
        if (mask_kind == 1) mask = test_scenes::random_mask(w, h, seed);
        if (mask_kind == 2) {
          std::mt19937 rng(seed);
          mask = Image<uint8_t>(w, h);
          for (uint8_t& m : mask.pixels) m = rng() % 7 == 0 ? 0 : 1;
        }
        const DeviceImage<int16_t> in = upload(map);
        const DeviceImage<uint8_t> dmask = mask_kind ? upload(mask) : DeviceImage<uint8_t>();
        DeviceImage<int16_t> work = make_device<int16_t>(w, h);
        for (bool fill_all : {false, true})
          for (int gap_width : {0, 1, 3, 8}) {
            SCOPED_TRACE(::testing::Message() << w << "x" << h << " holes " << hole_pct << "% mask " << mask_kind
                                              << " fill_all " << fill_all << " gap_width " << gap_width);
            Image<int16_t> ref = map;
            elas_fill_gaps(ref, gap_width, fill_all, mask_kind ? &mask : nullptr);
            ASSERT_EQ(cudaMemcpy2D(work.view().data, work.view().pitch, in.view().data, in.view().pitch, w * 2, h,
                                   cudaMemcpyDeviceToDevice),
                      cudaSuccess);
            ElasFinishViews v;
            v.disparity = work.view();
            v.mask = dmask.cview();
            ASSERT_EQ(enqueue_elas_gaps(v, gap_width, fill_all, nullptr), cudaSuccess);
            EXPECT_TRUE(same_image(ref, download(work))) << "E7 gaps";
            if (::testing::Test::HasFailure()) return;
          }
      }
}

}  // namespace
}  // namespace cs::cuda::test
