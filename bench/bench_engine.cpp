// cs-bench-engine: the CUDA engine's time a frame on device-resident frames,
// on a real stereo pair or on generated scenes.
//
//   cs-bench-engine [--left FILE --right FILE [--label NAME]] [--scene LIST]
//                   [--sizes WxH,...] [--disparities D,...] [--frames N]
//                   [--batch-ms MS] [--singles N] [--stages] [--timeline] [--no-inflight] [--full-only]
//                   [--write-pairs DIR [--no-run]] [--profile] [--quick]
//
// Scenes (--scene, comma-separated):
//   pair         the files of --left/--right (PNG, JPEG, PGM/PPM: tools/imageio),
//                converted to grey with the engine's own luma rule and resized
//                to each size by area averaging (tools/area_resize.h: an exact
//                box filter, any ratio; the aspect ratio follows the size, so
//                disparities scale with width / the file's width)
//   textured     synthetic: textured slanted plane, grey (bench/content_scenes.h)
//   low-texture  synthetic: large flat areas with sensor noise, a sixth textured
//   wide-spread  synthetic: boxes whose disparities cover 0 .. D - 1 side by side
//   slanted      synthetic: the textured slanted plane as RGBA, 4 frames (the
//                scene of the numbers before issue 15)
//   sequence     synthetic: the background-model sequence (moving box), RGBA;
//                the engine runs with the background model on
//   surveillance the files of --left/--right in colour (area-averaged per
//                channel) as a static background, with objects covering each
//                fraction of --fractions (percent, default 0,5,10,25,50,75,100)
//                on every moving frame (common/moving_objects.h, fraction
//                spec; camera noise sigma 2): the engine's warm-up frames
//                (Params::warmup_frames) and 32 moving frames, all uploaded
//                once; batches of the moving frames (played forwards and
//                back) timed with the background model on after its warm-up,
//                then with it off; one `result scene=surveillance` line with
//                both times, their ratio and FrameStats' foreground fraction
//                (bench/surveillance_scene.h); with --stages and
//                --timeline, the model's frame stage by stage and as its
//                graph runs it too; with --profile, one moving frame with
//                the model and one without, stage by stage (no graph);
//                with --cameras N (N > 1), the moving frames also on N
//                engines side by side, a host thread each, model on and off
//                (a `cameras` line: frames a second in all); unless
//                --no-inflight, both runs timed again with two frames in
//                flight (background_inflight_ms, full_inflight_ms).
//                Not with --write-pairs
// Default: pair when --left is given, else slanted at every size and D plus
// sequence at D = 256 (the grid of the earlier tables). Grey scenes go to the
// engine as GRAY8 frames, RGBA ones as RGBA.
//
// For each scene x size x D: 20 frames of warm-up, then
//   batch     9 batches of N frames enqueued back to back on the engine's
//             stream between two CUDA events; median (min..max) ms a frame:
//             frames one at a time, each after the previous one. N: as many
//             frames as take --batch-ms (150) by the warm-up's pace, 10 to
//             --frames (200)
//   single    --singles frames timed one by one (event, enqueue, event, wait),
//             median: a frame on an idle GPU, launch included (as libSGM's
//             sgm-bench times its device_ms_median)
//   inflight  set_frames_in_flight(2) (full-frame scenes): 9 batches timed on
//             the host clock from the first enqueue to synchronize(); median
//   stages    (--stages) profile_stages 21 times, median per stage, stages
//             repeated per level summed; events between stages and no graph,
//             so the sum is a little above the graphed frame
//   timeline  (--timeline) profile_graph 21 times, median per mark: the
//             frame as its graph runs it (the method's branch beside the
//             frame's stream), ms from the frame's start to the end of each
//             stage on its stream (`@side`: the branch; `_L<l>`: level l);
//             `joined_L<l>` is when level l's refinement could start (the
//             frame's stream and the branch's work for l both done)
//   memory    device_bytes() of the engine with one set of buffers and with
//             two, and the device memory in use (cudaMemGetInfo) after warm-up
// Output: one `result` line (and `stages`, `timeline` lines) of key=value pairs per
// configuration as it finishes, then a readable table. Exit code 0 when every
// configuration ran, 1 when one failed, 2 for bad options, 77 without a GPU.
// --write-pairs DIR writes each grey scene's pair at each size (and D, for
// generated scenes) as 8-bit PGM, the exact pixels the engine gets, so that
// another program (libSGM's sgm-bench) can read them, and each surveillance
// configuration's frames as PPM views in a folder of their own
// (DIR/surveillance_WxH_D<d>_f<pct>, for cs-bench-cameras --sequence); with
// --no-run it stops there and needs no GPU.
// --profile brackets one frame after the warm-up with cudaProfilerStart/Stop,
// for `ncu --profile-from-start off` (every kernel of exactly one frame), and
// skips the timing.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "content_scenes.h"
#include "cuda_engine.h"
#include "cuda_scoped.h"
#include "engine_timing.h"
#include "rectify.h"
#include "rig_scene.h"
#include "surveillance_scene.h"
#include "synthetic.h"
#if CS_BENCH_FILES
#include "area_resize.h"
#include "imageio.h"
#endif

namespace {

using cs::bench::DeviceBuffers;
using cs::bench::EventPair;
using cs::bench::median;
using cs::tools::Args;

struct Config {
  std::string scene;
  int width, height, disparities;
  int fraction_pct = -1;  // surveillance: the share of the frame that moves
};

bool is_grey_scene(const std::string& s) { return s == "pair" || s == "textured" || s == "low-texture" || s == "wide-spread"; }
bool is_background_scene(const std::string& s) { return s == "sequence"; }
// The real pair as the example rig's distorted, turned cameras deliver it
// (rig_scene.h deliver_through_rig): "rig" rectified by the engine (stage 0,
// its cost), "rig-rectified" rectified here first (the same views from stage
// 1 on, without stage 0).
bool is_rig_scene(const std::string& s) { return s == "rig" || s == "rig-rectified"; }

// Host frames of one configuration, in the engine's input format.
struct HostFrames {
  cs::PixelFormat format = cs::PixelFormat::GRAY8;
  int bytes_per_pixel = 1;
  std::vector<std::vector<uint8_t>> lefts, rights;
};

struct Result {
  Config c;
  bool synthetic = true;
  std::string input;  // "gray" or "rgba"
  int levels = 0;
  int coarse_factor = 1;  // the coarse-range factor the frames used after the warm-up (0 given: the probe's)
  int frames_per_batch = 0;
  double batch_ms = 0, batch_min = 0, batch_max = 0;
  double single_ms = 0;
  double inflight_ms = 0;  // 0 when not measured
  size_t engine_bytes = 0, engine_bytes_inflight = 0, used_bytes = 0;
  std::vector<cs::cuda::StageTime> stages;
  std::vector<cs::cuda::TimelineMark> timeline;  // medians
  std::string error;
};

template <typename T>
std::vector<uint8_t> bytes_of(const cs::Image<T>& img) {
  const auto* p = reinterpret_cast<const uint8_t*>(img.pixels.data());
  return std::vector<uint8_t>(p, p + img.pixels.size() * sizeof(T));
}

#if CS_BENCH_FILES
// The real pair as read, grey (and in colour for the surveillance scene);
// resized copies are made per size.
struct SourcePair {
  cs::Image<uint8_t> left, right;
  cs::Image<uint32_t> left_rgba, right_rgba;
  // The colour pair at the last size asked (configurations come size by size).
  int rgba_width = 0, rgba_height = 0;
  cs::Image<uint32_t> left_rgba_sized, right_rgba_sized;
};
#endif

struct Options {
  std::string label = "pair";
  int frames = 200, singles = 50;
  double batch_ms = 150;
  int cameras = 1;  // surveillance: engines side by side (--cameras)
  bool stages = false, timeline = false, inflight = true, profile = false;
  // Matching parameters other than the defaults (A/B runs): -1 = default.
  int window = -1, hole_span = -1, min_support = -1, coarse_range_factor = -1, levels = -1;
  int method = 0, block_size = -1, uniqueness_ratio = -2;  // -2: the method's default (-1)
  int cross_tau = -1, cross_arm_length = -1, cross_truncation = -1, cross_census_weight = -1, sample_restore = -1;
#if CS_BENCH_FILES
  SourcePair* pair = nullptr;
#endif
};

// The engine's parameters for a range: the defaults but for the A/B options.
cs::Params params_of(const Options& o, int disparities) {
  cs::Params p;
  p.max_disparity = disparities;
  if (o.window >= 0) p.window = static_cast<cs::WindowVariant>(o.window);
  if (o.hole_span >= 0) p.hole_span = o.hole_span;
  if (o.levels >= 0) p.levels = o.levels;
  if (o.min_support >= 0) p.min_support = o.min_support;
  if (o.coarse_range_factor >= 0) p.coarse_range_factor = o.coarse_range_factor;
  p.method = static_cast<cs::Method>(o.method);
  if (o.block_size >= 0) p.match_block_size = o.block_size;
  if (o.cross_tau >= 0) p.cross_tau = o.cross_tau;
  if (o.cross_arm_length >= 0) p.cross_arm_length = o.cross_arm_length;
  if (o.cross_truncation >= 0) p.cross_truncation = o.cross_truncation;
  if (o.cross_census_weight >= 0) p.cross_census_weight = o.cross_census_weight;
  if (o.sample_restore >= 0) p.sample_restore = o.sample_restore;
  if (o.uniqueness_ratio >= -1) p.uniqueness_ratio = o.uniqueness_ratio;
  return p;
}

// The grey pair of a grey scene at one size and range.
std::string grey_pair(const Config& c, const Options& o, cs::bench::GreyPair* out) {
  if (c.scene == "pair") {
#if CS_BENCH_FILES
    out->left = cs::tools::area_resize(o.pair->left, c.width, c.height);
    out->right = cs::tools::area_resize(o.pair->right, c.width, c.height);
    return {};
#else
    (void)o;
    return "this build reads no image files (built without libpng)";
#endif
  }
  if (!cs::bench::make_content_scene(c.scene, c.width, c.height, c.disparities, out))
    return "unknown scene '" + c.scene + "'";
  return {};
}

std::string host_frames(const Config& c, const Options& o, HostFrames* f) {
  if (is_grey_scene(c.scene)) {
    cs::bench::GreyPair g;
    std::string err = grey_pair(c, o, &g);
    if (!err.empty()) return err;
    f->format = cs::PixelFormat::GRAY8;
    f->bytes_per_pixel = 1;
    f->lefts.push_back(bytes_of(g.left));
    f->rights.push_back(bytes_of(g.right));
    return {};
  }
  // The RGBA scenes of the earlier tables, four distinct frames cycled (a
  // moving object for the background model).
  f->format = cs::PixelFormat::RGBA;
  f->bytes_per_pixel = 4;
  if (is_rig_scene(c.scene)) {
#if CS_BENCH_FILES
    if (!o.pair) return "--scene " + c.scene + " needs --left and --right (a real pair)";
    const cs::StereoCalibration rig = cs::example_rig(c.width, c.height);
    cs::StereoRectification r;
    std::string err = cs::stereo_rectify(rig, c.width, c.height, 0.0, &r);
    if (!err.empty()) return err;
    cs::RigScene seen = cs::deliver_through_rig(rig, r, cs::tools::area_resize(o.pair->left_rgba, c.width, c.height),
                                                cs::tools::area_resize(o.pair->right_rgba, c.width, c.height));
    if (c.scene == "rig-rectified") {
      const auto maps = cs::make_rectification_maps(rig, r);
      cs::Image<uint32_t> l, rr;
      cs::rectify_view(cs::rgba_view(seen.left), maps->map[0], l);
      cs::rectify_view(cs::rgba_view(seen.right), maps->map[1], rr);
      seen.left = l;
      seen.right = rr;
    }
    f->lefts.push_back(bytes_of(seen.left));
    f->rights.push_back(bytes_of(seen.right));
    return {};
#else
    return "--scene " + c.scene + " needs a build with the image tools (a real pair)";
#endif
  }
  const int dmax = std::max(1, c.disparities - 8);
  for (int i = 0; i < 4; ++i) {
    const cs::SyntheticPair pair =
        is_background_scene(c.scene)
            ? cs::make_sequence_frame(c.width, c.height, i * 4, dmax / 4, dmax, c.width / 4, c.height / 4,
                                      c.width / 100 + 1, 0, 9)
            : cs::make_slanted_pair(c.width, c.height, dmax * 0.2f, dmax * 0.7f / c.width, 9 + i);
    f->lefts.push_back(bytes_of(pair.left_rgba));
    f->rights.push_back(bytes_of(pair.right_rgba));
  }
  return {};
}

#define BENCH_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      r.error = std::string(#call) + ": " + cudaGetErrorString(e_);             \
      return r;                                                                 \
    }                                                                           \
  } while (0)

Result run(const Config& c, const Options& o) {
  Result r;
  r.c = c;
  r.synthetic = c.scene != "pair" && !is_rig_scene(c.scene);
  const bool background = is_background_scene(c.scene);
  HostFrames hf;
  if ((r.error = host_frames(c, o, &hf)) != "") return r;
  r.input = hf.format == cs::PixelFormat::GRAY8 ? "gray" : "rgba";

  size_t free0 = 0, total = 0;
  cudaMemGetInfo(&free0, &total);
  cs::Params p = params_of(o, c.disparities);
  p.background = background;
  p.warmup_frames = 5;
  if (c.scene == "rig") {
    const cs::StereoCalibration rig = cs::example_rig(c.width, c.height);
    cs::StereoRectification rect;
    if ((r.error = cs::stereo_rectify(rig, c.width, c.height, 0.0, &rect)) != "") return r;
    p.rectification = cs::make_rectification_maps(rig, rect);
  }
  std::string err;
  auto engine = cs::cuda::CudaEngine::create(p, -1, &err);
  if (!engine) {
    r.error = err;
    return r;
  }
  DeviceBuffers buffers;
  std::vector<cs::FrameView> lefts, rights;
  const int row_bytes = c.width * hf.bytes_per_pixel;
  for (size_t i = 0; i < hf.lefts.size(); ++i)
    for (const auto* img : {&hf.lefts[i], &hf.rights[i]}) {
      void* d = nullptr;
      size_t pitch = 0;
      BENCH_CUDA(cudaMallocPitch(&d, &pitch, row_bytes, c.height));
      buffers.list.push_back(d);
      BENCH_CUDA(cudaMemcpy2D(d, pitch, img->data(), row_bytes, row_bytes, c.height, cudaMemcpyHostToDevice));
      cs::FrameView v;
      v.format = hf.format;
      v.width = c.width;
      v.height = c.height;
      v.memory = cs::Memory::Device;
      v.plane[0] = static_cast<const uint8_t*>(d);
      v.pitch[0] = static_cast<std::ptrdiff_t>(pitch);
      (img == &hf.lefts[i] ? lefts : rights).push_back(v);
    }
  const size_t distinct = lefts.size();
  void* out = nullptr;
  size_t out_pitch = 0;
  BENCH_CUDA(cudaMallocPitch(&out, &out_pitch, c.width * 2, c.height));
  buffers.list.push_back(out);
  cs::OutputFrame of{static_cast<uint8_t*>(out), static_cast<std::ptrdiff_t>(out_pitch), c.width, c.height,
                     cs::Memory::Device};
  cs::EncodeParams ep;
  ep.format = cs::OutputFormat::DisparityQ4;
  auto one = [&](int i) { return engine->enqueue(lefts[i % distinct], rights[i % distinct], ep, of, nullptr); };
  auto fail = [&](const std::string& e) {
    r.error = e;
    return r;
  };
  EventPair events;
  cudaEvent_t a = events.a, b = events.b;
  // Warm-up: 5 frames, then 15 timed to size the batches.
  for (int i = 0; i < 20 && err.empty(); ++i) {
    if (i == 5) cudaEventRecord(a, engine->stream());
    err = one(i);
  }
  cudaEventRecord(b, engine->stream());
  if (err.empty()) err = engine->synchronize();
  float warm_ms = 0;
  cudaEventElapsedTime(&warm_ms, a, b);
  if (!err.empty()) return fail(err);
  r.levels = engine->stats().levels;
  r.coarse_factor = engine->stats().coarse_range_factor;
  if (o.profile) {
    cudaProfilerStart();
    err = one(0);
    if (err.empty()) err = engine->synchronize();
    cudaProfilerStop();
    if (!err.empty()) return fail(err);
    return r;
  }
  size_t free1 = 0;
  cudaMemGetInfo(&free1, &total);
  r.used_bytes = free0 > free1 ? free0 - free1 : 0;
  r.engine_bytes = engine->device_bytes();

  // A batch lasts about o.batch_ms (at least 10 frames, at most o.frames), so
  // that a slow configuration does not take the whole run.
  const double frame_estimate = std::max(1e-3, warm_ms / 15.0);
  const int n = std::clamp(static_cast<int>(o.batch_ms / frame_estimate + 0.5), std::min(10, o.frames), o.frames);
  r.frames_per_batch = n;
  constexpr int kBatches = 9;
  std::vector<double> per_frame;
  for (int k = 0; k < kBatches && err.empty(); ++k) {
    cudaEventRecord(a, engine->stream());
    for (int i = 0; i < n && err.empty(); ++i) err = one(i);
    cudaEventRecord(b, engine->stream());
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    per_frame.push_back(ms / n);
  }
  std::vector<double> singles;
  for (int k = 0; k < o.singles && err.empty(); ++k) {
    cudaEventRecord(a, engine->stream());
    err = one(k);
    cudaEventRecord(b, engine->stream());
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    singles.push_back(ms);
  }
  if (!err.empty()) return fail(err);
  r.batch_ms = median(per_frame);
  r.batch_min = *std::min_element(per_frame.begin(), per_frame.end());
  r.batch_max = *std::max_element(per_frame.begin(), per_frame.end());
  r.single_ms = median(singles);
  if (!background && o.inflight) {
    err = cs::bench::time_two_in_flight(*engine, 20, n, kBatches, one, &r.inflight_ms);
    r.engine_bytes_inflight = engine->device_bytes();
    if (err.empty()) err = engine->set_frames_in_flight(1);
    if (!err.empty()) return fail(err);
  }
  if (o.stages) {
    std::map<std::string, std::vector<double>> acc;
    std::vector<std::string> order;
    for (int k = 0; k < 21; ++k) {
      std::vector<cs::cuda::StageTime> t;
      if ((err = engine->profile_stages(&t)) != "") return fail("profile_stages: " + err);
      std::map<std::string, double> sum;  // stages repeated per level add up
      for (auto& s : t) {
        if (!sum.count(s.name) && k == 0) order.push_back(s.name);
        sum[s.name] += s.ms;
      }
      for (auto& kv : sum) acc[kv.first].push_back(kv.second);
    }
    for (auto& name : order) r.stages.push_back({name, static_cast<float>(median(acc[name]))});
  }
  if (o.timeline) {
    std::vector<std::vector<double>> acc;
    for (int k = 0; k < 21; ++k) {
      std::vector<cs::cuda::TimelineMark> t;
      if ((err = engine->profile_graph(&t)) != "") return fail("profile_graph: " + err);
      if (k == 0) {
        r.timeline = t;
        acc.resize(t.size());
      }
      if (t.size() != acc.size()) return fail("profile_graph: the marks changed from one run to the next");
      for (size_t i = 0; i < t.size(); ++i) acc[i].push_back(t[i].ms);
    }
    for (size_t i = 0; i < acc.size(); ++i) r.timeline[i].ms = static_cast<float>(median(acc[i]));
  }
  const cudaError_t last = cudaGetLastError();
  if (last != cudaSuccess) r.error = cudaGetErrorString(last);
  return r;
}

#if CS_BENCH_FILES
// The colour pair at a configuration's size (resized once a size).
void size_colour_pair(SourcePair& s, int width, int height) {
  if (s.rgba_width == width && s.rgba_height == height) return;
  s.left_rgba_sized = cs::tools::area_resize(s.left_rgba, width, height);
  s.right_rgba_sized = cs::tools::area_resize(s.right_rgba, width, height);
  s.rgba_width = width;
  s.rgba_height = height;
}

// One view of a surveillance frame as an 8-bit PPM.
std::string write_rgba_ppm(const std::string& path, const cs::Image<uint32_t>& view) {
  cs::tools::Picture pic;
  pic.width = view.width;
  pic.height = view.height;
  pic.channels = 3;
  pic.samples.resize(view.pixels.size() * 3);
  for (size_t i = 0; i < view.pixels.size(); ++i)
    for (int ch = 0; ch < 3; ++ch) pic.samples[3 * i + ch] = (view.pixels[i] >> (8 * ch)) & 255;
  return cs::tools::write_pnm(path, pic);
}

// The surveillance scene of a configuration as files, for the element's
// bench (cs-bench-cameras --sequence DIR): left_NNN.ppm and right_NNN.ppm
// for each frame (the warm-up's, then the cycle's moving frames) and
// sequence.txt naming how many of each and how they are played.
std::string write_surveillance(const Config& c, const Options& o, const std::string& dir) {
  SourcePair& s = *o.pair;
  size_colour_pair(s, c.width, c.height);
  const cs::bench::SurveillanceConfig sc{c.width, c.height, c.disparities, c.fraction_pct, 1};
  cs::bench::SurveillanceSequence seq;
  std::string err = cs::bench::render_surveillance(sc, s.left_rgba_sized, s.right_rgba_sized,
                                                   params_of(o, c.disparities).warmup_frames, &seq);
  if (!err.empty()) return err;
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return "cannot make " + dir + ": " + made.message();
  char name[32];
  for (size_t i = 0; i < seq.frames.size() && err.empty(); ++i) {
    std::snprintf(name, sizeof name, "/left_%03zu.ppm", i);
    err = write_rgba_ppm(dir + name, seq.frames[i].left_rgba);
    std::snprintf(name, sizeof name, "/right_%03zu.ppm", i);
    if (err.empty()) err = write_rgba_ppm(dir + name, seq.frames[i].right_rgba);
  }
  if (!err.empty()) return err;
  FILE* f = std::fopen((dir + "/sequence.txt").c_str(), "w");
  if (!f) return "cannot write " + dir + "/sequence.txt";
  // cs-bench-cameras reads the first three lines.
  std::fprintf(f, "warmup %d\nmoving %d\nplay bounce\n", seq.spec.warmup_frames, cs::bench::kSurveillanceCycleFrames);
  std::fprintf(f, "# cs-bench-engine --scene surveillance: %s at %dx%d, objects on %d %% of the left view at "
               "disparity %d (D = %d), noise sigma %.1f.\n# The warm-up frames play once, then the moving frames "
               "forwards and backwards (0 .. %d, %d .. 1, 0 ..).\n",
               o.label.c_str(), c.width, c.height, c.fraction_pct, seq.object_disparity, c.disparities,
               seq.spec.noise_sigma, cs::bench::kSurveillanceCycleFrames - 1, cs::bench::kSurveillanceCycleFrames - 2);
  return std::fclose(f) == 0 ? std::string() : "cannot write " + dir + "/sequence.txt";
}
#endif

// The surveillance scene of one configuration: the colour pair at its size,
// then surveillance_scene.h's run.
cs::bench::SurveillanceResult run_surveillance(const Config& c, const Options& o) {
  cs::bench::SurveillanceConfig sc{c.width, c.height, c.disparities, c.fraction_pct, o.cameras};
#if CS_BENCH_FILES
  SourcePair& s = *o.pair;
  size_colour_pair(s, c.width, c.height);
  return cs::bench::run_surveillance(sc, s.left_rgba_sized, s.right_rgba_sized, params_of(o, c.disparities),
                                     o.batch_ms, o.frames, o.stages, o.timeline, o.profile, o.inflight);
#else
  (void)o;
  cs::bench::SurveillanceResult r;
  r.c = sc;
  r.error = "this build reads no image files (built without libpng)";
  return r;
#endif
}

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

// Stage names as keys: "match coarsest" -> "match_coarsest".
std::string key_of(std::string name) {
  for (char& ch : name)
    if (ch == ' ') ch = '_';
  return name;
}

const char* method_name(const Options& o) { return cs::tools::method_name(static_cast<cs::Method>(o.method)); }

std::string scene_name(const Result& r, const Options& o) { return r.c.scene == "pair" ? o.label : r.c.scene; }

void print_result_line(const Result& r, const Options& o) {
  std::printf("result scene=%s kind=%s input=%s size=%s D=%d mode=%s", scene_name(r, o).c_str(),
              r.synthetic ? "synthetic" : "real", r.input.c_str(), size_text(r.c.width, r.c.height).c_str(),
              r.c.disparities, is_background_scene(r.c.scene) ? "background" : "full");
  if (!r.error.empty()) {
    std::printf(" error=\"%s\"\n", r.error.c_str());
    return;
  }
  std::printf(" method=%s levels=%d coarse_factor=%d", method_name(o), r.levels, r.coarse_factor);
  if (o.method == static_cast<int>(cs::Method::Cross)) {
    const cs::Params p = params_of(o, r.c.disparities);
    std::printf(" cross_tau=%d cross_arm_length=%d cross_truncation=%d cross_census_weight=%d sample_restore=%d",
                p.cross_tau, p.cross_arm_length, p.cross_truncation, p.cross_census_weight, p.sample_restore);
  }
  if (o.profile) {
    std::printf(" profiled=1\n");
    return;
  }
  std::printf(" batch_ms=%.4f batch_min_ms=%.4f batch_max_ms=%.4f frames_per_batch=%d single_ms=%.4f", r.batch_ms,
              r.batch_min, r.batch_max, r.frames_per_batch, r.single_ms);
  if (r.inflight_ms > 0) std::printf(" inflight_ms=%.4f", r.inflight_ms);
  std::printf(" fps=%.0f", 1000.0 / r.batch_ms);
  if (r.inflight_ms > 0) std::printf(" inflight_fps=%.0f", 1000.0 / r.inflight_ms);
  std::printf(" engine_mib=%.1f", r.engine_bytes / 1048576.0);
  if (r.engine_bytes_inflight) std::printf(" engine_inflight_mib=%.1f", r.engine_bytes_inflight / 1048576.0);
  std::printf(" used_mib=%.1f\n", r.used_bytes / 1048576.0);
  if (!r.stages.empty()) {
    std::printf("stages scene=%s size=%s D=%d mode=%s", scene_name(r, o).c_str(),
                size_text(r.c.width, r.c.height).c_str(), r.c.disparities,
                is_background_scene(r.c.scene) ? "background" : "full");
    double sum = 0;
    for (auto& s : r.stages) {
      std::printf(" %s=%.4f", key_of(s.name).c_str(), s.ms);
      sum += s.ms;
    }
    std::printf(" sum=%.4f\n", sum);
  }
  if (!r.timeline.empty()) {
    std::printf("timeline scene=%s size=%s D=%d mode=%s", scene_name(r, o).c_str(),
                size_text(r.c.width, r.c.height).c_str(), r.c.disparities,
                is_background_scene(r.c.scene) ? "background" : "full");
    for (auto& k : r.timeline) {
      std::string key = key_of(k.name);
      if (k.level >= 0) key += "_L" + std::to_string(k.level);
      if (k.side) key += "@side";
      std::printf(" %s=%.4f", key.c_str(), k.ms);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: cs-bench-engine [--left FILE --right FILE [--label NAME]] [--scene LIST] [--sizes WxH,...]\n"
      "         [--disparities D,...] [--frames N] [--batch-ms MS] [--singles N] [--stages] [--timeline] [--no-inflight]\n"
      "         [--full-only] [--write-pairs DIR [--no-run]] [--profile] [--quick]\n"
      "         [--window 0|1|2|4] [--hole-span N] [--min-support N] [--coarse-range-factor N] [--levels N]   (matching parameters, A/B runs)\n"
      "         [--method progressive|block|cross|elas] [--block-size N] [--uniqueness-ratio R] [--fractions PCT,...]\n"
      "         [--cross-tau N] [--cross-arm-length N] [--cross-truncation N] [--cross-census-weight N]\n"
      "         [--sample-restore S]   (method cross)\n"
      "         [--cameras N]   (surveillance: N engines side by side too)\n"
      "  scenes: pair (the files), textured, low-texture, wide-spread (synthetic, grey),\n"
      "          rig (the files as the example rig's distorted cameras deliver them, rectified by the engine),\n"
      "          rig-rectified (the same views rectified beforehand: rig's frames without the rectification),\n"
      "          slanted, sequence (synthetic, RGBA; sequence runs the background model),\n"
      "          surveillance (the files in colour with objects on --fractions of the frame, default\n"
      "          0,5,10,25,50,75,100 percent: background model on against off)\n";
  Args args;
  std::string error = args.parse(argc, argv,
                                 {{"left", true}, {"right", true}, {"label", true}, {"scene", true},
                                  {"sizes", true}, {"size", true}, {"disparities", true}, {"frames", true},
                                  {"batch-ms", true}, {"cameras", true}, {"singles", true}, {"stages", false}, {"timeline", false}, {"no-inflight", false},
                                  {"full-only", false}, {"write-pairs", true}, {"no-run", false},
                                  {"profile", false}, {"quick", false}, {"window", true}, {"hole-span", true},
                                  {"min-support", true}, {"coarse-range-factor", true}, {"levels", true}, {"method", true}, {"block-size", true}, {"uniqueness-ratio", true},
                                  {"cross-tau", true}, {"cross-arm-length", true}, {"cross-truncation", true},
                                  {"cross-census-weight", true},
                                  {"sample-restore", true},
                                  {"fractions", true}, {"help", false}});
  if (args.has("help")) {
    std::printf("%s", usage);
    return 0;
  }
  Options o;
  args.integer("frames", o.frames, 1, 100000, error);
  args.integer("window", o.window, 0, 4, error);
  args.integer("hole-span", o.hole_span, 0, cs::kMaxHoleSpan, error);
  args.integer("levels", o.levels, 0, cs::kMaxLevels, error);
  args.integer("min-support", o.min_support, 0, 8, error);
  args.integer("coarse-range-factor", o.coarse_range_factor, 0, cs::kMaxCoarseRangeFactor, error);
  args.integer("block-size", o.block_size, 3, cs::kMaxMatchBlockSize, error);
  args.integer("uniqueness-ratio", o.uniqueness_ratio, -1, cs::kMaxUniquenessRatio, error);
  args.integer("cross-tau", o.cross_tau, 0, cs::kMaxCrossTau, error);
  args.integer("cross-arm-length", o.cross_arm_length, 1, cs::kMaxCrossArm, error);
  args.integer("cross-truncation", o.cross_truncation, 1, cs::kMaxCrossTruncation, error);
  args.integer("cross-census-weight", o.cross_census_weight, 0, cs::kMaxCrossCensusWeight, error);
  args.integer("sample-restore", o.sample_restore, 1, cs::kMaxSampleRestore, error);
  const std::string method = args.text("method", "progressive");
  cs::Method m = cs::Method::Progressive;
  if (cs::tools::parse_method(method, m))
    o.method = static_cast<int>(m);
  else
    Args::add(error, "--method: '" + method + "' is not progressive, block, cross or elas");
  args.integer("singles", o.singles, 1, 100000, error);
  args.number("batch-ms", o.batch_ms, 1, 60000, error);
  args.integer("cameras", o.cameras, 1, 64, error);
  o.stages = args.has("stages");
  o.timeline = args.has("timeline");
  o.inflight = !args.has("no-inflight");
  o.profile = args.has("profile");
  o.label = args.text("label", "pair");
  const bool quick = args.has("quick"), full_only = args.has("full-only");
  const bool have_pair = args.has("left") || args.has("right");
  if (have_pair && !(args.has("left") && args.has("right"))) Args::add(error, "--left and --right go together");
  if (args.has("no-run") && !args.has("write-pairs")) Args::add(error, "--no-run needs --write-pairs DIR");

  std::vector<std::pair<int, int>> sizes;
  const std::string size_list = args.has("sizes") ? args.text("sizes") : args.text("size");
  for (const std::string& s : split(size_list)) {
    int w = 0, h = 0;
    char tail = 0;
    if (std::sscanf(s.c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 16 || h < 16 || w > 16384 || h > 16384)
      Args::add(error, "--sizes: '" + s + "' is not WxH (16 to 16384 each)");
    else
      sizes.push_back({w, h});
  }
  std::vector<int> ds;
  for (const std::string& s : split(args.text("disparities"))) {
    char* end = nullptr;
    const long d = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || d < 1 || d > 4096) Args::add(error, "--disparities: '" + s + "' is not 1 to 4096");
    else ds.push_back(static_cast<int>(d));
  }
  std::vector<std::string> scenes = split(args.text("scene"));
  for (const std::string& s : scenes)
    if (!is_grey_scene(s) && !is_rig_scene(s) && s != "slanted" && s != "sequence" && s != "surveillance")
      Args::add(error, "--scene: unknown scene '" + s + "'");
  if (!have_pair && std::count(scenes.begin(), scenes.end(), "pair"))
    Args::add(error, "--scene pair needs --left and --right");
  const bool surveillance = std::count(scenes.begin(), scenes.end(), "surveillance") != 0;
  if (surveillance && !have_pair) Args::add(error, "--scene surveillance needs --left and --right");
  std::vector<int> fractions;
  for (const std::string& s : split(args.text("fractions", "0,5,10,25,50,75,100"))) {
    char* end = nullptr;
    const long f = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || f < 0 || f > 100) Args::add(error, "--fractions: '" + s + "' is not a percentage 0 to 100");
    else fractions.push_back(static_cast<int>(f));
  }
  if (args.has("fractions") && !surveillance) Args::add(error, "--fractions belongs to --scene surveillance");
  if (args.has("cameras") && !surveillance) Args::add(error, "--cameras belongs to --scene surveillance");
  if (!error.empty()) {
    std::fprintf(stderr, "cs-bench-engine: %s\n%s", error.c_str(), usage);
    return 2;
  }

#if CS_BENCH_FILES
  SourcePair source;
  if (have_pair) {
    for (auto [path, img] : {std::pair{args.text("left"), &source.left}, std::pair{args.text("right"), &source.right}}) {
      const std::string err = cs::tools::read_grey(path, *img);
      if (!err.empty()) {
        std::fprintf(stderr, "cs-bench-engine: %s\n", err.c_str());
        return 1;
      }
    }
    if (surveillance || std::any_of(scenes.begin(), scenes.end(), is_rig_scene))
      for (auto [path, img] :
           {std::pair{args.text("left"), &source.left_rgba}, std::pair{args.text("right"), &source.right_rgba}}) {
        const std::string err = cs::tools::read_rgba(path, *img);
        if (!err.empty()) {
          std::fprintf(stderr, "cs-bench-engine: %s\n", err.c_str());
          return 1;
        }
      }
    if (source.left.width != source.right.width || source.left.height != source.right.height) {
      std::fprintf(stderr, "cs-bench-engine: the left view is %d x %d but the right view is %d x %d\n",
                   source.left.width, source.left.height, source.right.width, source.right.height);
      return 1;
    }
    o.pair = &source;
  }
#else
  if (have_pair) {
    std::fprintf(stderr, "cs-bench-engine: this build reads no image files (libpng was not found at build time)\n");
    return 2;
  }
#endif

  // The configurations: every scene x size x D given, or the earlier grid.
  std::vector<Config> configs;
  const bool legacy = scenes.empty() && !have_pair;
  if (scenes.empty()) scenes = have_pair ? std::vector<std::string>{"pair"} : std::vector<std::string>{"slanted", "sequence"};
  if (sizes.empty()) {
    sizes = {{640, 480}, {1024, 768}, {1920, 1080}, {3840, 2160}};
    if (quick) sizes = {{640, 480}, {1920, 1080}};
  }
  const bool default_ds = ds.empty();
  if (default_ds) ds = quick ? std::vector<int>{128, 256} : std::vector<int>{64, 128, 256, 512};
  for (const std::string& scene : scenes)
    for (auto s : sizes)
      for (int d : ds) {
        // The earlier grid ran the background model at D = 256 only.
        if (legacy && scene == "sequence" && default_ds && d != 256) continue;
        if (full_only && (is_background_scene(scene) || scene == "surveillance")) continue;
        if (scene == "surveillance") {
          for (int f : fractions) configs.push_back({scene, s.first, s.second, d, f});
          continue;
        }
        configs.push_back({scene, s.first, s.second, d});
      }

#if CS_BENCH_FILES
  if (args.has("write-pairs")) {
    const std::string dir = args.text("write-pairs");
    std::error_code made;
    std::filesystem::create_directories(dir, made);
    std::map<std::string, bool> written;
    for (const Config& c : configs) {
      if (c.scene == "surveillance") {
        const std::string seq_dir = dir + "/surveillance_" + size_text(c.width, c.height) + "_D" +
                                    std::to_string(c.disparities) + "_f" + std::to_string(c.fraction_pct);
        if (std::string err = write_surveillance(c, o, seq_dir); !err.empty()) {
          std::fprintf(stderr, "cs-bench-engine: %s\n", err.c_str());
          return 1;
        }
        std::printf("sequence %s\n", seq_dir.c_str());
        continue;
      }
      if (!is_grey_scene(c.scene)) continue;
      // The real pair does not depend on D; generated scenes do.
      std::string name = (c.scene == "pair" ? o.label : c.scene) + "_" + size_text(c.width, c.height);
      if (c.scene != "pair") name += "_D" + std::to_string(c.disparities);
      if (written[name]) continue;
      written[name] = true;
      cs::bench::GreyPair g;
      std::string err = grey_pair(c, o, &g);
      if (err.empty()) err = cs::tools::write_grey_pgm(dir + "/" + name + "_left.pgm", g.left);
      if (err.empty()) err = cs::tools::write_grey_pgm(dir + "/" + name + "_right.pgm", g.right);
      if (!err.empty()) {
        std::fprintf(stderr, "cs-bench-engine: %s\n", err.c_str());
        return 1;
      }
      std::printf("pair %s/%s_left.pgm %s/%s_right.pgm\n", dir.c_str(), name.c_str(), dir.c_str(), name.c_str());
    }
    if (args.has("no-run")) return 0;
  }
#else
  if (args.has("write-pairs")) {
    std::fprintf(stderr, "cs-bench-engine: --write-pairs needs a build with libpng (tools/imageio)\n");
    return 2;
  }
#endif

  std::string why;
  if (!cs::cuda::cuda_available(&why)) {
    std::fprintf(stderr, "cs-bench-engine: no GPU, nothing timed: %s\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
#if CS_BENCH_FILES
  if (have_pair)
    std::printf("pair: %s, %s (%d x %d, grey, area-averaged to each size)\n", args.text("left").c_str(),
                args.text("right").c_str(), source.left.width, source.left.height);
#endif

  std::vector<Result> results;
  std::vector<cs::bench::SurveillanceResult> watched;  // the surveillance scene's
  for (const Config& c : configs) {
    if (c.scene == "surveillance") {
      watched.push_back(run_surveillance(c, o));
      cs::bench::print_surveillance_line(watched.back(), o.label, method_name(o));
      continue;
    }
    results.push_back(run(c, o));
    print_result_line(results.back(), o);
  }
  if (o.profile) return 0;

  if (!results.empty())
    std::printf("\n%-12s %-9s %-5s %-11s %4s %-10s %3s %9s %17s %9s %9s %7s %8s %8s\n", "scene", "kind", "input",
                "size", "D", "mode", "lev", "ms/frame", "spread(min..max)", "single", "2 flight", "fps",
                "eng MiB", "used MiB");
  int failures = 0;
  for (const Result& r : results) {
    const std::string name = scene_name(r, o);
    const std::string size = size_text(r.c.width, r.c.height);
    const char* mode = is_background_scene(r.c.scene) ? "background" : "full";
    if (!r.error.empty()) {
      ++failures;
      std::printf("%-12s %-9s %-5s %-11s %4d %-10s ERROR %s\n", name.c_str(), r.synthetic ? "synthetic" : "real",
                  r.input.c_str(), size.c_str(), r.c.disparities, mode, r.error.c_str());
      continue;
    }
    char inflight[32] = "-";
    if (r.inflight_ms > 0) std::snprintf(inflight, sizeof inflight, "%.4f", r.inflight_ms);
    std::printf("%-12s %-9s %-5s %-11s %4d %-10s %3d %9.4f %8.4f..%-8.4f %9.4f %9s %7.0f %8.1f %8.1f\n",
                name.c_str(), r.synthetic ? "synthetic" : "real", r.input.c_str(), size.c_str(), r.c.disparities,
                mode, r.levels, r.batch_ms, r.batch_min, r.batch_max, r.single_ms, inflight, 1000.0 / r.batch_ms,
                r.engine_bytes / 1048576.0, r.used_bytes / 1048576.0);
  }
  if (!watched.empty()) {
    std::printf("\nsurveillance (%s in colour): background model on against off, ms a frame (median of %s)\n",
                o.label.c_str(), "9 batches");
    std::printf("%-11s %4s %6s %8s %8s %10s %10s %7s %4s\n", "size", "D", "moving", "true %", "mask %", "model ms",
                "full ms", "ratio", "lev");
  }
  for (const cs::bench::SurveillanceResult& r : watched) {
    const std::string size = size_text(r.c.width, r.c.height);
    if (!r.error.empty()) {
      ++failures;
      std::printf("%-11s %4d %5d%% ERROR %s\n", size.c_str(), r.c.disparities, r.c.fraction_pct, r.error.c_str());
      continue;
    }
    std::printf("%-11s %4d %5d%% %8.2f %8.2f %10.4f %10.4f %7.3f %4d\n", size.c_str(), r.c.disparities,
                r.c.fraction_pct, 100 * r.true_fraction, 100 * r.foreground_mean, r.background.ms, r.full.ms,
                r.background.ms / r.full.ms, r.levels);
  }
  return failures ? 1 : 0;
}
