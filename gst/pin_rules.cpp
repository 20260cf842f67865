#include "pin_rules.h"

#include <algorithm>

namespace cs_gst {

PinStep on_sighting(PinRecord* r, uint64_t element, size_t bytes, PinBudget* budget) {
  if (r->state != PinRecord::State::Seen) return PinStep::None;
  auto& seen = r->seen_by;
  if (std::find(seen.begin(), seen.end(), element) == seen.end()) {
    if (seen.size() >= PinRecord::kMaxSeenBy) seen.erase(seen.begin());
    seen.push_back(element);
    return PinStep::None;
  }
  if (bytes == 0) return PinStep::None;
  if (bytes > budget->cap || budget->registered > budget->cap - bytes) return PinStep::OverCap;
  budget->registered += bytes;
  r->state = PinRecord::State::Registering;
  r->owner = element;
  r->bytes = bytes;
  seen.clear();
  seen.shrink_to_fit();
  return PinStep::Register;
}

void on_registered(PinRecord* r, PinOutcome outcome, PinBudget* budget) {
  if (r->state != PinRecord::State::Registering) return;
  switch (outcome) {
    case PinOutcome::Registered:
      r->state = PinRecord::State::Registered;
      budget->registrations++;
      return;
    case PinOutcome::AlreadyPinned:
      r->state = PinRecord::State::AlreadyPinned;
      break;
    case PinOutcome::Failed:
      r->state = PinRecord::State::Refused;
      break;
  }
  budget->registered -= r->bytes;
  r->bytes = 0;
  r->owner = 0;
}

bool on_freed(PinRecord* r, PinBudget* owner_budget) {
  const bool undo = r->state == PinRecord::State::Registered;
  if (undo && owner_budget) owner_budget->registered -= r->bytes;
  r->state = PinRecord::State::Refused;  // never used again
  r->bytes = 0;
  return undo;
}

}  // namespace cs_gst
