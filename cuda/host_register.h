// Page-locking host memory where it lies (cudaHostRegister), for memory the
// caller keeps and hands the engine again and again: the engine then moves
// it to the GPU by DMA (is_pinned() says true for every byte of the range)
// instead of gathering it into its staging area on CPU threads.
// GStreamer-free; the element's gst/host_pin.cpp decides what to register.
#pragma once

#include <cstddef>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace cs::cuda {

enum class HostRegistration {
  Registered,     // page-locked now; undo with unregister_host()
  AlreadyPinned,  // the whole range was page-locked already (by someone else): nothing to undo
  Failed,         // not page-locked; *error says why
};

// Page-locks [ptr, ptr + bytes) in the current context, portable (pinned
// for every CUDA context of the process, as alloc_pinned's memory is).
// Registered memory stays page-locked while that context lives, and must be
// unregistered before it is freed. Never leaves a CUDA error behind
// (cudaGetLastError), so a later check of the runtime's last error on this
// thread does not see it.
HostRegistration register_host(void* ptr, size_t bytes, std::string* error);

// Undoes a Registered register_host() of the range starting at `ptr`, in a
// context of the same device. False, with the reason, when the driver
// refuses.
bool unregister_host(void* ptr, std::string* error);

// Held exclusively around cudaHostRegister and cudaHostUnregister, shared by
// is_pinned()'s cudaPointerGetAttributes: a query never overlaps a change of
// the registrations (on the H100, 1 run in 4 of the recycled-pool test
// counted a registered buffer's frame as gathered while another thread was
// registering or unregistering; whether the driver's answer or something else
// was at fault is not known: this makes the answer well defined).
std::shared_mutex& host_registration_lock();

}  // namespace cs::cuda
