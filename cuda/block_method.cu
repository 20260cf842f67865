// Method block on the GPU (stages.h B1 .. B4): SSD block matching of the
// full-size views over the full range, then uniqueness, the left-right
// check, the sub-pixel parabola and the confidence in one pass.
#include "block_matching.h"
#include "cross_check.h"
#include "cuda_util.h"
#include "method.h"
#include "stages.h"

namespace cs::cuda {
namespace {

class BlockMethod final : public MatchingMethod {
 public:
  ~BlockMethod() override {
    if (sweep_state_) cudaFree(sweep_state_);
  }

  std::string unsupported(const Params&) const override { return {}; }

  // One level: the full-size views alone.
  int matched_levels(int) const override { return 1; }

  // The kernels' shared memory is static and within every target's default
  // limit (block_kernel_launches): nothing to raise.
  std::string prepare(const Params&) override { return {}; }

  std::string allocate(const MethodFrame& f, cudaStream_t stream) override {
    const MethodLevel& l0 = f.levels[0];
    const int w = l0.width, h = l0.height;
    if (w != width_ || h != height_) {
      width_ = height_ = 0;
      CS_CUDA_TRY(disparity_.allocate(w, h));
      for (DeviceImage<int32_t>* c : {&best_, &rival_, &below_, &above_}) CS_CUDA_TRY(c->allocate(w, h));
      CS_CUDA_TRY(right_.allocate(w, h));
      CS_CUDA_TRY(right_keys_.allocate(w, h));
      const auto& k = right_keys_.view();
      CS_CUDA_TRY(cudaMemset2DAsync(k.data, k.pitch, 0xFF, w * sizeof(unsigned long long), h, stream));
      for (DeviceImage<int16_t>* m : {&unique_, &checked_[0], &checked_[1]}) m->release();
      width_ = w;
      height_ = h;
    }
    // The sweeps wait between slabs of disparities only for ranges wider
    // than one slab; the range changes with the parameters, the size not.
    const size_t state = block_sweep_state_bytes(w, h, l0.range);
    if (state > sweep_state_bytes_) {
      if (sweep_state_) cudaFree(sweep_state_);
      sweep_state_ = nullptr;
      sweep_state_bytes_ = 0;
      CS_CUDA_TRY(cudaMalloc(&sweep_state_, state));
      sweep_state_bytes_ = state;
    }
    return {};
  }

  std::string enqueue(const MethodFrame& f, cudaStream_t s, StageTimer* timer) override {
    const Params& p = *f.params;
    const MethodLevel& l0 = f.levels[0];
    BlockMatchViews mv;
    mv.gray_left = l0.gray[0];
    mv.gray_right = l0.gray[1];
    if (p.background) {
      mv.mask_left = l0.mask[0];
      mv.mask_right = l0.mask[1];
    }
    mv.left = winners();
    mv.right = right_.view();
    mv.scratch.right_keys = right_keys_.view();
    mv.scratch.sweep_state = sweep_state_;
    mv.scratch.sweep_state_bytes = sweep_state_bytes_;
    BlockParams bp;
    bp.range = l0.range;
    bp.block_size = p.match_block_size;
    bp.limits = f.limits;
    CS_CUDA_TRY(enqueue_block_match(mv, bp, s));
    timer->mark("block match");
    return {};
  }

  std::string finish_call(const MethodFrame& f, ImageView<uint16_t> disparity_q4, const EncodeTarget& encode,
                          KernelCall* call) override {
    BlockFinishViews fv;
    fv.winners = as_const(winners());
    if (f.params->lr_check) fv.right = right_.cview();
    fv.mask = f.levels[0].mask[0];
    fv.disparity_q4 = disparity_q4;
    fv.confidence = f.confidence;
    fv.counters = f.counters;
    fv.encode = encode;
    CS_CUDA_TRY(block_finish_call(fv, finish_params(f), call));
    return {};
  }

  // Level 0 as the reference keeps it: raw maps (B2), the left map after
  // uniqueness and both after the check (stage 8 against the uniqueness'd
  // left map), the winners, the costs and the confidence.
  std::string download_debug(const MethodFrame& f, Matcher::Debug* out, cudaStream_t stream) override {
    const Params& p = *f.params;
    const int w = width_, h = height_;
    for (DeviceImage<int16_t>* m : {&unique_, &checked_[0], &checked_[1]})
      if (m->empty()) CS_CUDA_TRY(m->allocate(w, h));
    BlockFinishViews fv;
    fv.winners = as_const(winners());
    fv.unique = unique_.view();
    CS_CUDA_TRY(enqueue_block_finish(fv, finish_params(f), stream));
    if (p.lr_check)
      CS_CUDA_TRY(enqueue_cross_check(unique_.cview(), right_.cview(), resolve_lr_tolerance(p), checked_[0].view(),
                                      checked_[1].view(), stream));
    CS_CUDA_TRY(cudaStreamSynchronize(stream));
    LevelDebug& d = out->levels[0];
    BlockWinners& bw = out->block.winners;
    std::string errs[] = {download(disparity_, &bw.disparity), download(best_, &bw.best),
                          download(rival_, &bw.rival), download(below_, &bw.below),
                          download(above_, &bw.above), download(right_, &d.raw_right),
                          download(p.lr_check ? checked_[0] : unique_, &d.disparity_left),
                          download(p.lr_check ? checked_[1] : right_, &d.disparity_right),
                          download(as_const(f.confidence), &out->confidence)};
    for (auto& e : errs)
      if (!e.empty()) return e;
    d.raw_left = bw.disparity;
    out->costs.best = bw.best;
    out->costs.rival = bw.rival;
    return {};
  }

  bool has_confidence() const override { return true; }

  size_t device_bytes() const override {
    size_t n = disparity_.bytes() + right_.bytes() + right_keys_.bytes() + unique_.bytes() + checked_[0].bytes() +
               checked_[1].bytes() + sweep_state_bytes_;
    for (const DeviceImage<int32_t>* c : {&best_, &rival_, &below_, &above_}) n += c->bytes();
    return n;
  }

 private:
  BlockWinnerViews winners() const {
    return {disparity_.view(), best_.view(), rival_.view(), below_.view(), above_.view()};
  }
  static BlockFinishParams finish_params(const MethodFrame& f) {
    BlockFinishParams fp;
    fp.range = f.levels[0].range;
    fp.uniqueness_ratio = resolve_uniqueness_ratio(*f.params);
    fp.tolerance = resolve_lr_tolerance(*f.params);
    fp.subpixel = f.params->subpixel;
    return fp;
  }

  int width_ = 0, height_ = 0;
  DeviceImage<int16_t> disparity_;
  DeviceImage<int32_t> best_, rival_, below_, above_;
  DeviceImage<int16_t> right_;
  DeviceImage<unsigned long long> right_keys_;
  void* sweep_state_ = nullptr;
  size_t sweep_state_bytes_ = 0;
  // download_debug's maps, made when asked.
  DeviceImage<int16_t> unique_, checked_[2];
};

}  // namespace

std::unique_ptr<MatchingMethod> make_block_method() { return std::make_unique<BlockMethod>(); }

}  // namespace cs::cuda
