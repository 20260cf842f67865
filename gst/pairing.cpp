#include "pairing.h"

namespace cs_gst {

uint64_t pairing_tolerance(const PadHead& left, const PadHead& right, int fps_n, int fps_d) {
  uint64_t frame = kNoTime;
  if (left.has_frame && left.duration != kNoTime) frame = left.duration;
  else if (right.has_frame && right.duration != kNoTime) frame = right.duration;
  else if (fps_n > 0 && fps_d >= 0) frame = uint64_t(1000000000) * uint64_t(fps_d) / uint64_t(fps_n);
  return frame != kNoTime ? frame / 2 : 0;
}

static std::string alone_because_of_distance(const char* pad, uint64_t t, const char* other, uint64_t tolerance,
                                             const char* other_short, uint64_t other_t) {
  return std::string(pad) + " frame at " + std::to_string(t) + " ns has no " + other + " frame within " +
         std::to_string(tolerance) + " ns (next " + other_short + " frame at " + std::to_string(other_t) + " ns)";
}

static std::string alone_because_of_silence(const char* pad, uint64_t t, const char* other, bool other_eos) {
  return std::string(pad) + " frame at " + std::to_string(t) + " ns: " + other + " " +
         (other_eos ? "is at EOS" : "sent nothing in time (latency deadline passed)");
}

Decision decide_pairing(const PadHead& left, const PadHead& right, uint64_t tolerance, bool timed_out) {
  const bool l_eos = !left.has_frame && left.eos;
  const bool r_eos = !right.has_frame && right.eos;
  Decision d;
  if (!left.has_frame && !right.has_frame) {
    d.action = (l_eos && r_eos) ? Decision::kEndOfStream : Decision::kWait;
    return d;
  }
  if (left.has_frame && right.has_frame) {
    const uint64_t lt = left.running_time, rt = right.running_time;
    if (lt == kNoTime || rt == kNoTime) {
      d.action = Decision::kPair;
    } else if (rt > lt && rt - lt > tolerance) {
      d.action = Decision::kLeftAlone;
      d.why_unpaired = alone_because_of_distance("sink_left", lt, "sink_right", tolerance, "right", rt);
    } else if (lt > rt && lt - rt > tolerance) {
      d.action = Decision::kRightAlone;
      d.why_unpaired = alone_because_of_distance("sink_right", rt, "sink_left", tolerance, "left", lt);
    } else {
      d.action = Decision::kPair;
    }
    return d;
  }
  // One head only: not live and the other view has not arrived yet.
  if (!timed_out && !l_eos && !r_eos) return d;
  if (left.has_frame) {
    d.action = Decision::kLeftAlone;
    d.why_unpaired = alone_because_of_silence("sink_left", left.running_time, "sink_right", r_eos);
  } else {
    d.action = Decision::kRightAlone;
    d.why_unpaired = alone_because_of_silence("sink_right", right.running_time, "sink_left", l_eos);
  }
  return d;
}

bool is_late(uint64_t out_running_time, uint64_t last_output_running_time) {
  return out_running_time != kNoTime && last_output_running_time != kNoTime &&
         out_running_time <= last_output_running_time;
}

OutputKind output_kind(bool paired, bool left_gap, bool right_gap) {
  if (paired) {
    if (left_gap && right_gap) return OutputKind::kGap;
    if (left_gap || right_gap) return OutputKind::kPlaceholder;
    return OutputKind::kDisparity;
  }
  return (left_gap || right_gap) ? OutputKind::kGap : OutputKind::kPlaceholder;
}

}  // namespace cs_gst
