// RowCopier: bands of rows copied by a few long-lived workers.
#include "row_copy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cs {

RowCopier::RowCopier(int threads) {
  if (threads <= 0) {
    const char* env = std::getenv("CS_COPY_THREADS");
    const int asked = env ? std::atoi(env) : 0;
    const unsigned cores = std::thread::hardware_concurrency();
    threads = asked > 0 ? std::min(asked, kMaxThreads) : static_cast<int>(std::clamp(cores / 2, 1u, 4u));
  }
  threads_ = threads;
}

RowCopier::~RowCopier() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void RowCopier::copy_band(const Job& job, int band) {
  if (band >= job.bands) return;  // fewer rows than threads: this worker has none
  const int first = static_cast<int>(static_cast<int64_t>(job.rows) * band / job.bands);
  const int end = static_cast<int>(static_cast<int64_t>(job.rows) * (band + 1) / job.bands);
  if (job.to_pitch == static_cast<std::ptrdiff_t>(job.row_bytes) &&
      job.from_pitch == static_cast<std::ptrdiff_t>(job.row_bytes)) {
    std::memcpy(job.to + first * job.to_pitch, job.from + first * job.from_pitch, job.row_bytes * (end - first));
    return;
  }
  for (int y = first; y < end; ++y) std::memcpy(job.to + y * job.to_pitch, job.from + y * job.from_pitch, job.row_bytes);
}

void RowCopier::work(int index) {
  unsigned seen = 0;
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> hold(lock_);
      wake_.wait(hold, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    copy_band(job, index);
    std::lock_guard<std::mutex> guard(lock_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void RowCopier::copy(uint8_t* to, std::ptrdiff_t to_pitch, const uint8_t* from, std::ptrdiff_t from_pitch,
                     std::size_t row_bytes, int rows) {
  if (rows <= 0 || row_bytes == 0) return;
  Job job{to, to_pitch, from, from_pitch, row_bytes, rows, 1};
  const int bands = std::min(threads_, rows);
  if (bands <= 1 || row_bytes * static_cast<std::size_t>(rows) < kShareBytes) {
    copy_band(job, 0);
    return;
  }
  std::lock_guard<std::mutex> one_at_a_time(call_);
  job.bands = bands;
  {
    std::lock_guard<std::mutex> guard(lock_);
    // Band 0 is the caller's; workers 1 .. bands - 1 take the others.
    while (static_cast<int>(workers_.size()) < threads_ - 1)
      workers_.emplace_back(&RowCopier::work, this, static_cast<int>(workers_.size()) + 1);
    job_ = job;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  copy_band(job, 0);
  std::unique_lock<std::mutex> hold(lock_);
  done_.wait(hold, [&] { return pending_ == 0; });
}

}  // namespace cs
