#include "graph_condition.h"

namespace cs::cuda {

#if CUDART_VERSION >= 13000

namespace {

bool capture_info(cudaStream_t stream, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                  const cudaGraphEdgeData** edges, size_t* count) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, nullptr, graph, deps, edges, count);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e == cudaSuccess && status == cudaStreamCaptureStatusActive;
}

}  // namespace

cudaError_t make_graph_condition(cudaStream_t stream, unsigned initial, GraphCondition* c) {
  *c = GraphCondition{};
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 0;
  if (!capture_info(stream, &graph, &deps, &edges, &count)) return cudaSuccess;
  if (cudaGraphConditionalHandleCreate(&c->handle, graph, initial, cudaGraphCondAssignDefault) != cudaSuccess) {
    (void)cudaGetLastError();  // no conditional nodes here: the work runs in line
    c->handle = 0;
    return cudaSuccess;
  }
  c->on = true;
  return cudaSuccess;
}

cudaError_t add_graph_switch(cudaStream_t stream, const GraphCondition& c, int count, cudaGraph_t* bodies) {
  if (!c.on || count < 1) return cudaErrorInvalidValue;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t n = 0;
  if (!capture_info(stream, &graph, &deps, &edges, &n)) return cudaErrorStreamCaptureInvalidated;
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = c.handle;
  params.conditional.type = cudaGraphCondTypeSwitch;
  params.conditional.size = static_cast<unsigned>(count);
  cudaGraphNode_t node = nullptr;
  cudaError_t e = cudaGraphAddNode(&node, graph, deps, edges, n, &params);
  if (e != cudaSuccess) return e;
  for (int k = 0; k < count; ++k) bodies[k] = params.conditional.phGraph_out[k];
  return cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies);
}

cudaError_t begin_graph_body(cudaStream_t body, cudaGraph_t graph) {
  return cudaStreamBeginCaptureToGraph(body, graph, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal);
}

cudaError_t end_graph_body(cudaStream_t body) {
  cudaGraph_t graph = nullptr;
  return cudaStreamEndCapture(body, &graph);
}

#else  // conditional nodes through stream capture need CUDA 13's API here

cudaError_t make_graph_condition(cudaStream_t, unsigned, GraphCondition* c) {
  *c = GraphCondition{};
  return cudaSuccess;
}

cudaError_t add_graph_switch(cudaStream_t, const GraphCondition&, int, cudaGraph_t*) { return cudaErrorNotSupported; }
cudaError_t begin_graph_body(cudaStream_t, cudaGraph_t) { return cudaErrorNotSupported; }
cudaError_t end_graph_body(cudaStream_t) { return cudaErrorNotSupported; }

#endif

}  // namespace cs::cuda
