// The two-pad pairing rules (gst/pairing.h) on head frames with known
// answers, without GStreamer: times are running times in nanoseconds.
#include "pairing.h"

#include <gtest/gtest.h>

using cs_gst::Decision;
using cs_gst::kNoTime;
using cs_gst::PadHead;

namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kFrame = 40 * kMs;  // 25 fps
constexpr uint64_t kHalf = kFrame / 2;

PadHead frame_at(uint64_t running_time, uint64_t duration = kFrame) {
  PadHead h;
  h.has_frame = true;
  h.running_time = running_time;
  h.duration = duration;
  return h;
}

PadHead empty(bool eos = false) {
  PadHead h;
  h.eos = eos;
  return h;
}

}  // namespace

TEST(PairingTolerance, HalfOfTheLeftDurationFirst) {
  EXPECT_EQ(cs_gst::pairing_tolerance(frame_at(0, 40 * kMs), frame_at(0, 20 * kMs), 30, 1), 20 * kMs);
}

TEST(PairingTolerance, RightDurationWhenLeftHasNone) {
  EXPECT_EQ(cs_gst::pairing_tolerance(frame_at(0, kNoTime), frame_at(0, 20 * kMs), 30, 1), 10 * kMs);
  EXPECT_EQ(cs_gst::pairing_tolerance(empty(), frame_at(0, 20 * kMs), 30, 1), 10 * kMs);
}

TEST(PairingTolerance, FramerateWhenNoDuration) {
  // 30000/1001 fps: 33366666 ns a frame (rounded down), half of it.
  EXPECT_EQ(cs_gst::pairing_tolerance(frame_at(0, kNoTime), frame_at(0, kNoTime), 30000, 1001), 16683333u);
}

TEST(PairingTolerance, ZeroWhenNothingKnown) {
  EXPECT_EQ(cs_gst::pairing_tolerance(frame_at(0, kNoTime), frame_at(0, kNoTime), 0, 1), 0u);
}

TEST(Pairing, ExactPair) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(80 * kMs), frame_at(80 * kMs), kHalf, false).action, Decision::kPair);
}

TEST(Pairing, WithinToleranceEitherWayPairs) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(80 * kMs), frame_at(80 * kMs + kHalf), kHalf, false).action,
            Decision::kPair);
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(80 * kMs + kHalf), frame_at(80 * kMs), kHalf, false).action,
            Decision::kPair);
}

TEST(Pairing, ZeroToleranceNeedsEqualTimes) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(5), frame_at(5), 0, false).action, Decision::kPair);
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(5), frame_at(6), 0, false).action, Decision::kLeftAlone);
}

TEST(Pairing, BeyondToleranceLeftEarlierGoesAlone) {
  const Decision d = cs_gst::decide_pairing(frame_at(0), frame_at(kHalf + 1), kHalf, false);
  EXPECT_EQ(d.action, Decision::kLeftAlone);
  EXPECT_EQ(d.why_unpaired, "sink_left frame at 0 ns has no sink_right frame within 20000000 ns (next right "
                            "frame at 20000001 ns)");
}

TEST(Pairing, BeyondToleranceRightEarlierGoesAlone) {
  const Decision d = cs_gst::decide_pairing(frame_at(kFrame), frame_at(0), kHalf, false);
  EXPECT_EQ(d.action, Decision::kRightAlone);
  EXPECT_EQ(d.why_unpaired, "sink_right frame at 0 ns has no sink_left frame within 20000000 ns (next left "
                            "frame at 40000000 ns)");
}

TEST(Pairing, UnknownRunningTimePairs) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(kNoTime), frame_at(kFrame * 10), kHalf, false).action,
            Decision::kPair);
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(0), frame_at(kNoTime), kHalf, false).action, Decision::kPair);
}

TEST(Pairing, LoneFrameWaitsForItsPartner) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(0), empty(), kHalf, false).action, Decision::kWait);
  EXPECT_EQ(cs_gst::decide_pairing(empty(), frame_at(0), kHalf, false).action, Decision::kWait);
}

TEST(Pairing, NothingQueuedWaits) {
  EXPECT_EQ(cs_gst::decide_pairing(empty(), empty(), kHalf, false).action, Decision::kWait);
  EXPECT_EQ(cs_gst::decide_pairing(empty(), empty(), kHalf, true).action, Decision::kWait);
  EXPECT_EQ(cs_gst::decide_pairing(empty(true), empty(), kHalf, false).action, Decision::kWait);
}

TEST(Pairing, BothAtEosEndsTheStream) {
  EXPECT_EQ(cs_gst::decide_pairing(empty(true), empty(true), kHalf, false).action, Decision::kEndOfStream);
}

TEST(Pairing, OtherPadAtEosSendsTheFrameAlone) {
  Decision d = cs_gst::decide_pairing(frame_at(kFrame), empty(true), kHalf, false);
  EXPECT_EQ(d.action, Decision::kLeftAlone);
  EXPECT_EQ(d.why_unpaired, "sink_left frame at 40000000 ns: sink_right is at EOS");
  d = cs_gst::decide_pairing(empty(true), frame_at(kFrame), kHalf, false);
  EXPECT_EQ(d.action, Decision::kRightAlone);
  EXPECT_EQ(d.why_unpaired, "sink_right frame at 40000000 ns: sink_left is at EOS");
}

TEST(Pairing, EosOfAPadWithAFrameQueuedDoesNotCount) {
  // A pad's EOS matters only once its queue is empty: its frames pair first.
  PadHead left = frame_at(0);
  left.eos = true;
  EXPECT_EQ(cs_gst::decide_pairing(left, frame_at(0), kHalf, false).action, Decision::kPair);
  EXPECT_EQ(cs_gst::decide_pairing(left, empty(), kHalf, false).action, Decision::kWait);
}

TEST(Pairing, LiveDeadlineSendsTheFrameAlone) {
  Decision d = cs_gst::decide_pairing(frame_at(kFrame), empty(), kHalf, true);
  EXPECT_EQ(d.action, Decision::kLeftAlone);
  EXPECT_EQ(d.why_unpaired, "sink_left frame at 40000000 ns: sink_right sent nothing in time (latency deadline "
                            "passed)");
  d = cs_gst::decide_pairing(empty(), frame_at(kFrame), kHalf, true);
  EXPECT_EQ(d.action, Decision::kRightAlone);
  EXPECT_EQ(d.why_unpaired, "sink_right frame at 40000000 ns: sink_left sent nothing in time (latency deadline "
                            "passed)");
}

TEST(Pairing, LiveDeadlineStillPairsTwoHeads) {
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(0), frame_at(kMs), kHalf, true).action, Decision::kPair);
  EXPECT_EQ(cs_gst::decide_pairing(frame_at(0), frame_at(kFrame), kHalf, true).action, Decision::kLeftAlone);
}

TEST(LateFrame, NotLaterThanTheLastOutputIsLate) {
  EXPECT_TRUE(cs_gst::is_late(kFrame, kFrame));
  EXPECT_TRUE(cs_gst::is_late(kFrame - 1, kFrame));
  EXPECT_FALSE(cs_gst::is_late(kFrame + 1, kFrame));
}

TEST(LateFrame, UnknownTimesAreNeverLate) {
  EXPECT_FALSE(cs_gst::is_late(kNoTime, kFrame));
  EXPECT_FALSE(cs_gst::is_late(0, kNoTime));
}

TEST(OutputKind, PairOfFramesRunsTheEngine) {
  EXPECT_EQ(cs_gst::output_kind(true, false, false), cs_gst::OutputKind::kDisparity);
}

TEST(OutputKind, PairWithOneGapIsAPlaceholder) {
  EXPECT_EQ(cs_gst::output_kind(true, true, false), cs_gst::OutputKind::kPlaceholder);
  EXPECT_EQ(cs_gst::output_kind(true, false, true), cs_gst::OutputKind::kPlaceholder);
}

TEST(OutputKind, PairOfGapsIsAGap) {
  EXPECT_EQ(cs_gst::output_kind(true, true, true), cs_gst::OutputKind::kGap);
}

TEST(OutputKind, LoneFrameIsAPlaceholderLoneGapAGap) {
  EXPECT_EQ(cs_gst::output_kind(false, false, false), cs_gst::OutputKind::kPlaceholder);
  EXPECT_EQ(cs_gst::output_kind(false, true, false), cs_gst::OutputKind::kGap);
  EXPECT_EQ(cs_gst::output_kind(false, false, true), cs_gst::OutputKind::kGap);
}
