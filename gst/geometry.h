// Where the two views sit in the input and how the element sees a mapped
// frame as cs::FrameView pictures: the layout and view size negotiated from
// the caps (resolve_geometry), the pixel formats the engine takes, and views
// of one half of a packed frame.
#pragma once

#include <gst/video/video.h>

#include <string>

#include "property_enums.h"
#include "stereo.h"

namespace cs_gst {

enum class Layout { SideBySide, TopBottom };

// One sink pad's negotiated input.
struct PadInput {
  bool configured = false;
  GstVideoInfo info;
};

// Where the two views sit and how big each is.
struct Geometry {
  bool valid = false;
  bool packed = true;
  Layout layout = Layout::SideBySide;
  bool right_first = false;
  cs::PixelFormat format = cs::PixelFormat::GRAY8;
  GstVideoFormat video_format = GST_VIDEO_FORMAT_UNKNOWN;
  int view_width = 0, view_height = 0;
  int par_n = 1, par_d = 1, fps_n = 0, fps_d = 1;

  // One view above the other in a packed frame (output-mode=rectified
  // packs its output so).
  bool top_bottom() const { return packed && layout == Layout::TopBottom; }

  bool same_output_as(const Geometry& o) const {
    return valid == o.valid && view_width == o.view_width && view_height == o.view_height && par_n == o.par_n &&
           par_d == o.par_d && fps_n == o.fps_n && fps_d == o.fps_d && top_bottom() == o.top_bottom();
  }
};

// Works out the views from the negotiated pads (two-pad input when either
// sink_left or sink_right has caps, else the packed `sink`) and the
// input-layout setting. Returns an empty string or the reason the input
// cannot be used. *out is written only when the views are known: an empty
// string with *out untouched means not yet (no caps, or a two-pad input
// still waiting for its second pad's caps).
std::string resolve_geometry(const PadInput& packed_in, const PadInput& left_in, const PadInput& right_in,
                             GstCudaStereoInputLayout layout, Geometry* out);

// The engine's pixel format for a GStreamer video format; false for one the
// engine does not take.
bool to_pixel_format(GstVideoFormat f, cs::PixelFormat* out);
bool is_yuv420(cs::PixelFormat f);
bool is_yuv422(cs::PixelFormat f);

// "FORMAT WxH", for messages about caps.
std::string describe_info(const GstVideoInfo& info);

// The planes of a mapped frame as one picture (both views of a packed
// frame), with the frame's own strides and plane offsets (GstVideoMeta when
// present). `device`: the frame was mapped with GST_MAP_CUDA, its planes are
// device pointers. False for a format the engine does not take (the view
// then says GRAY8).
bool whole_frame_view(const GstVideoFrame& frame, bool device, cs::FrameView* out);

bool same_picture(const cs::FrameView& a, const cs::FrameView& b);

// A view of one half of a packed frame (or a whole frame when view_index
// addresses a single-view frame with packed == false), inside `whole`: the
// frame's planes as mapped (whole_frame_view), or the device copy of them
// uploaded ahead, whose rows hold the same bytes at other pitches. Device
// pointers are only offset here, never read.
cs::FrameView frame_view(const GstVideoFrame& frame, const cs::FrameView& whole, const Geometry& g, int half);

}  // namespace cs_gst
