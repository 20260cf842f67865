// Method cross on the GPU (stages.h C1 .. C8, cross_matching.h): the
// views' colour from the frame's conversion, the method's kernels, then the
// shared finish (the Q4 map or its encoding, the counters) on its final map.
#include "cross_matching.h"
#include "cuda_util.h"
#include "finish.h"
#include "method.h"
#include "stages.h"

namespace cs::cuda {
namespace {

class CrossMethod final : public MatchingMethod {
 public:
  std::string unsupported(const Params&) const override { return {}; }

  int matched_levels(int) const override { return 1; }

  std::string prepare(const Params&) override {
    const cudaError_t e = prepare_cross_match();
    if (e == cudaErrorInvalidValue) return "method cross needs more shared memory a block than this GPU has";
    if (e != cudaSuccess) return cuda_error_text(e, "prepare_cross_match", __FILE__, __LINE__);
    return {};
  }

  std::string allocate(const MethodFrame& f, cudaStream_t) override {
    const int w = f.levels[0].width, h = f.levels[0].height, s = f.params->sample_restore;
    // The aggregation's layout (cross_layout, about 15 000 steps at 1080p)
    // for the sizes, range and GPU, kept for params() until one changes.
    const Range r = f.levels[0].range;
    const LayoutKey key{w, h, s, r.lo, r.hi, f.limits->sm_count, f.limits->shared_per_block_optin};
    if (!(key == layout_key_)) {
      layout_ = cross_layout(w, h, s, r, *f.limits);
      layout_key_ = key;
    }
    // The sweeps of the range's parts.
    const int parts = layout_.parts;
    const int part_rows = parts > 1 ? parts * cross_samples(h, s) : 0;
    if (part_rows != parts_.view().height || (part_rows && parts_.view().width != cross_samples(w, s)))
      CS_CUDA_TRY(parts_.allocate(cross_samples(w, s), part_rows));  // none where part_rows is 0
    if (w == width_ && h == height_ && s == sample_) return {};
    width_ = height_ = sample_ = 0;
    const int ws = cross_samples(w, s), hs = cross_samples(h, s);
    for (DeviceImage<uint32_t>& a : arms_) CS_CUDA_TRY(a.allocate(w, h));
    for (DeviceImage<uint32_t>& k : words_) CS_CUDA_TRY(k.allocate(w, h));
    for (DeviceImage<int16_t>* m : {&raw_, &disparity_, &reliable_}) CS_CUDA_TRY(m->allocate(ws, hs));
    for (DeviceImage<uint32_t>* c : {&best_, &rival_}) CS_CUDA_TRY(c->allocate(ws, hs));
    CS_CUDA_TRY(right_keys_.allocate(w, hs));
    CS_CUDA_TRY(votes_.allocate(w, h));
    for (DeviceImage<int16_t>* m : {&voted_, &final_}) CS_CUDA_TRY(m->allocate(w, h));
    width_ = w;
    height_ = h;
    sample_ = s;
    return {};
  }

  std::string enqueue(const MethodFrame& f, cudaStream_t s, StageTimer* timer) override {
    CS_CUDA_TRY(enqueue_cross(views(f), params(f), s, [&](const char* name) { timer->mark(name); }));
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
    CrossDebug& c = out->cross;
    Image<uint32_t> best, rival;
    std::string errs[] = {download(f.levels[0].colour[0], &d.rgb_left),
                          download(f.levels[0].colour[1], &d.rgb_right),
                          download(arms_[0], &c.arms_left),
                          download(arms_[1], &c.arms_right),
                          download(words_[0], &c.words_left),
                          download(words_[1], &c.words_right),
                          download(raw_, &c.winners.raw),
                          download(disparity_, &c.winners.disparity),
                          download(best_, &best),
                          download(rival_, &rival),
                          download(reliable_, &c.reliable),
                          download(voted_, &c.voted),
                          download(final_, &d.disparity_left),
                          download(as_const(f.confidence), &out->confidence)};
    for (auto& e : errs)
      if (!e.empty()) return e;
    // The offered right map from its keys.
    Image<unsigned long long> keys;
    std::string e = download(right_keys_, &keys);
    if (!e.empty()) return e;
    c.winners.right = Image<int16_t>(keys.width, keys.height);
    for (size_t i = 0; i < keys.pixels.size(); ++i)
      c.winners.right.pixels[i] = keys.pixels[i] == ~0ull ? -1 : static_cast<int16_t>(keys.pixels[i] & 0xFFFFFFFFu);
    c.winners.best = Image<CrossCost>(best.width, best.height);
    c.winners.rival = Image<CrossCost>(rival.width, rival.height);
    for (size_t i = 0; i < best.pixels.size(); ++i) {
      c.winners.best.pixels[i] = unpack_cross_cost(best.pixels[i]);
      c.winners.rival.pixels[i] = unpack_cross_cost(rival.pixels[i]);
    }
    c.disparity = d.disparity_left;
    if (f.params->sample_restore == 1) {  // the samples are the pixels (matcher_debug.h CrossDebug)
      d.raw_left = c.winners.raw;
      d.raw_right = d.disparity_right = c.winners.right;
    }
    return {};
  }

  bool has_confidence() const override { return true; }
  bool needs_colour() const override { return true; }

  size_t device_bytes() const override {
    size_t n = raw_.bytes() + disparity_.bytes() + reliable_.bytes() + best_.bytes() + rival_.bytes() +
               parts_.bytes() + right_keys_.bytes() + votes_.bytes() + voted_.bytes() + final_.bytes();
    for (const DeviceImage<uint32_t>& a : arms_) n += a.bytes();
    for (const DeviceImage<uint32_t>& k : words_) n += k.bytes();
    return n;
  }

 private:
  CrossViews views(const MethodFrame& f) const {
    CrossViews v;
    const MethodLevel& l0 = f.levels[0];
    for (int i = 0; i < 2; ++i) {
      v.colour[i] = l0.colour[i];
      if (f.params->background) v.mask[i] = l0.mask[i];
      v.arms[i] = arms_[i].view();
      v.words[i] = words_[i].view();
    }
    v.raw = raw_.view();
    v.disparity = disparity_.view();
    v.best = best_.view();
    v.rival = rival_.view();
    v.parts = parts_.view();
    v.right_keys = right_keys_.view();
    v.reliable = reliable_.view();
    v.votes = votes_.view();
    v.voted = voted_.view();
    v.final_map = final_.view();
    v.confidence = f.confidence;
    return v;
  }
  // allocate() ran for this frame's configuration (method.h), so layout_ is
  // the frame's.
  CrossParams params(const MethodFrame& f) const {
    const Params& p = *f.params;
    CrossParams c;
    c.range = f.levels[0].range;
    c.tau = p.cross_tau;
    c.arm_length = p.cross_arm_length;
    c.truncation = p.cross_truncation;
    c.census_weight = p.cross_census_weight;
    c.sample = p.sample_restore;
    c.vote_arm_length = p.cross_vote_arm_length;
    c.uniqueness_ratio = resolve_uniqueness_ratio(p);
    c.lr_check = p.lr_check;
    c.tolerance = resolve_lr_tolerance(p);
    c.tile_rows = layout_.tile_rows;
    c.d_parts = layout_.parts;
    return c;
  }

  struct LayoutKey {
    int width = 0, height = 0, sample = 0, lo = 0, hi = 0, sms = 0;
    size_t shared_optin = 0;
    bool operator==(const LayoutKey& o) const {
      return width == o.width && height == o.height && sample == o.sample && lo == o.lo && hi == o.hi &&
             sms == o.sms && shared_optin == o.shared_optin;
    }
  };

  int width_ = 0, height_ = 0, sample_ = 0;
  LayoutKey layout_key_;
  CrossLayout layout_;
  DeviceImage<uint32_t> arms_[2], words_[2];
  DeviceImage<int16_t> raw_, disparity_, reliable_, voted_, final_;
  DeviceImage<uint32_t> best_, rival_;
  DeviceImage<uint4> parts_;
  DeviceImage<unsigned long long> right_keys_;
  DeviceImage<uint4> votes_;
};

}  // namespace

std::unique_ptr<MatchingMethod> make_cross_method() { return std::make_unique<CrossMethod>(); }

}  // namespace cs::cuda
