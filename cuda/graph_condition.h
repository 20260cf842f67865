// A SWITCH node in a frame's graph: which of a few captured bodies runs (or
// none), decided by a kernel before it on the GPU with no trip to the host
// (frame_switch.h: no foreground, no matching; a small foreground, the
// configurations for a few tiles; a large one, those for the whole grid).
#pragma once

#include <cuda_runtime.h>

namespace cs::cuda {

struct GraphCondition {
  cudaGraphConditionalHandle handle = 0;
  bool on = false;  // the capture holds the node; false: the work runs in line
};

// Before the kernel that sets the condition (cudaGraphSetConditional with
// c->handle): the condition of the graph being captured on `stream`,
// `initial` at every launch of the graph until that kernel sets it. c->on
// is false where `stream` is not capturing or the runtime has no
// conditional nodes (the work then runs in line).
cudaError_t make_graph_condition(cudaStream_t stream, unsigned initial, GraphCondition* c);

// The SWITCH node after the work captured on `stream` so far, with `count`
// bodies (body k runs when the condition is k; none when it is count or
// more); the stream's next work follows the node. bodies[k] receive the
// bodies' graphs, to be captured with begin_graph_body.
cudaError_t add_graph_switch(cudaStream_t stream, const GraphCondition& c, int count, cudaGraph_t* bodies);

// Captures `work` (on `body`) into a body graph; the capture ends whatever
// the work did.
cudaError_t begin_graph_body(cudaStream_t body, cudaGraph_t graph);
cudaError_t end_graph_body(cudaStream_t body);

}  // namespace cs::cuda
