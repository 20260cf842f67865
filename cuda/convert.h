// Stage 1 (stages.h convert_to_gray / convert_to_rgb) on the GPU.
#pragma once

#include <cuda_runtime.h>

#include "kernel_call.h"
#include "remap_math.h"
#include "stereo.h"

namespace cs::cuda {

struct ModelViews;  // background.h

// The most intensity levels the conversion makes in its own pass.
constexpr int kMaxConvertLevels = 3;

// `in` must be in device memory. model (background.h; null: the background
// model off): the view's cells are tested as it is converted, then its
// pixels (enqueue_model_pixels), as view 0 (stages.h stage 3).
cudaError_t enqueue_convert(const FrameView& in, ImageView<uint8_t> gray, const ModelViews* model,
                            cudaStream_t stream);

// Both views of a pair (same format and size) in one launch, and in the same
// pass levels 1 .. levels - 1 of each view's intensity pyramid (stages.h
// downsample; levels <= kMaxConvertLevels): gray_left[l] and gray_right[l]
// are level l, width >> l x height >> l; with model, both views' background
// cells tested and updated in it and the pixels' pass after it (view 0
// left, 1 right). The kernel also zeroes clear[0,
// clear_words) (the frame's counters: the frame's first kernel resets them,
// so its graph needs no memset node). maps (null: none): both views'
// rectification maps, the views' size: stage 0 (stages.h rectify_view)
// fused, every pixel read through its map, so that the intensity and the
// model's colour are the rectified view's and no rectified copy is made.
// colour (null: none): both views' level-0 colour as convert_to_rgb packs
// it (a method that matches colour: method cross), the views' size.
cudaError_t enqueue_convert_pair(const FrameView& left, const FrameView& right, const ImageView<uint8_t>* gray_left,
                                 const ImageView<uint8_t>* gray_right, int levels, const ModelViews* model,
                                 cudaStream_t stream, unsigned long long* clear = nullptr, int clear_words = 0,
                                 const ImageView<const RemapPoint>* maps = nullptr);

// The launch enqueue_convert_pair above makes, with the same checks, as a
// description (kernel_call.h): the engine launches it or writes it into the
// first node of its frame's graph. Its KernelShape follows the format, the
// model (on or off) and the size; the rest are arguments. With model it is
// the cells' part: the caller enqueues the pixels' pass after it
// (background.h enqueue_model_pixels), which reads the input the conversion
// recorded (ModelInput).
cudaError_t convert_pair_call(const FrameView& left, const FrameView& right, const ImageView<uint8_t>* gray_left,
                              const ImageView<uint8_t>* gray_right, int levels, const ModelViews* model,
                              KernelCall* call, unsigned long long* clear = nullptr, int clear_words = 0,
                              const ImageView<const RemapPoint>* maps = nullptr,
                              const ImageView<uint32_t>* colour = nullptr);

}  // namespace cs::cuda
