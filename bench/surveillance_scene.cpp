// cs-bench-engine's surveillance scene (surveillance_scene.h).
//
// The moving frames are played forwards and backwards (0 .. 31, 30 .. 1,
// 0 ..): the objects bounce anyway, so turning back is motion the model
// could meet, whereas jumping from the last frame to the first would
// uncover a whole object's area at once every cycle.
#include "surveillance_scene.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cuda_engine.h"
#include "cuda_scoped.h"
#include "engine_timing.h"
#include "moving_objects.h"

namespace cs::bench {

namespace {

constexpr int kCycleFrames = kSurveillanceCycleFrames;
constexpr int kBatches = 9;
constexpr uint64_t kSeed = 35;  // the number: any fixed seed

// Frames rendered on every core: each depends only on its index.
std::string render_all(const Image<uint32_t>& left, const Image<uint32_t>& right, const MovingObjectsSpec& spec,
                       std::vector<MovingObjectsFrame>& frames) {
  frames.assign(spec.frames(), {});
  std::vector<std::string> errors(frames.size());
  const int workers = std::max(1, std::min(static_cast<int>(std::thread::hardware_concurrency()), 16));
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (size_t i = w; i < frames.size(); i += workers)
        errors[i] = render_moving_objects(left, right, spec, static_cast<int>(i), &frames[i]);
    });
  for (auto& t : pool) t.join();
  for (const std::string& e : errors)
    if (!e.empty()) return e;
  return {};
}

struct DeviceFrames {
  DeviceBuffers buffers;
  std::vector<FrameView> lefts, rights;
};

std::string upload(const Image<uint32_t>& img, DeviceFrames& dev, std::vector<FrameView>& views) {
  void* d = nullptr;
  size_t pitch = 0;
  const size_t row_bytes = static_cast<size_t>(img.width) * 4;
  cudaError_t e = cudaMallocPitch(&d, &pitch, row_bytes, img.height);
  if (e != cudaSuccess) return std::string("cudaMallocPitch: ") + cudaGetErrorString(e);
  dev.buffers.list.push_back(d);
  e = cudaMemcpy2D(d, pitch, img.pixels.data(), row_bytes, row_bytes, img.height, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return std::string("cudaMemcpy2D: ") + cudaGetErrorString(e);
  FrameView v;
  v.format = PixelFormat::RGBA;
  v.width = img.width;
  v.height = img.height;
  v.memory = Memory::Device;
  v.plane[0] = static_cast<const uint8_t*>(d);
  v.pitch[0] = static_cast<std::ptrdiff_t>(pitch);
  views.push_back(v);
  return {};
}

// ms a frame of `frames` frames queued by `queue` between the two events.
template <typename Queue>
std::string time_frames(EventPair& events, cuda::CudaEngine& engine, int frames, Queue queue, double* ms_per_frame) {
  cudaEventRecord(events.a, engine.stream());
  std::string err;
  for (int i = 0; i < frames && err.empty(); ++i) err = queue();
  cudaEventRecord(events.b, engine.stream());
  cudaEventSynchronize(events.b);
  float ms = 0;
  cudaEventElapsedTime(&ms, events.a, events.b);
  *ms_per_frame = ms / std::max(1, frames);
  return err;
}

// A disparity output in device memory, width x height Q4 pixels, freed with
// buffers.
std::string device_output(int width, int height, DeviceBuffers& buffers, OutputFrame* of) {
  void* d = nullptr;
  size_t pitch = 0;
  if (cudaMallocPitch(&d, &pitch, static_cast<size_t>(width) * 2, height) != cudaSuccess)
    return "cudaMallocPitch: out of device memory for an output";
  buffers.list.push_back(d);
  *of = {static_cast<uint8_t*>(d), static_cast<std::ptrdiff_t>(pitch), width, height, Memory::Device};
  return {};
}

// `cameras` engines side by side (a host thread each, as the element's
// streams run), each its own camera over the same moving frames, from its
// own step of the play: after each engine's warm-up (the model's warm-up
// frames, or 5 moving frames with it off), all start together and run
// `frames` frames each; frames a second in all, from the start to the last
// engine's synchronize(), the median of three such rounds.
std::string time_cameras(int cameras, const Params& p, const MovingObjectsSpec& spec, const DeviceFrames& dev,
                         const EncodeParams& ep, int width, int height, int frames, double* fps) {
  DeviceBuffers outputs;
  std::vector<OutputFrame> out(cameras);
  std::vector<std::unique_ptr<cuda::CudaEngine>> engines;
  for (int k = 0; k < cameras; ++k) {
    if (std::string e = device_output(width, height, outputs, &out[k]); !e.empty()) return e;
    std::string err;
    engines.push_back(cuda::CudaEngine::create(p, -1, &err));
    if (!engines.back()) return err;
  }
  auto moving = [&](int k, int step) {
    const int i = spec.warmup_frames + surveillance_played(step + 5 * k);
    return engines[k]->enqueue(dev.lefts[i], dev.rights[i], ep, out[k], nullptr);
  };
  for (int k = 0; k < cameras; ++k) {
    std::string err;
    for (int i = 0; i < (p.background ? spec.warmup_frames : 5) && err.empty(); ++i)
      err = p.background ? engines[k]->enqueue(dev.lefts[i], dev.rights[i], ep, out[k], nullptr) : moving(k, i);
    if (err.empty()) err = engines[k]->synchronize();
    if (!err.empty()) return err;
  }
  // Three rounds (the play going on from round to round); the median's
  // frames a second, so that one round a host thread lost its core for a
  // while does not set the number.
  std::vector<double> rounds;
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> go{false};
    std::vector<std::string> errors(cameras);
    std::vector<std::thread> threads;
    for (int k = 0; k < cameras; ++k)
      threads.emplace_back([&, k] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        std::string err;
        for (int i = 0; i < frames && err.empty(); ++i) err = moving(k, round * frames + i);
        if (err.empty()) err = engines[k]->synchronize();
        errors[k] = err;
      });
    const auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    rounds.push_back(static_cast<double>(cameras) * frames / std::max(s, 1e-9));
  }
  *fps = median(rounds);
  return {};
}

}  // namespace

int surveillance_played(int step) {
  const int period = 2 * (kCycleFrames - 1);
  const int m = step % period;
  return m < kCycleFrames ? m : period - m;
}

std::string render_surveillance(const SurveillanceConfig& c, const Image<uint32_t>& background_left,
                                const Image<uint32_t>& background_right, int warmup_frames,
                                SurveillanceSequence* out) {
  // The objects at half the range (inside it at every level), and no
  // further than a quarter of the width so that they have room to move.
  out->object_disparity = std::min(c.disparities / 2, c.width / 4);
  out->spec = fraction_objects_spec(c.width, c.height, c.fraction_pct / 100.0, out->object_disparity, warmup_frames,
                                    kCycleFrames, kSeed);
  return render_all(background_left, background_right, out->spec, out->frames);
}

SurveillanceResult run_surveillance(const SurveillanceConfig& c, const Image<uint32_t>& background_left,
                                    const Image<uint32_t>& background_right, const Params& base, double batch_ms,
                                    int max_frames, bool stages, bool timeline, bool profile, bool inflight) {
  SurveillanceResult r;
  r.c = c;
  auto fail = [&](const std::string& e) {
    r.error = e;
    return r;
  };
  Params p = base;
  p.max_disparity = c.disparities;
  r.warmup_frames = p.warmup_frames;
  r.cycle_frames = kCycleFrames;
  SurveillanceSequence seq;
  if (std::string e = render_surveillance(c, background_left, background_right, p.warmup_frames, &seq); !e.empty())
    return fail(e);
  r.object_disparity = seq.object_disparity;
  const MovingObjectsSpec& spec = seq.spec;
  std::vector<MovingObjectsFrame>& frames = seq.frames;
  r.objects = static_cast<int>(spec.objects.size());
  for (int t = 0; t < kCycleFrames; ++t) {
    const Image<uint8_t>& mask = frames[spec.warmup_frames + t].mask_left;
    r.true_fraction += std::count(mask.pixels.begin(), mask.pixels.end(), uint8_t{255}) /
                       static_cast<double>(mask.pixels.size()) / kCycleFrames;
  }

  DeviceFrames dev;
  for (const MovingObjectsFrame& f : frames) {
    if (std::string e = upload(f.left_rgba, dev, dev.lefts); !e.empty()) return fail(e);
    if (std::string e = upload(f.right_rgba, dev, dev.rights); !e.empty()) return fail(e);
  }
  frames.clear();
  frames.shrink_to_fit();
  OutputFrame of;
  if (std::string e = device_output(c.width, c.height, dev.buffers, &of); !e.empty()) return fail(e);
  EncodeParams ep;
  ep.format = OutputFormat::DisparityQ4;
  EventPair events;

  for (const bool background : {true, false}) {
    p.background = background;
    std::string err;
    auto engine = cuda::CudaEngine::create(p, -1, &err);
    if (!engine) return fail(err);
    int step = 0;  // of the forwards-and-backwards play
    auto moving = [&]() {
      const int i = spec.warmup_frames + surveillance_played(step++);
      return engine->enqueue(dev.lefts[i], dev.rights[i], ep, of, nullptr);
    };
    if (background) {
      // The model learns the empty scene, as a camera's first seconds.
      for (int i = 0; i < spec.warmup_frames && err.empty(); ++i)
        err = engine->enqueue(dev.lefts[i], dev.rights[i], ep, of, nullptr);
    } else {
      for (int i = 0; i < 5 && err.empty(); ++i) err = moving();
    }
    if (err.empty()) err = engine->synchronize();
    if (!err.empty()) return fail(err);
    // One cycle at the pace of the moving frames sizes the batches (the
    // model's run sets it; the full-frame run takes the same size).
    double pace = 0;
    if ((err = time_frames(events, *engine, kCycleFrames, moving, &pace)) != "") return fail(err);
    if (background) {
      const int n = static_cast<int>(batch_ms / std::max(1e-3, pace) + 0.5);
      r.frames_per_batch = std::clamp(n, std::min(10, max_frames), max_frames);
      r.levels = engine->stats().levels;
    }
    std::vector<double> per_frame;
    for (int k = 0; k < kBatches; ++k) {
      double ms = 0;
      if ((err = time_frames(events, *engine, r.frames_per_batch, moving, &ms)) != "") return fail(err);
      per_frame.push_back(ms);
    }
    SurveillanceTiming& t = background ? r.background : r.full;
    t.ms = median(per_frame);
    t.min_ms = *std::min_element(per_frame.begin(), per_frame.end());
    t.max_ms = *std::max_element(per_frame.begin(), per_frame.end());
    if (background && stages) {
      std::map<std::string, std::vector<double>> acc;
      std::vector<std::string> order;
      for (int k = 0; k < 11; ++k) {
        std::vector<cuda::StageTime> t;
        if ((err = engine->profile_stages(&t)) != "") return fail("profile_stages: " + err);
        std::map<std::string, double> sum;  // stages repeated per level add up
        for (const cuda::StageTime& s : t) {
          if (!sum.count(s.name) && k == 0) order.push_back(s.name);
          sum[s.name] += s.ms;
        }
        for (auto& kv : sum) acc[kv.first].push_back(kv.second);
      }
      for (const std::string& name : order) r.stages.push_back({name, median(acc[name])});
    }
    if (profile) {
      std::vector<cuda::StageTime> t;
      cudaProfilerStart();
      err = engine->profile_stages(&t);
      cudaProfilerStop();
      if (!err.empty()) return fail("profile_stages: " + err);
    }
    if (background && timeline) {
      std::vector<std::vector<double>> acc;
      std::vector<std::string> names;
      for (int k = 0; k < 11; ++k) {
        std::vector<cuda::TimelineMark> t;
        if ((err = engine->profile_graph(&t)) != "") return fail("profile_graph: " + err);
        if (k == 0) {
          acc.resize(t.size());
          for (const cuda::TimelineMark& m : t)
            names.push_back(m.name + (m.level >= 0 ? "_L" + std::to_string(m.level) : "") + (m.side ? "@side" : ""));
        }
        if (t.size() != acc.size()) return fail("profile_graph: the marks changed from one run to the next");
        for (size_t i = 0; i < t.size(); ++i) acc[i].push_back(t[i].ms);
      }
      for (size_t i = 0; i < acc.size(); ++i) r.timeline.push_back({names[i], median(acc[i])});
    }
    if (background) {
      r.graph = engine->frame_graph_state(&r.skips_empty);
      // The mask's share over one whole play (forwards and back), frame by frame.
      r.foreground_min = 1;
      const int period = 2 * (kCycleFrames - 1);
      for (int k = 0; k < period; ++k) {
        if ((err = moving()) != "") return fail(err);
        const FrameStats st = engine->stats();
        if (st.warming_up) return fail("the model still warms up after its warm-up frames");
        r.foreground_mean += st.foreground_fraction / period;
        r.foreground_min = std::min(r.foreground_min, st.foreground_fraction);
        r.foreground_max = std::max(r.foreground_max, st.foreground_fraction);
        const double matched = st.matched_fraction();
        r.matched_mean += matched / period;
        r.matched_max = std::max(r.matched_max, matched);
        if (st.background_tests_full > 0)
          r.tests_mean += static_cast<double>(st.background_tests) / st.background_tests_full / period;
      }
    }
    if (inflight) {
      // Two frames in flight (one model): a cycle first, then batches of
      // the same size.
      err = time_two_in_flight(*engine, kCycleFrames, r.frames_per_batch, kBatches,
                               [&](int) { return moving(); }, &t.inflight_ms);
      if (err.empty()) err = engine->set_frames_in_flight(1);
      if (!err.empty()) return fail(err);
    }
    if ((err = engine->synchronize()) != "") return fail(err);
  }
  if (c.cameras > 1) {
    // Each camera runs twice the single engine's batch (at least 64 frames).
    r.camera_frames = std::max(64, 2 * r.frames_per_batch);
    for (const bool background : {true, false}) {
      p.background = background;
      double fps = 0;
      if (std::string e = time_cameras(c.cameras, p, spec, dev, ep, c.width, c.height, r.camera_frames, &fps);
          !e.empty())
        return fail("cameras: " + e);
      (background ? r.cameras_background_fps : r.cameras_full_fps) = fps;
    }
  }
  const cudaError_t last = cudaGetLastError();
  if (last != cudaSuccess) return fail(cudaGetErrorString(last));
  return r;
}

void print_surveillance_line(const SurveillanceResult& r, const std::string& label, const char* method) {
  std::printf("result scene=surveillance kind=real input=rgba pair=%s size=%dx%d D=%d mode=background-vs-full "
              "fraction_pct=%d",
              label.c_str(), r.c.width, r.c.height, r.c.disparities, r.c.fraction_pct);
  if (!r.error.empty()) {
    std::printf(" error=\"%s\"\n", r.error.c_str());
    std::fflush(stdout);
    return;
  }
  std::printf(" method=%s levels=%d objects=%d object_d=%d warmup_frames=%d cycle_frames=%d true_fraction=%.4f "
              "fg_fraction=%.4f fg_fraction_min=%.4f fg_fraction_max=%.4f matched=%.4f matched_max=%.4f tests=%.4f "
              "frames_per_batch=%d background_ms=%.4f "
              "background_min_ms=%.4f background_max_ms=%.4f full_ms=%.4f full_min_ms=%.4f full_max_ms=%.4f "
              "ratio=%.4f speedup=%.2f skips_empty=%d graph=\"%s\"",
              method, r.levels, r.objects, r.object_disparity, r.warmup_frames, r.cycle_frames, r.true_fraction,
              r.foreground_mean, r.foreground_min, r.foreground_max, r.matched_mean, r.matched_max, r.tests_mean,
              r.frames_per_batch, r.background.ms,
              r.background.min_ms, r.background.max_ms, r.full.ms, r.full.min_ms, r.full.max_ms,
              r.full.ms > 0 ? r.background.ms / r.full.ms : 0.0,
              r.background.ms > 0 ? r.full.ms / r.background.ms : 0.0, r.skips_empty ? 1 : 0, r.graph.c_str());
  if (r.background.inflight_ms > 0 && r.full.inflight_ms > 0)
    std::printf(" background_inflight_ms=%.4f full_inflight_ms=%.4f ratio_inflight=%.4f", r.background.inflight_ms,
                r.full.inflight_ms, r.background.inflight_ms / r.full.inflight_ms);
  std::printf("\n");
  if (r.c.cameras > 1)
    std::printf("cameras scene=surveillance size=%dx%d D=%d fraction_pct=%d cameras=%d frames_each=%d "
                "background_fps=%.0f full_fps=%.0f speedup=%.2f\n",
                r.c.width, r.c.height, r.c.disparities, r.c.fraction_pct, r.c.cameras, r.camera_frames,
                r.cameras_background_fps, r.cameras_full_fps,
                r.cameras_full_fps > 0 ? r.cameras_background_fps / r.cameras_full_fps : 0.0);
  if (!r.stages.empty()) {
    std::printf("stages scene=surveillance size=%dx%d D=%d fraction_pct=%d", r.c.width, r.c.height, r.c.disparities,
                r.c.fraction_pct);
    double sum = 0;
    for (const auto& s : r.stages) {
      std::string key = s.first;
      for (char& ch : key)
        if (ch == ' ') ch = '_';
      std::printf(" %s=%.4f", key.c_str(), s.second);
      sum += s.second;
    }
    std::printf(" sum=%.4f\n", sum);
  }
  if (!r.timeline.empty()) {
    std::printf("timeline scene=surveillance size=%dx%d D=%d fraction_pct=%d", r.c.width, r.c.height, r.c.disparities,
                r.c.fraction_pct);
    for (const auto& s : r.timeline) {
      std::string key = s.first;
      for (char& ch : key)
        if (ch == ' ') ch = '_';
      std::printf(" %s=%.4f", key.c_str(), s.second);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace cs::bench
