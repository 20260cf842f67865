// Stage 4 (stages.h census_transform): 5x5 census, reads clamped to the image.
#pragma once

#include <cuda_runtime.h>

#include "foreground_tiles.h"
#include "stereo.h"

namespace cs::cuda {

cudaError_t enqueue_census(ImageView<const uint8_t> gray, ImageView<uint32_t> census, cudaStream_t stream);

// Several images (every level of both views) in one launch; each pair
// gray[j] -> census[j] as enqueue_census. count <= kMaxCensusBatch.
// clear (optional, count views; data == nullptr: none): a buffer of image
// j's size whose words the launch sets to all ones as it goes, which saves
// the coarsest level a launch of its own to reset the right view's match
// keys (matching.h enqueue_match_pair, right_keys_kept).
// tiles (optional, count lists; off: every tile): image j's tiles of
// kCensusTileW x kCensusTileH pixels that are coded (the background
// model's, foreground_tiles.h); the others, and their clear, are left alone.
constexpr int kMaxCensusBatch = 16;
constexpr int kCensusTileW = 128;
constexpr int kCensusTileH = 8;
cudaError_t enqueue_census_batch(const ImageView<const uint8_t>* gray, const ImageView<uint32_t>* census, int count,
                                 cudaStream_t stream, const ImageView<uint32_t>* clear = nullptr,
                                 const TileList* tiles = nullptr);

}  // namespace cs::cuda
