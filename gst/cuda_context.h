// The GstCudaContext the element shares with neighbouring CUDA elements
// (as nvcodec's elements do): found through the pipeline when the element
// goes to READY (before its upstream neighbours, which then find ours) or
// starts, else the process's one context for cuda-device-id; taken when the
// application or a neighbour sets one, and handed out in answer to context
// queries. Without GStreamer's CUDA library there is none: queries go
// unanswered.
#pragma once

#include <string>

#include "config.h"
#include "element_private.h"

namespace cs_gst {

#if HAVE_GST_CUDA
// Unless the element holds a context of cuda-device-id (device_id; -1: any)
// already: asks the neighbours (CONTEXT queries downstream, then upstream),
// then the application and the bins (NEED_CONTEXT), and takes the first of
// its device; with none, takes the process's context for the device (one a
// GPU, shared by every element that found none: never one a branch) and
// announces it (HAVE_CONTEXT). Empty, or the reason there is none.
std::string acquire_cuda_context(GstCudaStereo* self, int device_id);
// acquire_cuda_context, then a reference to the context in *ctx.
std::string open_cuda_context(GstCudaStereo* self, int device_id, GstCudaContext** ctx);
// Drops the element's context (stop, READY to NULL).
void release_cuda_context(GstCudaStereoPrivate* priv);
#endif

// GstElement's set_context: takes a CUDA context set on the element while
// none is held, and only of our device.
void take_context(GstCudaStereo* self, GstContext* context);

// Answers a CONTEXT query with the shared CUDA context; false when this
// element has none to give (or the query is for another context).
bool answer_context_query(GstCudaStereo* self, GstQuery* query);

}  // namespace cs_gst
