#include "host_pin.h"

#include <atomic>
#include <mutex>
#include <string>

#include "cuda_context_scope.h"
#include "engine_factory.h"
#include "pin_rules.h"
#include "pinned_allocator.h"

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_stereo_debug);
#define GST_CAT_DEFAULT gst_cuda_stereo_debug
// Per-frame and per-sighting diagnostics (HostPins::log_upload).
GST_DEBUG_CATEGORY_STATIC(pin_debug);

namespace cs_gst {

struct HostPins::Ledger {
  uint64_t id = 0;   // the element, as the records' seen_by and owner name it
  PinBudget budget;  // under pin_lock()
};

namespace {

// One lock for every record and every element's budget: a record may be
// shared by elements (a tee into two of them), and each call under the lock
// is a few comparisons (never a CUDA call).
std::mutex& pin_lock() {
  static std::mutex lock;
  return lock;
}

GQuark pin_quark() {
  static const GQuark quark = g_quark_from_static_string("cudastereo-pin-in-place");
  return quark;
}

// The qdata of a root GstMemory (shares of it point at its data and hold a
// reference to it, so the root outlives them).
struct MemoryPin {
  PinRecord rules;
  const void* memory = nullptr;              // the GstMemory, for the diagnostics only
  std::shared_ptr<HostPins::Ledger> owner;  // the element that registered it
  GstObject* context = nullptr;              // the GstCudaContext it was registered in (a reference)
  void* base = nullptr;                      // the registered range's start
};

// The record's destroy notify: undoes the registration before the memory's
// data goes. GStreamer runs qdata destroy notifies before a mini object's
// free function. In 1.22 (gst/gstminiobject.c), gst_mini_object_unref(), once
// the count reaches 0 and dispose did not revive the object, calls
// free_priv_data(), which calls every qdata's destroy notify, and only then
// mini_object->free(); a GstMemory's free is _gst_memory_free()
// (gst/gstmemory.c), which hands it to its allocator's free (for system
// memory _sysmem_free(), which releases the data, and for wrapped memory
// then calls the wrapper's own notify). gst_mini_object_set_qdata()'s
// documentation says the same: destroy "is called with data as argument
// when the object is disposed". tests/gst/test_pin_rules.cpp checks this
// order on the GStreamer the plugin is built against, and that a buffer
// pool hands back the same GstMemory with its qdata.
const char* state_name(PinRecord::State s) {
  switch (s) {
    case PinRecord::State::Seen:
      return "seen";
    case PinRecord::State::Registering:
      return "registering";
    case PinRecord::State::Registered:
      return "registered";
    case PinRecord::State::AlreadyPinned:
      return "already-pinned";
    case PinRecord::State::Refused:
      return "refused";
  }
  return "?";
}

bool diagnosing() { return pin_debug && gst_debug_category_get_threshold(pin_debug) >= GST_LEVEL_DEBUG; }

GstClockTime pts_ns(GstBuffer* buf) { return buf ? GST_BUFFER_PTS(buf) : GST_CLOCK_TIME_NONE; }

void forget_memory(gpointer data) {
  auto* pin = static_cast<MemoryPin*>(data);
  bool undo;
  {
    std::lock_guard<std::mutex> guard(pin_lock());
    undo = on_freed(&pin->rules, pin->owner ? &pin->owner->budget : nullptr);
  }
  if (undo) {
    std::string why;
    bool undone;
    {
      CudaContextScope scope(pin->context);
      undone = unregister_host_memory(pin->base, &why);
    }
    if (undone) {
      std::lock_guard<std::mutex> guard(pin_lock());
      pin->owner->budget.unregistrations++;
    } else {
      GST_WARNING("memory at %p stays page-locked after it is freed: %s", pin->base, why.c_str());
    }
    GST_CAT_DEBUG(pin_debug, "freed memory=%p base=%p unregistered=%d", pin->memory, pin->base, undone ? 1 : 0);
  } else {
    GST_CAT_DEBUG(pin_debug, "freed memory=%p (not registered by an element)", pin->memory);
  }
  if (pin->context) gst_object_unref(pin->context);
  delete pin;
}

}  // namespace

HostPins::HostPins() : ledger_(std::make_shared<Ledger>()) {
  static std::once_flag debug_once;
  std::call_once(debug_once, [] {
    GST_DEBUG_CATEGORY_INIT(pin_debug, "cudastereopin", 0, "cudastereo pin in place: per-frame diagnostics");
  });
  static std::atomic<uint64_t> next_id{1};
  ledger_->id = next_id++;
}

HostPins::~HostPins() { stop(); }

void HostPins::start(gpointer cuda_context) {
  std::unique_lock<std::shared_mutex> guard(lock_);
  gst_clear_object(&context_);
  if (cuda_context) context_ = GST_OBJECT(gst_object_ref(cuda_context));
}

void HostPins::stop() { start(nullptr); }

void HostPins::add_probe(GstPad* pad) { gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, probe, this, nullptr); }

GstPadProbeReturn HostPins::probe(GstPad* pad, GstPadProbeInfo* info, gpointer user_data) {
  auto* self = static_cast<HostPins*>(user_data);
  GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buf) return GST_PAD_PROBE_OK;
  std::shared_lock<std::shared_mutex> guard(self->lock_);
  if (!self->context_) return GST_PAD_PROBE_OK;
  for (guint i = 0; i < gst_buffer_n_memory(buf); ++i) self->see(pad, buf, gst_buffer_peek_memory(buf, i));
  return GST_PAD_PROBE_OK;
}

// One sighting of `mem` (its buffer, hence the memory, is alive meanwhile).
// lock_ is held shared and context_ is set.
void HostPins::see(GstPad* pad, GstBuffer* buf, GstMemory* mem) {
  while (mem->parent) mem = mem->parent;
  if (!gst_memory_is_type(mem, GST_ALLOCATOR_SYSMEM)) return;
  const size_t bytes = mem->maxsize;
  MemoryPin* pin;
  PinStep step;
  PinRecord::State before, after;
  bool fresh = false;
  {
    std::lock_guard<std::mutex> guard(pin_lock());
    pin = static_cast<MemoryPin*>(gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(mem), pin_quark()));
    if (!pin) {
      pin = new MemoryPin();
      pin->memory = mem;
      fresh = true;
      gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), pin_quark(), pin, forget_memory);
    }
    before = pin->rules.state;
    step = on_sighting(&pin->rules, ledger_->id, bytes, &ledger_->budget);
    after = pin->rules.state;
  }
  GST_CAT_DEBUG_OBJECT(pin_debug, pad,
                       "sighting pts=%" G_GUINT64_FORMAT " buffer=%p memory=%p record=%s%s->%s step=%s element=%" G_GUINT64_FORMAT,
                       static_cast<guint64>(pts_ns(buf)), buf, mem, fresh ? "new," : "", state_name(before),
                       state_name(after),
                       step == PinStep::Register ? "register" : step == PinStep::OverCap ? "over-cap" : "none",
                       static_cast<guint64>(ledger_->id));
  if (step == PinStep::OverCap) {
    GST_LOG_OBJECT(pad,
                   "memory %p (%" G_GSIZE_FORMAT " bytes) seen again, not page-locked: the element holds its cap of "
                   "%" G_GSIZE_FORMAT " bytes",
                   mem, static_cast<gsize>(bytes), static_cast<gsize>(kMaxPinnedInPlaceBytes));
    return;
  }
  if (step != PinStep::Register) return;

  // The whole allocation, from its start (the data before the memory's
  // offset included): every plane of every buffer that shares it lies inside.
  PinOutcome outcome = PinOutcome::Failed;
  std::string why;
  void* base = nullptr;
  GstMapInfo map;
  if (gst_memory_map(mem, &map, GST_MAP_READ)) {
    base = map.data - mem->offset;
    gst_memory_unmap(mem, &map);
    const char* last = static_cast<const char*>(base) + bytes - 1;
    CudaContextScope scope(context_);
    if (host_memory_pinned(base) && host_memory_pinned(last)) {
      outcome = PinOutcome::AlreadyPinned;
    } else {
      switch (register_host_memory(base, bytes, &why)) {
        case HostRegistration::Registered:
          outcome = PinOutcome::Registered;
          break;
        case HostRegistration::AlreadyPinned:
          outcome = PinOutcome::AlreadyPinned;
          break;
        case HostRegistration::Failed:
          break;
      }
    }
  } else {
    why = "it cannot be mapped for reading";
  }
  {
    std::lock_guard<std::mutex> guard(pin_lock());
    on_registered(&pin->rules, outcome, &ledger_->budget);
    if (outcome == PinOutcome::Registered) {
      pin->owner = ledger_;
      pin->context = GST_OBJECT(gst_object_ref(context_));
      pin->base = base;
    }
  }
  GST_CAT_DEBUG_OBJECT(pin_debug, pad,
                       "registration pts=%" G_GUINT64_FORMAT " memory=%p base=%p bytes=%" G_GSIZE_FORMAT
                       " outcome=%s first-byte=%d last-byte=%d",
                       static_cast<guint64>(pts_ns(buf)), mem, base, static_cast<gsize>(bytes),
                       outcome == PinOutcome::Registered      ? "registered"
                       : outcome == PinOutcome::AlreadyPinned ? "already-pinned"
                                                              : "failed",
                       diagnosing() && base ? static_cast<int>(host_memory_pinned(base)) : -1,
                       diagnosing() && base ? static_cast<int>(host_memory_pinned(static_cast<const char*>(base) + bytes - 1))
                                            : -1);
  switch (outcome) {
    case PinOutcome::Registered:
      GST_DEBUG_OBJECT(pad, "memory %p seen again: its %" G_GSIZE_FORMAT " bytes at %p page-locked in place", mem,
                       static_cast<gsize>(bytes), base);
      break;
    case PinOutcome::AlreadyPinned:
      GST_DEBUG_OBJECT(pad, "memory %p seen again: its %" G_GSIZE_FORMAT " bytes at %p are page-locked already", mem,
                       static_cast<gsize>(bytes), base);
      break;
    case PinOutcome::Failed:
      GST_DEBUG_OBJECT(pad,
                       "memory %p (%" G_GSIZE_FORMAT " bytes at %p) cannot be page-locked; its frames are gathered: %s",
                       mem, static_cast<gsize>(bytes), base, why.c_str());
      break;
  }
}

HostPins::Counts HostPins::counts() const {
  std::lock_guard<std::mutex> guard(pin_lock());
  Counts c;
  c.registered_bytes = ledger_->budget.registered;
  c.registrations = ledger_->budget.registrations;
  c.unregistrations = ledger_->budget.unregistrations;
  return c;
}

HostPins::Upload HostPins::upload_of(const GstVideoFrame& frame) {
  const guint n = gst_buffer_n_memory(frame.buffer);
  bool pool = n > 0;
  for (guint i = 0; i < n && pool; ++i)
    pool = gst_cuda_stereo_is_pinned_memory(gst_buffer_peek_memory(frame.buffer, i));
  if (pool) return Upload::PinnedPool;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p)
    if (!host_memory_pinned(GST_VIDEO_FRAME_PLANE_DATA(&frame, p))) return Upload::Gathered;
  return Upload::PinnedInPlace;
}

void HostPins::log_upload(GstObject* element, const GstVideoFrame& frame, Upload how) {
  if (!diagnosing()) return;
  GstMemory* mem = gst_buffer_n_memory(frame.buffer) > 0 ? gst_buffer_peek_memory(frame.buffer, 0) : nullptr;
  while (mem && mem->parent) mem = mem->parent;
  const char* state = "none";
  if (mem) {
    std::lock_guard<std::mutex> guard(pin_lock());
    if (auto* pin = static_cast<MemoryPin*>(gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(mem), pin_quark())))
      state = state_name(pin->rules.state);
  }
  const auto* data = static_cast<const char*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  const size_t last = GST_VIDEO_FRAME_SIZE(&frame) > 0 ? GST_VIDEO_FRAME_SIZE(&frame) - 1 : 0;
  GST_CAT_DEBUG_OBJECT(pin_debug, element,
                       "frame pts=%" G_GUINT64_FORMAT " buffer=%p memory=%p data=%p record=%s first-byte=%d "
                       "last-byte=%d upload=%s",
                       static_cast<guint64>(pts_ns(frame.buffer)), frame.buffer, mem, data, state,
                       static_cast<int>(host_memory_pinned(data)), static_cast<int>(host_memory_pinned(data + last)),
                       how == Upload::PinnedPool      ? "pinned-pool"
                       : how == Upload::PinnedInPlace ? "pinned-in-place"
                                                      : "gathered");
}

}  // namespace cs_gst
