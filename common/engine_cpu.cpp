// The CPU backend of the Engine interface: the reference Matcher plus the
// output encoder, host memory only.
#include <sstream>

#include "engine.h"

namespace cs {

namespace {

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const Params& params) : matcher_(params) {}

  const char* backend_name() const override { return "cpu"; }

  std::string set_params(const Params& params) override { return matcher_.set_params(params); }

  std::string process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                      const OutputFrame& out) override {
    if (out.memory != Memory::Host) return "the output frame is in device memory; the CPU engine writes host memory";
    if (out.data == nullptr) return "the output frame has no data (null)";
    if (out.width != left.width || out.height != left.height) {
      std::ostringstream s;
      s << "the output frame is " << out.width << "x" << out.height << " but the views are " << left.width << "x"
        << left.height;
      return s.str();
    }
    const int bpp = output_bytes_per_pixel(encode.format);
    if (out.pitch < static_cast<std::ptrdiff_t>(out.width) * bpp) {
      std::ostringstream s;
      s << "the output frame's row pitch (" << out.pitch << " bytes) is less than one row of "
        << output_format_name(encode.format) << " (" << out.width * bpp << " bytes)";
      return s.str();
    }
    if (encode.format == OutputFormat::DepthMm && !(encode.baseline_mm > 0.0 && encode.focal_px > 0.0))
      return "depth output needs a positive baseline and focal length";
    if (encode.max_disparity <= 0) return "the encoder's max-disparity must be positive";
    if (disparity_.width != left.width || disparity_.height != left.height) {
      disparity_ = Image<uint16_t>(left.width, left.height);
      foreground_ = Image<uint8_t>(left.width, left.height);
    }
    Outputs o;
    o.disparity_q4 = disparity_.view();
    o.foreground = foreground_.view();
    std::string e = matcher_.process(left, right, o);
    if (!e.empty()) return e;
    const ImageView<const uint8_t> mask = static_cast<const Image<uint8_t>&>(foreground_).view();
    encode_output(static_cast<const Image<uint16_t>&>(disparity_).view(), &mask, encode, out.data, out.pitch);
    return {};
  }

  void reset_background() override { matcher_.reset_background(); }

  FrameStats stats() const override { return matcher_.stats(); }

 private:
  Matcher matcher_;
  Image<uint16_t> disparity_;
  Image<uint8_t> foreground_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const Params& params) { return std::make_unique<CpuEngine>(params); }

}  // namespace cs
