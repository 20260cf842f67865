// An IF node in a frame's graph: work that runs only when a kernel before it
// says so (foreground_tiles.h: no foreground, no matching), decided on the
// GPU with no trip to the host.
#pragma once

#include <cuda_runtime.h>

namespace cs::cuda {

struct GraphCondition {
  cudaGraphConditionalHandle handle = 0;
  bool on = false;  // the capture holds the node; false: the work runs in line
};

// Before the kernel that sets the condition (cudaGraphSetConditional with
// c->handle): the condition of the graph being captured on `stream`, 0 at
// every launch of the graph until that kernel sets it. c->on is false where
// `stream` is not capturing or the runtime has no conditional nodes (the
// work then runs in line, its kernels finding their lists empty).
cudaError_t make_graph_condition(cudaStream_t stream, GraphCondition* c);

// The IF node after the work captured on `stream` so far; the work of its
// body is captured on `body` (*work = body) until end_graph_condition, and
// the stream's next work follows the node. Where !c.on, *work = stream.
cudaError_t begin_graph_condition(cudaStream_t stream, const GraphCondition& c, cudaStream_t body,
                                  cudaStream_t* work);
cudaError_t end_graph_condition(const GraphCondition& c, cudaStream_t body);

}  // namespace cs::cuda
