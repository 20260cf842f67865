// cs-bench-engine: throughput of the CUDA engine on device-resident frames.
//
// For each configuration: warm-up, then batches of frames enqueued back to
// back between two CUDA events (the engine's graph replays, as the element
// drives it); the median batch gives ms per frame, min..max the spread.
// Full-frame configurations are timed again with two frames in flight
// (set_frames_in_flight(2): frames alternate between two sets of buffers
// and streams), each batch on the host clock from its first enqueue to
// synchronize(); "inflight" lines give those ms per frame and fps.
// Per-stage times come from profile_stages (events between stages, no
// graph), so their sum is a little above the graphed total.
//   cs-bench-engine [--quick] [--size WxH] [--disparities D] [--frames N] [--full-only] [--profile]
// --profile brackets one frame after the warm-up with cudaProfilerStart/Stop,
// for `ncu --profile-from-start off` (every kernel of exactly one frame).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda_engine.h"
#include "synthetic.h"

namespace {

struct Config {
  int width, height, disparities;
  bool background;
};

struct Result {
  Config c;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double inflight_ms = 0;  // two frames in flight (full-frame), median batch; 0 when not measured
  size_t engine_bytes = 0, peak_used_bytes = 0;
  std::vector<cs::cuda::StageTime> stages;
  std::string error;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

#define BENCH_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      r.error = std::string(#call) + ": " + cudaGetErrorString(e_);             \
      return r;                                                                 \
    }                                                                           \
  } while (0)

bool g_profile = false;

Result run(const Config& c, int frames_per_batch, int batches, bool stages) {
  Result r;
  r.c = c;
  size_t free0 = 0, total = 0;
  cudaMemGetInfo(&free0, &total);
  cs::Params p;
  p.max_disparity = c.disparities;
  p.background = c.background;
  p.warmup_frames = 5;
  std::string err;
  auto engine = cs::cuda::CudaEngine::create(p, -1, &err);
  if (!engine) {
    r.error = err;
    return r;
  }
  // A few distinct frames on the device, cycled (a moving object for the
  // background model; a slanted textured plane for full-frame matching).
  constexpr int kDistinct = 4;
  std::vector<void*> buffers;
  std::vector<cs::FrameView> lefts, rights;
  for (int i = 0; i < kDistinct; ++i) {
    const int dmax = std::max(1, c.disparities - 8);
    const cs::SyntheticPair pair =
        c.background ? cs::make_sequence_frame(c.width, c.height, i * 4, dmax / 4, dmax, c.width / 4, c.height / 4,
                                               c.width / 100 + 1, 0, 9)
                     : cs::make_slanted_pair(c.width, c.height, dmax * 0.2f, dmax * 0.7f / c.width, 9 + i);
    for (const auto* img : {&pair.left_rgba, &pair.right_rgba}) {
      void* d = nullptr;
      size_t pitch = 0;
      BENCH_CUDA(cudaMallocPitch(&d, &pitch, c.width * 4, c.height));
      BENCH_CUDA(cudaMemcpy2D(d, pitch, img->pixels.data(), c.width * 4, c.width * 4, c.height, cudaMemcpyHostToDevice));
      buffers.push_back(d);
      cs::FrameView v = cs::rgba_view(*img);
      v.memory = cs::Memory::Device;
      v.plane[0] = static_cast<const uint8_t*>(d);
      v.pitch[0] = static_cast<std::ptrdiff_t>(pitch);
      (img == &pair.left_rgba ? lefts : rights).push_back(v);
    }
  }
  void* out = nullptr;
  size_t out_pitch = 0;
  BENCH_CUDA(cudaMallocPitch(&out, &out_pitch, c.width * 2, c.height));
  cs::OutputFrame of{static_cast<uint8_t*>(out), static_cast<std::ptrdiff_t>(out_pitch), c.width, c.height,
                     cs::Memory::Device};
  cs::EncodeParams ep;
  ep.format = cs::OutputFormat::DisparityQ4;
  auto one = [&](int i) { return engine->enqueue(lefts[i % kDistinct], rights[i % kDistinct], ep, of, nullptr); };
  for (int i = 0; i < 20; ++i)
    if ((err = one(i)) != "") {
      r.error = err;
      return r;
    }
  if ((err = engine->synchronize()) != "") {
    r.error = err;
    return r;
  }
  if (g_profile) {
    cudaProfilerStart();
    err = one(0);
    if (err.empty()) err = engine->synchronize();
    cudaProfilerStop();
    if (!err.empty()) {
      r.error = err;
      return r;
    }
  }
  size_t free1 = 0;
  cudaMemGetInfo(&free1, &total);
  r.peak_used_bytes = free0 > free1 ? free0 - free1 : 0;
  r.engine_bytes = engine->device_bytes();

  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> per_frame;
  for (int k = 0; k < batches; ++k) {
    cudaEventRecord(a, engine->stream());
    for (int i = 0; i < frames_per_batch; ++i) one(i);
    cudaEventRecord(b, engine->stream());
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    per_frame.push_back(ms / frames_per_batch);
  }
  r.median_ms = median(per_frame);
  r.min_ms = *std::min_element(per_frame.begin(), per_frame.end());
  r.max_ms = *std::max_element(per_frame.begin(), per_frame.end());
  if (!c.background) {
    // Two frames in flight: the frames alternate between two streams, so a
    // batch is timed on the host from its first enqueue to synchronize().
    if ((err = engine->set_frames_in_flight(2)) != "") {
      r.error = err;
      return r;
    }
    for (int i = 0; i < 20; ++i) one(i);
    engine->synchronize();
    std::vector<double> inflight;
    for (int k = 0; k < batches; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < frames_per_batch; ++i) one(i);
      if ((err = engine->synchronize()) != "") {
        r.error = err;
        return r;
      }
      inflight.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                         frames_per_batch);
    }
    r.inflight_ms = median(inflight);
    if ((err = engine->set_frames_in_flight(1)) != "") {
      r.error = err;
      return r;
    }
  }
  if (stages) {
    std::map<std::string, std::vector<double>> acc;
    std::vector<std::string> order;
    for (int k = 0; k < 21; ++k) {
      std::vector<cs::cuda::StageTime> t;
      if (engine->profile_stages(&t) != "") break;
      std::map<std::string, double> sum;  // stages repeated per level add up
      for (auto& s : t) {
        if (!sum.count(s.name) && k == 0) order.push_back(s.name);
        sum[s.name] += s.ms;
      }
      for (auto& kv : sum) acc[kv.first].push_back(kv.second);
    }
    for (auto& n : order) r.stages.push_back({n, static_cast<float>(median(acc[n]))});
  }
  const cudaError_t last = cudaGetLastError();
  if (last != cudaSuccess) r.error = cudaGetErrorString(last);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  engine.reset();
  for (void* d : buffers) cudaFree(d);
  cudaFree(out);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!cs::cuda::cuda_available(&why)) {
    std::fprintf(stderr, "cs-bench-engine: no GPU: %s\n", why.c_str());
    return 77;
  }
  bool quick = false, full_only = false;
  int only_w = 0, only_h = 0, only_d = 0, frames = 200;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) std::sscanf(argv[++i], "%dx%d", &only_w, &only_h);
    else if (!std::strcmp(argv[i], "--disparities") && i + 1 < argc) only_d = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--full-only")) full_only = true;
    else if (!std::strcmp(argv[i], "--profile")) g_profile = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--size WxH] [--disparities D] [--frames N] [--full-only] [--profile]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

  std::vector<Config> configs;
  const std::pair<int, int> sizes[] = {{640, 480}, {1024, 768}, {1920, 1080}, {3840, 2160}};
  for (auto s : sizes)
    for (int d : {64, 128, 256, 512}) {
      if (quick && !(s.first == 1024 || d == 256)) continue;
      configs.push_back({s.first, s.second, d, false});
      if (d == 256) configs.push_back({s.first, s.second, d, true});
    }
  if (only_w) {
    configs.clear();
    configs.push_back({only_w, only_h, only_d ? only_d : 256, false});
    configs.push_back({only_w, only_h, only_d ? only_d : 256, true});
  }
  if (full_only)
    configs.erase(std::remove_if(configs.begin(), configs.end(), [](const Config& c) { return c.background; }),
                  configs.end());
  std::vector<Result> results;
  for (const Config& c : configs) {
    const bool stages = c.width == 1024 || only_w;
    const int n = c.width >= 3840 ? std::max(10, frames / 10) : (c.width >= 1920 ? std::max(20, frames / 4) : frames);
    results.push_back(run(c, n, 9, stages));
    const Result& r = results.back();
    if (!r.error.empty()) {
      std::printf("%dx%d D=%d %s: ERROR %s\n", c.width, c.height, c.disparities, c.background ? "bg" : "full",
                  r.error.c_str());
      continue;
    }
    if (!r.stages.empty()) {
      std::printf("stages %dx%d D=%d %s (median of 21, ms):", c.width, c.height, c.disparities,
                  c.background ? "background" : "full-frame");
      double sum = 0;
      for (auto& s : r.stages) {
        std::printf(" %s %.4f;", s.name.c_str(), s.ms);
        sum += s.ms;
      }
      std::printf(" sum %.4f\n", sum);
    }
  }
  std::printf("\n%-11s %4s %-10s %9s %17s %9s %10s %9s %9s\n", "size", "D", "mode", "ms/frame", "spread(min..max)",
              "fps", "Mde/s", "eng MiB", "used MiB");
  int failures = 0;
  for (const Result& r : results) {
    char size[32];
    std::snprintf(size, sizeof size, "%dx%d", r.c.width, r.c.height);
    if (!r.error.empty()) {
      ++failures;
      std::printf("%-11s %4d %-10s ERROR %s\n", size, r.c.disparities, r.c.background ? "background" : "full",
                  r.error.c_str());
      continue;
    }
    const double fps = 1000.0 / r.median_ms;
    std::printf("%-11s %4d %-10s %9.4f %8.4f..%-8.4f %9.0f %10.0f %9.1f %9.1f\n", size, r.c.disparities,
                r.c.background ? "background" : "full", r.median_ms, r.min_ms, r.max_ms, fps,
                static_cast<double>(r.c.width) * r.c.height * r.c.disparities * fps / 1e6,
                r.engine_bytes / 1048576.0, r.peak_used_bytes / 1048576.0);
  }
  // Two frames in flight (set_frames_in_flight(2)), full-frame only.
  for (const Result& r : results)
    if (r.error.empty() && r.inflight_ms > 0)
      std::printf("inflight %dx%d %d %.4f %.0f\n", r.c.width, r.c.height, r.c.disparities, r.inflight_ms,
                  1000.0 / r.inflight_ms);
  return failures ? 1 : 0;
}
