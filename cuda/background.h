// Stage 3 (stages.h background_level): the per-pixel HSV Gaussian model,
// tested coarse to fine (Zhao & Taubin 2011, section 3.2).
#pragma once

#include <cuda_runtime.h>

#include "stages.h"

namespace cs::cuda {

struct PixelModel {
  GaussQ8 hsv[3];  // H, S, V
};

struct BackgroundViews {
  ImageView<const uint32_t> rgb;
  ImageView<PixelModel> model;
  ImageView<const uint8_t> coarser_mask;  // data == nullptr: coarsest level, test every pixel
  ImageView<uint8_t> mask;                // out: 255 foreground, 0 background
  // Frames the model has seen before this one; read on the device so that a
  // captured graph replays correctly frame after frame.
  const int* frames_seen;
  unsigned long long* tests;  // += pixels tested
};

struct BackgroundLevelParams {
  BackgroundParams bp;
  int warmup_frames;
  int block_size;
};

cudaError_t enqueue_background(const BackgroundViews& views, const BackgroundLevelParams& params,
                               cudaStream_t stream);

// Adds one to *frames_seen (saturating), after the frame's last level.
cudaError_t enqueue_count_frame(int* frames_seen, cudaStream_t stream);

}  // namespace cs::cuda
