// One kernel launch as data: the kernel, its grid, block and dynamic shared
// memory, and a copy of its arguments. The frame's graph holds two kernels
// whose arguments change from frame to frame, the conversion (the caller's
// input) and the finish (the caller's output); the stage that owns each
// fills a KernelCall (convert_pair_call, finish_call, block_finish_call),
// and the engine either launches it on a stream or writes it into the
// graph's node for this frame (cudaGraphExecKernelNodeSetParams). So there
// is one description of the launch, whichever way the frame goes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace cs::cuda {

// What a graph's kernel node is captured with and the engine never changes
// in place: which kernel, its grid, block and shared memory. A frame whose
// KernelShape differs from the node's gets a fresh capture instead (the
// runtime allows some of these updates, not every one, and a refused update
// would leave the node with another frame's launch).
struct KernelShape {
  const void* func = nullptr;
  dim3 grid{0, 0, 0}, block{0, 0, 0};
  unsigned shared_bytes = 0;

  bool operator==(const KernelShape& o) const {
    return func == o.func && grid.x == o.grid.x && grid.y == o.grid.y && grid.z == o.grid.z &&
           block.x == o.block.x && block.y == o.block.y && block.z == o.block.z && shared_bytes == o.shared_bytes;
  }
  bool operator!=(const KernelShape& o) const { return !(*this == o); }
};

class KernelCall {
 public:
  static constexpr int kMaxArgs = 12;
  static constexpr size_t kArgBytes = 1024;

  // The kernel and its arguments, converted to the kernel's own parameter
  // types (the runtime copies each parameter's bytes as the kernel declares
  // it, so the stored copy must have exactly that type).
  template <typename... P>
  void set(void (*kernel)(P...), dim3 grid, dim3 block, unsigned shared_bytes,
           const typename std::common_type<P>::type&... args) {
    static_assert(sizeof...(P) <= kMaxArgs, "more kernel parameters than a KernelCall holds");
    static_assert(bytes_for<P...>() <= kArgBytes, "kernel parameters larger than a KernelCall holds");
    static_assert((std::is_trivially_copyable<P>::value && ...), "kernel parameters are copied as bytes");
    static_assert(((alignof(P) <= alignof(std::max_align_t)) && ...), "a kernel parameter aligned beyond storage");
    shape_ = {reinterpret_cast<const void*>(kernel), grid, block, shared_bytes};
    count_ = 0;
    used_ = 0;
    std::memset(bytes_, 0, sizeof(bytes_));
    (append(args), ...);
  }

  const KernelShape& shape() const { return shape_; }
  bool empty() const { return shape_.func == nullptr; }

  // The same kernel with byte-for-byte the same arguments (a graph node
  // that already holds them needs no update).
  bool same_arguments(const KernelCall& o) const {
    return shape_ == o.shape_ && count_ == o.count_ && used_ == o.used_ && std::memcmp(bytes_, o.bytes_, used_) == 0;
  }

  // Launches it on `stream` (captured when the stream is capturing). The
  // launch's error, else the runtime's last one, as `kernel<<<...>>>`
  // followed by cudaGetLastError() reports.
  cudaError_t launch(cudaStream_t stream) const {
    if (empty()) return cudaErrorInvalidDeviceFunction;
    void* args[kMaxArgs] = {};
    pointers(args);
    const cudaError_t e =
        cudaLaunchKernel(shape_.func, shape_.grid, shape_.block, args, shape_.shared_bytes, stream);
    const cudaError_t last = cudaGetLastError();
    return e != cudaSuccess ? e : last;
  }

  // The launch as a kernel node's parameters. kernelParams points into this
  // object, so it is valid while the object lives where it is.
  cudaKernelNodeParams node_params() {
    pointers(node_args_);
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(shape_.func);
    p.gridDim = shape_.grid;
    p.blockDim = shape_.block;
    p.sharedMemBytes = shape_.shared_bytes;
    p.kernelParams = node_args_;
    p.extra = nullptr;
    return p;
  }

 private:
  static constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
  template <typename... P>
  static constexpr size_t bytes_for() {
    size_t n = 0;
    ((n = align_up(n, alignof(P)) + sizeof(P)), ...);
    return n;
  }
  template <typename T>
  void append(const T& v) {
    used_ = align_up(used_, alignof(T));
    offset_[count_++] = used_;
    std::memcpy(bytes_ + used_, &v, sizeof(T));
    used_ += sizeof(T);
  }
  void pointers(void** out) const {
    for (int i = 0; i < count_; ++i) out[i] = const_cast<unsigned char*>(bytes_ + offset_[i]);
  }

  KernelShape shape_;
  int count_ = 0;
  size_t used_ = 0;
  size_t offset_[kMaxArgs] = {};
  alignas(alignof(std::max_align_t)) unsigned char bytes_[kArgBytes] = {};
  void* node_args_[kMaxArgs] = {};
};

}  // namespace cs::cuda
