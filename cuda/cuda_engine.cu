// The CUDA engine (cuda_engine.h): creation on a device, parameters, the
// shared stages' buffers, statistics and the tools' views of the last frame
// (debug maps, per-stage times, the graph's timeline). Its state and the
// frame's course: engine_impl.h.
#include <cstdio>
#include <cstring>
#include <sstream>

#include "config.h"
#include "engine_impl.h"
#include "error_text.h"
#include "frame_checks.h"
#include "gpu_code.h"
#include "matching.h"

namespace cs::cuda {

std::string cuda_error_text(cudaError_t err, const char* what, const char* file, int line) {
  std::ostringstream where;
  where << file << ":" << line << ": " << what << " failed";
  return with_detail(std::string("the GPU reported an error: ") + cudaGetErrorString(err) + " (" +
                         cudaGetErrorName(err) + ")",
                     where.str());
}

bool cuda_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                                     : std::string("no CUDA device present");
    cudaGetLastError();  // clear the sticky-free error state
    return false;
  }
  if (why) why->clear();
  return true;
}

std::string CudaEngine::Impl::ensure_device() {
  int cur = -1;
  CS_CUDA_TRY(cudaGetDevice(&cur));
  if (cur != device) CS_CUDA_TRY(cudaSetDevice(device));
  return {};
}

std::string CudaEngine::Impl::restart_background() {
  if (model_home) return {};  // the first set's model (its restart)
  frames_seen_host = 0;
  if (frames_seen) CS_CUDA_TRY(cudaMemsetAsync(frames_seen, 0, sizeof(int), stream));
  return {};
}

void CudaEngine::Impl::release_model() {
  for (int v = 0; v < 2; ++v) {
    model[v].release();
    raw_test[v].release();
    cell_model[v].release();
    cell_fg[v].release();
    cell_settled[v].release();
    model_work[v].release();
    raw_any[v].release();
  }
  mask_dirty.release();
}

std::string CudaEngine::Impl::configure(int w, int h) {
  const int nl = pipeline_levels(params, w, h);
  if (buffers_ready && w == width && h == height && nl == levels) return {};
  graph.forget();
  buffers_ready = false;
  lv.clear();
  lv.resize(nl);
  // The model is the frame size's: made again by allocate_background.
  release_model();
  for (int l = 0; l < nl; ++l) {
    EngineLevel& L = lv[l];
    L.width = level_size(w, l);
    L.height = level_size(h, l);
    for (int v = 0; v < 2; ++v) CS_CUDA_TRY(L.gray[v].allocate(L.width, L.height));
  }
  CS_CUDA_TRY(disparity_q4.allocate(w, h));
  confidence.release();
  CS_CUDA_TRY(all_foreground.allocate(w, h));
  CS_CUDA_TRY(cudaMemset2DAsync(all_foreground.view().data, all_foreground.view().pitch, 255, w, h, stream));
  width = w;
  height = h;
  levels = nl;
  std::string e = allocate_background();
  if (e.empty()) e = allocate_confidence();
  if (e.empty()) e = allocate_colour();
  if (!e.empty()) return e;
  buffers_ready = true;
  return restart_background();
}

std::string CudaEngine::Impl::allocate_colour() {
  if (lv.empty()) return {};
  DeviceImage<uint32_t>* colour = lv[0].colour;
  if (!method->needs_colour()) {
    if (!colour[0].empty()) {
      CS_CUDA_TRY(cudaStreamSynchronize(stream));  // queued frames may still read it
      for (int v = 0; v < 2; ++v) colour[v].release();
    }
  } else if (colour[0].empty()) {
    for (int v = 0; v < 2; ++v) CS_CUDA_TRY(colour[v].allocate(width, height));
  }
  return {};
}

std::string CudaEngine::Impl::allocate_confidence() {
  if (!method->has_confidence()) {
    if (!confidence.empty()) {
      CS_CUDA_TRY(cudaStreamSynchronize(stream));  // queued frames may still write it
      confidence.release();
    }
  } else if (confidence.empty()) {
    CS_CUDA_TRY(confidence.allocate(width, height));
  }
  return {};
}

std::string CudaEngine::Impl::allocate_background() {
  if (!params.background) {
    for (EngineLevel& L : lv)
      for (int v = 0; v < 2; ++v) {
        L.mask[v].release();
        L.occupancy[v].release();
      }
    release_model();
    return {};
  }
  for (int l = 0; l < static_cast<int>(lv.size()); ++l) {
    EngineLevel& L = lv[l];
    for (int v = 0; v < 2; ++v) {
      if (L.mask[v].empty()) CS_CUDA_TRY(L.mask[v].allocate(L.width, L.height));
      if (l < kOccupancyLevels && L.occupancy[v].empty())
        CS_CUDA_TRY(L.occupancy[v].allocate((L.width + kOccupancyCell - 1) / kOccupancyCell,
                                            (L.height + kOccupancyCell - 1) / kOccupancyCell));
    }
  }
  if (mask_dirty.empty()) {
    const int cw = (width + kBackgroundCell - 1) / kBackgroundCell;
    const int ch = (height + kBackgroundCell - 1) / kBackgroundCell;
    // A twin (set_frames_in_flight) runs the first set's model.
    if (!model_home)
      for (int v = 0; v < 2; ++v) {
        CS_CUDA_TRY(model[v].allocate(width, height));
        CS_CUDA_TRY(raw_test[v].allocate((width + 31) / 32, height));
        CS_CUDA_TRY(cell_model[v].allocate(cw, ch));
        CS_CUDA_TRY(cell_fg[v].allocate(cw, ch));
        CS_CUDA_TRY(cell_settled[v].allocate(cw, ch));
        // No cell was settled before the first frame (background.h ModelViews).
        const ImageView<uint8_t> s = cell_settled[v].view();
        CS_CUDA_TRY(cudaMemset2DAsync(s.data, s.pitch, 0, cw, ch, stream));
        // Every block with work (the warm-up passes them all anyway).
        CS_CUDA_TRY(model_work[v].allocate(model_blocks_x(width), model_blocks_y(height)));
        const ImageView<uint8_t> wk = model_work[v].view();
        CS_CUDA_TRY(cudaMemset2DAsync(wk.data, wk.pitch, 1, wk.width, wk.height, stream));
        CS_CUDA_TRY(raw_any[v].allocate(wk.width, wk.height));
        const ImageView<uint8_t> ra = raw_any[v].view();
        CS_CUDA_TRY(cudaMemset2DAsync(ra.data, ra.pitch, 1, ra.width, ra.height, stream));
      }
    const int regions = mask_regions_x(width) * mask_regions_y(height) * 2;
    CS_CUDA_TRY(mask_dirty.allocate(regions, 1));
    // Every region's outputs unknown: written by the first pass.
    CS_CUDA_TRY(cudaMemsetAsync(mask_dirty.view().data, 1, regions, stream));
  }
  if (model_home && (!model_home->buffers_ready || model_home->width != width || model_home->height != height ||
                     model_home->levels != levels || model_home->model[0].empty())) {
    // The first set's model made for this size (its frames of another size
    // are done: configure() frees their buffers), before this set's frames
    // read it.
    std::string e = model_home->configure(width, height);
    if (!e.empty()) return e;
    CS_CUDA_TRY(cudaStreamSynchronize(model_home->stream));
  }
  CS_CUDA_TRY(prepare_masks(params.morph_radius));
  return {};
}

std::string CudaEngine::Impl::read_counts() {
  CS_CUDA_TRY(cudaMemcpyAsync(counters_host, counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, stream));
  CS_CUDA_TRY(cudaStreamSynchronize(stream));
  return {};
}

ImageView<const uint8_t> CudaEngine::Impl::foreground_view() const {
  return params.background ? lv[0].mask[0].cview() : all_foreground.cview();
}

std::string CudaEngine::Impl::confidence_problem() const {
  if (method->has_confidence()) return {};
  Params asked = params;
  asked.confidence = true;
  const std::string why = method->unsupported(asked);
  if (!why.empty()) return why;
  // Method progressive keeps the costs behind the confidence only when
  // the parameters say it will be read.
  return "the confidence (output-mode=confidence) was not asked for in the engine's parameters (Params::confidence)";
}

CudaEngine::CudaEngine() : impl_(new Impl) {}

CudaEngine::~CudaEngine() {
  Impl& m = *impl_;
  if (m.twin) m.twin->synchronize();  // its frames may wait on this set's events
  if (m.stream) {
    m.ensure_device();
    cudaStreamSynchronize(m.stream);
  }
  if (m.copy_stream) cudaStreamSynchronize(m.copy_stream);  // copies still writing callers' outputs
  m.uploads.close();                                        // after the uploads still reading callers' memory
  m.graph.drop();
  m.lv.clear();
  m.method.reset();
  if (m.counters) cudaFree(m.counters);
  if (m.frames_seen) cudaFree(m.frames_seen);
  if (m.model_input) cudaFree(m.model_input);
  if (m.luts) cudaFree(m.luts);
  if (m.counters_host) cudaFreeHost(m.counters_host);
  for (Impl::Submitted& s : m.submitted) {
    if (s.done) m.spare_events.push_back(s.done);
    if (s.counters) m.spare_counters.push_back(s.counters);
  }
  for (cudaEvent_t ev : m.spare_events) cudaEventDestroy(ev);
  for (FrameCounters* c : m.spare_counters) cudaFreeHost(c);
  if (m.ev_caller) cudaEventDestroy(m.ev_caller);
  if (m.ev_done) cudaEventDestroy(m.ev_done);
  if (m.ev_output) cudaEventDestroy(m.ev_output);
  if (m.ev_model) cudaEventDestroy(m.ev_model);
  if (m.ev_fork) cudaEventDestroy(m.ev_fork);
  for (cudaEvent_t ev : m.ev_join)
    if (ev) cudaEventDestroy(ev);
  if (m.side_stream) cudaStreamDestroy(m.side_stream);
  if (m.body_stream) cudaStreamDestroy(m.body_stream);
  for (cudaEvent_t ev : {m.ring_copied[0], m.ring_copied[1], m.ev_encoded, m.ev_copied})
    if (ev) cudaEventDestroy(ev);
  for (auto& r : m.encoded_ring) r.release();
  if (m.copy_stream) cudaStreamDestroy(m.copy_stream);
  if (m.stream) cudaStreamDestroy(m.stream);
}

// Whether the build's kernels run on `device` (current): empty, or the
// user's sentence (gpu_code.h) with the CUDA call in *detail. Asked of one
// kernel before anything else, since every kernel is built for the same
// targets; without it the first kernel launch or attribute query fails with
// a bare CUDA error deep in the set-up.
namespace {
std::string gpu_code_problem(int device, std::string* detail) {
  const cudaError_t e = match_code_status();
  if (e == cudaSuccess) return {};
  cudaGetLastError();  // none of these is sticky
  GpuCodeProblem problem = GpuCodeProblem::NoCode;
  switch (e) {
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidKernelImage:
    case cudaErrorInvalidPtx:
      break;
    case cudaErrorJitCompilationDisabled:
    case cudaErrorJitCompilerNotFound:
      problem = GpuCodeProblem::JitDisabled;
      break;
    case cudaErrorUnsupportedPtxVersion:
      problem = GpuCodeProblem::DriverTooOld;
      break;
    default:
      return cuda_error_text(e, "cudaFuncGetAttributes", __FILE__, __LINE__);
  }
  if (detail) *detail = cuda_error_text(e, "cudaFuncGetAttributes (matching kernel)", __FILE__, __LINE__);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(prop.name, sizeof(prop.name), "CUDA device %d", device);
  }
  return no_gpu_code_message(prop.name, prop.major, prop.minor, CS_CUDA_ARCHS, problem);
}
}  // namespace

std::unique_ptr<CudaEngine> CudaEngine::create(const Params& params, int device_id, std::string* error,
                                               std::string* detail) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return std::unique_ptr<CudaEngine>();
  };
  std::string e = params.validate();
  if (!e.empty()) return fail(e);
  // What the method's kernels do not do yet (the CPU reference does) is
  // refused by name rather than silently matched otherwise.
  std::unique_ptr<MatchingMethod> method = make_method(params.method);
  e = method->unsupported(params);
  if (!e.empty()) return fail(e);
  if (!cuda_available(&e)) return fail(e);
  int count = 0;
  cudaGetDeviceCount(&count);
  int cur = 0;
  if (cudaGetDevice(&cur) != cudaSuccess) return fail("cannot query the current CUDA device");
  if (device_id >= count) {
    std::ostringstream s;
    s << "CUDA device " << device_id << " does not exist (" << count << " present)";
    return fail(s.str());
  }
  const int dev = device_id < 0 ? cur : device_id;
  if (dev != cur && cudaSetDevice(dev) != cudaSuccess) return fail("cannot make the CUDA device current");
  e = gpu_code_problem(dev, detail);
  if (!e.empty()) return fail(e);

  std::unique_ptr<CudaEngine> eng(new CudaEngine);
  Impl& m = *eng->impl_;
  m.params = params;
  m.device = dev;
  m.method = std::move(method);
  e = [&]() -> std::string {
    // The frame's stream at the greatest priority and the graph's side
    // branch at the least (the graph keeps them: UseNodePriority), so that
    // the side branch fills what the matching leaves idle instead of
    // delaying it (H100, 1024x768 x 256: 0.2405 ms in one stream, 0.2379
    // with the branch at equal priority, 0.2354 with these).
    int least = 0, greatest = 0;
    CS_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CS_CUDA_TRY(cudaStreamCreateWithPriority(&m.stream, cudaStreamNonBlocking, greatest));
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_caller, cudaEventDisableTiming));
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_done, cudaEventDisableTiming));
    CS_CUDA_TRY(cudaStreamCreateWithPriority(&m.side_stream, cudaStreamNonBlocking, least));
    CS_CUDA_TRY(cudaStreamCreateWithPriority(&m.body_stream, cudaStreamNonBlocking, greatest));
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_output, cudaEventDisableTiming));
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_model, cudaEventDisableTiming));
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_fork, cudaEventDisableTiming));
    for (cudaEvent_t& ev : m.ev_join) CS_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CS_CUDA_TRY(query_device_limits(dev, &m.limits));
    CS_CUDA_TRY(cudaMalloc(&m.counters, sizeof(FrameCounters)));
    CS_CUDA_TRY(cudaMemsetAsync(m.counters, 0, sizeof(FrameCounters), m.stream));
    CS_CUDA_TRY(cudaMallocHost(&m.counters_host, sizeof(FrameCounters)));
    std::memset(m.counters_host, 0, sizeof(FrameCounters));
    CS_CUDA_TRY(cudaMalloc(&m.frames_seen, sizeof(int)));
    CS_CUDA_TRY(cudaMalloc(&m.model_input, sizeof(ModelInput)));
    CS_CUDA_TRY(cudaMemsetAsync(m.frames_seen, 0, sizeof(int), m.stream));
    CS_CUDA_TRY(cudaMalloc(&m.luts, 3 * 768));
    const Colormap maps[3] = {Colormap::Turbo, Colormap::Jet, Colormap::Grey};
    for (int i = 0; i < 3; ++i)
      CS_CUDA_TRY(cudaMemcpy(m.luts + 768 * static_cast<int>(maps[i]), colormap_lut(maps[i]), 768,
                             cudaMemcpyHostToDevice));
    std::string p = m.method->prepare(params);
    if (!p.empty()) return p;
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
    return {};
  }();
  if (!e.empty()) return fail(e);
  return eng;
}

std::string CudaEngine::set_params(const Params& params) {
  Impl& m = *impl_;
  std::string e = params.validate();
  if (!e.empty()) return e;
  // Frames in flight read the buffers and the graph this may replace.
  if (!m.submitted.empty()) {
    e = m.ensure_device();
    if (!e.empty()) return e;
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
  }
  // Another method: its own buffers and kernels (method.h), checked before
  // anything changes.
  std::unique_ptr<MatchingMethod> fresh;
  if (params.method != m.params.method) fresh = make_method(params.method);
  MatchingMethod& method = fresh ? *fresh : *m.method;
  e = method.unsupported(params);
  if (!e.empty()) return e;
  e = m.ensure_device();
  if (!e.empty()) return e;
  e = method.prepare(params);
  if (!e.empty()) return e;
  if (fresh) {
    // The old method's buffers may still be read by queued frames.
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
    m.method = std::move(fresh);
    m.buffers_ready = false;
  }
  const Params old = m.params;
  m.params = params;
  m.graph.forget();
  if (m.buffers_ready && pipeline_levels(params, m.width, m.height) != m.levels) m.buffers_ready = false;
  if (m.buffers_ready) {
    e = m.allocate_background();
    if (e.empty()) e = m.allocate_confidence();
    if (e.empty()) e = m.allocate_colour();
    if (!e.empty()) return e;
  }
  if (m.twin) {
    e = m.twin->set_params(params);
    if (!e.empty()) return e;
    // Both sets' new methods are still one stream of frames.
    if (fresh) m.method->share_frames_with(*m.twin->impl_->method);
  }
  if (params.background != old.background || params.min_sigma != old.min_sigma ||
      params.warmup_frames != old.warmup_frames)
    return m.restart_background();
  return {};
}

std::string CudaEngine::set_frames_in_flight(int frames) {
  Impl& m = *impl_;
  if (frames != 1 && frames != 2) return "frames in flight must be 1 or 2, not " + std::to_string(frames);
  if ((frames == 2) == (m.twin != nullptr)) return {};
  std::string e = synchronize();
  if (!e.empty()) return e;
  // The graph records the model's event for the other set only with a twin.
  m.graph.forget();
  if (frames == 1) {
    m.frame_index = m.frames_queued;  // the count goes on from both sets' frames
    m.twin.reset();
    m.peer = nullptr;
    m.next_on_twin = m.last_on_twin = false;
    return {};
  }
  std::unique_ptr<CudaEngine> twin = create(m.params, m.device, &e);
  if (!twin) return e;
  twin->impl_->limits = m.limits;
  twin->impl_->graph.enabled = m.graph.enabled;
  m.method->share_frames_with(*twin->impl_->method);  // one stream of frames (an automatic coarse range)
  m.twin = std::move(twin);
  m.peer = m.twin->impl_.get();
  m.twin->impl_->peer = &m;
  m.twin->impl_->model_home = &m;  // one background model for both sets
  m.frames_queued = m.frame_index;
  return {};
}

int CudaEngine::frames_in_flight() const { return impl_->twin ? 2 : 1; }

std::string CudaEngine::set_frame_graphs(bool on) {
  std::string e = synchronize();
  if (!e.empty()) return e;
  for (Impl* m : {impl_.get(), impl_->twin ? impl_->twin->impl_.get() : nullptr}) {
    if (!m || m->graph.enabled == on) continue;
    m->graph.enabled = on;
    m->graph.forget();  // on: the next frame runs straight, the one after is captured
  }
  return {};
}

std::string CudaEngine::emulate_device_limits(const DeviceLimits& limits) {
  Impl& m = *impl_;
  std::string e = synchronize();
  if (!e.empty()) return e;
  m.limits = limits;
  m.graph.forget();  // the graph holds the launches of the old configuration
  if (m.twin) return m.twin->emulate_device_limits(limits);
  return {};
}

const DeviceLimits& CudaEngine::device_limits() const { return impl_->limits; }

std::string CudaEngine::upload_ahead(const FrameView& host_view, FrameView* device_view) {
  Impl& m = *impl_;
  if (!device_view) return "upload_ahead() needs somewhere to put the device view";
  if (host_view.memory != Memory::Host) return "upload_ahead() takes a view in host memory";
  if (host_view.width <= 0 || host_view.height <= 0) return "upload_ahead() got an empty picture";
  std::string e = check_view_planes(host_view, "uploaded");
  if (!e.empty()) return e;
  e = m.ensure_device();
  if (!e.empty()) return e;
  return m.uploads.upload(host_view, device_view, m.copier);
}

void CudaEngine::release_upload(const FrameView& device_view) { impl_->uploads.release(device_view, impl_->device); }

cudaStream_t CudaEngine::stream() const { return impl_->stream; }
int CudaEngine::device() const { return impl_->device; }

void CudaEngine::reset_background() {
  impl_->ensure_device();
  if (impl_->twin) synchronize();  // both sets' frames read the model this restarts
  impl_->restart_background();
  if (impl_->twin) impl_->twin->reset_background();
}

FrameStats CudaEngine::stats() const {
  if (impl_->last_on_twin) return impl_->twin->stats();
  Impl& m = *impl_;
  FrameStats st = m.pending;
  if (!m.have_frame) return st;
  m.ensure_device();
  m.read_counts();
  return with_counters(st, *m.counters_host, m.width, m.height, m.params);
}

std::string CudaEngine::download_debug(Matcher::Debug* out) {
  if (impl_->last_on_twin) return impl_->twin->download_debug(out);
  Impl& m = *impl_;
  std::string e = synchronize();
  if (!e.empty()) return e;
  if (!m.have_frame) return "no frame has been processed";
  *out = Matcher::Debug();
  out->levels.assign(m.levels, LevelDebug());
  e = m.read_counts();
  if (!e.empty()) return e;
  for (int l = 0; l < m.levels; ++l) {
    const EngineLevel& L = m.lv[l];
    LevelDebug& d = out->levels[l];
    d.range = L.range;
    e = download(L.gray[0], &d.gray_left);
    if (e.empty()) e = download(L.gray[1], &d.gray_right);
    if (e.empty() && m.params.background) {
      e = download(L.mask[0], &d.mask_left);
      if (e.empty()) e = download(L.mask[1], &d.mask_right);
      if (l == 0 && !m.pending.warming_up) {
        const uint64_t cells = background_cells(m.width, m.height);
        d.tests_left = cells + m.counters_host->pixel_tests[0];
        d.tests_right = cells + m.counters_host->pixel_tests[1];
      }
    }
    if (!e.empty()) return e;
  }
  // The method's maps, costs and confidence; with the background model as
  // the specification states them where it leaves no work.
  e = m.method->download_debug(m.method_frame(), out, m.stream);
  if (e.empty() && m.params.background) mask_debug_to_foreground(*out, m.params.subwindow_radius);
  return e;
}

std::string CudaEngine::profile_stages(std::vector<StageTime>* times) {
  if (impl_->last_on_twin) {
    // Both sets' frames done first: they share the background model.
    const std::string e = synchronize();
    return e.empty() ? impl_->twin->profile_stages(times) : e;
  }
  Impl& m = *impl_;
  std::string e = m.profilable();
  if (e.empty()) e = synchronize();
  if (!e.empty()) return e;
  StageTimer t;
  t.on = true;
  t.stream = m.stream;
  struct Release {  // the events go whatever the outcome
    StageTimer& t;
    ~Release() { t.release(); }
  } release{t};
  t.mark("start");
  e = m.enqueue_input(m.last_left, m.last_right);
  if (!e.empty()) return e;
  t.mark(m.params.rectification ? "rectify+convert" : "convert");
  e = m.enqueue_body(m.stream, &t);
  if (e.empty()) e = m.enqueue_finish(&t);
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
  times->clear();
  for (size_t i = 1; i < t.events.size(); ++i) {
    StageTime st;
    st.name = t.names[i];
    cudaEventElapsedTime(&st.ms, t.events[i - 1], t.events[i]);
    times->push_back(st);
  }
  if (m.params.background) m.count_model_frame();  // the body counted a frame
  return {};
}

std::string CudaEngine::profile_graph(std::vector<TimelineMark>* marks) {
  if (impl_->last_on_twin) {
    // Both sets' frames done first: they share the background model.
    const std::string e = synchronize();
    return e.empty() ? impl_->twin->profile_graph(marks) : e;
  }
  Impl& m = *impl_;
  std::string e = m.profilable();
  if (e.empty()) e = synchronize();
  if (!e.empty()) return e;
  StageTimer t;
  t.in_graph = true;
  t.stream = m.stream;
  cudaEvent_t start = nullptr, converted = nullptr, done = nullptr;
  cudaGraphExec_t exec = nullptr;
  // Everything made here goes when the call returns, whatever its outcome.
  struct Cleanup {
    StageTimer& t;
    cudaEvent_t* ev[3];
    cudaGraphExec_t* exec;
    ~Cleanup() {
      t.release();
      for (cudaEvent_t* p : ev)
        if (*p) cudaEventDestroy(*p);
      if (*exec) cudaGraphExecDestroy(*exec);
    }
  } cleanup{t, {&start, &converted, &done}, &exec};
  constexpr int kMarks = 8 * kMaxLevels + 8;
  for (int i = 0; i < kMarks; ++i) {
    cudaEvent_t ev;
    CS_CUDA_TRY(cudaEventCreate(&ev));
    t.pool.push_back(ev);
  }
  for (cudaEvent_t* p : {&start, &converted, &done}) CS_CUDA_TRY(cudaEventCreate(p));
  cudaGraph_t g = nullptr;
  bool in_capture = false;
  e = FrameGraph::capture(m.stream, [&] { return m.enqueue_body(m.stream, &t); }, &g, &in_capture);
  if (e.empty()) {
    const cudaError_t inst = cudaGraphInstantiate(&exec, g, cudaGraphInstantiateFlagUseNodePriority);
    if (inst != cudaSuccess) e = cuda_error_text(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  if (g) cudaGraphDestroy(g);
  if (!e.empty()) {
    (void)cudaGetLastError();
    return e;
  }
  CS_CUDA_TRY(cudaEventRecord(start, m.stream));
  e = m.enqueue_input(m.last_left, m.last_right);
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaEventRecord(converted, m.stream));
  CS_CUDA_TRY(cudaGraphLaunch(exec, m.stream));
  StageTimer off;
  e = m.enqueue_finish(&off);
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaEventRecord(done, m.stream));
  CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
  marks->clear();
  auto add = [&](const std::string& name, int level, bool side, cudaEvent_t ev) -> std::string {
    TimelineMark k;
    k.name = name;
    k.level = level;
    k.side = side;
    CS_CUDA_TRY(cudaEventElapsedTime(&k.ms, start, ev));
    marks->push_back(k);
    return {};
  };
  e = add("convert", -1, false, converted);
  for (size_t i = 0; i < t.events.size() && e.empty(); ++i) e = add(t.names[i], t.levels[i], t.sides[i], t.events[i]);
  if (e.empty()) e = add("finish", -1, false, done);
  if (!e.empty()) return e;
  if (m.params.background) m.count_model_frame();  // the body counted a frame
  return {};
}

std::string CudaEngine::frame_graph_state(bool* skips_empty) const {
  if (impl_->last_on_twin) return impl_->twin->frame_graph_state(skips_empty);
  const Impl& m = *impl_;
  const FrameGraph& g = m.graph;
  if (skips_empty) *skips_empty = g.last_graphed && m.params.background && g.conditions;
  if (g.last_graphed && !g.conditions && m.params.background)
    return "graph without its SWITCH node (" + g.capture_error + ")";
  if (g.last_graphed) return "graph";
  if (!g.enabled) return "graphs off";
  if (!g.capture_error.empty()) return "no graph: " + g.capture_error;
  return "not yet captured";
}

size_t CudaEngine::device_bytes() const {
  const Impl& m = *impl_;
  size_t n = m.disparity_q4.bytes() + m.confidence.bytes() + m.all_foreground.bytes() + m.encoded.bytes() +
             m.method->device_bytes();
  for (const EngineLevel& L : m.lv)
    for (int v = 0; v < 2; ++v) n += L.gray[v].bytes() + L.mask[v].bytes() + L.occupancy[v].bytes() + L.colour[v].bytes();
  for (int v = 0; v < 2; ++v)
    n += m.model[v].bytes() + m.raw_test[v].bytes() + m.cell_model[v].bytes() + m.cell_fg[v].bytes() +
         m.cell_settled[v].bytes() + m.model_work[v].bytes() +
         m.raw_any[v].bytes();
  n += m.mask_dirty.bytes();
  n += m.staging.device_bytes() + m.uploads.device_bytes();
  return m.twin ? n + m.twin->device_bytes() : n;
}

std::unique_ptr<Engine> make_cuda_engine(const Params& params, int device_id, std::string* error,
                                         std::string* detail) {
  return CudaEngine::create(params, device_id, error, detail);
}

}  // namespace cs::cuda
