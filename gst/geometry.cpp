#include "geometry.h"

#include <cstddef>
#include <string>

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

std::string resolve_geometry(const PadInput& packed_in, const PadInput& left_in, const PadInput& right_in,
                             GstCudaStereoInputLayout layout, Geometry* out) {
  Geometry g;
  const GstVideoInfo* info = nullptr;
  const bool two_pads = left_in.configured || right_in.configured;
  if (two_pads) {
    if (!left_in.configured || !right_in.configured) return "";  // wait for the other pad
    const GstVideoInfo& l = left_in.info;
    const GstVideoInfo& r = right_in.info;
    if (GST_VIDEO_INFO_FORMAT(&l) != GST_VIDEO_INFO_FORMAT(&r) || GST_VIDEO_INFO_WIDTH(&l) != GST_VIDEO_INFO_WIDTH(&r) ||
        GST_VIDEO_INFO_HEIGHT(&l) != GST_VIDEO_INFO_HEIGHT(&r))
      return "sink_left caps (" + describe_info(l) + ") and sink_right caps (" + describe_info(r) +
             ") differ: both views need the same format and size";
    info = &l;
    g.packed = false;
    g.view_width = GST_VIDEO_INFO_WIDTH(info);
    g.view_height = GST_VIDEO_INFO_HEIGHT(info);
    g.par_n = GST_VIDEO_INFO_PAR_N(info);
    g.par_d = GST_VIDEO_INFO_PAR_D(info);
  } else {
    if (!packed_in.configured) return "";
    info = &packed_in.info;
    const GstVideoMultiviewMode mode = GST_VIDEO_INFO_MULTIVIEW_MODE(info);
    const GstVideoMultiviewFlags flags = GST_VIDEO_INFO_MULTIVIEW_FLAGS(info);
    if (layout == GST_CUDA_STEREO_INPUT_LAYOUT_SIDE_BY_SIDE) {
      g.layout = Layout::SideBySide;
    } else if (layout == GST_CUDA_STEREO_INPUT_LAYOUT_TOP_BOTTOM) {
      g.layout = Layout::TopBottom;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_SIDE_BY_SIDE) {
      g.layout = Layout::SideBySide;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_TOP_BOTTOM) {
      g.layout = Layout::TopBottom;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_NONE || mode == GST_VIDEO_MULTIVIEW_MODE_MONO) {
      return "the caps on `sink` do not say how the two views are packed (multiview-mode is " +
             std::string(mode == GST_VIDEO_MULTIVIEW_MODE_MONO ? "mono" : "absent") +
             "): set input-layout=side-by-side or input-layout=top-bottom, or use sink_left/sink_right";
    } else {
      const char* name = gst_video_multiview_mode_to_caps_string(mode);
      return std::string("multiview-mode ") + (name ? name : "?") +
             " is not supported: cudastereo takes side-by-side or top-bottom frames (or two pads)";
    }
    // The flags describe the caps' own layout; with an overriding property
    // only right-view-first still makes sense when the mode agrees.
    const bool caps_layout_used = (g.layout == Layout::SideBySide && mode == GST_VIDEO_MULTIVIEW_MODE_SIDE_BY_SIDE) ||
                                  (g.layout == Layout::TopBottom && mode == GST_VIDEO_MULTIVIEW_MODE_TOP_BOTTOM);
    g.right_first = caps_layout_used && (flags & GST_VIDEO_MULTIVIEW_FLAGS_RIGHT_VIEW_FIRST);
    const bool half_aspect = caps_layout_used && (flags & GST_VIDEO_MULTIVIEW_FLAGS_HALF_ASPECT);
    const int w = GST_VIDEO_INFO_WIDTH(info), h = GST_VIDEO_INFO_HEIGHT(info);
    g.par_n = GST_VIDEO_INFO_PAR_N(info);
    g.par_d = GST_VIDEO_INFO_PAR_D(info);
    if (g.layout == Layout::SideBySide) {
      if (w % 2 != 0)
        return "side-by-side frame width " + std::to_string(w) + " is odd: the two views cannot be equal";
      g.view_width = w / 2;
      g.view_height = h;
      if (half_aspect) g.par_n *= 2;  // each view was squeezed to half width
    } else {
      if (h % 2 != 0)
        return "top-bottom frame height " + std::to_string(h) + " is odd: the two views cannot be equal";
      g.view_width = w;
      g.view_height = h / 2;
      if (half_aspect) g.par_d *= 2;
    }
  }
  g.video_format = GST_VIDEO_INFO_FORMAT(info);
  if (!to_pixel_format(g.video_format, &g.format))
    return std::string("format ") + gst_video_format_to_string(g.video_format) + " is not supported";
  if (g.packed && (is_yuv420(g.format) || is_yuv422(g.format))) {
    // The second view's chroma must start on a whole chroma sample (for
    // YUY2/UYVY: on a whole 2-pixel macropixel). Here the width is even.
    if (g.layout == Layout::SideBySide && g.view_width % 2 != 0) {
      const int w = GST_VIDEO_INFO_WIDTH(info);
      return std::string("side-by-side ") + gst_video_format_to_string(g.video_format) +
             " needs a frame width divisible by 4 (each view's chroma must start on a sample), got " +
             std::to_string(w) + " (views of " + std::to_string(g.view_width) + " pixels): crop or scale to " +
             std::to_string(w - 2) + " or " + std::to_string(w + 2) + ", or use sink_left/sink_right";
    }
    // YUY2/UYVY rows carry their own chroma: any split between rows works.
    if (g.layout == Layout::TopBottom && is_yuv420(g.format) && g.view_height % 2 != 0)
      return std::string("top-bottom ") + gst_video_format_to_string(g.video_format) +
             " needs a frame height divisible by 4 (each view's chroma must start on a sample), got " +
             std::to_string(GST_VIDEO_INFO_HEIGHT(info));
  }
  if (g.view_width < cs::kMinViewWidth || g.view_height < cs::kMinViewHeight)
    return "each view is " + std::to_string(g.view_width) + "x" + std::to_string(g.view_height) +
           ", smaller than the minimum " + std::to_string(cs::kMinViewWidth) + "x" +
           std::to_string(cs::kMinViewHeight);
  {
    const int gcd = gst_util_greatest_common_divisor(g.par_n, g.par_d);
    if (gcd > 1) g.par_n /= gcd, g.par_d /= gcd;
  }
  g.fps_n = GST_VIDEO_INFO_FPS_N(info);
  g.fps_d = GST_VIDEO_INFO_FPS_D(info);
  g.valid = true;
  *out = g;
  return "";
}

// Re-derives the geometry; on an output change, asks for renegotiation and

}  // namespace cs_gst
