// cs-bench-cpu: time per frame of the CPU backend (the reference engine the
// element uses with backend=cpu), on the same kind of frames as
// cs-bench-engine: a slanted textured plane for full-frame matching, the
// moving-object sequence for the background model (learnt for 5 frames
// first, as cs-bench-engine does). One thread, host memory, GRAY16 output.
//   cs-bench-cpu [--size WxH] [--disparities D] [--background] [--frames N] [--header]
// Prints one markdown row: median ms per frame over N frames and the spread.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine.h"
#include "synthetic.h"

int main(int argc, char** argv) {
  int width = 640, height = 480, disparities = 64, frames = 10;
  bool background = false, header = false;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--background")) {
      background = true;
    } else if (!std::strcmp(argv[i], "--header")) {
      header = true;
    } else if (!std::strcmp(argv[i], "--size") && more) {
      if (std::sscanf(argv[++i], "%dx%d", &width, &height) != 2) width = 0;
    } else if (!std::strcmp(argv[i], "--disparities") && more) {
      disparities = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--frames") && more) {
      frames = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: cs-bench-cpu [--size WxH] [--disparities D] [--background] [--frames N] [--header]\n");
      return 2;
    }
  }
  if (width < 16 || height < 16 || width > 16384 || height > 16384 || disparities < 1 || frames < 1) {
    std::fprintf(stderr, "cs-bench-cpu: need a size of 16..16384 per side, disparities >= 1, frames >= 1\n");
    return 2;
  }
  cs::Params p;
  p.max_disparity = disparities;
  p.background = background;
  p.warmup_frames = 5;
  if (const std::string e = p.validate_for_size(width, height); !e.empty()) {
    std::fprintf(stderr, "cs-bench-cpu: %s\n", e.c_str());
    return 2;
  }
  auto engine = cs::make_cpu_engine(p);
  constexpr int kDistinct = 4;
  std::vector<cs::SyntheticPair> pairs;
  const int dmax = std::max(1, disparities - 8);
  for (int i = 0; i < kDistinct; ++i)
    pairs.push_back(background ? cs::make_sequence_frame(width, height, i * 4, dmax / 4, dmax, width / 4, height / 4,
                                                         width / 100 + 1, 0, 9)
                               : cs::make_slanted_pair(width, height, dmax * 0.2f, dmax * 0.7f / width, 9 + i));
  std::vector<uint16_t> out(static_cast<size_t>(width) * height);
  cs::OutputFrame of{reinterpret_cast<uint8_t*>(out.data()), static_cast<std::ptrdiff_t>(width * 2), width, height,
                     cs::Memory::Host};
  cs::EncodeParams ep;
  ep.format = cs::OutputFormat::DisparityQ4;
  auto one = [&](int i) {
    const cs::SyntheticPair& s = pairs[i % kDistinct];
    return engine->process(cs::rgba_view(s.left_rgba), cs::rgba_view(s.right_rgba), ep, of);
  };
  const int warm = background ? p.warmup_frames + 1 : 1;
  for (int i = 0; i < warm; ++i)
    if (const std::string e = one(i); !e.empty()) {
      std::fprintf(stderr, "cs-bench-cpu: %s\n", e.c_str());
      return 1;
    }
  std::vector<double> ms;
  for (int i = 0; i < frames; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (const std::string e = one(warm + i); !e.empty()) {
      std::fprintf(stderr, "cs-bench-cpu: %s\n", e.c_str());
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  if (header) {
    std::printf("| backend | size | D | mode | ms/frame (median) | spread min..max | fps |\n");
    std::printf("| --- | --- | ---: | --- | ---: | --- | ---: |\n");
  }
  std::printf("| cpu (1 thread) | %dx%d | %d | %s | %.1f | %.1f..%.1f | %.2f |\n", width, height, disparities,
              background ? "background" : "full", median, ms.front(), ms.back(), 1000.0 / median);
  return 0;
}
