// Intermediate results of the CPU reference's last frame, per level, so tests
// (and the CUDA comparison tests) can check every stage on its own.
#pragma once

#include <vector>

#include "elas_dense.h"
#include "stages.h"

namespace cs {

struct LevelDebug {
  Range range{0, 0};
  Image<uint8_t> gray_left, gray_right;
  Image<uint32_t> rgb_left, rgb_right;          // level 0, with background or method cross
  Image<uint8_t> mask_left, mask_right;         // clean_mask at level 0, pool_mask above; empty without background
  uint64_t tests_left = 0, tests_right = 0;     // background tests made (level 0; 0 above it)
  Image<uint32_t> census_left, census_right;
  Image<int16_t> raw_left, raw_right;           // matched/refined, before cross-check
  // After cross-check (== raw without lr_check) and, above level 0, the
  // support filter: what the next finer level refines from.
  Image<int16_t> disparity_left, disparity_right;
};

// Method block: the full-size costs behind levels[0]'s maps (raw_left =
// winners.disparity; disparity_left after uniqueness and cross-check).
struct BlockDebug {
  BlockWinners winners;
};

// Method cross (stages.h C1 .. C8), every step's result. levels[0] holds
// disparity_left = disparity (full size, the output) and, with S = 1 only
// (where the samples are the pixels), raw_left = winners.raw and raw_right
// = disparity_right = winners.right (the offered map, which the check reads
// and does not change); with S > 1 those stay empty.
struct CrossDebug {
  Image<uint32_t> arms_left, arms_right;  // C1, full size
  Image<uint32_t> words_left, words_right;  // C1b, full size
  CrossWinners winners;                   // C4, samples (right: w x Hs)
  Image<int16_t> reliable;                // C5, samples
  Image<int16_t> voted;                   // C6, full size
  Image<int16_t> disparity;               // C7, full size: the final map
};

struct Matcher::Debug {
  // [0] = full size. Methods block and cross: no census, level 0 only.
  std::vector<LevelDebug> levels;
  BlockDebug block;  // method block; empty for the others
  CrossDebug cross;  // method cross; empty for the others
  ElasDebug elas;    // method elas; empty for the others
  // The level-0 left sweep's costs behind the confidence (progressive:
  // stage 6/7 at level 0; block: winners' best and rival; cross: empty, its
  // normalised costs are cross.winners') and the confidence of
  // levels[0].disparity_left (confidence_map; cross: cross_confidence).
  SweepCosts costs;
  Image<uint8_t> confidence;
};

// With the background model: every level's maps, the level-0 costs and the
// census codes as stages.h stage 3 states them where the model leaves no
// work (maps -1 and costs kNoCost off the view's foreground, census 0
// beyond census_apron(radius) of either view's); the engines' debug maps
// are compared after it.
void mask_debug_to_foreground(Matcher::Debug& dbg, int radius);

}  // namespace cs
