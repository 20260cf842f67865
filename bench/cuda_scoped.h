// CUDA resources of a cs-bench-engine run, freed on every way out of it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace cs::bench {

// Device allocations (cudaMalloc*), freed with the list.
struct DeviceBuffers {
  std::vector<void*> list;
  DeviceBuffers() = default;
  ~DeviceBuffers() {
    for (void* d : list) cudaFree(d);
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
};

// Two timing events, a before b.
struct EventPair {
  cudaEvent_t a = nullptr, b = nullptr;
  EventPair() {
    cudaEventCreate(&a);
    cudaEventCreate(&b);
  }
  ~EventPair() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

}  // namespace cs::bench
