// Checks of one call's inputs and output frame, shared by every engine so a
// bad frame gets the same sentence on the CPU and on CUDA.
#pragma once

#include <cstddef>
#include <string>

#include "engine.h"

namespace cs {

// Rows and row bytes of each plane of a view (I420/NV12 chroma planes are
// ceil(w/2) x ceil(h/2), YUY2/UYVY rows ceil(w/2) whole macropixels, as
// GStreamer lays them out).
struct PlaneShape {
  int count = 1;
  std::ptrdiff_t row_bytes[3] = {0, 0, 0};
  int rows[3] = {0, 0, 0};
};
PlaneShape plane_shape(const FrameView& v);

// Left and right views of one pair: same format and size.
std::string check_view_pair(const FrameView& left, const FrameView& right);
// Every plane a view's format needs is there, with a pitch of at least a row.
std::string check_view_planes(const FrameView& v, const char* name);
// An output frame for views of width x height as `encode` says (its size,
// output_frame_size; its format's pixels): data, size and pitch.
std::string check_output_frame(const OutputFrame& out, int width, int height, const EncodeParams& encode);
// Encoder settings the output needs (depth: baseline and focal length).
std::string check_encode_params(const EncodeParams& encode);

}  // namespace cs
