// Method elas on the GPU: not yet; the engine refuses it by name, so that
// backend=auto runs it on the CPU reference (common/elas_dense.h).
#include "method.h"

namespace cs::cuda {
namespace {

class ElasMethod final : public MatchingMethod {
 public:
  std::string unsupported(const Params&) const override {
    return "method elas has no CUDA kernels in this version; backend=cpu (or auto) runs it";
  }
  std::string prepare(const Params& p) override { return unsupported(p); }
  std::string allocate(const MethodFrame& f, cudaStream_t) override { return unsupported(*f.params); }
  std::string enqueue(const MethodFrame& f, cudaStream_t, StageTimer*) override { return unsupported(*f.params); }
  std::string finish_call(const MethodFrame& f, ImageView<uint16_t>, const EncodeTarget&, KernelCall*) override {
    return unsupported(*f.params);
  }
  std::string download_debug(const MethodFrame& f, Matcher::Debug*, cudaStream_t) override {
    return unsupported(*f.params);
  }
  int matched_levels(int) const override { return 1; }
  bool has_confidence() const override { return true; }
  size_t device_bytes() const override { return 0; }
};

}  // namespace

std::unique_ptr<MatchingMethod> make_elas_method() { return std::make_unique<ElasMethod>(); }

}  // namespace cs::cuda
