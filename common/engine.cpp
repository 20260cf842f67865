// The Engine interface's default frames in flight: the frame runs inside
// submit(), its outcome waits there for finish().
#include "engine.h"

namespace cs {

std::string Engine::submit(const FrameView& left, const FrameView& right, const EncodeParams& encode,
                           const OutputFrame& out) {
  FrameResult r;
  r.error = process(left, right, encode, out);
  if (r.error.empty()) r.stats = stats();
  done_.push_back(std::move(r));
  return {};
}

Engine::FrameResult Engine::finish() {
  if (done_.empty()) return {"finish() without a frame submitted", FrameStats()};
  FrameResult r = std::move(done_.front());
  done_.pop_front();
  return r;
}

}  // namespace cs
