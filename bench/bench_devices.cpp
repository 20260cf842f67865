// cs-bench-devices: many streams on one or more GPUs in one process, at the
// engine (no GStreamer), to tell what scales with the GPUs from what the
// element adds (issue 36).
//
//   cs-bench-devices --left FILE --right FILE [--size WxH] [--disparities D]
//                    [--devices LIST] [--streams N] [--seconds S] [--warmup S]
//                    [--source device|pinned|pageable] [--output pinned|device]
//                    [--context primary|driver] [--label NAME]
//                    [--method progressive|block|cross|elas] [--sample-restore S]
//
// Every stream is a thread with its own CudaEngine on device LIST[i % n] and
// its own side-by-side RGBA frame (the pair of files, area-averaged to WxH per
// view, R = G = B = grey, as bench/cameras.sh feeds the element; in colour
// for method cross, which matches colour), looped as
// the element does: the next frame submitted before the previous one is
// finished (Engine::submit/finish, one frame pending), output GRAY16 (Q4
// disparity) into memory of --output.
//   --source device    the frame in device memory, uploaded once (the
//                      element's input from CUDA memory)
//   --source pinned    the frame in malloc'd memory page-locked in place
//                      (cudaHostRegister, as the element pins a buffer it
//                      sees again), uploaded every frame by upload_ahead()
//   --source pageable  the same memory not page-locked: upload_ahead()
//                      gathers it into the slot's pinned staging first
//   --context driver   each device's streams share one driver context made
//                      with cuCtxCreate and pushed on every call (as the
//                      element runs in a GstCudaContext); primary: the
//                      runtime's primary context (device_id given)
// After --warmup seconds every stream counts frames for --seconds. One
// `result` line: total fps, fps per device, and per frame the thread CPU
// time and the wall time inside upload_ahead(), submit() and finish(); one
// `stream` line per stream. Exit code 77 without a GPU.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "area_resize.h"
#include "cuda_engine.h"
#include "encode.h"
#include "host_register.h"

namespace {

using Clock = std::chrono::steady_clock;

// The driver calls of --context driver, through dlopen (the project links
// no libcuda: the runtime loads it).
struct Driver {
  using CtxCreate = int (*)(void**, unsigned, int);
  using CtxPush = int (*)(void*);
  using CtxPop = int (*)(void**);
  using DeviceGet = int (*)(int*, int);
  using Init = int (*)(unsigned);
  CtxCreate ctx_create = nullptr;
  CtxPush push = nullptr;
  CtxPop pop = nullptr;
  DeviceGet device_get = nullptr;
  Init init = nullptr;
  bool load(std::string* error) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      *error = "libcuda.so.1 not found";
      return false;
    }
    init = reinterpret_cast<Init>(dlsym(h, "cuInit"));
    device_get = reinterpret_cast<DeviceGet>(dlsym(h, "cuDeviceGet"));
    ctx_create = reinterpret_cast<CtxCreate>(dlsym(h, "cuCtxCreate_v2"));
    push = reinterpret_cast<CtxPush>(dlsym(h, "cuCtxPushCurrent_v2"));
    pop = reinterpret_cast<CtxPop>(dlsym(h, "cuCtxPopCurrent_v2"));
    if (!init || !device_get || !ctx_create || !push || !pop) {
      *error = "libcuda.so.1 lacks cuCtxCreate_v2 or cuCtxPushCurrent_v2";
      return false;
    }
    return init(0) == 0;
  }
};

struct Scope {  // a driver context pushed for a scope (or nothing)
  const Driver* d;
  Scope(const Driver* drv, void* ctx) : d(ctx ? drv : nullptr) {
    if (d) d->push(ctx);
  }
  ~Scope() {
    void* out;
    if (d) d->pop(&out);
  }
};

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct Options {
  int width = 1920, height = 1080, disparities = 128;
  std::vector<int> devices{0};
  int streams = 16;
  double seconds = 3, warmup = 1;
  std::string source = "device", output = "pinned", context = "primary", label = "devices";
  cs::Method method = cs::Method::Progressive;
  int sample_restore = 1;  // method cross
};

struct StreamResult {
  int device = 0;
  long frames = 0;
  double cpu_s = 0, upload_s = 0, submit_s = 0, finish_s = 0;
  std::string error;
};

struct Shared {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, counting{false}, stop{false};
};

void run_stream(const Options& o, const std::vector<uint8_t>& sbs, int device, const Driver* drv, void* ctx,
                Shared* sh, StreamResult* r) {
  r->device = device;
  const int fw = 2 * o.width, fh = o.height;
  const size_t frame_bytes = static_cast<size_t>(fw) * fh * 4;
  std::unique_ptr<cs::cuda::CudaEngine> engine;
  void* dev_frame = nullptr;
  void* dev_out[2] = {nullptr, nullptr};
  void* pinned_out[2] = {nullptr, nullptr};
  uint8_t* host = nullptr;
  bool registered = false;
  std::string err;
  {
    Scope scope(drv, ctx);
    if (!ctx && cudaSetDevice(device) != cudaSuccess) err = "cudaSetDevice failed";
    cs::Params p;
    p.max_disparity = o.disparities;
    p.method = o.method;
    p.sample_restore = o.sample_restore;
    if (err.empty()) engine = cs::cuda::CudaEngine::create(p, ctx ? -1 : device, &err);
    const size_t out_bytes = static_cast<size_t>(o.width) * o.height * 2;
    if (engine) {
      for (int i = 0; i < 2; ++i) {
        if (o.output == "device") {
          if (cudaMalloc(&dev_out[i], out_bytes) != cudaSuccess) err = "cudaMalloc(output) failed";
        } else if (!(pinned_out[i] = cs::cuda::alloc_pinned(out_bytes, &err))) {
          break;
        }
      }
      if (o.source == "device") {
        if (cudaMalloc(&dev_frame, frame_bytes) != cudaSuccess ||
            cudaMemcpy(dev_frame, sbs.data(), frame_bytes, cudaMemcpyHostToDevice) != cudaSuccess)
          err = "the device frame could not be made";
      } else {
        host = static_cast<uint8_t*>(std::aligned_alloc(4096, (frame_bytes + 4095) / 4096 * 4096));
        std::memcpy(host, sbs.data(), frame_bytes);
        if (o.source == "pinned") {
          registered = cs::cuda::register_host(host, frame_bytes, &err) == cs::cuda::HostRegistration::Registered;
          if (!registered && err.empty()) err = "cudaHostRegister refused the frame";
        }
      }
    }
  }
  sh->ready++;
  while (!sh->go) std::this_thread::yield();
  if (err.empty()) {
    Scope scope(drv, ctx);
    cs::EncodeParams enc;
    enc.max_disparity = o.disparities;
    cs::FrameView whole;
    whole.format = cs::PixelFormat::RGBA;
    whole.width = fw;
    whole.height = fh;
    whole.pitch[0] = static_cast<std::ptrdiff_t>(fw) * 4;
    whole.plane[0] = o.source == "device" ? static_cast<const uint8_t*>(dev_frame) : host;
    whole.memory = o.source == "device" ? cs::Memory::Device : cs::Memory::Host;
    long n = 0;
    bool was_counting = false;
    double cpu0 = 0;
    while (!sh->stop && err.empty()) {
      const bool counting = sh->counting;
      if (counting && !was_counting) {
        was_counting = true;
        cpu0 = thread_cpu_s();
        n = 0;
        r->upload_s = r->submit_s = r->finish_s = 0;
      }
      cs::FrameView frame = whole;
      auto t0 = Clock::now();
      if (o.source != "device") {
        cs::FrameView up;
        if (engine->upload_ahead(whole, &up).empty()) frame = up;
      }
      auto t1 = Clock::now();
      cs::FrameView left = frame, right = frame;
      left.width = right.width = o.width;
      right.plane[0] = frame.plane[0] + static_cast<size_t>(o.width) * 4;
      cs::OutputFrame out;
      out.width = o.width;
      out.height = o.height;
      out.pitch = static_cast<std::ptrdiff_t>(o.width) * 2;
      out.memory = o.output == "device" ? cs::Memory::Device : cs::Memory::Host;
      out.data = static_cast<uint8_t*>(o.output == "device" ? dev_out[n & 1] : pinned_out[n & 1]);
      err = engine->submit(left, right, enc, out);
      auto t2 = Clock::now();
      if (err.empty() && engine->in_flight() > 1) err = engine->finish().error;
      auto t3 = Clock::now();
      r->upload_s += std::chrono::duration<double>(t1 - t0).count();
      r->submit_s += std::chrono::duration<double>(t2 - t1).count();
      r->finish_s += std::chrono::duration<double>(t3 - t2).count();
      ++n;
      if (!sh->counting && was_counting) break;
    }
    r->frames = n;
    r->cpu_s = thread_cpu_s() - cpu0;
    while (err.empty() && engine->in_flight() > 0) err = engine->finish().error;
  }
  r->error = err;
  Scope scope(drv, ctx);
  engine.reset();
  for (void* d : dev_out) cudaFree(d);
  for (void* p : pinned_out) cs::cuda::free_pinned(p);
  cudaFree(dev_frame);
  if (registered) cs::cuda::unregister_host(host, nullptr);
  std::free(host);
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  cs::tools::Args args;
  std::string error = args.parse(argc, argv,
                                 {{"left", true}, {"right", true}, {"size", true}, {"disparities", true},
                                  {"devices", true}, {"streams", true}, {"seconds", true}, {"warmup", true},
                                  {"source", true}, {"output", true}, {"context", true}, {"label", true},
                                  {"method", true}, {"sample-restore", true}, {"help", false}});
  if (args.has("help")) {
    std::printf("see the comment at the top of bench/bench_devices.cpp\n");
    return 0;
  }
  Options o;
  args.integer("disparities", o.disparities, 1, 4096, error);
  args.integer("streams", o.streams, 1, 256, error);
  if (args.has("size") && std::sscanf(args.text("size").c_str(), "%dx%d", &o.width, &o.height) != 2)
    cs::tools::Args::add(error, "--size: not WxH");
  if (args.has("devices")) o.devices = int_list(args.text("devices"));
  if (args.has("seconds")) o.seconds = std::atof(args.text("seconds").c_str());
  if (args.has("warmup")) o.warmup = std::atof(args.text("warmup").c_str());
  o.source = args.text("source", o.source);
  o.output = args.text("output", o.output);
  o.context = args.text("context", o.context);
  o.label = args.text("label", o.label);
  if (!cs::tools::parse_method(args.text("method", "progressive"), o.method))
    cs::tools::Args::add(error, "--method: progressive, block, cross or elas");
  args.integer("sample-restore", o.sample_restore, 1, 3, error);
  if (o.source != "device" && o.source != "pinned" && o.source != "pageable")
    cs::tools::Args::add(error, "--source: device, pinned or pageable");
  if (o.output != "device" && o.output != "pinned") cs::tools::Args::add(error, "--output: device or pinned");
  if (o.context != "primary" && o.context != "driver") cs::tools::Args::add(error, "--context: primary or driver");
  if (!args.has("left") || !args.has("right")) cs::tools::Args::add(error, "--left and --right are needed");
  if (!error.empty()) {
    std::fprintf(stderr, "cs-bench-devices: %s\n", error.c_str());
    return 2;
  }
  std::string why;
  if (!cs::cuda::cuda_available(&why)) {
    std::printf("cs-bench-devices: skipped: %s\n", why.c_str());
    return 77;
  }
  // The side-by-side RGBA frame: grey in every channel, or in colour for
  // method cross.
  const bool colour = o.method == cs::Method::Cross;
  cs::Image<uint32_t> views[2];
  for (int v = 0; v < 2; ++v) {
    const std::string path = args.text(v ? "right" : "left");
    std::string e;
    if (colour) {
      cs::Image<uint32_t> rgba;
      e = cs::tools::read_rgba(path, rgba);
      if (e.empty()) views[v] = cs::tools::area_resize(rgba, o.width, o.height);
    } else {
      cs::Image<uint8_t> grey;
      e = cs::tools::read_grey(path, grey);
      if (e.empty()) {
        const cs::Image<uint8_t> g = cs::tools::area_resize(grey, o.width, o.height);
        views[v] = cs::Image<uint32_t>(o.width, o.height);
        for (size_t i = 0; i < g.pixels.size(); ++i) views[v].pixels[i] = g.pixels[i] * 0x010101u | 0xFF000000u;
      }
    }
    if (!e.empty()) {
      std::fprintf(stderr, "cs-bench-devices: %s\n", e.c_str());
      return 1;
    }
  }
  std::vector<uint8_t> sbs(static_cast<size_t>(2 * o.width) * o.height * 4);
  for (int y = 0; y < o.height; ++y)
    for (int v = 0; v < 2; ++v)
      std::memcpy(&sbs[(static_cast<size_t>(y) * 2 * o.width + v * o.width) * 4], &views[v].at(0, y), o.width * 4);
  Driver drv;
  std::vector<void*> contexts(o.devices.size(), nullptr);
  if (o.context == "driver") {
    if (!drv.load(&why)) {
      std::fprintf(stderr, "cs-bench-devices: %s\n", why.c_str());
      return 1;
    }
    for (size_t i = 0; i < o.devices.size(); ++i) {
      int dev = 0;
      void* ctx = nullptr;
      if (drv.device_get(&dev, o.devices[i]) != 0 || drv.ctx_create(&ctx, 0, dev) != 0) {
        std::fprintf(stderr, "cs-bench-devices: no driver context on device %d\n", o.devices[i]);
        return 1;
      }
      void* out;
      drv.pop(&out);
      contexts[i] = ctx;
    }
  }
  Shared sh;
  std::vector<StreamResult> results(o.streams);
  std::vector<std::thread> threads;
  for (int i = 0; i < o.streams; ++i) {
    const size_t k = i % o.devices.size();
    threads.emplace_back(run_stream, std::cref(o), std::cref(sbs), o.devices[k], &drv, contexts[k], &sh, &results[i]);
  }
  while (sh.ready < o.streams) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  sh.go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  const auto t0 = Clock::now();
  sh.counting = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  sh.counting = false;
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  sh.stop = true;
  for (auto& t : threads) t.join();

  long total = 0;
  double cpu = 0, up = 0, sub = 0, fin = 0;
  std::vector<long> per_device(o.devices.size(), 0);
  int failed = 0;
  for (int i = 0; i < o.streams; ++i) {
    const StreamResult& r = results[i];
    if (!r.error.empty()) {
      ++failed;
      std::printf("stream label=%s index=%d device=%d error=\"%s\"\n", o.label.c_str(), i, r.device, r.error.c_str());
      continue;
    }
    total += r.frames;
    per_device[i % o.devices.size()] += r.frames;
    cpu += r.cpu_s;
    up += r.upload_s;
    sub += r.submit_s;
    fin += r.finish_s;
    std::printf("stream label=%s index=%d device=%d fps=%.1f cpu_us_per_frame=%.1f\n", o.label.c_str(), i, r.device,
                r.frames / wall, r.frames ? 1e6 * r.cpu_s / r.frames : 0.0);
  }
  std::string devs, dev_fps;
  for (size_t k = 0; k < o.devices.size(); ++k) {
    devs += (k ? "," : "") + std::to_string(o.devices[k]);
    char b[32];
    std::snprintf(b, sizeof b, "%s%.0f", k ? "," : "", per_device[k] / wall);
    dev_fps += b;
  }
  const double f = total > 0 ? 1e6 / total : 0;
  std::printf("result label=%s method=%s sample_restore=%d devices=%s streams=%d source=%s output=%s context=%s "
              "view=%dx%d D=%d total_fps=%.0f "
              "device_fps=%s cpu_us=%.1f upload_us=%.1f submit_us=%.1f finish_us=%.1f cpu_cores=%.2f failed=%d\n",
              o.label.c_str(), cs::tools::method_name(o.method), o.sample_restore, devs.c_str(), o.streams,
              o.source.c_str(), o.output.c_str(), o.context.c_str(), o.width, o.height, o.disparities, total / wall,
              dev_fps.c_str(), cpu * f, up * f, sub * f, fin * f, cpu / wall, failed);
  return failed ? 1 : 0;
}
