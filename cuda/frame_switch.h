// The choice a frame with the background model makes between its matching's
// bodies (a captured graph's SWITCH node, graph_condition.h), from the two
// views' full-size foreground counts: none where nothing is foreground (a
// still scene), the configurations for a few tiles where the left view's
// foreground is small, those for the whole grid where it is large, and the
// whole grid without masks or lists where both views are mostly foreground
// (stages.h matches_whole_frame: the warm-up, a scene change). The mask
// pass's last block makes it on the GPU (background.h MaskViews::choice),
// so that a still frame runs no kernel between its masks and its finish.
#pragma once

#include <cuda_runtime.h>

namespace cs::cuda {

// The condition's values: body k of the SWITCH runs when it is k.
constexpr unsigned kFewTiles = 0;       // a small foreground: the body for few tiles
constexpr unsigned kManyTiles = 1;      // the body for the whole grid
constexpr unsigned kAllForeground = 2;  // mostly foreground: the body without the masks
constexpr unsigned kNoTiles = 3;        // no foreground: no body
constexpr int kFrameBodies = 3;

// The body for fg left and fg_right right full-size foreground pixels:
// kAllForeground where both reach whole_from, else kFewTiles below
// few_below left pixels, else kManyTiles; kNoTiles where neither view has
// any (then no tile of any level holds foreground: a pixel of a coarser
// level's mask is foreground only where a full-size pixel under it is).
__host__ __device__ constexpr unsigned frame_body(unsigned long long fg, unsigned long long fg_right,
                                                  unsigned long long few_below, unsigned long long whole_from) {
  return fg == 0 && fg_right == 0                   ? kNoTiles
         : fg >= whole_from && fg_right >= whole_from ? kAllForeground
         : fg < few_below                             ? kFewTiles
                                                      : kManyTiles;
}

// Where a kernel sets the frame's condition: on (a handle of the graph
// being captured), the thresholds of frame_body, and a counter of the
// kernel's blocks done (zero before the launch; the last block chooses).
struct FrameSwitch {
  bool on = false;
  cudaGraphConditionalHandle condition = 0;
  unsigned long long few_below = 0;
  unsigned long long whole_from = ~0ull;
  unsigned* done = nullptr;
};

}  // namespace cs::cuda
