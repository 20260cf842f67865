// Copying rows of a picture between host buffers on several threads.
//
// One thread copies about 8 to 10 GB/s: a 3840x1080 RGBA side-by-side frame
// (16.6 MB) takes it about 2 ms, four times the CUDA engine's frame, when it
// arrives in pageable memory and is gathered into pinned memory for the DMA.
// RowCopier splits the rows into bands copied side by side by a few workers
// it keeps for its whole life (no thread is started per copy).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cs {

class RowCopier {
 public:
  // `threads` copying in all, the caller's included (1: the caller alone;
  // 0: the environment's CS_COPY_THREADS if set (1 to kMaxThreads, for
  // measurements), else half the machine's cores, at most 4). Workers start
  // lazily, at the first copy large enough to share.
  explicit RowCopier(int threads = 0);
  ~RowCopier();
  RowCopier(const RowCopier&) = delete;
  RowCopier& operator=(const RowCopier&) = delete;

  // rows x row_bytes from `from` (stride from_pitch) to `to` (stride
  // to_pitch); returns when every row is copied. Copies under
  // kShareBytes run on the caller's thread alone. One copy at a time per
  // copier (calls from several threads are serialised).
  void copy(uint8_t* to, std::ptrdiff_t to_pitch, const uint8_t* from, std::ptrdiff_t from_pitch,
            std::size_t row_bytes, int rows);

  int threads() const { return threads_; }

  static constexpr std::size_t kShareBytes = std::size_t{1} << 20;
  static constexpr int kMaxThreads = 16;

 private:
  struct Job {
    uint8_t* to = nullptr;
    std::ptrdiff_t to_pitch = 0;
    const uint8_t* from = nullptr;
    std::ptrdiff_t from_pitch = 0;
    std::size_t row_bytes = 0;
    int rows = 0;
    int bands = 0;
  };
  static void copy_band(const Job& job, int band);
  void work(int index);

  int threads_;
  std::mutex call_;  // one copy at a time
  std::mutex lock_;
  std::condition_variable wake_, done_;
  Job job_;
  unsigned generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace cs
