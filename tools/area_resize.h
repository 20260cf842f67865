// Pictures for benchmarks: a file read as the matching intensity or as
// colour, and resizing by area averaging, so a real pair can be timed at any
// size.
// GStreamer-free, CPU only.
#pragma once

#include <cstdint>
#include <string>

#include "stereo.h"

namespace cs::tools {

// Resizes by area averaging, an exact box filter for any ratio (integer or
// not, shrinking or enlarging, each axis on its own): output pixel (i, j)
// covers the source rectangle [i * W / w, (i + 1) * W / w) x
// [j * H / h, (j + 1) * H / h) and takes the mean of the source pixels
// weighted by the area of each one inside it, rounded to nearest (halves
// up). Computed in integers, so the result is exact: a constant picture
// stays constant and a 2x2 block becomes its rounded mean. Same size: a copy.
// Empty output when either size is not positive.
Image<uint8_t> area_resize(const Image<uint8_t>& source, int width, int height);
// The same on packed RGBA (common/synthetic.h's layout: r | g << 8 | b << 16
// | a << 24), each of the four channels on its own by the same rule.
Image<uint32_t> area_resize(const Image<uint32_t>& source, int width, int height);

// Reads a picture file (tools/imageio: PNG, JPEG, PGM/PPM) as the matching
// intensity the engine computes from it (stages.h, convert_to_gray: luma of
// RGB, grey as is; alpha dropped; samples rescaled to 8 bits first).
// Empty string on success, else a sentence naming the file.
std::string read_grey(const std::string& path, Image<uint8_t>& grey);

// Reads a picture file as packed RGBA (r | g << 8 | b << 16 | 255 << 24):
// grey files give r = g = b, alpha is dropped (255), samples are rescaled to
// 8 bits first (imageio's to_frame8). Empty string on success, else a
// sentence naming the file.
std::string read_rgba(const std::string& path, Image<uint32_t>& rgba);

// Writes an 8-bit binary PGM ("P5", maxval 255, no comment), the form
// simple readers such as libSGM's sample programs accept.
std::string write_grey_pgm(const std::string& path, const Image<uint8_t>& grey);

}  // namespace cs::tools
