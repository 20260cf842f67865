#include "geometry.h"

#include <cstddef>

namespace cs_gst {

bool to_pixel_format(GstVideoFormat f, cs::PixelFormat* out) {
  switch (f) {
    case GST_VIDEO_FORMAT_RGBA: *out = cs::PixelFormat::RGBA; return true;
    case GST_VIDEO_FORMAT_BGRA: *out = cs::PixelFormat::BGRA; return true;
    case GST_VIDEO_FORMAT_RGBx: *out = cs::PixelFormat::RGBx; return true;
    case GST_VIDEO_FORMAT_BGRx: *out = cs::PixelFormat::BGRx; return true;
    case GST_VIDEO_FORMAT_RGB: *out = cs::PixelFormat::RGB; return true;
    case GST_VIDEO_FORMAT_BGR: *out = cs::PixelFormat::BGR; return true;
    case GST_VIDEO_FORMAT_GRAY8: *out = cs::PixelFormat::GRAY8; return true;
    case GST_VIDEO_FORMAT_I420: *out = cs::PixelFormat::I420; return true;
    case GST_VIDEO_FORMAT_NV12: *out = cs::PixelFormat::NV12; return true;
    case GST_VIDEO_FORMAT_YUY2: *out = cs::PixelFormat::YUY2; return true;
    case GST_VIDEO_FORMAT_UYVY: *out = cs::PixelFormat::UYVY; return true;
    default: return false;
  }
}

bool is_yuv420(cs::PixelFormat f) { return f == cs::PixelFormat::I420 || f == cs::PixelFormat::NV12; }
bool is_yuv422(cs::PixelFormat f) { return f == cs::PixelFormat::YUY2 || f == cs::PixelFormat::UYVY; }

std::string describe_info(const GstVideoInfo& info) {
  return std::string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info))) + " " +
         std::to_string(GST_VIDEO_INFO_WIDTH(&info)) + "x" + std::to_string(GST_VIDEO_INFO_HEIGHT(&info));
}

bool whole_frame_view(const GstVideoFrame& frame, bool device, cs::FrameView* out) {
  cs::FrameView v;
  const bool known = to_pixel_format(GST_VIDEO_FRAME_FORMAT(&frame), &v.format);
  v.width = GST_VIDEO_FRAME_WIDTH(&frame);
  v.height = GST_VIDEO_FRAME_HEIGHT(&frame);
  v.memory = device ? cs::Memory::Device : cs::Memory::Host;
  const int planes = GST_VIDEO_FRAME_N_PLANES(&frame);
  for (int p = 0; p < planes && p < 3; ++p) {
    v.plane[p] = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p));
    v.pitch[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p);
  }
  *out = v;
  return known;
}

bool same_picture(const cs::FrameView& a, const cs::FrameView& b) {
  if (a.format != b.format || a.width != b.width || a.height != b.height || a.memory != b.memory) return false;
  for (int p = 0; p < 3; ++p)
    if (a.plane[p] != b.plane[p] || a.pitch[p] != b.pitch[p]) return false;
  return true;
}

cs::FrameView frame_view(const GstVideoFrame& frame, const cs::FrameView& whole, const Geometry& g, int half) {
  cs::FrameView v;
  v.format = g.format;
  v.width = g.view_width;
  v.height = g.view_height;
  v.memory = whole.memory;
  const int planes = GST_VIDEO_FRAME_N_PLANES(&frame);
  for (int p = 0; p < planes && p < 3; ++p) {
    const uint8_t* base = whole.plane[p];
    const std::ptrdiff_t stride = whole.pitch[p];
    if (g.packed && half == 1) {
      const bool chroma = is_yuv420(g.format) && p > 0;
      if (g.layout == Layout::SideBySide) {
        // Component p lives in plane p for every format we take (NV12's U
        // and V share plane 1, whose pixel stride is 2; YUY2/UYVY have one
        // plane where Y's pixel stride is 2, and the view width is even).
        const int pstride = GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, p);
        base += static_cast<std::ptrdiff_t>(chroma ? g.view_width / 2 : g.view_width) * pstride;
      } else {
        base += static_cast<std::ptrdiff_t>(chroma ? g.view_height / 2 : g.view_height) * stride;
      }
    }
    v.plane[p] = base;
    v.pitch[p] = stride;
  }
  return v;
}

}  // namespace cs_gst
