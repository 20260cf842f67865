// Chooses and creates the stereo engine for the element's `backend`
// property. This is the one seam where a CUDA engine plugs in: the element
// only ever sees cs::Engine.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine.h"

namespace cs_gst {

enum class Backend { Auto = 0, Cuda = 1, Cpu = 2 };

struct EngineChoice {
  std::unique_ptr<cs::Engine> engine;  // null on error
  std::string notice;                  // non-empty: tell the user (e.g. auto fell back to the CPU)
  std::string error;                   // non-empty: no engine could be made, and why
  std::string debug;                   // for the debug string: the failing call, file and line, when known
};

// True when this build carries a CUDA engine that can be created.
bool cuda_engine_available();

// Page-locked host memory through the CUDA engine (cs::cuda::alloc_pinned):
// null, with the reason in *error, when this build has no CUDA engine or the
// driver refuses. Frames in it cross to the GPU by DMA without a CPU copy.
void* alloc_pinned(size_t bytes, std::string* error);
void free_pinned(void* ptr);

// Page-locking host memory where it lies (cs::cuda::register_host), in the
// current CUDA context, for pin in place (host_pin.h). Without a CUDA engine
// in the build: Failed, with the reason.
enum class HostRegistration { Registered, AlreadyPinned, Failed };
HostRegistration register_host_memory(void* ptr, size_t bytes, std::string* error);
bool unregister_host_memory(void* ptr, std::string* error);
// True when `ptr` lies in page-locked host memory: the CUDA engine's own test
// (cs::cuda::is_pinned) of whether a plane goes up by DMA where it lies.
bool host_memory_pinned(const void* ptr);

// Upload ahead (cs::cuda::CudaEngine::upload_ahead): true when `engine`
// can copy a host frame to the GPU from the upstream thread while it works
// on the previous one (the CUDA engine). The other two answer as the CUDA
// engine's calls do; with any other engine they refuse or do nothing.
bool engine_uploads_ahead(cs::Engine* engine);
std::string upload_ahead(cs::Engine* engine, const cs::FrameView& host_view, cs::FrameView* device_view);
void release_upload(cs::Engine* engine, const cs::FrameView& device_view);

// cuda_device_id: -1 = automatic. Never throws.
//
// A test hook, not a user setting: when the environment variable named by
// kInjectFaultVariable holds "KIND@N" at engine creation, the engine made
// fails its N-th process() call (from 1) the way a GPU fault does, so that
// tests cover the element's handling of a GPU error mid-stream on any
// backend. KIND is `oom` (out of memory, that frame only) or `launch` (a
// failed kernel launch: that frame and every later one, as CUDA's sticky
// errors do). The error text names the fault and says it was injected.
// cpu_overlap: a CPU engine overlaps frames in flight on a worker thread
// (cs::make_cpu_engine's `overlap`); the CUDA engine queues frames itself.
EngineChoice create_engine(Backend backend, int cuda_device_id, const cs::Params& params, bool cpu_overlap = false);

inline constexpr const char* kInjectFaultVariable = "CUDASTEREO_INJECT_FAULT";

}  // namespace cs_gst
