#include "upload_ahead.h"

#include <algorithm>
#include <string>

#include "cuda_context_scope.h"
#include "cuda_memory.h"
#include "engine_factory.h"
#include "geometry.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

GST_DEBUG_CATEGORY_EXTERN(gst_cuda_stereo_debug);
#define GST_CAT_DEFAULT gst_cuda_stereo_debug

namespace cs_gst {

void UploadsAhead::start(cs::Engine* engine, gpointer cuda_context) {
  std::unique_lock<std::shared_mutex> guard(engine_lock_);
  engine_ = engine;
  context_ = cuda_context;
}

void UploadsAhead::stop() {
  std::unique_lock<std::shared_mutex> guard(engine_lock_);
  std::vector<Upload> done;
  {
    std::lock_guard<std::mutex> uploads_guard(uploads_lock_);
    done.swap(uploads_);
  }
  release_locked(done);
  engine_ = nullptr;
  context_ = nullptr;
}

// Gives uploads that will not be processed back to the engine (which waits
// for their DMA) and drops their buffers. engine_lock_ must be held.
void UploadsAhead::release_locked(std::vector<Upload>& done) {
  if (done.empty()) return;
  if (engine_) {
    CudaContextScope cuda_scope(context_);
    for (const Upload& u : done) release_upload(engine_, u.device);
  }
  for (Upload& u : done) gst_buffer_unref(u.buffer);
  done.clear();
}

// Moves the uploads `leaving` picks from the table (uploads_lock_ held) to *out.
template <typename Pick>
void UploadsAhead::move_uploads(std::vector<Upload>& table, Pick leaving, std::vector<Upload>* out) {
  std::vector<Upload> kept;
  for (const Upload& u : table) (leaving(u) ? *out : kept).push_back(u);
  table.swap(kept);
}

void UploadsAhead::drop(GstPad* pad) {
  std::shared_lock<std::shared_mutex> engine_guard(engine_lock_);
  std::vector<Upload> done;
  {
    std::lock_guard<std::mutex> guard(uploads_lock_);
    move_uploads(uploads_, [pad](const Upload& u) { return !pad || u.pad == pad; }, &done);
  }
  release_locked(done);
}

// The buffer probe of every sink pad: in the upstream thread, before the
// aggregator queues the buffer, a system-memory frame starts its way to the
// GPU (pageable planes are copied to pinned staging here, then DMA'd on the
// engine's upload stream). Never waits for the GPU; whatever it cannot do
// (no slot free, CUDA memory, an odd buffer) aggregate does as before.
GstPadProbeReturn UploadsAhead::probe(GstPad* pad, GstPadProbeInfo* info, gpointer user_data) {
  UploadsAhead* self = static_cast<UploadsAhead*>(user_data);
  GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buf || gst_buffer_get_size(buf) == 0) return GST_PAD_PROBE_OK;
  std::shared_lock<std::shared_mutex> engine_guard(self->engine_lock_);
  if (!self->engine_) return GST_PAD_PROBE_OK;
#if HAVE_GST_CUDA
  for (guint i = 0; i < gst_buffer_n_memory(buf); ++i)
    if (gst_is_cuda_memory(gst_buffer_peek_memory(buf, i))) return GST_PAD_PROBE_OK;
#endif
  GstCaps* caps = gst_pad_get_current_caps(pad);
  if (!caps) return GST_PAD_PROBE_OK;
  GstVideoInfo vinfo;
  bool usable = gst_video_info_from_caps(&vinfo, caps);
#if HAVE_GST_CUDA
  usable = usable && !caps_have_cuda_memory(caps);
#endif
  gst_caps_unref(caps);
  // The element's map_input checks: a buffer it would refuse is left to it.
  if (!usable || (!gst_buffer_get_video_meta(buf) && gst_buffer_get_size(buf) < GST_VIDEO_INFO_SIZE(&vinfo)))
    return GST_PAD_PROBE_OK;
  {
    std::lock_guard<std::mutex> guard(self->uploads_lock_);
    for (const Upload& u : self->uploads_)
      if (u.buffer == buf && u.pad == pad) return GST_PAD_PROBE_OK;  // the same buffer pushed again
  }
  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &vinfo, buf, GST_MAP_READ)) return GST_PAD_PROBE_OK;
  Upload u;
  std::string error;
  if (whole_frame_view(frame, false, &u.host)) {
    CudaContextScope cuda_scope(self->context_);
    error = upload_ahead(self->engine_, u.host, &u.device);
  } else {
    error = "format not taken";
  }
  gst_video_frame_unmap(&frame);
  if (!error.empty()) {
    GST_LOG_OBJECT(pad, "no upload ahead: %s", error.c_str());
    return GST_PAD_PROBE_OK;
  }
  u.buffer = gst_buffer_ref(buf);
  u.pad = pad;
  std::lock_guard<std::mutex> guard(self->uploads_lock_);
  u.sequence = ++self->sequence_;
  self->uploads_.push_back(u);
  return GST_PAD_PROBE_OK;
}

void UploadsAhead::add_probe(GstPad* pad) {
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, probe, this, nullptr);
}

UploadsAhead::Taken::Taken(UploadsAhead* uploads, GstPad* pad, GstBuffer* buf) : uploads_(uploads) {
  if (!buf) return;
  std::vector<Upload> stale;
  {
    std::lock_guard<std::mutex> guard(uploads->uploads_lock_);
    auto it = std::find_if(uploads->uploads_.begin(), uploads->uploads_.end(),
                           [&](const Upload& u) { return u.buffer == buf && u.pad == pad; });
    if (it == uploads->uploads_.end()) return;
    upload_ = *it;
    have_ = true;
    uploads->uploads_.erase(it);
    // A pad's buffers leave in arrival order: older uploads of this pad
    // belong to buffers that went without aggregate (a flush, a drop).
    move_uploads(
        uploads->uploads_, [&](const Upload& u) { return u.pad == upload_.pad && u.sequence < upload_.sequence; },
        &stale);
  }
  if (!stale.empty()) {
    std::shared_lock<std::shared_mutex> engine_guard(uploads->engine_lock_);
    uploads->release_locked(stale);
  }
}

UploadsAhead::Taken::~Taken() {
  if (!have_) return;
  std::vector<Upload> done{upload_};
  if (taken_) {
    gst_buffer_unref(upload_.buffer);
    return;
  }
  std::shared_lock<std::shared_mutex> engine_guard(uploads_->engine_lock_);
  uploads_->release_locked(done);
}

bool UploadsAhead::Taken::device_copy_of(const GstVideoFrame& frame, cs::FrameView* whole) const {
  cs::FrameView mapped;
  if (!have_ || !whole_frame_view(frame, false, &mapped) || !same_picture(mapped, upload_.host)) return false;
  *whole = upload_.device;
  return true;
}

}  // namespace cs_gst
