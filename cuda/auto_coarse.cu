#include "auto_coarse.h"

#include <algorithm>

#include "cuda_util.h"

namespace cs::cuda {

AutoCoarseRange::~AutoCoarseRange() {
  int cur = -1;
  if (cudaGetDevice(&cur) == cudaSuccess && cur != device_) cudaSetDevice(device_);
  if (done_) {
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
  }
  release_buffers();
  if (cur >= 0 && cur != device_) cudaSetDevice(cur);
}

std::string AutoCoarseRange::ensure(int want_bins) {
  if (!done_) CS_CUDA_TRY(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  if (want_bins <= capacity_) return {};
  release_buffers();
  CS_CUDA_TRY(cudaMalloc(&counts_device_, static_cast<size_t>(want_bins) * sizeof(unsigned)));
  CS_CUDA_TRY(cudaMallocHost(&counts_host_, static_cast<size_t>(want_bins) * sizeof(unsigned)));
  capacity_ = want_bins;
  return {};
}

void AutoCoarseRange::release_buffers() {
  if (counts_device_) cudaFree(counts_device_);
  if (counts_host_) cudaFreeHost(counts_host_);
  counts_device_ = nullptr;
  counts_host_ = nullptr;
  capacity_ = 0;
}

std::string AutoCoarseRange::begin_frame(const Params& params, int width, int height, int levels, int* factor) {
  if (waiting_) {
    waiting_ = false;
    CS_CUDA_TRY(cudaEventSynchronize(done_));
    schedule_.set_factor(coarse_factor_from_histogram(counts_host_, bins_, level_, max_));
  }
  *factor = automatic(params, levels) ? schedule_.begin_frame(width, height, levels, params)
                                      : std::max(params.coarse_range_factor, 1);
  return {};
}

std::string AutoCoarseRange::end_frame(const Params& params, int width, int height, int levels, int coarsest_width,
                                       const Probe& probe, cudaStream_t stream) {
  if (!automatic(params, levels)) return {};
  if (schedule_.probe_due(width, height, levels, params)) {
    const int l = levels - 1;
    const Range r = probe_range(params, l, coarsest_width);
    const int bins = std::max(r.hi, 1);
    CS_CUDA_TRY(cudaGetDevice(&device_));
    std::string e = ensure(bins);
    if (e.empty()) e = probe(r, counts_device_, bins);
    if (!e.empty()) return e;
    CS_CUDA_TRY(cudaMemcpyAsync(counts_host_, counts_device_, static_cast<size_t>(bins) * sizeof(unsigned),
                                cudaMemcpyDeviceToHost, stream));
    CS_CUDA_TRY(cudaEventRecord(done_, stream));
    waiting_ = true;
    level_ = l;
    bins_ = bins;
    max_ = params.max_disparity;
    schedule_.probe_made(width, height, levels, params);
  }
  schedule_.frame_done();
  return {};
}

}  // namespace cs::cuda
