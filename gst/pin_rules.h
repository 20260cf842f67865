// Pin in place (issue 16, item 1) as plain bookkeeping: which host memory an
// element page-locks where it lies, when, and how much. No GStreamer types
// and no CUDA calls: gst/host_pin.cpp keeps one PinRecord per piece of
// memory (GstMemory qdata) and one PinBudget per element, holds one lock
// around every call here, and turns the answers into cudaHostRegister and
// cudaHostUnregister calls; tests/gst/test_pin_rules.cpp checks the rules.
//
// The rules: memory is registered on its second sighting by the same
// element, never on its first, so memory used once (a buffer allocated per
// frame) never pays for a registration (milliseconds for a 16 MB frame);
// memory that comes back (buffer pools recycle it) pays once and is moved
// by DMA from then on. An element keeps at most kMaxPinnedInPlaceBytes
// registered; memory past that is gathered as before, and may be registered
// on a later sighting once memory registered earlier was freed. Memory whose
// registration failed is never tried again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cs_gst {

// The most bytes one element keeps page-locked in place: 512 MiB, about 30
// frames of 3840 x 1080 RGBA (two 1080p views side by side), more than the
// pools of a pipeline's sources hold, and a bound on what a source that
// hands over ever new memory could make the element lock.
inline constexpr size_t kMaxPinnedInPlaceBytes = size_t{512} << 20;

// One element's registrations.
struct PinBudget {
  size_t cap = kMaxPinnedInPlaceBytes;
  size_t registered = 0;        // bytes registered, and being registered, now
  uint64_t registrations = 0;   // successful registrations so far
  uint64_t unregistrations = 0; // successful unregistrations so far (host_pin.cpp counts them)
};

// One piece of memory.
struct PinRecord {
  enum class State {
    Seen,           // pageable; the elements in seen_by have seen it
    Registering,    // `owner` is registering it now
    Registered,     // page-locked by `owner`: undone when the memory is freed
    AlreadyPinned,  // page-locked by someone else: not ours to undo
    Refused,        // its registration failed: gathered from now on
  };
  static constexpr size_t kMaxSeenBy = 8;  // elements remembered (the oldest go first)

  State state = State::Seen;
  std::vector<uint64_t> seen_by;  // elements that saw it while Seen
  uint64_t owner = 0;             // the element registering or that registered it
  size_t bytes = 0;               // bytes registering or registered
};

enum class PinStep { None, Register, OverCap };

// Element `element`, whose budget is `budget`, sees the memory (`bytes`
// long). Register: the element registers it now; the record is Registering
// and the bytes count in the budget until on_registered says otherwise.
// OverCap: it would register it, but that would take the element past its
// cap; the memory stays Seen. None: nothing to do (a first sighting by this
// element, noted; memory registered, pinned or refused already, or being
// registered).
PinStep on_sighting(PinRecord* r, uint64_t element, size_t bytes, PinBudget* budget);

enum class PinOutcome { Registered, AlreadyPinned, Failed };

// The outcome of the registration on_sighting asked for. `budget`: the
// registering element's.
void on_registered(PinRecord* r, PinOutcome outcome, PinBudget* budget);

// The memory is being freed. True when its registration must be undone
// (by the element whose budget `owner_budget` is: its bytes are released
// here); the record is done with either way.
bool on_freed(PinRecord* r, PinBudget* owner_budget);

}  // namespace cs_gst
