#include "live_timing.h"

#include <algorithm>
#include <vector>

namespace cs_gst {

namespace {
constexpr uint64_t kMillisecond = 1000000;
}  // namespace

void ProcessingTimes::add(uint64_t ns) {
  recent_.push_back(ns);
  if (recent_.size() > kWindow) recent_.pop_front();
}

uint64_t ProcessingTimes::recent_max() const {
  if (recent_.size() < kMinFrames) return 0;
  std::vector<uint64_t> sorted(recent_.begin(), recent_.end());
  std::nth_element(sorted.begin(), sorted.begin() + kOutliers, sorted.end(), std::greater<uint64_t>());
  return sorted[kOutliers];
}

uint64_t ProcessingTimes::latency_for(uint64_t reported) const {
  const uint64_t max = recent_max();
  if (max <= reported) return reported;
  const uint64_t with_margin = max + max / 4;
  return (with_margin + kMillisecond - 1) / kMillisecond * kMillisecond;
}

void QosState::reset() {
  earliest_ = kNone;
  proportion_ = 1.0;
}

void QosState::observe(double proportion, int64_t diff, uint64_t timestamp) {
  proportion_ = proportion;
  if (timestamp == kNone) {
    earliest_ = kNone;
    return;
  }
  // GstBaseTransform takes timestamp + diff either way. But a sink that
  // syncs sends the event after rendering, so a negative jitter (the frame
  // was early) was spent waiting for the clock: when the event comes, the
  // sink is at that frame's due time, not before it. Counting the wait as
  // slack would let frames through that reach the sink late by as much.
  earliest_ = diff > 0 ? timestamp + static_cast<uint64_t>(diff) : timestamp;
}

QosState::Verdict QosState::judge(uint64_t running_time, uint64_t expected_processing) const {
  Verdict v;
  v.proportion = proportion_;
  if (earliest_ == kNone || running_time == kNone) return v;
  const uint64_t deadline = earliest_ + expected_processing;  // the earliest running time still on time
  v.jitter = deadline >= running_time ? static_cast<int64_t>(deadline - running_time)
                                      : -static_cast<int64_t>(running_time - deadline);
  v.late = v.jitter > 0;
  return v;
}

}  // namespace cs_gst
