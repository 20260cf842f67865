#include "frame_checks.h"

#include <sstream>

namespace cs {

namespace {

int packed_bytes(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB:
    case PixelFormat::BGR: return 3;
    case PixelFormat::GRAY8:
    case PixelFormat::I420:
    case PixelFormat::NV12: return 1;
    default: return 4;
  }
}

}  // namespace

PlaneShape plane_shape(const FrameView& v) {
  PlaneShape p;
  const int cw = (v.width + 1) / 2, ch = (v.height + 1) / 2;
  if (v.format == PixelFormat::I420) {
    p.count = 3;
    p.row_bytes[0] = v.width, p.rows[0] = v.height;
    p.row_bytes[1] = cw, p.rows[1] = ch;
    p.row_bytes[2] = cw, p.rows[2] = ch;
  } else if (v.format == PixelFormat::NV12) {
    p.count = 2;
    p.row_bytes[0] = v.width, p.rows[0] = v.height;
    p.row_bytes[1] = 2 * cw, p.rows[1] = ch;
  } else if (v.format == PixelFormat::YUY2 || v.format == PixelFormat::UYVY) {
    p.row_bytes[0] = 4 * static_cast<std::ptrdiff_t>(cw);
    p.rows[0] = v.height;
  } else {
    p.row_bytes[0] = static_cast<std::ptrdiff_t>(v.width) * packed_bytes(v.format);
    p.rows[0] = v.height;
  }
  return p;
}

std::string check_view_pair(const FrameView& left, const FrameView& right) {
  std::ostringstream s;
  if (left.format != right.format) {
    s << "the left view is " << pixel_format_name(left.format) << " but the right view is "
      << pixel_format_name(right.format);
    return s.str();
  }
  if (left.width != right.width || left.height != right.height) {
    s << "the left view is " << left.width << "x" << left.height << " but the right view is " << right.width << "x"
      << right.height;
    return s.str();
  }
  return {};
}

std::string check_view_planes(const FrameView& v, const char* name) {
  const PlaneShape ps = plane_shape(v);
  std::ostringstream s;
  for (int i = 0; i < ps.count; ++i) {
    if (v.plane[i] == nullptr) {
      s << "the " << name << " view's plane " << i << " is missing (null) for format " << pixel_format_name(v.format);
      return s.str();
    }
    if (v.pitch[i] < ps.row_bytes[i]) {
      s << "the " << name << " view's plane " << i << " has a row pitch of " << v.pitch[i] << " bytes, less than the "
        << ps.row_bytes[i] << " bytes of one row";
      return s.str();
    }
  }
  return {};
}

std::string check_output_frame(const OutputFrame& out, int width, int height, const EncodeParams& encode) {
  if (out.data == nullptr) return "the output frame has no data (null)";
  std::ostringstream s;
  const OutputFormat format = encode.format;
  int ow, oh;
  output_frame_size(encode.views, width, height, &ow, &oh);
  if (out.width != ow || out.height != oh) {
    s << "the output frame is " << out.width << "x" << out.height << " but the views are " << width << "x" << height;
    if (encode.views != ViewsOutput::None)
      s << " (both views " << (encode.views == ViewsOutput::SideBySide ? "side by side" : "one above the other")
        << ": " << ow << "x" << oh << ")";
    return s.str();
  }
  const int bpp = output_bytes_per_pixel(format);
  if (out.pitch < static_cast<std::ptrdiff_t>(out.width) * bpp) {
    s << "the output frame's row pitch (" << out.pitch << " bytes) is less than one row of "
      << output_format_name(format) << " (" << out.width * bpp << " bytes)";
    return s.str();
  }
  return {};
}

std::string check_encode_params(const EncodeParams& encode) {
  if (encode.format == OutputFormat::DepthMm) {
    const bool baseline = encode.baseline_mm > 0.0, focal = encode.focal_px > 0.0;
    if (!baseline && !focal) return "depth output needs the baseline and the focal length, and neither is set";
    if (!baseline) return "depth output needs the baseline (distance between the camera centres), which is not set";
    if (!focal) return "depth output needs the focal length (pixels, of the rectified views), which is not set";
  }
  if (encode.max_disparity <= 0) return "the encoder's max-disparity must be positive";
  if (encode.views != ViewsOutput::None && output_bytes_per_pixel(encode.format) != 4)
    return std::string("the views are output in RGBA, BGRA, RGBx or BGRx, not ") + output_format_name(encode.format);
  return {};
}

}  // namespace cs
