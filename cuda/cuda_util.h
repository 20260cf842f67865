// Internal helpers of the CUDA engine: error reporting, pitched device
// images and the launch geometry shared by every stage. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "stereo.h"

namespace cs::cuda {

// "the GPU reported an error: <cuda message> (<name>)" with "file:line: call
// failed" as its detail (error_text.h: the element posts that part in the
// debug string only).
std::string cuda_error_text(cudaError_t err, const char* what, const char* file, int line);

// Returns the error text from the enclosing function (which returns std::string).
#define CS_CUDA_TRY(call)                                                          \
  do {                                                                             \
    const cudaError_t cs_err_ = (call);                                            \
    if (cs_err_ != cudaSuccess) return cs::cuda::cuda_error_text(cs_err_, #call, __FILE__, __LINE__); \
  } while (0)

#if defined(__CUDACC__)
// Device-side row access of a pitched view.
template <typename T>
__device__ __forceinline__ T* drow(const ImageView<T>& v, int y) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(const_cast<std::remove_const_t<T>*>(v.data)) + y * v.pitch);
}
#endif

#if defined(__CUDACC__)
// Warp-wide reductions over all 32 lanes (every lane must call, every lane
// gets the result). sm_80 and newer have single instructions for these
// (__reduce_*_sync); sm_75 takes five butterfly shuffles. Both give the
// same value: min, max, or and a wrapping unsigned sum are associative and
// commutative, so the order of combination does not matter.
__device__ __forceinline__ int warp_min(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
#endif
}
__device__ __forceinline__ int warp_max(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
#endif
}
__device__ __forceinline__ unsigned warp_or(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_or_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}
__device__ __forceinline__ unsigned warp_sum(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}
__device__ __forceinline__ int warp_sum(int v) {
  return static_cast<int>(warp_sum(static_cast<unsigned>(v)));
}
// Inclusive prefix sum over the 32 lanes in lane order (every lane must
// call, in a block whose x extent is whole warps): lane i gets the sum of
// lanes 0 .. i.
__device__ __forceinline__ unsigned warp_inclusive_sum(unsigned v) {
  const unsigned lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned t = __shfl_up_sync(0xFFFFFFFFu, v, o);
    if (lane >= static_cast<unsigned>(o)) v += t;
  }
  return v;
}
#endif

// True when a plane's first row and its row pitch are both multiples of
// `bytes` (a power of two): every row then takes accesses of that width.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline bool rows_aligned(const void* data, std::ptrdiff_t pitch, int bytes) {
  return ((reinterpret_cast<uintptr_t>(data) | static_cast<uintptr_t>(pitch)) & static_cast<uintptr_t>(bytes - 1)) == 0;
}

template <typename T>
ImageView<const T> as_const(const ImageView<T>& v) {
  return {v.data, v.width, v.height, v.pitch};
}

// An owning pitched device image (no copy; moves only).
template <typename T>
class DeviceImage {
 public:
  DeviceImage() = default;
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;
  DeviceImage(DeviceImage&& o) noexcept { *this = std::move(o); }
  DeviceImage& operator=(DeviceImage&& o) noexcept {
    if (this != &o) {
      release();
      view_ = o.view_;
      o.view_ = {};
    }
    return *this;
  }
  ~DeviceImage() { release(); }

  cudaError_t allocate(int width, int height) {
    release();
    if (width <= 0 || height <= 0) return cudaSuccess;
    void* p = nullptr;
    size_t pitch = 0;
    const cudaError_t err = cudaMallocPitch(&p, &pitch, static_cast<size_t>(width) * sizeof(T), height);
    if (err != cudaSuccess) return err;
    view_ = {static_cast<T*>(p), width, height, static_cast<std::ptrdiff_t>(pitch)};
    return cudaSuccess;
  }
  void release() {
    if (view_.data) cudaFree(view_.data);
    view_ = {};
  }
  const ImageView<T>& view() const { return view_; }
  ImageView<const T> cview() const { return as_const(view_); }
  bool empty() const { return view_.data == nullptr; }
  size_t bytes() const { return static_cast<size_t>(view_.pitch) * view_.height; }

 private:
  ImageView<T> view_{};
};

// Copies a device image into a host Image (blocking); an empty one (no
// data) gives an empty Image. For tests, tools and debug downloads.
template <typename T>
std::string download(ImageView<const T> d, Image<T>* out) {
  if (!d.data) {
    *out = Image<T>();
    return {};
  }
  *out = Image<T>(d.width, d.height);
  CS_CUDA_TRY(cudaMemcpy2D(out->pixels.data(), d.width * sizeof(T), d.data, d.pitch, d.width * sizeof(T), d.height,
                           cudaMemcpyDeviceToHost));
  return {};
}
template <typename T>
std::string download(const DeviceImage<T>& d, Image<T>* out) {
  return download(d.cview(), out);
}

inline dim3 grid_for(int width, int height, dim3 block) {
  return dim3((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
}

}  // namespace cs::cuda
