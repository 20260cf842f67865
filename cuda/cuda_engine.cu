// The CUDA engine: owns device buffers, one stream, pinned staging and a
// CUDA graph of the frame, which is captured once per configuration and
// replayed every frame. A frame is one graph launch: its first node is the
// input conversion, which also zeroes the frame's counters, then the
// fixed-address work (pyramid .. the last level's matching), and its last
// node the method's finish, which adds to the counters and writes the
// output (the Q4 map or its encoding) where the caller wants it. The
// conversion's input and the finish's output change from frame to frame:
// both kernels are described as data (kernel_call.h), and before each
// launch the two nodes get this frame's arguments
// (cudaGraphExecKernelNodeSetParams). Launched around the graph as three
// submissions, a frame timed alone on an idle GPU took 3 to 5 us longer
// than one after another (640x480 x 128 on an H100, about 0.088 ms a frame;
// bench/RESULTS.md). A frame whose conversion or finish is another kernel
// or grid than the nodes' is captured again (enqueue_frame). The finish
// leaves the graph for a frame that must wait for an event first (an
// earlier copy out of its output buffer, or the other set's output when two
// sets of frames are in flight): its node is disabled and the finish
// launched after the graph. The graph has no memset or copy node (those two
// took 7 to 10 us of a 0.1 to 0.3 ms frame on an H100, an encoding pass of
// its own 3 to 7).
#include "cuda_engine.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>

#include "background.h"
#include "coarse_probe.h"
#include "config.h"
#include "convert.h"
#include "cuda_util.h"
#include "encode_output.h"
#include "error_text.h"
#include "finish.h"
#include "frame_checks.h"
#include "gpu_code.h"
#include "host_register.h"
#include "kernel_call.h"
#include "matching.h"
#include "method.h"
#include "pyramid.h"
#include "row_copy.h"
#include "stages.h"

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

void* alloc_pinned(size_t bytes, std::string* error) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky: later calls must not see it
    if (error) *error = cuda_error_text(e, "cudaHostAlloc", __FILE__, __LINE__);
    return nullptr;
  }
  return p;
}

void free_pinned(void* ptr) {
  if (ptr) cudaFreeHost(ptr);
}

bool is_pinned(const void* ptr) {
  if (!ptr) return false;
  std::shared_lock<std::shared_mutex> guard(host_registration_lock());
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    cudaGetLastError();  // pageable memory on older runtimes answers with an error
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

namespace {

constexpr int kMaxSide = 16384;  // the largest view width and height (check_frame)

// The stages every method shares, per level: intensities and the
// background model's masks and their occupancy (the method's own buffers
// are the method's: method.h).
struct Level {
  int width = 0, height = 0;
  Range range{0, 0};
  DeviceImage<uint8_t> gray[2];
  DeviceImage<uint8_t> mask[2];
  DeviceImage<uint8_t> occupancy[2];  // levels below kOccupancyLevels
};

// One upload_ahead() buffer: the device planes of one host picture, the
// pinned staging its pageable planes pass through, and two events.
struct UploadSlot {
  enum class State {
    Free,       // reusable now
    Filling,    // owned by one upload_ahead()/release_upload() call
    HandedOut,  // its device view is with a caller
    InFrame,    // claimed by the process()/enqueue() call in progress
    Returned,   // given back on the engine stream: free once `consumed` has happened
  };
  State state = State::Free;
  PixelFormat format = PixelFormat::GRAY8;
  int width = 0, height = 0;
  int planes = 0;
  DeviceImage<uint8_t> plane[3];
  uint8_t* staging = nullptr;  // pinned
  size_t staging_bytes = 0;
  cudaEvent_t uploaded = nullptr;  // on the upload stream, after the copies
  cudaEvent_t consumed = nullptr;  // on the engine stream, after the frame's conversion read it

  bool holds(const uint8_t* p) const {
    if (planes == 0 || !p) return false;
    const uint8_t* base = plane[0].view().data;
    return p >= base && p < base + plane[0].bytes();
  }
};

// The automatic coarse range (Params::coarse_range_factor 0, stages.h 6b):
// the factor, when to probe and the probe on its way. Both sets of frames in
// flight share one, so the frames count and choose as one stream, as the
// CPU reference's Matcher does.
struct AutoCoarse {
  CoarseProbeSchedule schedule;
  // A probe in flight: its histogram arrives in counts_host when `done` has
  // happened; level, bins and max (its max_disparity) say how to read it.
  bool waiting = false;
  int level = 0, bins = 0, max = 0;
  int device = 0;
  cudaEvent_t done = nullptr;
  unsigned* counts_device = nullptr;
  unsigned* counts_host = nullptr;  // pinned
  int capacity = 0;                 // bins both buffers hold

  std::string ensure(int want_bins) {
    if (!done) CS_CUDA_TRY(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    if (want_bins <= capacity) return {};
    release_buffers();
    CS_CUDA_TRY(cudaMalloc(&counts_device, static_cast<size_t>(want_bins) * sizeof(unsigned)));
    CS_CUDA_TRY(cudaMallocHost(&counts_host, static_cast<size_t>(want_bins) * sizeof(unsigned)));
    capacity = want_bins;
    return {};
  }
  void release_buffers() {
    if (counts_device) cudaFree(counts_device);
    if (counts_host) cudaFreeHost(counts_host);
    counts_device = nullptr;
    counts_host = nullptr;
    capacity = 0;
  }
  ~AutoCoarse() {
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != device) cudaSetDevice(device);
    if (done) {
      cudaEventSynchronize(done);
      cudaEventDestroy(done);
    }
    release_buffers();
    if (cur >= 0 && cur != device) cudaSetDevice(cur);
  }
};

// The two kernels of a frame's graph that take the frame's own arguments
// (kernel_call.h): what a graph was captured with, or what a frame needs.
struct FrameShape {
  KernelShape convert, finish;
  bool operator==(const FrameShape& o) const { return convert == o.convert && finish == o.finish; }
  bool operator!=(const FrameShape& o) const { return !(*this == o); }
};

}  // namespace

// Where a frame's finish writes (run_frame): a caller's Q4 map (q4), or
// another encoding of it (encode), or neither: the engine's own Q4 map
// (disparity_q4); after wait_before (if set) has happened on the stream.
struct FrameOutput {
  ImageView<uint16_t> q4;
  EncodeTarget encode;
  cudaEvent_t wait_before = nullptr;
};

struct CudaEngine::Impl {
  Params params;
  int device = 0;
  // What the kernel configurations are chosen for (matching.h): the
  // device's limits, or a smaller GPU's (emulate_device_limits).
  DeviceLimits limits;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev_caller = nullptr, ev_done = nullptr;
  // Two frames in flight (set_frames_in_flight): the second set of buffers,
  // and in each set the other one, whose output writes come first.
  std::unique_ptr<CudaEngine> twin;
  Impl* peer = nullptr;
  bool next_on_twin = false, last_on_twin = false;
  uint64_t frames_queued = 0;         // both sets' frames (frame_index while there is a twin)
  cudaEvent_t ev_output = nullptr;    // after this set's latest output writes
  bool output_recorded = false;
  // The graph's side branch (a method's, e.g. progressive's finer census):
  // its stream and the events that fork it from and join it to `stream`
  // during capture (a join a level: MethodFrame::join).
  cudaStream_t side_stream = nullptr;
  cudaEvent_t ev_fork = nullptr, ev_join[kMaxLevels] = {};
  // The work of the graph's SWITCH node, at the frame's priority
  // (graph_condition.h: with the background model, a frame without
  // foreground skips the matching).
  cudaStream_t body_stream = nullptr;

  // Configuration the buffers and graph were made for.
  int width = 0, height = 0, levels = 0;
  bool buffers_ready = false;
  cudaGraphExec_t graph = nullptr;
  bool graph_ready = false;
  // The captured graph `graph` was instantiated from: the runtime names the
  // executable graph's nodes by their handles in it (convert_node, the
  // first, and finish_node, the last), so it lives as long as `graph`.
  cudaGraph_t graph_source = nullptr;
  cudaGraphNode_t convert_node = nullptr, finish_node = nullptr;
  // What those two nodes were captured with, the arguments they hold now
  // (a node already holding a frame's arguments is not updated) and
  // whether the finish node runs (finish_waits).
  FrameShape graph_shape;
  KernelCall graph_convert, graph_finish;
  bool finish_enabled = true;
  // The configuration's launches have run once straight on the stream (the
  // first frame after a change does that: see enqueue_frame), with
  // conversion and finish kernels of warm_shape.
  bool body_warm = false;
  FrameShape warm_shape;
  // Whether the graph holds the conversion and the finish. False once the
  // runtime refused to name or update those nodes: from then on the graph
  // holds the body alone, and the conversion and the finish are launched
  // around it (three submissions a frame).
  bool frame_nodes = true;
  // The coarse-range factor the frame being enqueued uses (the parameters'
  // own, or the automatic one) and the one the levels' ranges, and so the
  // graph, were prepared with.
  int frame_factor = 1, body_factor = 1;
  std::shared_ptr<AutoCoarse> coarse = std::make_shared<AutoCoarse>();
  // Captures that failed; from kMaxCaptureFailures on, frames run without a graph.
  int capture_failures = 0;
  // Whether captures hold the method's SWITCH node (graph_condition.h); off
  // after a capture with it failed. The last capture's failure, and whether
  // the last frame was a graph launch.
  bool graph_conditions = true;
  std::string capture_error;
  bool last_graphed = false;
  static constexpr int kMaxCaptureFailures = 3;

  std::vector<Level> lv;
  // The matching method (method.h): what runs between the background model
  // and the output, with its own buffers.
  std::unique_ptr<MatchingMethod> method;
  DeviceImage<uint16_t> disparity_q4;
  DeviceImage<uint8_t> confidence;      // the method's, where it has one (Params::confidence, output Confidence)
  DeviceImage<uint8_t> all_foreground;  // 255 everywhere: the mask without a background model
  DeviceImage<uint8_t> input[2][3];     // device copies of host views
  DeviceImage<uint8_t> encoded;         // host outputs are encoded here first
  // Pinned outputs of frames in flight (submit): encoded on `stream` into one
  // of two buffers, in turn, and copied down on copy_stream while the next
  // frame's kernels run; a buffer is encoded into again once its last copy
  // is done (ring_copied).
  cudaStream_t copy_stream = nullptr;
  DeviceImage<uint8_t> encoded_ring[2];
  cudaEvent_t ring_copied[2] = {nullptr, nullptr};
  cudaEvent_t ev_encoded = nullptr;
  int ring_next = 0;
  FrameCounters* counters = nullptr;        // device: the frame's conversion zeroes them
  FrameCounters* counters_host = nullptr;   // pinned: the last frame's, read_counts() copies them
  int* frames_seen = nullptr;               // device
  // The background model (stages.h stage 3), full size: each view's model,
  // the conversion's raw test and the mask pass's regions left empty.
  DeviceImage<BackgroundPixel> model[2];
  DeviceImage<uint32_t> raw_test[2];
  DeviceImage<uint8_t> mask_dirty;
  uint8_t* luts = nullptr;                  // device, 3 x 768
  uint8_t* staging = nullptr;               // pinned, host input and output
  size_t staging_bytes = 0;

  // Upload ahead. upload_lock guards the slots' states, shapes and the
  // stream's creation; a slot's staging and `uploaded` event are touched
  // without it only by the one thread that owns the slot in Filling or
  // InFrame state.
  std::mutex upload_lock;
  cudaStream_t upload_stream = nullptr;
  UploadSlot slots[kUploadSlots];
  // Gathers pageable planes into pinned memory on a few threads (row_copy.h).
  RowCopier copier;
  std::vector<int> frame_slots;   // caller's thread: slots the call in progress claimed
  bool last_from_upload = false;  // the last frame read upload slots (profile_stages refuses it)

  // Host-side mirror of the model's age and of the frame statistics.
  int frames_seen_host = 0;
  uint64_t frame_index = 0;
  FrameStats pending;  // of the last queued frame, counts filled after it finishes

  // Frames in flight (submit/finish), oldest first. A frame run inside
  // submit() carries its outcome; a queued one its event, the pinned copy
  // of its counters and the host-side part of its statistics.
  struct Submitted {
    bool ran = false;
    Engine::FrameResult result;
    cudaEvent_t done = nullptr;
    FrameCounters* counters = nullptr;
    bool staged = false;  // its views went up through the staging area
  };
  std::deque<Submitted> submitted;
  std::vector<cudaEvent_t> spare_events;
  std::vector<FrameCounters*> spare_counters;
  bool have_frame = false;
  FrameView last_left{}, last_right{};

  std::string ensure_device() {
    int cur = -1;
    CS_CUDA_TRY(cudaGetDevice(&cur));
    if (cur != device) CS_CUDA_TRY(cudaSetDevice(device));
    return {};
  }

  std::string restart_background() {
    frames_seen_host = 0;
    if (frames_seen) CS_CUDA_TRY(cudaMemsetAsync(frames_seen, 0, sizeof(int), stream));
    return {};
  }

  std::string configure(int w, int h) {
    const int nl = pipeline_levels(params, w, h);
    if (buffers_ready && w == width && h == height && nl == levels) return {};
    forget_graph();
    buffers_ready = false;
    lv.clear();
    lv.resize(nl);
    // The model is the frame size's: made again by allocate_background.
    for (int v = 0; v < 2; ++v) {
      model[v].release();
      raw_test[v].release();
    }
    mask_dirty.release();
    for (int l = 0; l < nl; ++l) {
      Level& L = lv[l];
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
    if (!e.empty()) return e;
    buffers_ready = true;
    return restart_background();
  }

  // The confidence map exists while the method gives one (method
  // progressive: while the parameters ask for it).
  std::string allocate_confidence() {
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

  // Background buffers exist only while the model is on.
  std::string allocate_background() {
    if (!params.background) {
      for (Level& L : lv)
        for (int v = 0; v < 2; ++v) {
          L.mask[v].release();
          L.occupancy[v].release();
        }
      for (int v = 0; v < 2; ++v) {
        model[v].release();
        raw_test[v].release();
      }
      mask_dirty.release();
      return {};
    }
    for (int l = 0; l < static_cast<int>(lv.size()); ++l) {
      Level& L = lv[l];
      for (int v = 0; v < 2; ++v) {
        if (L.mask[v].empty()) CS_CUDA_TRY(L.mask[v].allocate(L.width, L.height));
        if (l < kOccupancyLevels && L.occupancy[v].empty())
          CS_CUDA_TRY(L.occupancy[v].allocate((L.width + kOccupancyCell - 1) / kOccupancyCell,
                                              (L.height + kOccupancyCell - 1) / kOccupancyCell));
      }
    }
    if (mask_dirty.empty()) {
      for (int v = 0; v < 2; ++v) {
        CS_CUDA_TRY(model[v].allocate(width, height));
        CS_CUDA_TRY(raw_test[v].allocate((width + 31) / 32, height));
      }
      const int regions = mask_regions_x(width) * mask_regions_y(height) * 2;
      CS_CUDA_TRY(mask_dirty.allocate(regions, 1));
      // Every region's outputs unknown: written by the first pass.
      CS_CUDA_TRY(cudaMemsetAsync(mask_dirty.view().data, 1, regions, stream));
    }
    CS_CUDA_TRY(prepare_masks(params.morph_radius));
    return {};
  }

  // The background model's part of the conversion.
  ModelViews model_views() const {
    ModelViews m;
    for (int v = 0; v < 2; ++v) {
      m.model[v] = model[v].view();
      m.raw[v] = raw_test[v].view();
    }
    m.frames_seen = frames_seen;
    m.params = background_params(params);
    return m;
  }

  // Intensity levels the conversion makes (the rest of the pyramid is the body's).
  int converted_levels() const { return levels < kMaxConvertLevels ? levels : kMaxConvertLevels; }

  // The frame's conversion: level 0 and the first pyramid levels, and the
  // frame's counters zeroed. Its input addresses change from frame to
  // frame: described (kernel_call.h) for the graph's first node or a launch.
  std::string conversion_call(const FrameView& left, const FrameView& right, KernelCall* call) {
    ImageView<uint8_t> gray[2][kMaxConvertLevels];
    for (int l = 0; l < converted_levels(); ++l)
      for (int v = 0; v < 2; ++v) gray[v][l] = lv[l].gray[v].view();
    const ModelViews model = model_views();
    CS_CUDA_TRY(convert_pair_call(left, right, gray[0], gray[1], converted_levels(),
                                  params.background ? &model : nullptr, call,
                                  reinterpret_cast<unsigned long long*>(counters), kFrameCounterWords));
    return {};
  }

  // Whether the last frame can be run again by the profilers: its inputs
  // must still be the caller's (upload slots are refilled).
  std::string profilable() const {
    if (!have_frame) return "no frame has been processed";
    if (last_from_upload)
      return "the last frame was read from upload slots, which the engine reuses: profile a frame given in host or "
             "device memory";
    return {};
  }

  // The conversion straight on the stream (profile_stages, profile_graph).
  std::string enqueue_conversion(const FrameView& left, const FrameView& right) {
    KernelCall call;
    std::string e = conversion_call(left, right, &call);
    if (!e.empty()) return e;
    CS_CUDA_TRY(call.launch(stream));
    return {};
  }

  // Everything from the pyramid to the Q4 map, at fixed addresses.
  std::string enqueue_body(cudaStream_t s, StageTimer* timer) {
    const Params& p = params;
    for (int l = converted_levels(); l < levels; ++l)
      CS_CUDA_TRY(enqueue_downsample_pair(lv[l - 1].gray[0].cview(), lv[l].gray[0].view(),
                                          lv[l - 1].gray[1].cview(), lv[l].gray[1].view(), s));
    timer->mark("pyramid");
    if (p.background) {
      // The model was tested and updated in the conversion; the masks of
      // every level and their occupancy from its raw test.
      MaskViews mv;
      for (int v = 0; v < 2; ++v) {
        mv.raw[v] = raw_test[v].cview();
        for (int l = 0; l < levels; ++l) {
          mv.mask[l][v] = lv[l].mask[v].view();
          if (l < kOccupancyLevels) mv.occupancy[l][v] = lv[l].occupancy[v].view();
        }
      }
      mv.levels = levels;
      mv.dirty = mask_dirty.view().data;
      mv.regions_x = mask_regions_x(width);
      mv.frames_seen = frames_seen;
      mv.matched = counters->matched;
      CS_CUDA_TRY(enqueue_masks(mv, width, height, p.morph_radius, s));
      timer->mark("background");
    }
    // The method's matching; its finish is the frame's last kernel (finish_call).
    return method->enqueue(method_frame(), s, timer);
  }

  // What the method reads and writes, at the engine's fixed addresses.
  MethodFrame method_frame() const {
    MethodFrame f;
    f.params = &params;
    f.limits = &limits;
    f.levels.resize(lv.size());
    for (size_t l = 0; l < lv.size(); ++l) {
      MethodLevel& m = f.levels[l];
      m.width = lv[l].width;
      m.height = lv[l].height;
      m.range = lv[l].range;
      for (int v = 0; v < 2; ++v) {
        m.gray[v] = lv[l].gray[v].cview();
        if (params.background) {
          m.mask[v] = lv[l].mask[v].cview();
          if (l < kOccupancyLevels) f.occupancy[l][v] = lv[l].occupancy[v].cview();
        }
      }
    }
    f.confidence = confidence.view();
    f.counters = counters;
    f.side_stream = side_stream;
    f.body_stream = body_stream;
    f.graph_conditions = graph_conditions;
    // The last frame read back (stats).
    if (params.background && counters_host) f.last_foreground_pixels = counters_host->matched[0];
    f.fork = ev_fork;
    for (int l = 0; l < kMaxLevels; ++l) f.join[l] = ev_join[l];
    return f;
  }

  // After a change of configuration: the next frame runs its launches on the
  // stream, the one after is captured (enqueue_frame).
  void forget_graph() {
    graph_ready = false;
    body_warm = false;
  }

  // The executable graph and the captured one behind it. Frames already
  // queued with it still run (an executable graph destroyed in flight is
  // freed when its launches are done: cuGraphExecDestroy).
  void drop_graph() {
    graph_ready = false;
    if (graph) cudaGraphExecDestroy(graph);
    if (graph_source) cudaGraphDestroy(graph_source);
    graph = nullptr;
    graph_source = nullptr;
    convert_node = finish_node = nullptr;
  }

  // The levels' ranges and the method's buffers for these sizes and
  // parameters: set before the launches, never allocated during a capture.
  std::string prepare_body() {
    Params p = params;
    p.coarse_range_factor = frame_factor;
    for (int l = 0; l < levels; ++l) lv[l].range = level_range(p, l, lv[l].width);
    body_factor = frame_factor;
    return method->allocate(method_frame(), stream);
  }

  // Whether the frame writes an output of the caller's (else the finish
  // writes the engine's own Q4 map).
  static bool writes_output(const FrameOutput& out) { return out.q4.data || out.encode.dst; }

  // Whether the frame's finish must wait for an event first: out.wait_before
  // (the copy that last read its output buffer), or the other set's latest
  // output (before_output). A wait before the whole graph would hold up the
  // frame's matching too (with two sets in flight, until the other set's
  // frame had ended), so such a finish runs after the graph instead.
  bool finish_waits(const FrameOutput& out) const {
    return out.wait_before || (writes_output(out) && peer && peer->output_recorded);
  }

  // The frame's finish (the method's kernel, finish_call) for `out`.
  std::string finish_call(const FrameOutput& out, KernelCall* call) {
    return method->finish_call(method_frame(), writes_output(out) ? out.q4 : disparity_q4.view(), out.encode, call);
  }

  // The finish straight on the stream: after out.wait_before, and after the
  // other set's output when it writes one (finish_waits).
  std::string launch_finish(const KernelCall& finish, const FrameOutput& out) {
    if (out.wait_before) CS_CUDA_TRY(cudaStreamWaitEvent(stream, out.wait_before, 0));
    if (writes_output(out)) {
      std::string e = before_output();
      if (!e.empty()) return e;
    }
    CS_CUDA_TRY(finish.launch(stream));
    return {};
  }

  // The finish of profile_stages and profile_graph, into the engine's own Q4 map.
  std::string enqueue_finish(StageTimer* timer) {
    KernelCall call;
    const FrameOutput none;
    std::string e = finish_call(none, &call);
    if (e.empty()) e = launch_finish(call, none);
    if (e.empty()) timer->mark("finish");
    return e;
  }

  // The node the stream's last captured launch made: the one node the next
  // would depend on. False, with the runtime's error cleared, when the
  // runtime does not say so.
  bool last_captured_node(cudaGraphNode_t* node) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaGraphNode_t* deps = nullptr;
    size_t count = 0;
#if CUDART_VERSION >= 13000
    const cudaGraphEdgeData* edges = nullptr;
    const cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, &edges, &count);
#else
    const cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, &count);
#endif
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    if (e != cudaSuccess || status != cudaStreamCaptureStatusActive || count != 1 || !deps ||
        cudaGraphNodeGetType(deps[0], &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) {
      (void)cudaGetLastError();
      return false;
    }
    *node = deps[0];
    return true;
  }

  // Runs `work` on the frame's stream inside a capture into *g, ending the
  // capture whatever the work did: the work's error first (*g then null),
  // else the capture's. *in_capture is set once the capture has begun.
  std::string capture(const std::function<std::string()>& work, cudaGraph_t* g, bool* in_capture) {
    *g = nullptr;
    CS_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    *in_capture = true;
    const std::string e = work();
    const cudaError_t end = cudaStreamEndCapture(stream, g);
    if (e.empty() && end == cudaSuccess) return {};
    if (*g) cudaGraphDestroy(*g);
    *g = nullptr;
    return e.empty() ? cuda_error_text(end, "cudaStreamEndCapture", __FILE__, __LINE__) : e;
  }

  // Captures the frame into `graph`: the conversion, the body and the
  // finish (the body alone without frame_nodes), with this frame's
  // arguments. A failure after the capture began sets *in_capture (the
  // capture, not the work, failed: another thread's CUDA call can
  // invalidate it). Nodes the runtime does not name leave no graph and
  // frame_nodes off, without an error: the frame then runs straight on the
  // stream, and the next is captured as the body alone.
  std::string build_graph(const KernelCall& convert, const KernelCall& finish, bool* in_capture) {
    *in_capture = false;
    drop_graph();
    StageTimer off;
    bool named = true;
    cudaGraphNode_t first = nullptr, last = nullptr;
    cudaGraph_t g = nullptr;
    std::string e = capture(
        [&]() -> std::string {
          if (frame_nodes) {
            CS_CUDA_TRY(convert.launch(stream));
            named = last_captured_node(&first);
          }
          std::string b = enqueue_body(stream, &off);
          if (!b.empty()) return b;
          if (frame_nodes) {
            CS_CUDA_TRY(finish.launch(stream));
            named = named && last_captured_node(&last);
          }
          return {};
        },
        &g, in_capture);
    if (!e.empty()) return e;
    if (frame_nodes && !named) {
      cudaGraphDestroy(g);
      frame_nodes = false;
      *in_capture = false;
      return {};
    }
    const cudaError_t inst = cudaGraphInstantiate(&graph, g, cudaGraphInstantiateFlagUseNodePriority);
    if (inst != cudaSuccess) {
      graph = nullptr;
      cudaGraphDestroy(g);
      return cuda_error_text(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
    }
    graph_source = g;
    convert_node = first;
    finish_node = last;
    graph_shape = {convert.shape(), finish.shape()};
    graph_convert = convert;
    graph_finish = finish;
    finish_enabled = true;
    graph_ready = true;
    return {};
  }

  // This frame's arguments into the graph's conversion and finish nodes
  // (those that hold other ones), and the finish node on or off
  // (finish_inside). False when the runtime refused a change (its error
  // cleared): the nodes may then hold another frame's arguments.
  bool set_frame_nodes(const KernelCall& convert, const KernelCall& finish, bool finish_inside) {
    auto refused = [] {
      (void)cudaGetLastError();
      return false;
    };
    if (!convert.same_arguments(graph_convert)) {
      graph_convert = convert;
      const cudaKernelNodeParams p = graph_convert.node_params();
      if (cudaGraphExecKernelNodeSetParams(graph, convert_node, &p) != cudaSuccess) return refused();
    }
    if (finish_inside && !finish.same_arguments(graph_finish)) {
      graph_finish = finish;
      const cudaKernelNodeParams p = graph_finish.node_params();
      if (cudaGraphExecKernelNodeSetParams(graph, finish_node, &p) != cudaSuccess) return refused();
    }
    if (finish_inside != finish_enabled) {
      if (cudaGraphNodeSetEnabled(graph, finish_node, finish_inside ? 1 : 0) != cudaSuccess) return refused();
      finish_enabled = finish_inside;
    }
    return true;
  }

  // The frame's launches without a graph, in the graph's order.
  std::string run_frame_eagerly(const KernelCall& convert, const KernelCall& finish, const FrameOutput& out) {
    CS_CUDA_TRY(convert.launch(stream));
    StageTimer off;
    std::string e = enqueue_body(stream, &off);
    return e.empty() ? launch_finish(finish, out) : e;
  }

  // The frame's conversion, body and finish, in that order on the stream
  // (the conversion zeroes the counters the finish adds to).
  //
  // Through the graph, captured on the second frame of a configuration: one
  // launch whose first and last nodes get this frame's arguments first
  // (set_frame_nodes); a finish that must wait for an event (finish_waits)
  // is disabled there and launched after the graph. A frame whose
  // conversion or finish is another kernel or grid than the graph's nodes
  // (another input format or output form) drops the graph: it runs straight
  // on the stream and the next frame is captured. Never is a node launched
  // with another frame's arguments: where the runtime refuses an update,
  // the graph is dropped and frames go on with the body alone in it.
  //
  // Straight on the stream: the first frame of a configuration (or of new
  // conversion and finish kernels), so that every kernel is loaded outside
  // a capture (CUDA loads a module lazily, at its first launch). A capture
  // that fails (seen with 16 pipelines decoding H.264 in one process:
  // cudaErrorStreamCaptureInvalidated) costs the graph, not the frame: the
  // frame runs straight on the stream, the next frame tries again, and
  // after kMaxCaptureFailures every frame runs without one.
  std::string enqueue_frame(const FrameView& left, const FrameView& right, const FrameOutput& out) {
    if (!graph_ready) {
      std::string e = prepare_body();
      if (!e.empty()) return e;
    }
    KernelCall convert, finish;
    std::string e = conversion_call(left, right, &convert);
    if (e.empty()) e = finish_call(out, &finish);
    if (!e.empty()) return e;
    const FrameShape shape{convert.shape(), finish.shape()};
    // The levels' ranges and the method's buffers stay those the graph was
    // made with: only its conversion or finish kernel changed.
    if (graph_ready && frame_nodes && shape != graph_shape) forget_graph();
    if (!graph_ready && body_warm && (!frame_nodes || shape == warm_shape) &&
        capture_failures < kMaxCaptureFailures) {
      bool in_capture = false;
      e = build_graph(convert, finish, &in_capture);
      if (!e.empty() && in_capture && graph_conditions) {
        // Once more without the SWITCH node: a runtime that takes no
        // conditional nodes still gets the graph.
        (void)cudaGetLastError();
        capture_error = e;
        graph_conditions = false;
        in_capture = false;
        e = build_graph(convert, finish, &in_capture);
      }
      if (!e.empty()) {
        if (!in_capture) return e;
        (void)cudaGetLastError();  // the capture's error is not the stream's
        capture_error = e;
        ++capture_failures;
      }
    }
    last_graphed = graph_ready;
    if (!graph_ready) {
      e = run_frame_eagerly(convert, finish, out);
      if (e.empty()) {
        body_warm = true;
        warm_shape = shape;
      }
      return e;
    }
    if (!frame_nodes) {
      CS_CUDA_TRY(convert.launch(stream));
      CS_CUDA_TRY(cudaGraphLaunch(graph, stream));
      return launch_finish(finish, out);
    }
    const bool finish_inside = !finish_waits(out);
    if (!set_frame_nodes(convert, finish, finish_inside)) {
      drop_graph();
      forget_graph();
      frame_nodes = false;
      e = run_frame_eagerly(convert, finish, out);
      if (e.empty()) body_warm = true;
      return e;
    }
    CS_CUDA_TRY(cudaGraphLaunch(graph, stream));
    return finish_inside ? std::string() : launch_finish(finish, out);
  }

  // The last frame's counts (complete after its finish) into counters_host,
  // once the stream's work is done.
  std::string read_counts() {
    CS_CUDA_TRY(cudaMemcpyAsync(counters_host, counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, stream));
    CS_CUDA_TRY(cudaStreamSynchronize(stream));
    return {};
  }

  bool auto_coarse() const {
    return params.coarse_range_factor == kAutoCoarseRangeFactor && params.method == Method::Progressive &&
           levels > 1;
  }

  // The counts of a probe on its way (the previous frame's, of either set),
  // waited for and read before anything the probe reads may change.
  std::string take_probe() {
    AutoCoarse& a = *coarse;
    if (!a.waiting) return {};
    a.waiting = false;
    CS_CUDA_TRY(cudaEventSynchronize(a.done));
    a.schedule.set_factor(coarse_factor_from_histogram(a.counts_host, a.bins, a.level, a.max));
    return {};
  }

  // The automatic coarse range, before the frame's work (stages.h 6b): the
  // last probe's factor; a new configuration starts again from 1.
  std::string choose_coarse_factor() {
    frame_factor = auto_coarse() ? coarse->schedule.begin_frame(width, height, levels, params)
                                 : std::max(params.coarse_range_factor, 1);
    // The levels' ranges are in the graph's launches.
    if (frame_factor != body_factor) forget_graph();
    return {};
  }

  // After the frame's work: the probe, on the first frame of a configuration
  // and every kCoarseProbeInterval frames, straight on the stream (never in
  // the graph). The next frame reads its counts.
  std::string probe_coarse_range() {
    if (!auto_coarse()) return {};
    AutoCoarse& a = *coarse;
    if (a.schedule.probe_due(width, height, levels, params)) {
      const int l = levels - 1;
      const Range r = probe_range(params, l, lv[l].width);
      const int bins = std::max(r.hi, 1);
      a.device = device;
      std::string e = a.ensure(bins);
      if (e.empty()) e = method->enqueue_coarse_probe(method_frame(), r, a.counts_device, bins, stream);
      if (!e.empty()) return e;
      CS_CUDA_TRY(cudaMemcpyAsync(a.counts_host, a.counts_device, static_cast<size_t>(bins) * sizeof(unsigned),
                                  cudaMemcpyDeviceToHost, stream));
      CS_CUDA_TRY(cudaEventRecord(a.done, stream));
      a.waiting = true;
      a.level = l;
      a.bins = bins;
      a.max = params.max_disparity;
      a.schedule.probe_made(width, height, levels, params);
    }
    a.schedule.frame_done();
    return {};
  }

  // Device views of the inputs: as given, or copied up through pinned memory.
  std::string stage_inputs(const FrameView& left, const FrameView& right, FrameView* dl, FrameView* dr) {
    const FrameView* in[2] = {&left, &right};
    FrameView* out[2] = {dl, dr};
    if (left.memory == Memory::Device) {
      *dl = left;
      *dr = right;
      return {};
    }
    const PlaneShape ps = plane_shape(left);
    // Planes in pinned memory (a GStreamer pool of ours upstream) go up by
    // DMA straight from where they lie; pageable ones are gathered into the
    // pinned staging area first. Either way the bytes are the same, and the
    // caller keeps the views valid until process() has synchronised.
    bool direct[2][3] = {};
    size_t total = 0;
    for (int v = 0; v < 2; ++v)
      for (int i = 0; i < ps.count; ++i) {
        direct[v][i] = is_pinned(in[v]->plane[i]);
        if (!direct[v][i]) total += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
      }
    if (total > 0) {
      std::string e = ensure_staging(total);
      if (!e.empty()) return e;
    }
    uint8_t* at = staging;
    for (int v = 0; v < 2; ++v) {
      *out[v] = *in[v];
      out[v]->memory = Memory::Device;
      for (int i = 0; i < ps.count; ++i) {
        DeviceImage<uint8_t>& d = input[v][i];
        if (d.view().width != ps.row_bytes[i] || d.view().height != ps.rows[i])
          CS_CUDA_TRY(d.allocate(static_cast<int>(ps.row_bytes[i]), ps.rows[i]));
        if (direct[v][i]) {
          CS_CUDA_TRY(cudaMemcpy2DAsync(d.view().data, d.view().pitch, in[v]->plane[i], in[v]->pitch[i],
                                        ps.row_bytes[i], ps.rows[i], cudaMemcpyHostToDevice, stream));
        } else {
          copier.copy(at, ps.row_bytes[i], in[v]->plane[i], in[v]->pitch[i], ps.row_bytes[i], ps.rows[i]);
          CS_CUDA_TRY(cudaMemcpy2DAsync(d.view().data, d.view().pitch, at, ps.row_bytes[i], ps.row_bytes[i],
                                        ps.rows[i], cudaMemcpyHostToDevice, stream));
          at += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
        }
        out[v]->plane[i] = d.view().data;
        out[v]->pitch[i] = d.view().pitch;
      }
    }
    return {};
  }

  std::string ensure_copy_stream() {
    if (copy_stream) return {};
    int least = 0, greatest = 0;
    CS_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CS_CUDA_TRY(cudaStreamCreateWithPriority(&copy_stream, cudaStreamNonBlocking, least));
    for (cudaEvent_t* ev : {&ring_copied[0], &ring_copied[1], &ev_encoded})
      CS_CUDA_TRY(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
    return {};
  }

  std::string ensure_staging(size_t bytes) {
    if (bytes <= staging_bytes) return {};
    // The previous frame may still read the old staging area.
    CS_CUDA_TRY(cudaStreamSynchronize(stream));
    if (staging) cudaFreeHost(staging);
    staging = nullptr;
    staging_bytes = 0;
    CS_CUDA_TRY(cudaMallocHost(&staging, bytes));
    staging_bytes = bytes;
    return {};
  }

  std::string check_frame(const FrameView& left, const FrameView& right) {
    std::string e = check_view_pair(left, right);
    if (!e.empty()) return e;
    if (left.memory != right.memory) return "the left and right views are in different kinds of memory";
    // The kernels keep row offsets of a level's planes in 32 bits and the
    // wide-pixel list packs x and y into 16 and 15 bits.
    if (left.width > kMaxSide || left.height > kMaxSide)
      return "the CUDA engine takes views of up to " + std::to_string(kMaxSide) + " x " + std::to_string(kMaxSide) +
             " pixels, not " + std::to_string(left.width) + " x " + std::to_string(left.height);
    e = params.validate_for_size(left.width, left.height);
    if (e.empty()) e = check_view_planes(left, "left");
    if (e.empty()) e = check_view_planes(right, "right");
    return e;
  }

  // Validation, configuration, inputs and the frame's conversion, body and
  // finish (enqueue_frame): the Q4 map, the level-0 mask and out's encoding
  // are then in device memory, in stream order.
  std::string run_frame(const FrameView& left, const FrameView& right, cudaStream_t caller,
                        const FrameOutput& out = {}) {
    std::string e = ensure_device();
    if (e.empty()) e = check_frame(left, right);
    if (e.empty()) e = take_probe();
    if (e.empty()) e = configure(left.width, left.height);
    if (e.empty()) e = choose_coarse_factor();
    if (!e.empty()) return e;
    if (caller) {
      CS_CUDA_TRY(cudaEventRecord(ev_caller, caller));
      CS_CUDA_TRY(cudaStreamWaitEvent(stream, ev_caller, 0));
    }
    FrameView dl, dr;
    e = stage_inputs(left, right, &dl, &dr);
    if (!e.empty()) return e;
    // Inputs in upload slots: the conversion reads them once their upload
    // (on the upload stream) is done; after it they may be refilled. The
    // conversion is inside the frame's graph, so they are given back after
    // the frame's work (the stream's next point after the conversion).
    for (int k : frame_slots) CS_CUDA_TRY(cudaStreamWaitEvent(stream, slots[k].uploaded, 0));
    last_from_upload = !frame_slots.empty();
    e = enqueue_frame(dl, dr, out);
    if (!e.empty()) return e;
    give_back_frame_slots();
    e = probe_coarse_range();
    if (!e.empty()) return e;
    last_left = dl;
    last_right = dr;

    FrameStats st;
    st.levels = levels;
    st.coarse_range_factor = frame_factor;
    st.frame_index = ++frame_index;
    if (params.background) {
      st.warming_up = frames_seen_host < params.warmup_frames || frames_seen_host == 0;
      st.background_tests_full = 2ull * width * height;
      st.background_tests = st.warming_up ? 0 : st.background_tests_full;
      if (frames_seen_host < INT_MAX) ++frames_seen_host;
    }
    // The matching work of a full frame (the counters give the model's).
    for (int l = 0; l < (params.method == Method::Block ? 1 : levels); ++l)
      st.matched_pixels_full += static_cast<uint64_t>(lv[l].width) * lv[l].height;
    st.matched_pixels = st.matched_pixels_full;
    pending = st;
    have_frame = true;
    return {};
  }

  // Output writes in enqueue order across the two sets of frames in flight:
  // before them, wait for the other set's latest; after them, mark ours.
  std::string before_output() {
    if (peer && peer->output_recorded) CS_CUDA_TRY(cudaStreamWaitEvent(stream, peer->ev_output, 0));
    return {};
  }
  std::string after_output() {
    CS_CUDA_TRY(cudaEventRecord(ev_output, stream));
    output_recorded = true;
    return {};
  }

  std::string finish_caller(cudaStream_t caller) {
    CS_CUDA_TRY(cudaEventRecord(ev_done, stream));
    if (caller) CS_CUDA_TRY(cudaStreamWaitEvent(caller, ev_done, 0));
    return {};
  }

  // The finish's output into dst (FrameOutput): the Q4 map itself, or its
  // encoding; none for the confidence map, which encode_confidence copies
  // after the finish.
  FrameOutput output_to(const EncodeParams& encode, uint8_t* dst, std::ptrdiff_t pitch, int w, int h) const {
    FrameOutput o;
    if (encode.format == OutputFormat::Confidence) return o;
    if (encode.format == OutputFormat::DisparityQ4) {
      o.q4 = {reinterpret_cast<uint16_t*>(dst), w, h, pitch};
      return o;
    }
    o.encode.args = encode_args(encode, luts);
    o.encode.dst = dst;
    o.encode.pitch = pitch;
    return o;
  }
  // OutputFormat::Confidence, after the frame's finish: the map into dst.
  std::string encode_confidence(const EncodeParams& encode, uint8_t* dst, std::ptrdiff_t pitch) {
    if (encode.format != OutputFormat::Confidence) return {};
    std::string e = before_output();
    if (!e.empty()) return e;
    CS_CUDA_TRY(enqueue_encode(disparity_q4.cview(), foreground_view(), encode, luts, dst, pitch, stream,
                               confidence.cview()));
    return {};
  }

  ImageView<const uint8_t> foreground_view() const {
    return params.background ? lv[0].mask[0].cview() : all_foreground.cview();
  }

  // Empty when the method gives the confidence map, else its refusal by name.
  std::string confidence_problem() const {
    if (method->has_confidence()) return {};
    Params asked = params;
    asked.confidence = true;
    const std::string why = method->unsupported(asked);
    if (!why.empty()) return why;
    // Method progressive keeps the costs behind the confidence only when
    // the parameters say it will be read.
    return "the confidence (output-mode=confidence) was not asked for in the engine's parameters (Params::confidence)";
  }

  // ---- upload slots

  int slot_holding(const uint8_t* p) const {
    for (int k = 0; k < kUploadSlots; ++k)
      if (slots[k].holds(p)) return k;
    return -1;
  }

  // Under upload_lock. A free slot, preferring one already of this shape
  // (no reallocation); -1 when every slot is busy. Never waits.
  int take_free_slot(const FrameView& v) {
    int any = -1;
    for (int k = 0; k < kUploadSlots; ++k) {
      UploadSlot& s = slots[k];
      if (s.state == UploadSlot::State::Returned) {
        const cudaError_t q = cudaEventQuery(s.consumed);
        if (q == cudaErrorNotReady) {
          cudaGetLastError();  // not an error: the frame reading it is still running
          continue;
        }
        if (q != cudaSuccess) {
          cudaGetLastError();
          continue;
        }
        s.state = UploadSlot::State::Free;
      }
      if (s.state != UploadSlot::State::Free) continue;
      if (s.planes > 0 && s.format == v.format && s.width == v.width && s.height == v.height) return k;
      if (any < 0) any = k;
    }
    return any;
  }

  // Under upload_lock: device planes of `v`'s shape and `staged` bytes of
  // pinned staging; the slot is free, so nothing on the GPU reads it.
  std::string shape_slot(UploadSlot& s, const FrameView& v, const PlaneShape& ps, size_t staged) {
    if (!s.uploaded) CS_CUDA_TRY(cudaEventCreateWithFlags(&s.uploaded, cudaEventDisableTiming));
    if (!s.consumed) CS_CUDA_TRY(cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming));
    if (s.planes == 0 || s.format != v.format || s.width != v.width || s.height != v.height) {
      s.planes = 0;
      for (int i = 0; i < 3; ++i) {
        if (i < ps.count)
          CS_CUDA_TRY(s.plane[i].allocate(static_cast<int>(ps.row_bytes[i]), ps.rows[i]));
        else
          s.plane[i].release();
      }
      s.format = v.format;
      s.width = v.width;
      s.height = v.height;
      s.planes = ps.count;
    }
    if (staged > s.staging_bytes) {
      if (s.staging) cudaFreeHost(s.staging);
      s.staging = nullptr;
      s.staging_bytes = 0;
      CS_CUDA_TRY(cudaMallocHost(&s.staging, staged));
      s.staging_bytes = staged;
    }
    return {};
  }

  // Caller's thread, at the start of process()/enqueue(): the slots the
  // views lie in become this call's (a packed frame's halves share one).
  void claim_frame_slots(const FrameView& left, const FrameView& right) {
    if (left.memory != Memory::Device && right.memory != Memory::Device) return;
    std::lock_guard<std::mutex> guard(upload_lock);
    for (const FrameView* v : {&left, &right}) {
      if (v->memory != Memory::Device) continue;
      const int k = slot_holding(v->plane[0]);
      if (k >= 0 && slots[k].state == UploadSlot::State::HandedOut) {
        slots[k].state = UploadSlot::State::InFrame;
        frame_slots.push_back(k);
      }
    }
  }

  // Gives this call's slots back in engine-stream order: reusable once the
  // work queued so far (at least the conversion that read them) is done.
  // The wait on `uploaded` covers calls that failed before converting.
  void give_back_frame_slots() {
    if (frame_slots.empty()) return;
    std::lock_guard<std::mutex> guard(upload_lock);
    for (int k : frame_slots) {
      UploadSlot& s = slots[k];
      if (cudaStreamWaitEvent(stream, s.uploaded, 0) == cudaSuccess &&
          cudaEventRecord(s.consumed, stream) == cudaSuccess) {
        s.state = UploadSlot::State::Returned;
      } else {
        cudaGetLastError();
        cudaEventSynchronize(s.uploaded);  // a failing stream: free it once its DMA is over
        s.state = UploadSlot::State::Free;
      }
    }
    frame_slots.clear();
  }

  // Claims a process()/enqueue() call's upload slots and gives them back on
  // every way out (nested calls find them claimed already).
  struct FrameSlots {
    Impl& m;
    FrameSlots(Impl& impl, const FrameView& left, const FrameView& right) : m(impl) {
      m.claim_frame_slots(left, right);
    }
    ~FrameSlots() { m.give_back_frame_slots(); }
    FrameSlots(const FrameSlots&) = delete;
    FrameSlots& operator=(const FrameSlots&) = delete;
  };
};

CudaEngine::CudaEngine() : impl_(new Impl) {}

CudaEngine::~CudaEngine() {
  Impl& m = *impl_;
  if (m.twin) m.twin->synchronize();  // its frames may wait on this set's events
  if (m.stream) {
    m.ensure_device();
    cudaStreamSynchronize(m.stream);
  }
  if (m.upload_stream) cudaStreamSynchronize(m.upload_stream);  // uploads still reading callers' memory
  if (m.copy_stream) cudaStreamSynchronize(m.copy_stream);      // copies still writing callers' outputs
  for (UploadSlot& s : m.slots) {
    if (s.uploaded) cudaEventDestroy(s.uploaded);
    if (s.consumed) cudaEventDestroy(s.consumed);
    if (s.staging) cudaFreeHost(s.staging);
    for (auto& p : s.plane) p.release();
  }
  if (m.upload_stream) cudaStreamDestroy(m.upload_stream);
  m.drop_graph();
  m.lv.clear();
  m.method.reset();
  if (m.counters) cudaFree(m.counters);
  if (m.frames_seen) cudaFree(m.frames_seen);
  if (m.luts) cudaFree(m.luts);
  if (m.counters_host) cudaFreeHost(m.counters_host);
  if (m.staging) cudaFreeHost(m.staging);
  for (Impl::Submitted& s : m.submitted) {
    if (s.done) m.spare_events.push_back(s.done);
    if (s.counters) m.spare_counters.push_back(s.counters);
  }
  for (cudaEvent_t ev : m.spare_events) cudaEventDestroy(ev);
  for (FrameCounters* c : m.spare_counters) cudaFreeHost(c);
  if (m.ev_caller) cudaEventDestroy(m.ev_caller);
  if (m.ev_done) cudaEventDestroy(m.ev_done);
  if (m.ev_output) cudaEventDestroy(m.ev_output);
  if (m.ev_fork) cudaEventDestroy(m.ev_fork);
  for (cudaEvent_t ev : m.ev_join)
    if (ev) cudaEventDestroy(ev);
  if (m.side_stream) cudaStreamDestroy(m.side_stream);
  if (m.body_stream) cudaStreamDestroy(m.body_stream);
  for (cudaEvent_t ev : {m.ring_copied[0], m.ring_copied[1], m.ev_encoded})
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
    CS_CUDA_TRY(cudaEventCreateWithFlags(&m.ev_fork, cudaEventDisableTiming));
    for (cudaEvent_t& ev : m.ev_join) CS_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CS_CUDA_TRY(query_device_limits(dev, &m.limits));
    CS_CUDA_TRY(cudaMalloc(&m.counters, sizeof(FrameCounters)));
    CS_CUDA_TRY(cudaMemsetAsync(m.counters, 0, sizeof(FrameCounters), m.stream));
    CS_CUDA_TRY(cudaMallocHost(&m.counters_host, sizeof(FrameCounters)));
    std::memset(m.counters_host, 0, sizeof(FrameCounters));
    CS_CUDA_TRY(cudaMalloc(&m.frames_seen, sizeof(int)));
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
  m.forget_graph();
  if (m.buffers_ready && pipeline_levels(params, m.width, m.height) != m.levels) m.buffers_ready = false;
  if (m.buffers_ready) {
    e = m.allocate_background();
    if (e.empty()) e = m.allocate_confidence();
    if (!e.empty()) return e;
  }
  if (m.twin) {
    e = m.twin->set_params(params);
    if (!e.empty()) return e;
  }
  if (params.background != old.background || params.min_sigma != old.min_sigma ||
      params.warmup_frames != old.warmup_frames)
    return m.restart_background();
  return {};
}

std::string CudaEngine::process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                const OutputFrame& out) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  std::string e = check_output_frame(out, left.width, left.height, encode.format);
  if (!e.empty()) return e;
  const int bpp = output_bytes_per_pixel(encode.format);
  if (out.memory == Memory::Device) {
    e = enqueue_here(left, right, encode, out, nullptr);
    if (e.empty()) frame_queued(this);
    return e.empty() ? synchronize() : e;
  }
  e = check_encode_params(encode);
  if (e.empty() && encode.format == OutputFormat::Confidence) e = m.confidence_problem();
  if (!e.empty()) return e;
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(out.width) * bpp;
  if (m.encoded.view().width != row || m.encoded.view().height != out.height) {
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));  // a queued frame may still write it
    CS_CUDA_TRY(m.encoded.allocate(static_cast<int>(row), out.height));
  }
  e = m.run_frame(left, right, nullptr,
                  m.output_to(encode, m.encoded.view().data, m.encoded.view().pitch, out.width, out.height));
  if (!e.empty()) return e;
  frame_queued(this);
  e = m.encode_confidence(encode, m.encoded.view().data, m.encoded.view().pitch);
  if (!e.empty()) return e;
  // A pinned output (the element's own pool) takes the frame by DMA; the one
  // synchronisation of the frame follows, since the caller reads it next.
  if (is_pinned(out.data)) {
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.pitch, m.encoded.view().data, m.encoded.view().pitch, row, out.height,
                                  cudaMemcpyDeviceToHost, m.stream));
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
    return {};
  }
  // Host inputs used the staging area; it is free again once the upload ran,
  // which stream order guarantees before this download.
  e = m.ensure_staging(static_cast<size_t>(row) * out.height);
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaMemcpy2DAsync(m.staging, row, m.encoded.view().data, m.encoded.view().pitch, row, out.height,
                                cudaMemcpyDeviceToHost, m.stream));
  CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
  for (int y = 0; y < out.height; ++y) std::memcpy(out.data + y * out.pitch, m.staging + y * row, row);
  return {};
}

CudaEngine* CudaEngine::lane_for(const FrameView& left, const FrameView& right, cudaStream_t stream) {
  Impl& m = *impl_;
  if (!m.twin || stream || m.params.background || left.memory != Memory::Device || right.memory != Memory::Device)
    return this;
  {
    std::lock_guard<std::mutex> guard(m.upload_lock);
    if (m.slot_holding(left.plane[0]) >= 0 || m.slot_holding(right.plane[0]) >= 0) return this;
  }
  CudaEngine* lane = m.next_on_twin ? m.twin.get() : this;
  m.next_on_twin = !m.next_on_twin;
  return lane;
}

void CudaEngine::frame_queued(const CudaEngine* lane) {
  Impl& m = *impl_;
  if (!m.twin) return;
  m.last_on_twin = lane != this;
  lane->impl_->pending.frame_index = ++m.frames_queued;
}

const CudaEngine& CudaEngine::last_lane() const { return impl_->last_on_twin ? *impl_->twin : *this; }

std::string CudaEngine::set_frames_in_flight(int frames) {
  Impl& m = *impl_;
  if (frames != 1 && frames != 2) return "frames in flight must be 1 or 2, not " + std::to_string(frames);
  if ((frames == 2) == (m.twin != nullptr)) return {};
  std::string e = synchronize();
  if (!e.empty()) return e;
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
  twin->impl_->coarse = m.coarse;  // one stream of frames: one automatic coarse range
  m.twin = std::move(twin);
  m.peer = m.twin->impl_.get();
  m.twin->impl_->peer = &m;
  m.frames_queued = m.frame_index;
  return {};
}

int CudaEngine::frames_in_flight() const { return impl_->twin ? 2 : 1; }

std::string CudaEngine::emulate_device_limits(const DeviceLimits& limits) {
  Impl& m = *impl_;
  std::string e = synchronize();
  if (!e.empty()) return e;
  m.limits = limits;
  m.forget_graph();  // the graph holds the launches of the old configuration
  if (m.twin) return m.twin->emulate_device_limits(limits);
  return {};
}

const DeviceLimits& CudaEngine::device_limits() const { return impl_->limits; }

std::string CudaEngine::enqueue(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                const OutputFrame& out, cudaStream_t stream) {
  CudaEngine* lane = lane_for(left, right, stream);
  const std::string e = lane->enqueue_here(left, right, encode, out, stream);
  if (e.empty()) frame_queued(lane);
  return e;
}

std::string CudaEngine::enqueue(const FrameView& left, const FrameView& right, const Outputs& out,
                                cudaStream_t stream) {
  CudaEngine* lane = lane_for(left, right, stream);
  const std::string e = lane->enqueue_here(left, right, out, stream);
  if (e.empty()) frame_queued(lane);
  return e;
}

std::string CudaEngine::enqueue_here(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                     const OutputFrame& out, cudaStream_t stream) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  if (left.memory != Memory::Device || right.memory != Memory::Device)
    return "enqueue() takes views in device memory; use process() for host memory";
  if (out.memory != Memory::Device) return "enqueue() writes device memory; use process() for a host output";
  std::string e = check_output_frame(out, left.width, left.height, encode.format);
  if (!e.empty()) return e;
  const int bpp = output_bytes_per_pixel(encode.format);
  if (bpp > 1 && ((reinterpret_cast<uintptr_t>(out.data) | static_cast<uintptr_t>(out.pitch)) % bpp) != 0)
    return "the output frame's address and pitch must be multiples of its pixel size";
  e = check_encode_params(encode);
  if (e.empty() && encode.format == OutputFormat::Confidence) e = m.confidence_problem();
  if (e.empty())
    e = m.run_frame(left, right, stream, m.output_to(encode, out.data, out.pitch, out.width, out.height));
  if (e.empty()) e = m.encode_confidence(encode, out.data, out.pitch);
  if (!e.empty()) return e;
  e = m.after_output();
  return e.empty() ? m.finish_caller(stream) : e;
}

std::string CudaEngine::enqueue_here(const FrameView& left, const FrameView& right, const Outputs& out,
                                     cudaStream_t stream) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  if (left.memory != Memory::Device || right.memory != Memory::Device)
    return "enqueue() takes views in device memory; use process() for host memory";
  if (out.memory != Memory::Device) return "enqueue() writes device memory; the outputs are host views";
  if (out.disparity_q4.data && (out.disparity_q4.width != left.width || out.disparity_q4.height != left.height))
    return "the disparity output's size differs from the views'";
  if (out.foreground.data && (out.foreground.width != left.width || out.foreground.height != left.height))
    return "the foreground output's size differs from the views'";
  if (out.confidence.data && (out.confidence.width != left.width || out.confidence.height != left.height))
    return "the confidence output's size differs from the views'";
  std::string e = out.confidence.data ? m.confidence_problem() : std::string();
  // The finish writes the Q4 map straight into the caller's.
  FrameOutput o;
  o.q4 = out.disparity_q4;
  if (e.empty()) e = m.run_frame(left, right, stream, o);
  if (e.empty()) e = m.before_output();
  if (!e.empty()) return e;
  if (out.foreground.data) {
    const ImageView<const uint8_t> f = m.foreground_view();
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.foreground.data, out.foreground.pitch, f.data, f.pitch, left.width, left.height,
                                  cudaMemcpyDeviceToDevice, m.stream));
  }
  if (out.confidence.data)
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.confidence.data, out.confidence.pitch, m.confidence.view().data,
                                  m.confidence.view().pitch, left.width, left.height, cudaMemcpyDeviceToDevice,
                                  m.stream));
  e = m.after_output();
  return e.empty() ? m.finish_caller(stream) : e;
}

std::string CudaEngine::synchronize() {
  std::string e = impl_->ensure_device();
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaStreamSynchronize(impl_->stream));
  if (impl_->copy_stream) CS_CUDA_TRY(cudaStreamSynchronize(impl_->copy_stream));
  return impl_->twin ? impl_->twin->synchronize() : std::string();
}

std::string CudaEngine::upload_ahead(const FrameView& host_view, FrameView* device_view) {
  Impl& m = *impl_;
  if (!device_view) return "upload_ahead() needs somewhere to put the device view";
  if (host_view.memory != Memory::Host) return "upload_ahead() takes a view in host memory";
  if (host_view.width <= 0 || host_view.height <= 0) return "upload_ahead() got an empty picture";
  std::string e = check_view_planes(host_view, "uploaded");
  if (!e.empty()) return e;
  e = m.ensure_device();
  if (!e.empty()) return e;
  const PlaneShape ps = plane_shape(host_view);
  // Pinned planes (a pool of ours upstream) go up by DMA from where they
  // lie; pageable ones through the slot's pinned staging, as in stage_inputs.
  bool direct[3] = {};
  size_t staged = 0;
  for (int i = 0; i < ps.count; ++i) {
    direct[i] = is_pinned(host_view.plane[i]);
    if (!direct[i]) staged += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
  }
  UploadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> guard(m.upload_lock);
    if (!m.upload_stream) CS_CUDA_TRY(cudaStreamCreateWithFlags(&m.upload_stream, cudaStreamNonBlocking));
    const int k = m.take_free_slot(host_view);
    if (k < 0) return "all upload slots are in use";
    slot = &m.slots[k];
    e = m.shape_slot(*slot, host_view, ps, staged);
    if (!e.empty()) return e;  // still free; its shape is rebuilt on the next call
    slot->state = UploadSlot::State::Filling;
  }
  // The slot is this call's alone now: copy without holding the lock, so
  // process() on another thread never waits for a CPU copy.
  e = [&]() -> std::string {
    uint8_t* at = slot->staging;
    for (int i = 0; i < ps.count; ++i) {
      const ImageView<uint8_t>& d = slot->plane[i].view();
      const uint8_t* from = host_view.plane[i];
      std::ptrdiff_t from_pitch = host_view.pitch[i];
      if (!direct[i]) {
        m.copier.copy(at, ps.row_bytes[i], host_view.plane[i], host_view.pitch[i], ps.row_bytes[i], ps.rows[i]);
        from = at;
        from_pitch = ps.row_bytes[i];
        at += static_cast<size_t>(ps.row_bytes[i]) * ps.rows[i];
      }
      CS_CUDA_TRY(cudaMemcpy2DAsync(d.data, d.pitch, from, from_pitch, ps.row_bytes[i], ps.rows[i],
                                    cudaMemcpyHostToDevice, m.upload_stream));
    }
    CS_CUDA_TRY(cudaEventRecord(slot->uploaded, m.upload_stream));
    return {};
  }();
  if (!e.empty()) cudaStreamSynchronize(m.upload_stream);  // copies queued before the failure end first
  std::lock_guard<std::mutex> guard(m.upload_lock);
  if (!e.empty()) {
    slot->state = UploadSlot::State::Free;
    return e;
  }
  *device_view = host_view;
  device_view->memory = Memory::Device;
  for (int i = 0; i < 3; ++i) {
    device_view->plane[i] = i < ps.count ? slot->plane[i].view().data : nullptr;
    device_view->pitch[i] = i < ps.count ? slot->plane[i].view().pitch : 0;
  }
  slot->state = UploadSlot::State::HandedOut;
  return {};
}

void CudaEngine::release_upload(const FrameView& device_view) {
  Impl& m = *impl_;
  if (device_view.memory != Memory::Device) return;
  UploadSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> guard(m.upload_lock);
    const int k = m.slot_holding(device_view.plane[0]);
    if (k < 0 || m.slots[k].state != UploadSlot::State::HandedOut) return;
    slot = &m.slots[k];
    slot->state = UploadSlot::State::Filling;  // ours until its DMA is over
  }
  m.ensure_device();
  // The DMA may still read the caller's pinned planes or the staging.
  if (cudaEventSynchronize(slot->uploaded) != cudaSuccess) cudaGetLastError();
  std::lock_guard<std::mutex> guard(m.upload_lock);
  slot->state = UploadSlot::State::Free;
}

cudaStream_t CudaEngine::stream() const { return impl_->stream; }
int CudaEngine::device() const { return impl_->device; }

void CudaEngine::reset_background() {
  impl_->ensure_device();
  impl_->restart_background();
  if (impl_->twin) impl_->twin->reset_background();
}

namespace {

// A frame's statistics: the host-side part completed from its counters.
FrameStats with_counters(FrameStats st, const FrameCounters& c, int width, int height, bool background) {
  const double n = static_cast<double>(width) * height;
  st.valid_fraction = c.valid_pixels / n;
  st.foreground_fraction = c.foreground_pixels / n;
  if (background) {
    st.matched_pixels = 0;
    for (unsigned long long m : c.matched) st.matched_pixels += m;
  }
  return st;
}

}  // namespace

FrameStats CudaEngine::stats() const {
  if (impl_->last_on_twin) return impl_->twin->stats();
  Impl& m = *impl_;
  FrameStats st = m.pending;
  if (!m.have_frame) return st;
  m.ensure_device();
  m.read_counts();
  return with_counters(st, *m.counters_host, m.width, m.height, m.params.background);
}

std::string CudaEngine::submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                               const OutputFrame& out) {
  Impl& m = *impl_;
  const bool device_out = out.memory == Memory::Device && left.memory == Memory::Device;
  const bool pinned_out = out.memory == Memory::Host && is_pinned(out.data);
  if ((!device_out && !pinned_out) || m.twin) {
    // process() waits for the stream, so for every frame queued before too.
    Impl::Submitted s;
    s.ran = true;
    s.result.error = process(left, right, encode, out);
    if (s.result.error.empty()) s.result.stats = stats();
    m.submitted.push_back(std::move(s));
    return {};
  }
  std::string e = m.ensure_device();
  if (!e.empty()) return e;
  // Pageable planes are gathered into the one staging area: the frames in
  // flight that went up through it must have done so.
  bool staged = false;
  if (left.memory == Memory::Host) {
    const int planes = plane_shape(left).count;
    for (const FrameView* v : {&left, &right})
      for (int i = 0; i < planes; ++i) staged = staged || !is_pinned(v->plane[i]);
  }
  if (staged)
    for (const Impl::Submitted& s : m.submitted)
      if (s.staged) CS_CUDA_TRY(cudaEventSynchronize(s.done));
  Impl::Submitted s;
  s.staged = staged;
  if (m.spare_events.empty()) {
    CS_CUDA_TRY(cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync | cudaEventDisableTiming));
  } else {
    s.done = m.spare_events.back();
    m.spare_events.pop_back();
  }
  if (m.spare_counters.empty()) {
    const cudaError_t err = cudaMallocHost(&s.counters, sizeof(FrameCounters));
    if (err != cudaSuccess) {
      m.spare_events.push_back(s.done);
      return cuda_error_text(err, "cudaMallocHost(counters)", __FILE__, __LINE__);
    }
  } else {
    s.counters = m.spare_counters.back();
    m.spare_counters.pop_back();
  }
  auto give_back = [&] {
    m.spare_events.push_back(s.done);
    m.spare_counters.push_back(s.counters);
  };
  cudaStream_t done_on = m.stream;  // where the frame's last work is queued
  if (device_out) {
    e = enqueue_here(left, right, encode, out, nullptr);
    if (e.empty()) frame_queued(this);
  } else {
    // As process() with a pinned output, without its wait.
    const Impl::FrameSlots upload_slots(m, left, right);
    e = check_output_frame(out, left.width, left.height, encode.format);
    if (e.empty()) e = check_encode_params(encode);
    if (e.empty() && encode.format == OutputFormat::Confidence) e = m.confidence_problem();
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(out.width) * output_bytes_per_pixel(encode.format);
    // Encoded by the finish into one of two buffers, copied down on
    // copy_stream: the copy overlaps the next frame's kernels (about 0.2 ms
    // of 4 MB a 1080p GRAY16 frame). A buffer is written again once its
    // last copy is done (ring_copied, waited for before the finish).
    if (e.empty()) e = m.ensure_copy_stream();
    const int k = m.ring_next;
    DeviceImage<uint8_t>& enc = m.encoded_ring[k];
    if (e.empty()) e = [&]() -> std::string {
      m.ring_next ^= 1;
      if (enc.view().width != row || enc.view().height != out.height) {
        CS_CUDA_TRY(cudaStreamSynchronize(m.copy_stream));  // an earlier copy may still read it
        CS_CUDA_TRY(enc.allocate(static_cast<int>(row), out.height));
      }
      return {};
    }();
    if (e.empty()) {
      FrameOutput o = m.output_to(encode, enc.view().data, enc.view().pitch, out.width, out.height);
      o.wait_before = m.ring_copied[k];
      e = m.run_frame(left, right, nullptr, o);
    }
    if (e.empty()) {
      frame_queued(this);
      e = m.encode_confidence(encode, enc.view().data, enc.view().pitch);
      if (e.empty()) e = [&]() -> std::string {
        // The counts on the stream, before the next frame's conversion zeroes them.
        CS_CUDA_TRY(cudaMemcpyAsync(s.counters, m.counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, m.stream));
        CS_CUDA_TRY(cudaEventRecord(m.ev_encoded, m.stream));
        CS_CUDA_TRY(cudaStreamWaitEvent(m.copy_stream, m.ev_encoded, 0));
        CS_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.pitch, enc.view().data, enc.view().pitch, row, out.height,
                                      cudaMemcpyDeviceToHost, m.copy_stream));
        CS_CUDA_TRY(cudaEventRecord(m.ring_copied[k], m.copy_stream));
        done_on = m.copy_stream;
        return {};
      }();
    }
  }
  if (e.empty()) {
    e = [&]() -> std::string {
      // A frame copied down on copy_stream has its counters copied already.
      if (done_on == m.stream)
        CS_CUDA_TRY(cudaMemcpyAsync(s.counters, m.counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, m.stream));
      CS_CUDA_TRY(cudaEventRecord(s.done, done_on));
      return {};
    }();
  }
  if (!e.empty()) {
    give_back();
    return e;
  }
  s.result.stats = m.pending;
  m.submitted.push_back(std::move(s));
  return {};
}

Engine::FrameResult CudaEngine::finish() {
  Impl& m = *impl_;
  if (m.submitted.empty()) return {"finish() without a frame submitted", FrameStats()};
  Impl::Submitted s = std::move(m.submitted.front());
  m.submitted.pop_front();
  if (s.ran) return std::move(s.result);
  FrameResult r;
  r.error = m.ensure_device();
  if (r.error.empty()) {
    const cudaError_t err = cudaEventSynchronize(s.done);
    if (err != cudaSuccess)
      r.error = cuda_error_text(err, "cudaEventSynchronize(frame)", __FILE__, __LINE__);
    else
      r.stats = with_counters(s.result.stats, *s.counters, m.width, m.height, m.params.background);
  }
  m.spare_events.push_back(s.done);
  m.spare_counters.push_back(s.counters);
  return r;
}

size_t CudaEngine::in_flight() const { return impl_->submitted.size(); }
bool CudaEngine::overlaps_frames() const { return !impl_->twin; }

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
    const Level& L = m.lv[l];
    LevelDebug& d = out->levels[l];
    d.range = L.range;
    e = download(L.gray[0], &d.gray_left);
    if (e.empty()) e = download(L.gray[1], &d.gray_right);
    if (e.empty() && m.params.background) {
      e = download(L.mask[0], &d.mask_left);
      if (e.empty()) e = download(L.mask[1], &d.mask_right);
      if (l == 0) d.tests_left = d.tests_right = m.pending.background_tests / 2;
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
  if (impl_->last_on_twin) return impl_->twin->profile_stages(times);
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
  e = m.enqueue_conversion(m.last_left, m.last_right);
  if (!e.empty()) return e;
  t.mark("convert");
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
  if (m.params.background && m.frames_seen_host < INT_MAX) ++m.frames_seen_host;  // the body counted a frame
  return {};
}

std::string CudaEngine::profile_graph(std::vector<TimelineMark>* marks) {
  if (impl_->last_on_twin) return impl_->twin->profile_graph(marks);
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
  e = m.capture([&] { return m.enqueue_body(m.stream, &t); }, &g, &in_capture);
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
  e = m.enqueue_conversion(m.last_left, m.last_right);
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
  if (m.params.background && m.frames_seen_host < INT_MAX) ++m.frames_seen_host;  // the body counted a frame
  return {};
}

std::string CudaEngine::frame_graph_state(bool* skips_empty) const {
  if (impl_->last_on_twin) return impl_->twin->frame_graph_state(skips_empty);
  const Impl& m = *impl_;
  if (skips_empty) *skips_empty = m.last_graphed && m.params.background && m.graph_conditions;
  if (m.last_graphed && !m.graph_conditions && m.params.background)
    return "graph without its SWITCH node (" + m.capture_error + ")";
  if (m.last_graphed) return "graph";
  if (!m.capture_error.empty()) return "no graph: " + m.capture_error;
  return "not yet captured";
}

size_t CudaEngine::device_bytes() const {
  const Impl& m = *impl_;
  size_t n = m.disparity_q4.bytes() + m.confidence.bytes() + m.all_foreground.bytes() + m.encoded.bytes() +
             m.method->device_bytes();
  for (const Level& L : m.lv)
    for (int v = 0; v < 2; ++v) n += L.gray[v].bytes() + L.mask[v].bytes() + L.occupancy[v].bytes();
  for (int v = 0; v < 2; ++v) n += m.model[v].bytes() + m.raw_test[v].bytes();
  n += m.mask_dirty.bytes();
  for (auto& v : m.input)
    for (auto& p : v) n += p.bytes();
  std::lock_guard<std::mutex> guard(const_cast<std::mutex&>(m.upload_lock));
  for (const UploadSlot& s : m.slots)
    for (const auto& p : s.plane) n += p.bytes();
  return m.twin ? n + m.twin->device_bytes() : n;
}

std::unique_ptr<Engine> make_cuda_engine(const Params& params, int device_id, std::string* error,
                                         std::string* detail) {
  return CudaEngine::create(params, device_id, error, detail);
}

}  // namespace cs::cuda
