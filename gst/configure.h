// Keeps what the streaming thread works with in step with the caps and the
// properties: the views' geometry from the negotiated sink caps and
// input-layout (update_geometry), and settings changed since the last frame
// taken into the engine (apply_settings). Both post an error on the bus
// when the input or the settings cannot be used.
#pragma once

#include "element_private.h"

namespace cs_gst {

// Re-derives the geometry; on an output change, asks for renegotiation and
// restarts the background model (a new size is a new scene for the model).
// False (after posting an error) when the input cannot be used.
bool update_geometry(GstCudaStereo* self);

// Takes settings changed since the last frame into the engine. Returns false
// (after posting an error) when they do not fit.
bool apply_settings(GstCudaStereo* self);

}  // namespace cs_gst
