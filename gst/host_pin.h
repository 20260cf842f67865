// Pin in place (issue 16, item 1): plain system memory that upstream hands
// the element again and again (buffer pools recycle their memory:
// videoconvert, v4l2src, appsrc with a pool, imagefreeze's copies of one
// buffer) is page-locked where it lies, once (cudaHostRegister), so the CUDA
// engine moves its frames to the GPU by DMA (its is_pinned() test says yes)
// instead of gathering them into its staging area on CPU threads.
//
// A buffer probe on each sink pad, added before the upload-ahead probe
// (GStreamer calls a pad's probes in the order they were added:
// gst_pad_add_probe appends its hook with g_hook_append), shows every
// arriving buffer's memory to the rules of pin_rules.h: a GstMemory gets a
// record (qdata) on its first sighting and is registered, in the element's
// CUDA context, on its second. The registration then belongs to the memory,
// not to the element: the record's destroy notify unregisters it when the
// memory is freed, whenever and on whichever thread that is, in the same
// context (the record holds a reference to it: registered memory stays
// page-locked only while its context lives).
//
// Only memory of GStreamer's system allocator (GST_ALLOCATOR_SYSMEM) is
// registered: its data stays at one address from allocation to free, which
// a registration needs. Other mappable memory may map at another address
// each time or unmap after use (GstFdMemory unmaps on its last unmap unless
// kept mapped; VA and GL memory map through copies), and a registration
// left on an address that was unmapped would have the GPU read whatever
// pages come there next. CUDA memory and the element's own pinned pool need
// nothing. Memory registered by someone else counts as pinned and is left
// alone; memory whose registration fails is gathered, as before, for good.
//
// The GPU reads pinned planes by DMA after the element handed them to the
// engine. The element already keeps every input buffer until the engine is
// done with its frame (InputHold in pending.h, released by produce.cpp after
// the engine's finish(); an upload ahead's buffer until the engine took the
// upload or gave it back, upload_ahead.cpp), as its own pinned pool needs:
// so memory pinned in place is neither freed, nor back in its pool to be
// rewritten, while the GPU reads it.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <memory>
#include <shared_mutex>

namespace cs_gst {

class HostPins {
 public:
  HostPins();
  ~HostPins();
  HostPins(const HostPins&) = delete;
  HostPins& operator=(const HostPins&) = delete;

  // start: from now on the probes pin memory in `cuda_context` (the
  // GstCudaContext the CUDA engine runs in; a reference is taken; null:
  // nothing is pinned). stop: the probes stop pinning; what was registered
  // stays registered until its memory is freed.
  void start(gpointer cuda_context);
  void stop();
  void add_probe(GstPad* pad);

  // This element's registrations since it was made (they outlive its runs):
  // bytes registered now, registrations and unregistrations so far.
  struct Counts {
    uint64_t registered_bytes = 0;
    uint64_t registrations = 0;
    uint64_t unregistrations = 0;
  };
  Counts counts() const;

  // How the planes of a host frame (mapped) go to the GPU, by the engine's
  // own test of each plane (pinned or not): from the element's pinned pool,
  // by DMA from pinned memory elsewhere (registered in place, by us or by
  // someone else), or gathered through the engine's staging area.
  enum class Upload { PinnedPool, PinnedInPlace, Gathered };
  static Upload upload_of(const GstVideoFrame& frame);

  // Diagnostics (debug category "cudastereopin", level DEBUG; nothing is
  // done below that level): one line per classified host frame, with its
  // buffer, memory, record state and what the driver says of the first and
  // last byte of its plane; the probes' sightings and the records' ends log
  // their own lines. tests/gst/test_host_pin_cuda.cpp prints them when a
  // count differs.
  static void log_upload(GstObject* element, const GstVideoFrame& frame, Upload how);

  struct Ledger;  // an element's budget, shared with the records of what it registered

 private:
  static GstPadProbeReturn probe(GstPad* pad, GstPadProbeInfo* info, gpointer user_data);
  void see(GstPad* pad, GstBuffer* buf, GstMemory* mem);

  std::shared_mutex lock_;  // held shared by probes, exclusively by start/stop
  GstObject* context_ = nullptr;
  std::shared_ptr<Ledger> ledger_;
};

}  // namespace cs_gst
