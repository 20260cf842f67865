// The CPU backend of the Engine interface: the reference Matcher plus the
// output encoder, host memory only.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "engine.h"
#include "frame_checks.h"
#include "rectify.h"
#include "stages.h"

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
    std::string e = check_output_frame(out, left.width, left.height, encode);
    if (e.empty()) e = check_encode_params(encode);
    if (!e.empty()) return e;
    if (encode.views != ViewsOutput::None) return output_views(left, right, encode, out);
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
    views_only_ = false;
    const ImageView<const uint8_t> mask = static_cast<const Image<uint8_t>&>(foreground_).view();
    const ImageView<const uint8_t> confidence = static_cast<const Image<uint8_t>&>(confidence_).view();
    encode_output(static_cast<const Image<uint16_t>&>(disparity_).view(), &mask, encode, out.data, out.pitch,
                  &confidence);
    return {};
  }

  void reset_background() override { matcher_.reset_background(); }

  FrameStats stats() const override { return views_only_ ? views_stats_ : matcher_.stats(); }

 private:
  // The views as matching sees them (stage 0, or the colour of stage 1),
  // nothing matched: the background model neither tested nor updated.
  std::string output_views(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                           const OutputFrame& out) {
    // The checks of a matched frame (the maps' size among them), as the
    // CUDA engine makes them for its views frames.
    std::string e = check_view_pair(left, right);
    if (e.empty()) e = matcher_.params().validate_for_size(left.width, left.height);
    if (e.empty()) e = check_view_planes(left, "left");
    if (e.empty()) e = check_view_planes(right, "right");
    if (!e.empty()) return e;
    const RectificationMaps* maps = matcher_.params().rectification.get();
    const FrameView* in[2] = {&left, &right};
    for (int v = 0; v < 2; ++v) {
      if (maps)
        rectify_view(*in[v], maps->map[v], views_[v]);
      else
        convert_to_rgb(*in[v], views_[v]);
    }
    encode_views(static_cast<const Image<uint32_t>&>(views_[0]).view(),
                 static_cast<const Image<uint32_t>&>(views_[1]).view(), encode, out.data, out.pitch);
    views_stats_ = FrameStats();
    views_stats_.frame_index = ++views_frames_;
    views_stats_.foreground_fraction = 0.0;  // nothing tested
    views_only_ = true;
    return {};
  }

  Matcher matcher_;
  Image<uint16_t> disparity_;
  Image<uint8_t> foreground_;
  Image<uint8_t> confidence_;
  Image<uint32_t> views_[2];
  bool views_only_ = false;  // the last frame output the views (stats)
  FrameStats views_stats_;
  uint64_t views_frames_ = 0;
};

// Frames in flight on the CPU: a worker thread runs the submitted frames one
// after another, in order, through a CpuEngine of its own; the caller's
// thread only queues them and collects the outcomes. Everything that touches
// the matcher besides the worker (parameters, background reset, process(),
// stats()) first waits until no frame is running or queued.
class OverlappingCpuEngine final : public Engine {
 public:
  explicit OverlappingCpuEngine(const Params& params) : inner_(params), worker_([this] { work(); }) {}
  ~OverlappingCpuEngine() override {
    {
      std::lock_guard<std::mutex> guard(lock_);
      quit_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  const char* backend_name() const override { return "cpu"; }
  std::string set_params(const Params& params) override {
    wait_idle();
    return inner_.set_params(params);
  }
  std::string process(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                      const OutputFrame& out) override {
    wait_idle();
    return inner_.process(left, right, encode, out);
  }
  void reset_background() override {
    wait_idle();
    inner_.reset_background();
  }
  FrameStats stats() const override {
    wait_idle();
    return inner_.stats();
  }

  std::string submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                     const OutputFrame& out) override {
    auto job = std::make_shared<Job>();
    job->left = left;
    job->right = right;
    job->encode = encode;
    job->out = out;
    {
      std::lock_guard<std::mutex> guard(lock_);
      jobs_.push_back(job);
      queued_.push_back(job);
    }
    wake_.notify_all();
    return {};
  }
  FrameResult finish() override {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> guard(lock_);
      if (jobs_.empty()) return {"finish() without a frame submitted", FrameStats()};
      job = jobs_.front();
      finished_.wait(guard, [&] { return job->done; });
      jobs_.pop_front();
    }
    return std::move(job->result);
  }
  size_t in_flight() const override {
    std::lock_guard<std::mutex> guard(lock_);
    return jobs_.size();
  }
  bool overlaps_frames() const override { return true; }

 private:
  struct Job {
    FrameView left{}, right{};
    EncodeParams encode{};
    OutputFrame out{};
    bool done = false;
    FrameResult result;
  };

  void work() {
    std::unique_lock<std::mutex> guard(lock_);
    for (;;) {
      wake_.wait(guard, [&] { return quit_ || !queued_.empty(); });
      // At destruction, frames never started are dropped: their buffers
      // may be gone (a caller finishes what it wants before).
      if (quit_) return;
      std::shared_ptr<Job> job = queued_.front();
      queued_.pop_front();
      running_ = true;
      guard.unlock();
      FrameResult r;
      r.error = inner_.process(job->left, job->right, job->encode, job->out);
      if (r.error.empty()) r.stats = inner_.stats();
      guard.lock();
      job->result = std::move(r);
      job->done = true;
      running_ = false;
      finished_.notify_all();
    }
  }

  // Until no frame is running or waiting to run (their outcomes stay for finish()).
  void wait_idle() const {
    std::unique_lock<std::mutex> guard(lock_);
    finished_.wait(guard, [&] { return queued_.empty() && !running_; });
  }

  CpuEngine inner_;
  mutable std::mutex lock_;
  std::condition_variable wake_;          // the worker: a frame queued, or quit
  mutable std::condition_variable finished_;  // a frame done
  std::deque<std::shared_ptr<Job>> jobs_;    // submitted, not finished; oldest first
  std::deque<std::shared_ptr<Job>> queued_;  // submitted, not yet started
  bool running_ = false;
  bool quit_ = false;
  std::thread worker_;  // last: starts once everything above exists
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(const Params& params, bool overlap) {
  if (overlap) return std::make_unique<OverlappingCpuEngine>(params);
  return std::make_unique<CpuEngine>(params);
}

}  // namespace cs
