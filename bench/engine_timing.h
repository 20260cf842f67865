// Timing helpers shared by cs-bench-engine's runs (bench_engine.cpp and
// surveillance_scene.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cuda_engine.h"

namespace cs::bench {

// The median of v (the upper one of an even count); 0 when empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Two frames in flight: the engine set to two sets of buffers, `warm`
// frames queued (queue(i), i from 0) and waited for, so that both sets run
// their graphs; then `batches` batches of `frames` frames, each timed on the
// host from its first enqueue to synchronize() (the frames alternate
// between two streams, so no one stream's events bound them). *ms: the
// median ms a frame. The engine is left with two sets (the caller may read
// them, e.g. device_bytes(), and sets one again).
template <typename Queue>
std::string time_two_in_flight(cuda::CudaEngine& engine, int warm, int frames, int batches, Queue queue,
                               double* ms) {
  std::string err = engine.set_frames_in_flight(2);
  for (int i = 0; i < warm && err.empty(); ++i) err = queue(i);
  if (err.empty()) err = engine.synchronize();
  std::vector<double> per_frame;
  for (int k = 0; k < batches && err.empty(); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < frames && err.empty(); ++i) err = queue(i);
    if (err.empty()) err = engine.synchronize();
    per_frame.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                        std::max(1, frames));
  }
  *ms = median(per_frame);
  return err;
}

}  // namespace cs::bench
