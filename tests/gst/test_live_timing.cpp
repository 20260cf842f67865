// The live rules of cudastereo (gst/live_timing.h) with known answers,
// without GStreamer: the latency reported from measured processing times,
// and the QoS verdict on a frame from the sink's last observation.
#include "live_timing.h"

#include <gtest/gtest.h>

using cs_gst::ProcessingTimes;
using cs_gst::QosState;

namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kNone = UINT64_MAX;

}  // namespace

TEST(ProcessingTimes, NothingUntilThreeFrames) {
  ProcessingTimes t;
  EXPECT_EQ(t.recent_max(), 0u);
  EXPECT_EQ(t.latency_for(0), 0u);
  t.add(100 * kMs);
  t.add(100 * kMs);
  EXPECT_EQ(t.recent_max(), 0u);
  t.add(100 * kMs);
  EXPECT_EQ(t.recent_max(), 100 * kMs);
}

// A first frame's setup (a CUDA graph captured, buffers allocated) and one
// hiccup do not set the latency: the two largest times are set aside.
TEST(ProcessingTimes, TwoOutliersSetAside) {
  ProcessingTimes t;
  t.add(300 * kMs);  // first frame
  for (int i = 0; i < 10; ++i) t.add(2 * kMs);
  t.add(50 * kMs);  // hiccup
  EXPECT_EQ(t.recent_max(), 2 * kMs);
  t.add(40 * kMs);  // a third slow frame is no longer an outlier
  EXPECT_EQ(t.recent_max(), 40 * kMs);
}

TEST(ProcessingTimes, WindowForgetsOldFrames) {
  ProcessingTimes t;
  for (int i = 0; i < 3; ++i) t.add(90 * kMs);
  for (size_t i = 0; i < ProcessingTimes::kWindow; ++i) t.add(3 * kMs);
  EXPECT_EQ(t.frames(), ProcessingTimes::kWindow);
  EXPECT_EQ(t.recent_max(), 3 * kMs);
}

// Latency = recent maximum + a quarter, rounded up to a whole millisecond,
// and only when the maximum passed what was reported.
TEST(ProcessingTimes, LatencyGrowsWithMarginRoundedUp) {
  ProcessingTimes t;
  for (int i = 0; i < 5; ++i) t.add(1500000);  // 1.5 ms
  EXPECT_EQ(t.latency_for(0), 2 * kMs);         // 1.875 ms -> 2 ms
  for (int i = 0; i < 5; ++i) t.add(120 * kMs);
  EXPECT_EQ(t.latency_for(2 * kMs), 150 * kMs);
  // Within the reported latency: unchanged, no new LATENCY message.
  EXPECT_EQ(t.latency_for(150 * kMs), 150 * kMs);
  EXPECT_EQ(t.latency_for(120 * kMs), 120 * kMs);
}

TEST(ProcessingTimes, LatencyNeverShrinks) {
  ProcessingTimes t;
  for (int i = 0; i < 40; ++i) t.add(1 * kMs);
  EXPECT_EQ(t.latency_for(80 * kMs), 80 * kMs);
}

TEST(QosState, NeverLateWithoutObservation) {
  QosState q;
  EXPECT_FALSE(q.has_observation());
  EXPECT_FALSE(q.judge(0, 0).late);
  EXPECT_FALSE(q.judge(5 * kMs, 100 * kMs).late);
}

// GstBaseTransform's rule for a late sink, with no processing time:
// earliest = timestamp + diff; frames before it are late.
TEST(QosState, EarliestTimeIsTimestampPlusJitter) {
  QosState q;
  q.observe(1.0, 200 * kMs, 1000 * kMs);  // the frame at 1 s was rendered 200 ms late
  EXPECT_EQ(q.earliest_time(), 1200 * kMs);
  QosState::Verdict v = q.judge(1100 * kMs, 0);
  EXPECT_TRUE(v.late);
  EXPECT_EQ(v.jitter, static_cast<int64_t>(100 * kMs));
  v = q.judge(1300 * kMs, 0);
  EXPECT_FALSE(v.late);
  EXPECT_EQ(v.jitter, -static_cast<int64_t>(100 * kMs));
}

// The frame still has to be matched: with 150 ms of expected processing,
// the frame at 1.3 s would reach the sink 50 ms late.
TEST(QosState, ExpectedProcessingMovesTheDeadline) {
  QosState q;
  q.observe(0.8, 200 * kMs, 1000 * kMs);
  const QosState::Verdict v = q.judge(1300 * kMs, 150 * kMs);
  EXPECT_TRUE(v.late);
  EXPECT_EQ(v.jitter, static_cast<int64_t>(50 * kMs));
  EXPECT_DOUBLE_EQ(v.proportion, 0.8);
  EXPECT_FALSE(q.judge(1400 * kMs, 150 * kMs).late);
}

// A sink that was early (negative jitter) waited for the clock before it
// sent the event: it stands at that frame's due time. The next frame, a
// frame duration later, is on time when matching takes less than that.
TEST(QosState, EarlySinkStandsAtTheDueTime) {
  QosState q;
  q.observe(1.0, -30 * kMs, 1000 * kMs);
  EXPECT_EQ(q.earliest_time(), 1000 * kMs);
  EXPECT_FALSE(q.judge(1033 * kMs, 20 * kMs).late);
  const QosState::Verdict v = q.judge(1033 * kMs, 50 * kMs);
  EXPECT_TRUE(v.late);  // matching takes longer than a frame: it would be 17 ms late
  EXPECT_EQ(v.jitter, static_cast<int64_t>(17 * kMs));
}

TEST(QosState, ResetAndUnknownTimes) {
  QosState q;
  q.observe(1.0, 500 * kMs, 1000 * kMs);
  EXPECT_FALSE(q.judge(kNone, 0).late);  // no running time: cannot judge, keep it
  q.reset();
  EXPECT_FALSE(q.judge(0, 0).late);
  q.observe(1.0, 0, kNone);  // an event without timestamp forgets the observation
  EXPECT_FALSE(q.has_observation());
}
