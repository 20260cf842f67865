#include "frame_graph.h"

#include "cuda_util.h"

namespace cs::cuda {
namespace {

// The node the stream's last captured launch made: the one node the next
// would depend on. False, with the runtime's error cleared, when the
// runtime does not say so.
bool last_captured_node(cudaStream_t stream, cudaGraphNode_t* node) {
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

}  // namespace

void FrameGraph::drop() {
  ready = false;
  if (exec) cudaGraphExecDestroy(exec);
  if (source) cudaGraphDestroy(source);
  exec = nullptr;
  source = nullptr;
  convert_node = finish_node = nullptr;
}

std::string FrameGraph::capture(cudaStream_t stream, const std::function<std::string()>& work, cudaGraph_t* g,
                                bool* in_capture) {
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

std::string FrameGraph::build(cudaStream_t stream, const KernelCall& convert_call,
                              const std::function<std::string()>& body, const KernelCall& finish_call,
                              bool* in_capture) {
  *in_capture = false;
  drop();
  bool named = true;
  cudaGraphNode_t first = nullptr, last = nullptr;
  cudaGraph_t g = nullptr;
  std::string e = capture(
      stream,
      [&]() -> std::string {
        if (frame_nodes) {
          CS_CUDA_TRY(convert_call.launch(stream));
          named = last_captured_node(stream, &first);
        }
        std::string b = body();
        if (!b.empty()) return b;
        if (frame_nodes) {
          CS_CUDA_TRY(finish_call.launch(stream));
          named = named && last_captured_node(stream, &last);
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
  const cudaError_t inst = cudaGraphInstantiate(&exec, g, cudaGraphInstantiateFlagUseNodePriority);
  if (inst != cudaSuccess) {
    exec = nullptr;
    cudaGraphDestroy(g);
    return cuda_error_text(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  source = g;
  convert_node = first;
  finish_node = last;
  shape = {convert_call.shape(), finish_call.shape()};
  convert = convert_call;
  finish = finish_call;
  finish_enabled = true;
  ready = true;
  return {};
}

bool FrameGraph::set_frame_nodes(const KernelCall& convert_call, const KernelCall& finish_call, bool finish_inside) {
  auto refused = [] {
    (void)cudaGetLastError();
    return false;
  };
  if (!convert_call.same_arguments(convert)) {
    convert = convert_call;
    const cudaKernelNodeParams p = convert.node_params();
    if (cudaGraphExecKernelNodeSetParams(exec, convert_node, &p) != cudaSuccess) return refused();
  }
  if (finish_inside && !finish_call.same_arguments(finish)) {
    finish = finish_call;
    const cudaKernelNodeParams p = finish.node_params();
    if (cudaGraphExecKernelNodeSetParams(exec, finish_node, &p) != cudaSuccess) return refused();
  }
  if (finish_inside != finish_enabled) {
    if (cudaGraphNodeSetEnabled(exec, finish_node, finish_inside ? 1 : 0) != cudaSuccess) return refused();
    finish_enabled = finish_inside;
  }
  return true;
}

}  // namespace cs::cuda
