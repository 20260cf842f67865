// The element's engine over its lifetime: made in start on the backend the
// settings ask for, in the CUDA context the pipeline shares (cuda_context.h),
// with a notice when backend=auto falls back to the CPU; with the CUDA
// engine, page-locked host memory for the pools and upload ahead. Released
// in stop, in the context it was made in.
#pragma once

#include "element_private.h"

namespace cs_gst {

// Makes the engine for the settings `s` (a snapshot taken in start). False,
// after posting an error naming the backend and device, when none can be made.
bool open_engine(GstCudaStereo* self, const Settings& s);

// Stops upload ahead and releases the engine, the CUDA contexts and the
// pinned allocator.
void close_engine(GstCudaStereoPrivate* priv);

}  // namespace cs_gst
