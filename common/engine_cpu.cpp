// The CPU backend of the Engine interface: the reference Matcher plus the
// output encoder, host memory only.
#include "engine.h"
#include "frame_checks.h"

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
    std::string e = check_output_frame(out, left.width, left.height, encode.format);
    if (e.empty()) e = check_encode_params(encode);
    if (!e.empty()) return e;
    if (disparity_.width != left.width || disparity_.height != left.height) {
      disparity_ = Image<uint16_t>(left.width, left.height);
      foreground_ = Image<uint8_t>(left.width, left.height);
      confidence_ = Image<uint8_t>(left.width, left.height);
    }
    Outputs o;
    o.disparity_q4 = disparity_.view();
    o.foreground = foreground_.view();
    if (encode.format == OutputFormat::Confidence) o.confidence = confidence_.view();
    e = matcher_.process(left, right, o);
    if (!e.empty()) return e;
    const ImageView<const uint8_t> mask = static_cast<const Image<uint8_t>&>(foreground_).view();
    const ImageView<const uint8_t> confidence = static_cast<const Image<uint8_t>&>(confidence_).view();
    encode_output(static_cast<const Image<uint16_t>&>(disparity_).view(), &mask, encode, out.data, out.pitch,
                  &confidence);
    return {};
  }

  void reset_background() override { matcher_.reset_background(); }

  FrameStats stats() const override { return matcher_.stats(); }

 private:
  Matcher matcher_;
  Image<uint16_t> disparity_;
  Image<uint8_t> foreground_;
  Image<uint8_t> confidence_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const Params& params) { return std::make_unique<CpuEngine>(params); }

}  // namespace cs
