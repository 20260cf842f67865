// gst-cudastereo CUDA engine: the pipeline of stages.h on one GPU,
// bit-identical to the CPU reference (cs::Matcher + cs::encode_output).
//
// Context and threads. The engine uses the CUDA runtime API on the device it
// was created for. It never switches away from a device that is current when
// it is called: with device_id = -1 it adopts the current device (and, where
// a caller has pushed a driver context such as a GstCudaContext's CUcontext,
// the runtime uses that context). With device_id >= 0 the engine makes that
// device current only when another one is current. Every call must then come
// with the same context current (or none pushed), from one thread at a time;
// only upload_ahead() and release_upload() may come from other threads too.
// Several engines in one process are independent: each owns its buffers,
// stream and graph; no mutable state is global.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "device_limits.h"
#include "engine.h"
#include "matcher_debug.h"
#include "stereo.h"

namespace cs::cuda {

// True when a usable CUDA device is present; else false with the reason.
bool cuda_available(std::string* why);

// Page-locked ("pinned") host memory for frames that cross to and from the
// GPU: the DMA engines read and write it directly, so a frame in it needs no
// CPU copy through the engine's staging area. Allocated portable (pinned for
// every CUDA context in the process, not only the current one). Null with a
// sentence in *error when it cannot be had.
void* alloc_pinned(size_t bytes, std::string* error);
void free_pinned(void* ptr);
// True when `ptr` lies in page-locked host memory the CUDA driver knows
// (alloc_pinned, cudaHostAlloc or cudaHostRegister), from any context.
bool is_pinned(const void* ptr);

// Per-stage GPU time of one frame (bench/ and tools): name, milliseconds.
struct StageTime {
  std::string name;
  float ms = 0.0f;
};

// One mark of profile_graph: when the work before it on its stream was done,
// ms from the frame's start (before its conversion). level -1: not a
// level's; side: on the method's branch.
struct TimelineMark {
  std::string name;
  int level = -1;
  bool side = false;
  float ms = 0.0f;
};

class CudaEngine final : public Engine {
 public:
  // Null with a sentence in *error when there is no GPU, the build has no
  // code for it, the parameters are invalid, or memory runs out; *detail
  // (optional) then gets what a developer wants besides (the failing CUDA
  // call, file and line) where *error leaves it out.
  static std::unique_ptr<CudaEngine> create(const Params& params, int device_id, std::string* error,
                                            std::string* detail = nullptr);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  // ---- Engine (blocking; views and output in host or device memory)
  const char* backend_name() const override { return "cuda"; }
  std::string set_params(const Params& params) override;
  std::string process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                      const OutputFrame& out) override;
  void reset_background() override;
  // Statistics of the last frame (waits for it to finish).
  FrameStats stats() const override;

  // ---- frames in flight (Engine::submit/finish)
  // A frame whose output is in device memory (its views then too) or in
  // pinned host memory is queued on the engine's stream and submit()
  // returns at once; finish() waits for it on an event that blocks the
  // thread instead of spinning, and reads the frame's own copy of its
  // counters (so frames in flight keep their statistics apart). With two
  // sets of frames in flight (set_frames_in_flight), frames of device views
  // alternate between the sets as enqueue()'s do, and still finish in
  // submit order. A frame with a pageable output runs inside submit().
  // Pageable views pass through the one staging area: their submit() first
  // waits for the frames in flight that read it.
  std::string submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                     const OutputFrame& out) override;
  FrameResult finish() override;
  size_t in_flight() const override;
  // True: submit() queues frames (but those with a pageable output).
  bool overlaps_frames() const override;

  // ---- asynchronous, device-resident frames
  // Queues one frame: both views in device memory (Memory::Device), output
  // in device memory. The work is ordered after what is already queued on
  // `stream` (nullptr: the engine's own stream only) and `stream` waits for
  // it, so a caller may release or read the buffers in stream order. The
  // views must stay valid until then. Nothing is synchronised.
  std::string enqueue(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                      const OutputFrame& out, cudaStream_t stream);
  // The same, writing the raw Q4 map and/or the foreground mask (Outputs
  // views in device memory; either may be null).
  std::string enqueue(const FrameView& left, const FrameView& right, const Outputs& out, cudaStream_t stream);
  // Waits for every queued frame.
  std::string synchronize();

  // ---- upload ahead: the next frame's upload overlaps the current frame
  // Starts copying one host picture (any FrameView in host memory: a view,
  // or a whole packed frame holding both) to the GPU on a stream of its own
  // and returns at once with *device_view, a Memory::Device view of one of
  // the engine's upload slots. Pass it, or views of sub-rectangles inside it
  // (the halves of a packed frame), to process() or enqueue(): they wait for
  // the upload on the GPU, and from then on the slot belongs to the engine
  // again, whatever the call's outcome. A view never processed goes back
  // through release_upload().
  // Callable from any thread, also while another thread is inside process()
  // or enqueue(); the engine's device must be current as for every call.
  // Pageable planes are copied into the slot's pinned staging before this
  // returns (the caller may reuse them at once); pinned planes (is_pinned)
  // are read by DMA later and must stay valid until the view was processed
  // or released. Never waits for the GPU: when no slot is free, or anything
  // fails, it returns the reason and the caller goes the usual way. A slot
  // whose size or format changes is reallocated, which may wait once.
  std::string upload_ahead(const FrameView& host_view, FrameView* device_view);
  // Gives back a slot handed out by upload_ahead() and never processed;
  // returns after its upload has finished (so pinned source planes may be
  // freed). Views of no slot handed out are ignored.
  void release_upload(const FrameView& device_view);
  // Upload slots per engine: a frame being processed, one queued and one
  // arriving, for each of two views.
  static constexpr int kUploadSlots = 6;
  cudaStream_t stream() const;
  int device() const;

  // ---- frames in flight
  // 1 (the default): each frame's work follows the previous frame's on the
  // engine's stream. 2: enqueue() calls without a caller stream alternate
  // between two sets of buffers, streams and graphs (twice the device
  // memory), so that one frame's matching overlaps the next one's where it
  // leaves the GPU idle: more frames a second, each frame taking as long as
  // before. With the background model both sets run one model (the first
  // set's): a frame's model passes (the conversion's cell tests, the pixels'
  // pass, the masks) wait for the previous frame's, and its matching
  // overlaps the previous frame's matching; the outputs equal those of one
  // set bit for bit. Outputs are still written in enqueue order. Everything
  // else (process(), views in upload slots, calls with a caller stream)
  // uses the first set.
  // stats(), download_debug() and profile_stages() speak of the last frame
  // queued, whichever set ran it; stream() is the first set's stream, so
  // wait for frames with synchronize().
  std::string set_frames_in_flight(int frames);
  int frames_in_flight() const;

  // ---- tests and tools
  // Copies the last frame's per-level intermediates (as cs::Matcher::Debug).
  std::string download_debug(Matcher::Debug* out);
  // Runs the last frame's pipeline again (same inputs) with events between
  // stages and returns each stage's time; inputs must still be valid (not
  // upload slots, which the engine reuses: such a frame is refused).
  std::string profile_stages(std::vector<StageTime>* times);
  // Runs the last frame again (same inputs, same refusal) as the graph runs
  // it, side branch included, with an event record node after each stage
  // (a graph of its own, captured for the call): where the frame's time
  // goes when stages overlap. The marks cost a little (the graph's edges
  // pass through them).
  std::string profile_graph(std::vector<TimelineMark>* marks);
  // true (the default): a frame is one graph launch from its second frame
  // on (frame_graph.h). false: every frame runs its launches straight on the
  // stream, as the first frame of a configuration does; with the
  // background model the frame's counts are then read back before its
  // matching (a wait a frame). The results are the same. For tools that
  // cannot follow a graph's conditional nodes (compute-sanitizer's
  // racecheck, bench/RESULTS.md). Waits for the frames in flight; both
  // sets of frames in flight follow it.
  std::string set_frame_graphs(bool on);
  // How the last frame ran: "graph" (one graph launch), or why it did not
  // ("not yet captured": the first frame after a change runs its launches
  // straight; "graphs off": set_frame_graphs(false); else the capture's
  // failure); and whether the graph skips
  // the matching where there is no foreground (its SWITCH node).
  std::string frame_graph_state(bool* skips_empty = nullptr) const;
  // Device memory the engine holds now, bytes.
  size_t device_bytes() const;
  // Kernel configurations follow the device's limits (queried at create()).
  // Tests pass a smaller GPU's (architecture_limits) to run, here, the
  // configurations that GPU would run; they must not exceed this device's.
  std::string emulate_device_limits(const DeviceLimits& limits);
  const DeviceLimits& device_limits() const;

 private:
  CudaEngine();
  // The set of buffers the next enqueue() takes (this engine or its twin).
  CudaEngine* lane_for(const FrameView& left, const FrameView& right, cudaStream_t stream);
  // After a frame queued on `lane`: the frame count and the last frame's set.
  void frame_queued(const CudaEngine* lane);
  const CudaEngine& last_lane() const;
  std::string enqueue_here(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                           const OutputFrame& out, cudaStream_t stream);
  std::string enqueue_here(const FrameView& left, const FrameView& right, const Outputs& out, cudaStream_t stream);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Engine factory the element uses (a CudaEngine underneath).
std::unique_ptr<Engine> make_cuda_engine(const Params& params, int device_id, std::string* error,
                                         std::string* detail = nullptr);

}  // namespace cs::cuda
