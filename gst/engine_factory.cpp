#include "engine_factory.h"

#include <cstdlib>
#include <cstring>
#include <deque>

#include "config.h"
#include "error_text.h"

// gst/meson.build defines CS_HAVE_CUDA_ENGINE when it links the CUDA engine
// (cuda/, built only when HAVE_CUDA); make_cuda_backend() is the only place
// in gst/ that knows about it.
#if HAVE_CUDA && defined(CS_HAVE_CUDA_ENGINE)
#define CS_GST_CUDA_ENGINE 1
#include "cuda_engine.h"
#include "host_register.h"
#else
#define CS_GST_CUDA_ENGINE 0
#endif

namespace cs_gst {

namespace {

std::unique_ptr<cs::Engine> make_cuda_backend(int cuda_device_id, const cs::Params& params, std::string* error,
                                              std::string* detail) {
#if CS_GST_CUDA_ENGINE
  try {
    std::unique_ptr<cs::Engine> engine = cs::cuda::make_cuda_engine(params, cuda_device_id, error, detail);
    if (!engine && error->empty()) *error = "the CUDA engine could not be created";
    return engine;
  } catch (const std::exception& e) {
    *error = std::string("the CUDA engine could not be created: ") + e.what();
    return nullptr;
  }
#else
  (void)cuda_device_id;
  (void)params;
  (void)detail;
  *error = HAVE_CUDA ? "this build of the element was made without the CUDA engine"
                     : "this build was made without CUDA (nvcc was not found or -Dcuda=disabled)";
  return nullptr;
#endif
}

std::unique_ptr<cs::Engine> make_cpu_backend(const cs::Params& params, bool overlap, std::string* error) {
  try {
    return cs::make_cpu_engine(params, overlap);
  } catch (const std::exception& e) {
    *error = std::string("the CPU engine could not be created: ") + e.what();
    return nullptr;
  }
}

// The fault injection of kInjectFaultVariable: the engine it wraps works as
// usual until process() call `fail_at`, which fails with the text the CUDA
// engine gives for that fault (cuda_error_text), marked as injected.
class FaultInjectingEngine : public cs::Engine {
 public:
  enum class Fault { OutOfMemory, LaunchFailure };

  FaultInjectingEngine(std::unique_ptr<cs::Engine> inner, Fault fault, uint64_t fail_at, std::string spec)
      : inner_(std::move(inner)), fault_(fault), fail_at_(fail_at), spec_(std::move(spec)) {}

  cs::Engine* inner() const { return inner_.get(); }
  const char* backend_name() const override { return inner_->backend_name(); }
  std::string set_params(const cs::Params& params) override { return inner_->set_params(params); }
  void reset_background() override { inner_->reset_background(); }
  cs::FrameStats stats() const override { return inner_->stats(); }

  std::string process(const cs::FrameView& left, const cs::FrameView& right, const cs::EncodeParams& encode,
                      const cs::OutputFrame& out) override {
    ++calls_;
    const bool fails = fault_ == Fault::LaunchFailure ? calls_ >= fail_at_ : calls_ == fail_at_;
    // The frame still goes through the engine, which gives back what it
    // took (upload slots of frames uploaded ahead), as a frame that fails on
    // the GPU does; only its outcome is replaced.
    const std::string result = inner_->process(left, right, encode, out);
    return fails ? fault_text(calls_) : result;
  }

  // Frames in flight: the same count over submit(), the fault delivered by
  // the finish() of the frame it hit.
  std::string submit(const cs::FrameView& left, const cs::FrameView& right, const cs::EncodeParams& encode,
                     const cs::OutputFrame& out) override {
    const std::string e = inner_->submit(left, right, encode, out);
    if (!e.empty()) return e;
    ++calls_;
    fails_.push_back(fault_ == Fault::LaunchFailure ? calls_ >= fail_at_ : calls_ == fail_at_);
    frames_.push_back(calls_);
    return {};
  }
  FrameResult finish() override {
    FrameResult r = inner_->finish();
    if (fails_.empty()) return r;
    if (fails_.front()) r.error = fault_text(frames_.front());
    fails_.pop_front();
    frames_.pop_front();
    return r;
  }
  size_t in_flight() const override { return inner_->in_flight(); }
  bool overlaps_frames() const override { return inner_->overlaps_frames(); }

 private:
  std::unique_ptr<cs::Engine> inner_;
  Fault fault_;
  uint64_t fail_at_;
  std::string spec_;
  uint64_t calls_ = 0;
  std::deque<bool> fails_;       // frames in flight: whether each fails
  std::deque<uint64_t> frames_;  // and its number

  std::string fault_text(uint64_t frame) const {
    const char* what = fault_ == Fault::OutOfMemory ? "out of memory (cudaErrorMemoryAllocation)"
                                                    : "unspecified launch failure (cudaErrorLaunchFailure)";
    return cs::with_detail(std::string("the GPU reported an error: ") + what,
                           "injected by " + std::string(kInjectFaultVariable) + "=" + spec_ + " at frame " +
                               std::to_string(frame) + "; no GPU call failed");
  }
};

// Wraps `engine` when kInjectFaultVariable asks for a fault; a malformed
// value becomes the creation error, so that a test cannot pass by mistake.
std::unique_ptr<cs::Engine> maybe_inject_fault(std::unique_ptr<cs::Engine> engine, std::string* error) {
  const char* spec = std::getenv(kInjectFaultVariable);
  if (!engine || !spec || !*spec) return engine;
  const char* at = std::strchr(spec, '@');
  const std::string kind = at ? std::string(spec, at) : std::string(spec);
  char* end = nullptr;
  const unsigned long long frame = at ? std::strtoull(at + 1, &end, 10) : 0;
  FaultInjectingEngine::Fault fault;
  if (kind == "oom") {
    fault = FaultInjectingEngine::Fault::OutOfMemory;
  } else if (kind == "launch") {
    fault = FaultInjectingEngine::Fault::LaunchFailure;
  } else {
    *error = std::string(kInjectFaultVariable) + "=" + spec + " is not KIND@FRAME with KIND oom or launch";
    return nullptr;
  }
  if (!at || frame == 0 || (end && *end)) {
    *error = std::string(kInjectFaultVariable) + "=" + spec + " is not KIND@FRAME with FRAME >= 1";
    return nullptr;
  }
  return std::make_unique<FaultInjectingEngine>(std::move(engine), fault, frame, spec);
}

}  // namespace

bool cuda_engine_available() { return CS_GST_CUDA_ENGINE != 0; }

void* alloc_pinned(size_t bytes, std::string* error) {
#if CS_GST_CUDA_ENGINE
  return cs::cuda::alloc_pinned(bytes, error);
#else
  (void)bytes;
  *error = "this build has no CUDA engine, hence no pinned memory";
  return nullptr;
#endif
}

void free_pinned(void* ptr) {
#if CS_GST_CUDA_ENGINE
  cs::cuda::free_pinned(ptr);
#else
  (void)ptr;
#endif
}

HostRegistration register_host_memory(void* ptr, size_t bytes, std::string* error) {
#if CS_GST_CUDA_ENGINE
  switch (cs::cuda::register_host(ptr, bytes, error)) {
    case cs::cuda::HostRegistration::Registered:
      return HostRegistration::Registered;
    case cs::cuda::HostRegistration::AlreadyPinned:
      return HostRegistration::AlreadyPinned;
    case cs::cuda::HostRegistration::Failed:
      break;
  }
#else
  (void)ptr;
  (void)bytes;
  *error = "this build has no CUDA engine, hence no page-locking";
#endif
  return HostRegistration::Failed;
}

bool unregister_host_memory(void* ptr, std::string* error) {
#if CS_GST_CUDA_ENGINE
  return cs::cuda::unregister_host(ptr, error);
#else
  (void)ptr;
  *error = "this build has no CUDA engine, hence no page-locking";
  return false;
#endif
}

bool host_memory_pinned(const void* ptr) {
#if CS_GST_CUDA_ENGINE
  return cs::cuda::is_pinned(ptr);
#else
  (void)ptr;
  return false;
#endif
}

#if CS_GST_CUDA_ENGINE
namespace {
cs::cuda::CudaEngine* as_cuda(cs::Engine* engine) {
  if (auto* injecting = dynamic_cast<FaultInjectingEngine*>(engine)) engine = injecting->inner();
  return dynamic_cast<cs::cuda::CudaEngine*>(engine);
}
}  // namespace
#endif

bool engine_uploads_ahead(cs::Engine* engine) {
#if CS_GST_CUDA_ENGINE
  return as_cuda(engine) != nullptr;
#else
  (void)engine;
  return false;
#endif
}

std::string upload_ahead(cs::Engine* engine, const cs::FrameView& host_view, cs::FrameView* device_view) {
#if CS_GST_CUDA_ENGINE
  if (cs::cuda::CudaEngine* cuda = as_cuda(engine)) return cuda->upload_ahead(host_view, device_view);
#else
  (void)engine;
  (void)host_view;
  (void)device_view;
#endif
  return "this engine does not upload ahead";
}

void release_upload(cs::Engine* engine, const cs::FrameView& device_view) {
#if CS_GST_CUDA_ENGINE
  if (cs::cuda::CudaEngine* cuda = as_cuda(engine)) cuda->release_upload(device_view);
#else
  (void)engine;
  (void)device_view;
#endif
}

EngineChoice create_engine(Backend backend, int cuda_device_id, const cs::Params& params, bool cpu_overlap) {
  EngineChoice choice;
  std::string cuda_error;
  switch (backend) {
    case Backend::Cuda:
      choice.engine = make_cuda_backend(cuda_device_id, params, &cuda_error, &choice.debug);
      if (!choice.engine) choice.error = "backend=cuda was requested but " + cuda_error;
      break;
    case Backend::Auto:
      choice.engine = make_cuda_backend(cuda_device_id, params, &cuda_error, &choice.debug);
      if (!choice.engine) {
        choice.engine = make_cpu_backend(params, cpu_overlap, &choice.error);
        if (choice.engine) choice.notice = "backend=auto runs on the CPU: " + cuda_error;
      }
      break;
    case Backend::Cpu:
      choice.engine = make_cpu_backend(params, cpu_overlap, &choice.error);
      break;
  }
  choice.engine = maybe_inject_fault(std::move(choice.engine), &choice.error);
  return choice;
}

}  // namespace cs_gst
