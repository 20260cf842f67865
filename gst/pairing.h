// Two-pad pairing rules of cudastereo as plain logic: the element peeks the
// head frame of sink_left and sink_right, describes them here, and turns the
// answer into pops, outputs and bus messages. No GStreamer types and no
// clock: times are running times in nanoseconds passed in by the caller, so
// every rule is testable without a pipeline (tests/gst/test_pairing.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace cs_gst {

// "No time", the same value as GST_CLOCK_TIME_NONE so that the element can
// pass GstClockTime values through unchanged.
constexpr uint64_t kNoTime = UINT64_MAX;

// What one sink pad holds at its head.
struct PadHead {
  bool has_frame = false;
  uint64_t running_time = kNoTime;  // of the head frame
  uint64_t duration = kNoTime;      // of the head frame
  bool eos = false;                 // the pad is at EOS (counts only when it holds no frame)
};

// Half a frame: frames of the two views within this of each other pair. The
// frame duration is the left head's, else the right head's, else one frame
// of the caps' framerate (fps_n/fps_d, fps_n <= 0 when unknown); with none
// known the tolerance is 0 (running times must be equal).
uint64_t pairing_tolerance(const PadHead& left, const PadHead& right, int fps_n, int fps_d);

struct Decision {
  enum Action {
    kWait,            // nothing to do until more data (or the live deadline) comes
    kEndOfStream,     // both pads are at EOS with nothing queued
    kPair,            // pop both heads: one output from the pair
    kLeftAlone,       // pop only the left head: it goes out unpaired
    kRightAlone,      // pop only the right head: it goes out unpaired
  };
  Action action = kWait;
  std::string why_unpaired;  // for kLeftAlone/kRightAlone: the bus warning's detail
};

// The pairing rule (see the element docs in gstcudastereo.cpp): two heads
// pair when their running times differ by at most `tolerance` (or either is
// unknown); otherwise the earlier one goes out alone. A lone head waits for
// its partner unless the other pad is at EOS or `timed_out` (live: the
// latency deadline passed).
Decision decide_pairing(const PadHead& left, const PadHead& right, uint64_t tolerance, bool timed_out);

// A frame whose running time is not later than the last output's is dropped:
// its partner already went out alone at that time, and two outputs may not
// share a timestamp. Unknown times are never late.
bool is_late(uint64_t out_running_time, uint64_t last_output_running_time);

// What the output of the frames taken is made of.
enum class OutputKind {
  kDisparity,    // a pair of two real frames: the engine runs
  kPlaceholder,  // all invalid, not a gap: an unpaired frame or one view a GAP
  kGap,          // all invalid and flagged GAP: every frame taken is a GAP
};
OutputKind output_kind(bool paired, bool left_gap, bool right_gap);

}  // namespace cs_gst
