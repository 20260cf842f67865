// Method elas on the GPU (common/elas_dense.h E1 .. E8): the descriptors and
// support points (elas_support_gpu.h), each view's prior from the support
// points' triangulation (elas_prior.h), the dense matching and its
// post-processing (elas_matching.h), then the shared finish (whole pixels:
// the Q4 map or its encoding, the counters) on the final map. Every step
// runs on the frame's stream with no trip to the host, so the frame is one
// graph launch like every method's.
#include <cstring>

#include "cuda_util.h"
#include "elas_matching.h"
#include "elas_prior.h"
#include "elas_support_gpu.h"
#include "finish.h"
#include "method.h"
#include "stages.h"

namespace cs::cuda {
namespace {

class ElasMethod final : public MatchingMethod {
 public:
  std::string unsupported(const Params&) const override { return {}; }

  int matched_levels(int) const override { return 1; }

  std::string prepare(const Params&) override { return {}; }

  std::string allocate(const MethodFrame& f, cudaStream_t) override {
    const int w = f.levels[0].width, h = f.levels[0].height;
    const ElasParams e = elas_params(*f.params, f.levels[0].range);
    const ElasDenseParams dense = elas_dense_params(e);
    if (w == width_ && h == height_ && same_dense(dense, dense_params_) &&
        e.support.candidate_step == support_.candidate_step)
      return {};
    width_ = height_ = 0;
    const int cx = elas_grid_cells(w, e.support.candidate_step), cy = elas_grid_cells(h, e.support.candidate_step);
    for (int k = 0; k < 2; ++k) {
      CS_CUDA_TRY(descriptors_[k].allocate(w, h));
      CS_CUDA_TRY(mu_[k].allocate(w, h));
      CS_CUDA_TRY(raw_[k].allocate(w, h));
      CS_CUDA_TRY(checked_[k].allocate(w, h));
      CS_CUDA_TRY(prior_[k].allocate(cx, cy));
    }
    CS_CUDA_TRY(grid_.allocate(cx, cy));
    CS_CUDA_TRY(candidates_.allocate(cx, cy));
    CS_CUDA_TRY(best_.allocate(w, h));
    CS_CUDA_TRY(rival_.allocate(w, h));
    CS_CUDA_TRY(final_.allocate(w, h));
    CS_CUDA_TRY(dense_.allocate(w, h, dense, elas_prior_table(e.beta, e.gamma, e.sigma)));
    width_ = w;
    height_ = h;
    dense_params_ = dense;
    support_ = e.support;
    return {};
  }

  std::string enqueue(const MethodFrame& f, cudaStream_t s, StageTimer* timer) override {
    const MethodLevel& l0 = f.levels[0];
    const ElasParams e = elas_params(*f.params, l0.range);
    const bool masks = f.params->background && l0.mask[0].data && l0.mask[1].data;
    const bool branch = !timer->on && f.side_stream && f.fork && f.join[0];
    if (branch) {
      // The right view's descriptors on the side stream beside the left's
      // (each kernel about three quarters of the memory bandwidth's time).
      CS_CUDA_TRY(cudaEventRecord(f.fork, s));
      CS_CUDA_TRY(cudaStreamWaitEvent(f.side_stream, f.fork, 0));
      CS_CUDA_TRY(enqueue_elas_descriptors(l0.gray[1], descriptors_[1].view(), f.side_stream));
      CS_CUDA_TRY(cudaEventRecord(f.join[0], f.side_stream));
      CS_CUDA_TRY(enqueue_elas_descriptors(l0.gray[0], descriptors_[0].view(), s));
      CS_CUDA_TRY(cudaStreamWaitEvent(s, f.join[0], 0));
    } else {
      for (int k = 0; k < 2; ++k) CS_CUDA_TRY(enqueue_elas_descriptors(l0.gray[k], descriptors_[k].view(), s));
    }
    timer->mark("elas descriptors");
    CS_CUDA_TRY(enqueue_elas_support(descriptors_[0].cview(), descriptors_[1].cview(),
                                     masks ? l0.mask[0] : ImageView<const uint8_t>{}, e.support, grid_.view(),
                                     candidates_.view(), s));
    timer->mark("elas support points");
    // Each view's prior spends most of its time in one block's flip rounds
    // (elas_prior.h): the right view's runs on the frame's side stream
    // beside the left view's (not when stages are timed one by one), after
    // E3's grid, which needs only the support points (Nsight Compute, H200,
    // 1080p x 256 Aloe: the right view's prior about 10 us the shorter).
    const int step = e.support.candidate_step;
    if (branch) {
      CS_CUDA_TRY(cudaEventRecord(f.fork, s));
      CS_CUDA_TRY(cudaStreamWaitEvent(f.side_stream, f.fork, 0));
      CS_CUDA_TRY(enqueue_elas_grid(views(f, masks), elas_dense_params(e), dense_.scratch(), f.side_stream));
      CS_CUDA_TRY(enqueue_elas_prior(grid_.cview(), step, true, prior_[1], mu_[1].view(), f.side_stream));
      CS_CUDA_TRY(cudaEventRecord(f.join[0], f.side_stream));
      CS_CUDA_TRY(enqueue_elas_prior(grid_.cview(), step, false, prior_[0], mu_[0].view(), s));
      CS_CUDA_TRY(cudaStreamWaitEvent(s, f.join[0], 0));
    } else {
      for (int k = 0; k < 2; ++k)
        CS_CUDA_TRY(enqueue_elas_prior(grid_.cview(), step, k == 1, prior_[k], mu_[k].view(), s));
    }
    timer->mark("elas prior");
    CS_CUDA_TRY(enqueue_elas_dense(views(f, masks), elas_dense_params(e), dense_.scratch(), s, !branch));
    timer->mark("elas dense");
    return {};
  }

  std::string finish_call(const MethodFrame& f, ImageView<uint16_t> disparity_q4, const EncodeTarget& encode,
                          KernelCall* call) override {
    CS_CUDA_TRY(cuda::finish_call(final_.cview(), {}, f.levels[0].mask[0], disparity_q4, f.counters, call, {}, 0, {},
                                  encode, {}, f.mask_pixels()));
    return {};
  }

  std::string download_debug(const MethodFrame& f, Matcher::Debug* out, cudaStream_t stream) override {
    CS_CUDA_TRY(cudaStreamSynchronize(stream));
    LevelDebug& d = out->levels[0];
    ElasDebug& g = out->elas;
    Image<uint4> desc[2];
    std::string errs[] = {download(descriptors_[0], &desc[0]), download(descriptors_[1], &desc[1]),
                          download(grid_, &g.support.d),       download(mu_[0], &g.mu_q4[0]),
                          download(mu_[1], &g.mu_q4[1]),       download(raw_[0], &g.raw[0]),
                          download(raw_[1], &g.raw[1]),        download(best_, &g.best),
                          download(rival_, &g.rival),          download(checked_[0], &g.checked[0]),
                          download(checked_[1], &g.checked[1]), download(final_, &g.disparity),
                          download(as_const(f.confidence), &out->confidence)};
    for (auto& e : errs)
      if (!e.empty()) return e;
    for (int k = 0; k < 2; ++k) {
      g.descriptors[k] = Image<ElasDescriptor>(desc[k].width, desc[k].height);
      static_assert(sizeof(ElasDescriptor) == sizeof(uint4), "a descriptor is the uint4's 16 bytes");
      if (!desc[k].pixels.empty())
        std::memcpy(g.descriptors[k].pixels.data(), desc[k].pixels.data(), desc[k].pixels.size() * sizeof(uint4));
    }
    d.raw_left = g.raw[0];
    d.raw_right = g.raw[1];
    d.disparity_right = g.checked[1];
    d.disparity_left = g.disparity;
    out->costs.best = g.best;
    out->costs.rival = g.rival;
    return {};
  }

  bool has_confidence() const override { return true; }

  size_t device_bytes() const override {
    size_t n = grid_.bytes() + candidates_.bytes() + best_.bytes() + rival_.bytes() + final_.bytes() + dense_.bytes();
    for (int k = 0; k < 2; ++k)
      n += descriptors_[k].bytes() + mu_[k].bytes() + raw_[k].bytes() + checked_[k].bytes() + prior_[k].bytes();
    return n;
  }

 private:
  static bool same_dense(const ElasDenseParams& a, const ElasDenseParams& b) {
    return a.min_disparity == b.min_disparity && a.max_disparity == b.max_disparity &&
           a.support_step == b.support_step && a.grid_size == b.grid_size;
  }

  ElasDenseViews views(const MethodFrame& f, bool masks) {
    ElasDenseViews v;
    for (int k = 0; k < 2; ++k) {
      v.descriptors[k] = descriptors_[k].cview();
      v.mu_q4[k] = mu_[k].cview();
      if (masks) v.mask[k] = f.levels[0].mask[k];
      v.raw[k] = raw_[k].view();
      v.checked[k] = checked_[k].view();
    }
    v.support = grid_.cview();
    v.best = best_.view();
    v.rival = rival_.view();
    v.disparity = final_.view();
    v.confidence = f.confidence;
    return v;
  }

  int width_ = 0, height_ = 0;
  ElasDenseParams dense_params_;
  ElasSupportParams support_;
  DeviceImage<uint4> descriptors_[2];
  DeviceImage<int16_t> grid_, candidates_;
  ElasPriorScratch prior_[2];
  DeviceImage<int32_t> mu_[2];
  DeviceImage<int16_t> raw_[2], checked_[2], final_;
  DeviceImage<int32_t> best_, rival_;
  ElasDenseBuffers dense_;
};

}  // namespace

std::unique_ptr<MatchingMethod> make_elas_method() { return std::make_unique<ElasMethod>(); }

}  // namespace cs::cuda
