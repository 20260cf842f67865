// The engine's frame calls (cuda_engine.h): process(), enqueue() (and the
// lane of two sets of frames in flight it takes), submit() and finish().
#include <climits>
#include <cstring>

#include "engine_impl.h"
#include "frame_checks.h"

namespace cs::cuda {

std::string CudaEngine::process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                const OutputFrame& out) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  std::string e = check_output_frame(out, left.width, left.height, encode);
  if (!e.empty()) return e;
  const int bpp = output_bytes_per_pixel(encode.format);
  if (out.memory == Memory::Device) {
    e = enqueue_here(left, right, encode, out, nullptr);
    if (e.empty()) frame_queued(this);
    return e.empty() ? synchronize() : e;
  }
  e = check_encode_params(encode);
  if (e.empty() && encode.format == OutputFormat::Confidence) e = m.confidence_problem();
  if (!e.empty()) return e;
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(out.width) * bpp;
  if (m.encoded.view().width != row || m.encoded.view().height != out.height) {
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));  // a queued frame may still write it
    CS_CUDA_TRY(m.encoded.allocate(static_cast<int>(row), out.height));
  }
  e = m.run_frame(left, right, nullptr,
                  m.output_to(encode, m.encoded.view().data, m.encoded.view().pitch, out.width, out.height));
  if (!e.empty()) return e;
  frame_queued(this);
  e = m.encode_confidence(encode, m.encoded.view().data, m.encoded.view().pitch);
  if (!e.empty()) return e;
  // A pinned output (the element's own pool) takes the frame by DMA; the one
  // synchronisation of the frame follows, since the caller reads it next.
  if (is_pinned(out.data)) {
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.pitch, m.encoded.view().data, m.encoded.view().pitch, row, out.height,
                                  cudaMemcpyDeviceToHost, m.stream));
    CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
    return {};
  }
  // Host inputs used the staging area; it is free again once the upload ran,
  // which stream order guarantees before this download.
  e = m.staging.ensure(static_cast<size_t>(row) * out.height, m.stream);
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaMemcpy2DAsync(m.staging.host(), row, m.encoded.view().data, m.encoded.view().pitch, row, out.height,
                                cudaMemcpyDeviceToHost, m.stream));
  CS_CUDA_TRY(cudaStreamSynchronize(m.stream));
  for (int y = 0; y < out.height; ++y) std::memcpy(out.data + y * out.pitch, m.staging.host() + y * row, row);
  return {};
}

CudaEngine* CudaEngine::lane_for(const FrameView& left, const FrameView& right, cudaStream_t stream) {
  Impl& m = *impl_;
  if (!m.twin || stream || left.memory != Memory::Device || right.memory != Memory::Device)
    return this;
  if (m.uploads.holds(left.plane[0]) || m.uploads.holds(right.plane[0])) return this;
  CudaEngine* lane = m.next_on_twin ? m.twin.get() : this;
  m.next_on_twin = !m.next_on_twin;
  return lane;
}

void CudaEngine::frame_queued(const CudaEngine* lane) {
  Impl& m = *impl_;
  if (!m.twin) return;
  m.last_on_twin = lane != this;
  lane->impl_->pending.frame_index = ++m.frames_queued;
}

const CudaEngine& CudaEngine::last_lane() const { return impl_->last_on_twin ? *impl_->twin : *this; }

std::string CudaEngine::enqueue(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                const OutputFrame& out, cudaStream_t stream) {
  CudaEngine* lane = lane_for(left, right, stream);
  const std::string e = lane->enqueue_here(left, right, encode, out, stream);
  if (e.empty()) frame_queued(lane);
  return e;
}

std::string CudaEngine::enqueue(const FrameView& left, const FrameView& right, const Outputs& out,
                                cudaStream_t stream) {
  CudaEngine* lane = lane_for(left, right, stream);
  const std::string e = lane->enqueue_here(left, right, out, stream);
  if (e.empty()) frame_queued(lane);
  return e;
}

std::string CudaEngine::enqueue_here(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                                     const OutputFrame& out, cudaStream_t stream) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  if (left.memory != Memory::Device || right.memory != Memory::Device)
    return "enqueue() takes views in device memory; use process() for host memory";
  if (out.memory != Memory::Device) return "enqueue() writes device memory; use process() for a host output";
  std::string e = check_output_frame(out, left.width, left.height, encode);
  if (!e.empty()) return e;
  const int bpp = output_bytes_per_pixel(encode.format);
  if (bpp > 1 && ((reinterpret_cast<uintptr_t>(out.data) | static_cast<uintptr_t>(out.pitch)) % bpp) != 0)
    return "the output frame's address and pitch must be multiples of its pixel size";
  e = check_encode_params(encode);
  if (e.empty() && encode.format == OutputFormat::Confidence) e = m.confidence_problem();
  if (e.empty())
    e = m.run_frame(left, right, stream, m.output_to(encode, out.data, out.pitch, out.width, out.height));
  if (e.empty()) e = m.encode_confidence(encode, out.data, out.pitch);
  if (!e.empty()) return e;
  e = m.after_output();
  return e.empty() ? m.finish_caller(stream) : e;
}

std::string CudaEngine::enqueue_here(const FrameView& left, const FrameView& right, const Outputs& out,
                                     cudaStream_t stream) {
  Impl& m = *impl_;
  const Impl::FrameSlots upload_slots(m, left, right);
  if (left.memory != Memory::Device || right.memory != Memory::Device)
    return "enqueue() takes views in device memory; use process() for host memory";
  if (out.memory != Memory::Device) return "enqueue() writes device memory; the outputs are host views";
  if (out.disparity_q4.data && (out.disparity_q4.width != left.width || out.disparity_q4.height != left.height))
    return "the disparity output's size differs from the views'";
  if (out.foreground.data && (out.foreground.width != left.width || out.foreground.height != left.height))
    return "the foreground output's size differs from the views'";
  if (out.confidence.data && (out.confidence.width != left.width || out.confidence.height != left.height))
    return "the confidence output's size differs from the views'";
  std::string e = out.confidence.data ? m.confidence_problem() : std::string();
  // The finish writes the Q4 map straight into the caller's.
  FrameOutput o;
  o.q4 = out.disparity_q4;
  if (e.empty()) e = m.run_frame(left, right, stream, o);
  if (e.empty()) e = m.before_output();
  if (!e.empty()) return e;
  if (out.foreground.data) {
    const ImageView<const uint8_t> f = m.foreground_view();
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.foreground.data, out.foreground.pitch, f.data, f.pitch, left.width, left.height,
                                  cudaMemcpyDeviceToDevice, m.stream));
  }
  if (out.confidence.data)
    CS_CUDA_TRY(cudaMemcpy2DAsync(out.confidence.data, out.confidence.pitch, m.confidence.view().data,
                                  m.confidence.view().pitch, left.width, left.height, cudaMemcpyDeviceToDevice,
                                  m.stream));
  e = m.after_output();
  return e.empty() ? m.finish_caller(stream) : e;
}

std::string CudaEngine::synchronize() {
  std::string e = impl_->ensure_device();
  if (!e.empty()) return e;
  CS_CUDA_TRY(cudaStreamSynchronize(impl_->stream));
  if (impl_->copy_stream) CS_CUDA_TRY(cudaStreamSynchronize(impl_->copy_stream));
  return impl_->twin ? impl_->twin->synchronize() : std::string();
}

std::string CudaEngine::submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                               const OutputFrame& out) {
  Impl& m = *impl_;
  const bool device_out = out.memory == Memory::Device && left.memory == Memory::Device;
  const bool pinned_out = out.memory == Memory::Host && is_pinned(out.data);
  if (!device_out && !pinned_out) {
    // process() waits for the stream, so for every frame queued before too.
    Impl::Submitted s;
    s.ran = true;
    s.result.error = process(left, right, encode, out);
    if (s.result.error.empty()) s.result.stats = stats();
    m.submitted.push_back(std::move(s));
    return {};
  }
  std::string e = m.ensure_device();
  if (!e.empty()) return e;
  // With two sets of frames in flight, the set that runs the frame (views
  // in device memory alternate, as enqueue()'s); its record stays in this
  // set's queue, so that frames finish in submit order.
  CudaEngine* lane = lane_for(left, right, nullptr);
  Impl& L = *lane->impl_;
  // Pageable planes are gathered into the one staging area: the frames in
  // flight that went up through it must have done so.
  bool staged = false;
  if (left.memory == Memory::Host) {
    const int planes = plane_shape(left).count;
    for (const FrameView* v : {&left, &right})
      for (int i = 0; i < planes; ++i) staged = staged || !is_pinned(v->plane[i]);
  }
  if (staged)
    for (const Impl::Submitted& s : m.submitted)
      if (s.staged) CS_CUDA_TRY(cudaEventSynchronize(s.done));
  Impl::Submitted s;
  s.staged = staged;
  s.width = left.width;
  s.height = left.height;
  if (m.spare_events.empty()) {
    CS_CUDA_TRY(cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync | cudaEventDisableTiming));
  } else {
    s.done = m.spare_events.back();
    m.spare_events.pop_back();
  }
  if (m.spare_counters.empty()) {
    const cudaError_t err = cudaMallocHost(&s.counters, sizeof(FrameCounters));
    if (err != cudaSuccess) {
      m.spare_events.push_back(s.done);
      return cuda_error_text(err, "cudaMallocHost(counters)", __FILE__, __LINE__);
    }
  } else {
    s.counters = m.spare_counters.back();
    m.spare_counters.pop_back();
  }
  auto give_back = [&] {
    m.spare_events.push_back(s.done);
    m.spare_counters.push_back(s.counters);
  };
  cudaStream_t done_on = L.stream;  // where the frame's last work is queued
  if (device_out) {
    e = lane->enqueue_here(left, right, encode, out, nullptr);
    if (e.empty()) frame_queued(lane);
  } else {
    // As process() with a pinned output, without its wait.
    const Impl::FrameSlots upload_slots(L, left, right);
    e = check_output_frame(out, left.width, left.height, encode);
    if (e.empty()) e = check_encode_params(encode);
    if (e.empty() && encode.format == OutputFormat::Confidence) e = L.confidence_problem();
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(out.width) * output_bytes_per_pixel(encode.format);
    // Encoded by the finish into one of two buffers, copied down on
    // copy_stream: the copy overlaps the next frame's kernels (about 0.2 ms
    // of 4 MB a 1080p GRAY16 frame). A buffer is written again once its
    // last copy is done (ring_copied, waited for before the finish).
    if (e.empty()) e = L.ensure_copy_stream();
    const int k = L.ring_next;
    DeviceImage<uint8_t>& enc = L.encoded_ring[k];
    if (e.empty()) e = [&]() -> std::string {
      L.ring_next ^= 1;
      if (enc.view().width != row || enc.view().height != out.height) {
        CS_CUDA_TRY(cudaStreamSynchronize(L.copy_stream));  // an earlier copy may still read it
        CS_CUDA_TRY(enc.allocate(static_cast<int>(row), out.height));
      }
      return {};
    }();
    if (e.empty()) {
      FrameOutput o = L.output_to(encode, enc.view().data, enc.view().pitch, out.width, out.height);
      o.wait_before = L.ring_copied[k];
      e = L.run_frame(left, right, nullptr, o);
    }
    if (e.empty()) {
      frame_queued(lane);
      e = L.encode_confidence(encode, enc.view().data, enc.view().pitch);
      if (e.empty()) e = [&]() -> std::string {
        // The counts on the stream, before the next frame's conversion zeroes them.
        CS_CUDA_TRY(cudaMemcpyAsync(s.counters, L.counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, L.stream));
        CS_CUDA_TRY(cudaEventRecord(L.ev_encoded, L.stream));
        CS_CUDA_TRY(cudaStreamWaitEvent(L.copy_stream, L.ev_encoded, 0));
        // Copies into the caller's memory in submit order across both sets.
        if (L.peer && L.peer->copy_recorded) CS_CUDA_TRY(cudaStreamWaitEvent(L.copy_stream, L.peer->ev_copied, 0));
        CS_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.pitch, enc.view().data, enc.view().pitch, row, out.height,
                                      cudaMemcpyDeviceToHost, L.copy_stream));
        CS_CUDA_TRY(cudaEventRecord(L.ring_copied[k], L.copy_stream));
        if (L.peer) {
          CS_CUDA_TRY(cudaEventRecord(L.ev_copied, L.copy_stream));
          L.copy_recorded = true;
        }
        done_on = L.copy_stream;
        return {};
      }();
    }
  }
  if (e.empty()) {
    e = [&]() -> std::string {
      // A frame copied down on copy_stream has its counters copied already.
      if (done_on == L.stream)
        CS_CUDA_TRY(cudaMemcpyAsync(s.counters, L.counters, sizeof(FrameCounters), cudaMemcpyDeviceToHost, L.stream));
      CS_CUDA_TRY(cudaEventRecord(s.done, done_on));
      return {};
    }();
  }
  if (!e.empty()) {
    give_back();
    return e;
  }
  s.result.stats = L.pending;
  m.submitted.push_back(std::move(s));
  return {};
}

Engine::FrameResult CudaEngine::finish() {
  Impl& m = *impl_;
  if (m.submitted.empty()) return {"finish() without a frame submitted", FrameStats()};
  Impl::Submitted s = std::move(m.submitted.front());
  m.submitted.pop_front();
  if (s.ran) return std::move(s.result);
  FrameResult r;
  r.error = m.ensure_device();
  if (r.error.empty()) {
    const cudaError_t err = cudaEventSynchronize(s.done);
    if (err != cudaSuccess)
      r.error = cuda_error_text(err, "cudaEventSynchronize(frame)", __FILE__, __LINE__);
    else
      r.stats = with_counters(s.result.stats, *s.counters, s.width, s.height, m.params);
  }
  m.spare_events.push_back(s.done);
  m.spare_counters.push_back(s.counters);
  return r;
}

size_t CudaEngine::in_flight() const { return impl_->submitted.size(); }
bool CudaEngine::overlaps_frames() const { return true; }

}  // namespace cs::cuda
