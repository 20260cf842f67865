// The CUDA graph of the engine's frame (cuda_engine.h): captured once per
// configuration, replayed every frame. Its first node is the frame's
// conversion and its last the method's finish, whose arguments change from
// frame to frame (kernel_call.h): before each launch the two nodes get this
// frame's (set_frame_nodes). Between them the body: every launch from the
// pyramid to the last level's matching, at fixed addresses. What the frame
// path decides (when to capture, when to run without a graph) is the
// engine's (engine_frame.cu enqueue_frame); this is the graph's state and
// the capture.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

#include "kernel_call.h"

namespace cs::cuda {

// The two kernels of a frame's graph that take the frame's own arguments:
// what a graph was captured with, or what a frame needs.
struct FrameShape {
  KernelShape convert, finish;
  bool operator==(const FrameShape& o) const { return convert == o.convert && finish == o.finish; }
  bool operator!=(const FrameShape& o) const { return !(*this == o); }
};

struct FrameGraph {
  FrameGraph() = default;
  FrameGraph(const FrameGraph&) = delete;
  FrameGraph& operator=(const FrameGraph&) = delete;
  ~FrameGraph() { drop(); }

  cudaGraphExec_t exec = nullptr;
  bool ready = false;
  // The captured graph `exec` was instantiated from: the runtime names the
  // executable graph's nodes by their handles in it (convert_node, the
  // first, and finish_node, the last), so it lives as long as `exec`.
  cudaGraph_t source = nullptr;
  cudaGraphNode_t convert_node = nullptr, finish_node = nullptr;
  // What those two nodes were captured with, the arguments they hold now
  // (a node already holding a frame's arguments is not updated) and
  // whether the finish node runs.
  FrameShape shape;
  KernelCall convert, finish;
  bool finish_enabled = true;
  // The configuration's launches have run once straight on the stream (the
  // first frame after a change does that), with conversion and finish
  // kernels of warm_shape.
  bool body_warm = false;
  FrameShape warm_shape;
  // Whether the graph holds the conversion and the finish. False once the
  // runtime refused to name or update those nodes: from then on the graph
  // holds the body alone, and the conversion and the finish are launched
  // around it (three submissions a frame).
  bool frame_nodes = true;
  // Captures that failed; from kMaxCaptureFailures on, frames run without a graph.
  int capture_failures = 0;
  // Off: every frame runs its launches straight on the stream, never
  // captured (CudaEngine::set_frame_graphs, for the tools).
  bool enabled = true;
  static constexpr int kMaxCaptureFailures = 3;
  // Whether captures hold the method's SWITCH node (graph_condition.h); off
  // after a capture with it failed. The last capture's failure, and whether
  // the last frame was a graph launch.
  bool conditions = true;
  std::string capture_error;
  bool last_graphed = false;

  // After a change of configuration: the next frame runs its launches on the
  // stream, the one after is captured.
  void forget() {
    ready = false;
    body_warm = false;
  }

  // The executable graph and the captured one behind it. Frames already
  // queued with it still run (an executable graph destroyed in flight is
  // freed when its launches are done: cuGraphExecDestroy).
  void drop();

  // Runs `work` on `stream` inside a capture into *g, ending the capture
  // whatever the work did: the work's error first (*g then null), else the
  // capture's. *in_capture is set once the capture has begun.
  static std::string capture(cudaStream_t stream, const std::function<std::string()>& work, cudaGraph_t* g,
                             bool* in_capture);

  // Captures the frame on `stream`: the conversion, the body (`body`: its
  // launches on the stream) and the finish (the body alone without
  // frame_nodes), with this frame's arguments. A failure after the capture
  // began sets *in_capture (the capture, not the work, failed: another
  // thread's CUDA call can invalidate it). Nodes the runtime does not name
  // leave no graph and frame_nodes off, without an error: the frame then
  // runs straight on the stream, and the next is captured as the body alone.
  std::string build(cudaStream_t stream, const KernelCall& convert, const std::function<std::string()>& body,
                    const KernelCall& finish, bool* in_capture);

  // This frame's arguments into the conversion and finish nodes (those that
  // hold other ones), and the finish node on or off (finish_inside). False
  // when the runtime refused a change (its error cleared): the nodes may
  // then hold another frame's arguments.
  bool set_frame_nodes(const KernelCall& convert, const KernelCall& finish, bool finish_inside);
};

}  // namespace cs::cuda
