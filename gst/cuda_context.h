// The GstCudaContext the element shares with neighbouring CUDA elements
// (as nvcodec's elements do): found through the pipeline or made on
// cuda-device-id when the element starts, taken when the application or a
// neighbour sets one, and handed out in answer to context queries. Without
// GStreamer's CUDA library there is none: queries go unanswered.
#pragma once

#include <string>

#include "config.h"
#include "element_private.h"

namespace cs_gst {

#if HAVE_GST_CUDA
// Finds the CUDA context the pipeline shares (from a neighbour or the
// application) or makes one for cuda-device-id and announces it. Returns a
// reference in *ctx, or the reason there is none.
std::string open_cuda_context(GstCudaStereo* self, int device_id, GstCudaContext** ctx);
#endif

// GstElement's set_context: takes a CUDA context set on the element while
// none is held, and only of our device.
void take_context(GstCudaStereo* self, GstContext* context);

// Answers a CONTEXT query with the shared CUDA context; false when this
// element has none to give (or the query is for another context).
bool answer_context_query(GstCudaStereo* self, GstQuery* query);

}  // namespace cs_gst
