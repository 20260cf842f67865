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

cudaError_t make_graph_condition(cudaStream_t stream, GraphCondition* c) {
  *c = GraphCondition{};
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 0;
  if (!capture_info(stream, &graph, &deps, &edges, &count)) return cudaSuccess;
  if (cudaGraphConditionalHandleCreate(&c->handle, graph, 0, cudaGraphCondAssignDefault) != cudaSuccess) {
    (void)cudaGetLastError();  // no conditional nodes here: the work runs in line
    c->handle = 0;
    return cudaSuccess;
  }
  c->on = true;
  return cudaSuccess;
}

cudaError_t begin_graph_condition(cudaStream_t stream, const GraphCondition& c, cudaStream_t body,
                                  cudaStream_t* work) {
  *work = stream;
  if (!c.on) return cudaSuccess;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 0;
  if (!capture_info(stream, &graph, &deps, &edges, &count)) return cudaErrorStreamCaptureInvalidated;
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = c.handle;
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  cudaError_t e = cudaGraphAddNode(&node, graph, deps, edges, count, &params);
  if (e != cudaSuccess) return e;
  e = cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies);
  if (e != cudaSuccess) return e;
  e = cudaStreamBeginCaptureToGraph(body, params.conditional.phGraph_out[0], nullptr, nullptr, 0,
                                    cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  *work = body;
  return cudaSuccess;
}

cudaError_t end_graph_condition(const GraphCondition& c, cudaStream_t body) {
  if (!c.on) return cudaSuccess;
  cudaGraph_t graph = nullptr;
  return cudaStreamEndCapture(body, &graph);
}

#else  // conditional nodes through stream capture need CUDA 13's API here

cudaError_t make_graph_condition(cudaStream_t, GraphCondition* c) {
  *c = GraphCondition{};
  return cudaSuccess;
}

cudaError_t begin_graph_condition(cudaStream_t stream, const GraphCondition&, cudaStream_t, cudaStream_t* work) {
  *work = stream;
  return cudaSuccess;
}

cudaError_t end_graph_condition(const GraphCondition&, cudaStream_t) { return cudaSuccess; }

#endif

}  // namespace cs::cuda
