// A GstAllocator of page-locked ("pinned") host memory, and a video buffer
// pool built on it. The memory is ordinary system memory to every element
// (caps feature memory:SystemMemory, mappable for reading and writing); the
// CUDA engine recognises it and moves frames in and out of it by DMA, without
// the CPU copy through its staging area that pageable memory needs.
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDA_STEREO_PINNED_MEMORY_TYPE "CudaStereoPinned"

// A new allocator (full reference). `cuda_context`: a GstCudaContext made
// current around each allocation and release so they happen in the context
// the engine runs in; may be null (the CUDA runtime's current device).
GstAllocator* gst_cuda_stereo_pinned_allocator_new(GstObject* cuda_context);

// True when `mem` came from such an allocator.
gboolean gst_cuda_stereo_is_pinned_memory(GstMemory* mem);

// A GstVideoBufferPool configured for `caps` whose buffers are pinned
// (full reference), or null when the caps are not video or the pool refuses.
// *size receives the pool's buffer size.
GstBufferPool* gst_cuda_stereo_pinned_pool_new(GstAllocator* allocator, GstCaps* caps, guint min, guint max,
                                               guint* size);

G_END_DECLS
