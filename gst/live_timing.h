// Live behaviour of cudastereo as plain logic: the latency it reports from
// the processing time it measures, and the QoS decision to skip a frame
// that would reach the sink late. No GStreamer types and no clock: times
// are nanoseconds passed in by the element (running times for frames), so
// every rule is testable without a pipeline (tests/gst/test_live_timing.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace cs_gst {

// Recent per-frame processing times and the latency they call for.
class ProcessingTimes {
 public:
  static constexpr size_t kWindow = 32;    // frames remembered
  static constexpr size_t kOutliers = 2;   // largest times of the window not trusted
  static constexpr size_t kMinFrames = kOutliers + 1;

  void add(uint64_t ns);
  void reset() { recent_.clear(); }
  size_t frames() const { return recent_.size(); }

  // A robust recent maximum: the largest of the last kWindow times once the
  // kOutliers largest are set aside (a first frame's setup, a hiccup of the
  // machine); 0 until kMinFrames frames were measured.
  uint64_t recent_max() const;

  // The latency to report when `reported` is reported now: unchanged while
  // the recent maximum fits in it; once the maximum passes it, the maximum
  // plus a quarter (so that ordinary variation does not re-trigger it at
  // once), rounded up to a whole millisecond. It never shrinks: a lower
  // latency mid-stream would make the sinks render later frames early.
  uint64_t latency_for(uint64_t reported) const;

 private:
  std::deque<uint64_t> recent_;
};

// Quality of service from the sink's QoS events, after GstBaseTransform:
// the sink says it rendered the frame at running time `timestamp` with
// `diff` (jitter: positive = late), so a frame whose running time is below
// the earliest time, timestamp + diff, would be late even if it reached the
// sink now. A negative diff counts as 0: the sink waited for the clock
// before it sent the event. A frame still to be matched needs its
// processing time on top: it is late when its running time is below the
// earliest time plus the expected processing time.
class QosState {
 public:
  void reset();
  void observe(double proportion, int64_t diff, uint64_t timestamp);

  struct Verdict {
    bool late = false;
    int64_t jitter = 0;       // how late the frame would be, ns (> 0: late)
    double proportion = 1.0;  // the sink's last proportion
  };
  // `running_time`: the frame's; `expected_processing`: what matching it is
  // expected to take (ProcessingTimes::recent_max). No observation or no
  // running time: never late.
  Verdict judge(uint64_t running_time, uint64_t expected_processing) const;

  bool has_observation() const { return earliest_ != kNone; }
  uint64_t earliest_time() const { return earliest_; }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;  // = GST_CLOCK_TIME_NONE
  uint64_t earliest_ = kNone;
  double proportion_ = 1.0;
};

}  // namespace cs_gst
