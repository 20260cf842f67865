// gst-cudastereo core: public API. No GStreamer, no CUDA.
//
// A stereo pair goes in as two FrameViews (left and right view, any supported
// pixel format, any row pitch); a disparity map comes out. The per-frame
// pipeline (Zhao & Taubin 2011, "Real-time stereo on GPGPU using progressive
// multi-resolution adaptive windows"):
//   convert -> pyramid -> background model (optional) -> census ->
//   coarsest-level full-range adaptive-window matching -> progressive
//   refinement level by level -> left-right check -> sub-pixel -> encode.
// Method block instead matches the grey views at full size over the full
// range: SSD block matching -> uniqueness -> left-right check -> sub-pixel,
// with a per-pixel confidence (stages.h, B1 .. B4).
// The exact rule of every stage is written in stages.h; the integer
// arithmetic shared with the CUDA kernels is in stereo_math.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cs {

// ---------------------------------------------------------------- images

enum class PixelFormat {
  RGBA, BGRA, RGBx, BGRx, xRGB, xBGR, ARGB, ABGR,  // packed 4 bytes
  RGB, BGR,                                        // packed 3 bytes
  GRAY8,
  // Chroma planes hold ceil(w/2) x ceil(h/2) samples (as GStreamer lays
  // them out), so any size works, odd ones included: pixel (x, y) takes the
  // chroma sample (x / 2, y / 2).
  I420,  // planar Y, U, V
  NV12,  // planar Y, interleaved UV
  // Packed 4:2:2 (USB cameras): one plane of 4-byte macropixels, each two
  // pixels wide; pixel x takes the chroma of macropixel x / 2. A row holds
  // ceil(w/2) macropixels (as GStreamer lays it out): with an odd width the
  // last one is whole and its second Y is padding.
  YUY2,  // Y0 U Y1 V
  UYVY,  // U Y0 V Y1
};

const char* pixel_format_name(PixelFormat f);

// Where the pixels of a view live. The CPU engine accepts Host only.
enum class Memory { Host, Device };

// A read-only view of one picture: up to three planes, each with its own
// row pitch in bytes (rows may be padded; pitch >= row bytes).
struct FrameView {
  PixelFormat format = PixelFormat::GRAY8;
  int width = 0;
  int height = 0;
  const uint8_t* plane[3] = {nullptr, nullptr, nullptr};
  std::ptrdiff_t pitch[3] = {0, 0, 0};
  Memory memory = Memory::Host;
};

// A typed 2-D view with a pitch in bytes.
template <typename T>
struct ImageView {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t pitch = 0;  // bytes between rows

  T* row(int y) const {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(const_cast<std::remove_const_t<T>*>(data)) + y * pitch);
  }
  T& at(int x, int y) const { return row(y)[x]; }
};

// An owning, tightly packed image (pitch = width * sizeof(T)).
template <typename T>
struct Image {
  int width = 0;
  int height = 0;
  std::vector<T> pixels;

  Image() = default;
  Image(int w, int h, T fill = T()) : width(w), height(h), pixels(static_cast<size_t>(w) * h, fill) {}
  T& at(int x, int y) { return pixels[static_cast<size_t>(y) * width + x]; }
  const T& at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
  ImageView<T> view() { return {pixels.data(), width, height, static_cast<std::ptrdiff_t>(width * sizeof(T))}; }
  ImageView<const T> view() const {
    return {pixels.data(), width, height, static_cast<std::ptrdiff_t>(width * sizeof(T))};
  }
};

// ---------------------------------------------------------------- parameters

constexpr int kDefaultHoleSpan = 16;
constexpr int kAutoCoarseRangeFactor = 0;   // Params::coarse_range_factor: chosen by a probe (stages.h)
constexpr int kDefaultCoarseRangeFactor = kAutoCoarseRangeFactor;
constexpr int kMaxCoarseRangeFactor = 16;
constexpr int kCoarseProbeInterval = 256;   // frames between probes of the automatic factor
constexpr int kDefaultMinSupport = 5;
constexpr int kMaxHoleSpan = 4096;
constexpr int kDefaultAbsorbDelay = 60;   // Params::absorb_delay
constexpr int kMaxAbsorbDelay = 126;      // the model counts a foreground run to 127
// Limits beyond which a value is certainly a mistake (Params::validate, and
// the element's property ranges). The Q4 output (d * 16 in 16 bits) bounds
// the disparity.
constexpr int kMaxDisparity = 4096;
constexpr int kMaxWarmupFrames = 100000;  // almost an hour at 30 fps
constexpr float kMaxForegroundThreshold = 100.0f;

// How a window's cost is formed from its 3x3 sub-windows (stereo_math.h,
// adaptive_window_cost): the centre plus the N best of the 8 around it.
enum class WindowVariant {
  Box = 0,    // centre sub-window only: a plain (2r+1)^2 box
  Best1 = 1,  // centre + best 1
  Best2 = 2,  // centre + best 2 (default; Yang & Pollefeys' choice of shapes)
  Best4 = 4,  // centre + best 4
};

enum class Colormap { Turbo, Jet, Grey };

// How disparities are found (stages.h states each method's rules).
enum class Method {
  // Zhao & Taubin 2011: census, adaptive windows, coarse-to-fine refinement.
  Progressive = 0,
  // SSD block matching over the full range at full resolution (NVIDIA's
  // CUDA SDK stereo sample, Stam 2008), with Tweddle's (2009) left-right
  // check, uniqueness test and sub-pixel parabola.
  Block = 1,
  // Cross-based aggregation with bitwise fast voting (Zhang et al. 2011):
  // colour crosses, truncated absolute differences aggregated over the
  // overlap of both views' regions, winner-takes-all, a left-right check,
  // bitwise voting of the reliable estimates, a 3x3 median; sample-and-
  // restore trades accuracy for speed (stages.h, method cross).
  Cross = 2,
  // Efficient large-scale stereo (ELAS, Geiger et al. 2010, on the GPU as
  // Herrmann's thesis): Sobel descriptors, robust support points, their
  // Delaunay triangulation as a piecewise-planar prior, dense matching
  // against it in both views, a left-right check, speckle removal and gap
  // filling; whole pixels (common/elas_dense.h, elas_support.h).
  Elas = 3,
};

struct RectificationMaps;  // rectify.h

// Every parameter has a default that works for a 640x480 camera pair.
struct Params {
  Method method = Method::Progressive;

  // Search range: disparities min_disparity .. max_disparity - 1 (so
  // max_disparity = 256 searches 256 disparities when min is 0).
  int min_disparity = 0;
  int max_disparity = 64;
  // Pyramid levels, level 0 = full size. 0 = automatic: the fewest levels
  // that bring the coarsest search range to kAutoCoarseRange or less, the
  // coarsest image to kAutoCoarsePixels or less and its full search to
  // kAutoCoarseWork or less, while it stays at least kMinLevelSize on each
  // side (resolve_levels).
  int levels = 0;
  // Adaptive window: sub-window radius r (each sub-window is (2r+1)^2).
  int subwindow_radius = 2;
  WindowVariant window = WindowVariant::Best1;
  // A pixel without a valid coarser disparity searches min..max of the valid
  // coarser disparities within this radius (coarser pixels) of its parent.
  int hole_search_radius = 2;
  // At most this many candidates for such a hole, from 2 min - 2 on (the
  // farthest surface around it); 0 = the whole span 2 min - 2 .. 2 max + 2.
  // 16 bounds a hole's work (about three pixels' worth) where its neighbours'
  // disparities spread wide: content beyond the range, flat areas. Aloe,
  // defaults: bad-2 9.95 -> 10.05 % at full size, 6.90 -> 6.92 % at half
  // (bench/RESULTS.md).
  int hole_span = kDefaultHoleSpan;
  // Above level 0, a disparity that fewer than this many of its 8
  // neighbours agree with (within 1) is dropped before the next finer level
  // refines from it (stages.h support_filter); 0 = off. Coarse levels match
  // content beyond the range, and flat areas, at random: such isolated
  // values would send their children's candidates anywhere; dropped, they
  // become holes searched from the neighbours that agree. Aloe, defaults:
  // bad-2 10.05 -> 9.57 % at full size, 6.92 -> 6.58 % at half (0 -> 5).
  int min_support = kDefaultMinSupport;
  // Levels above 0 search this many times the asked upper end of the range
  // (level_range; 1 = the asked range at every level). Content beyond the
  // asked range is then matched where it lies at the coarse levels, and its
  // children's candidates fall outside level 0's range (no candidates:
  // invalid, no work) instead of scattering over tiles of content inside it.
  // With 2, the levels above 0 of a range D search what those of 2 D search.
  // Aloe, defaults: bad-2 9.57 -> 9.61 % at full size, 6.58 -> 6.63 % at half.
  // A fixed factor does not suit every scene: on the H100 (bench/RESULTS.md,
  // 2026-11-25) 2 was faster where Aloe's content lies beyond D (1920x1080
  // x 64: 0.71 -> 0.37 ms; 3840x2160 x 128: 2.65 -> 1.06) and slower where
  // it does not (the coarsest level searches twice as far: 1024x768 x 128
  // 0.28 -> 0.39, 1920x1080 x 256 0.56 -> 0.64).
  // 0 (kAutoCoarseRangeFactor, the default): automatic, the engines choose
  // f per stream from a probe of the content's range (stages.h 6b, both
  // engines alike): coarse levels that cover the content, level 0
  // searching D. A single frame (a still image) uses 1.
  int coarse_range_factor = kDefaultCoarseRangeFactor;

  // Background model (paper section 3.2). Off = full-frame matching, the
  // right choice for moving cameras and still pairs.
  bool background = false;
  // Per frame, 0 < rate <= 1: how fast the model follows the scene
  // (stages.h stage 3). A pixel found foreground for more than
  // absorb_delay frames in a row learns at rate / 4 (on its turns, one
  // frame in kBackgroundTurns, at what that many frames compound to), so a
  // lasting change that moves a model channel by delta (8-bit units; V moves
  // by a global brightness offset, S may move further for dark saturated
  // colours) is absorbed within absorb_delay + n frames, n = ceil(ln(k *
  // min_sigma / delta) / ln(1 - rate / 4)) rounded up to whole turns, plus
  // at most a turn: +25 on V with the defaults (k 2.5, min_sigma 4, rate
  // 0.02, delay 60) takes at most 269 frames.
  float learning_rate = 0.02f;
  float foreground_threshold = 2.5f;  // k: foreground when |x - mean| > k sigma
  float min_sigma = 4.0f;             // floor of sigma, 8-bit units
  int warmup_frames = 30;             // frames learnt before testing; all foreground meanwhile
  // Frames a pixel stays foreground before the model starts absorbing it,
  // 0 .. kMaxAbsorbDelay: an object that passes a pixel in fewer frames
  // leaves no trace in the model (the background it uncovers is background
  // again at once); one that stops becomes background after that long.
  int absorb_delay = kDefaultAbsorbDelay;
  // Closing of the mask, (2r+1)^2 square (stages.h clean_mask); 0 = none.
  // On the Aloe moving-objects sequence (cs-bench-foreground, 640x480 x 64,
  // one object at 16 px a frame) radius 0 / 1 / 2 gave mask IoU 0.9884 /
  // 0.9957 / 0.9982 and object bad-2 1.78 / 0.92 / 0.59 % (0.81 % with
  // the model off): holes where the object's texture matches what is behind
  // it close at 2.
  int morph_radius = 2;

  bool lr_check = true;
  // Pixels, at each level; -1 = the method's default (resolve_lr_tolerance:
  // kDefaultLrTolerance, for cross kCrossLrTolerance).
  int lr_tolerance = -1;
  bool subpixel = true;

  // Method Block: side of the square SSD window (element property
  // block-size), odd, kMinMatchBlockSize .. kMaxMatchBlockSize. 9: on Aloe
  // half size 7 and 9 are best (bad-2 11.9 / 12.0 %), full size 11 and 13
  // (14.6 / 14.5 %); 9 is within 0.7 points at both (bench/README.md).
  int match_block_size = 9;
  // Method Cross (stages.h C1 .. C8), the paper's defaults: the colour
  // threshold of the arms (tau, max channel difference, 0 .. 255), their
  // longest reach (L, 1 .. kMaxCrossArm), the truncation of the per-pixel
  // cost (T, sum of the three channels' differences, 1 .. 765) and the
  // sample-and-restore factor (S: 1 off, 2, 3; the initial map is matched on
  // every S-th pixel of every S-th row and restored by the voting).
  int cross_tau = 20;
  int cross_arm_length = 16;
  int cross_truncation = 60;
  // Ours beside the paper's colour cost: the weight W of the census term of
  // a pixel's cost (stages.h C1b, C3: W per differing bit of the 8-bit
  // census of the luma, 0 .. kMaxCrossCensusWeight; 0 = the paper's eq. (2)
  // alone). 15 takes Aloe's bad-2 from 9.7 to 5.6 % at full size (with
  // the cross check's tolerance 0, bench/README.md).
  int cross_census_weight = 15;
  int sample_restore = 1;
  // The voting's longest arm (stages.h C6: its regions are the arms cut to
  // this, 1 .. kMaxCrossArm; at or above cross_arm_length, the paper's:
  // the aggregation's regions). On Aloe 4 takes bad-2 from 5.6 to 4.3 % at
  // full size (bench/README.md); the paper's regions are the default.
  int cross_vote_arm_length = 16;  // kMaxCrossArm
  // Method Elas (elas_dense.h E7): fill every gap of the final map (true,
  // ELAS's default here: a missing estimate counts as wrong) or only gaps of
  // at most 3 pixels between two estimates (false: what remains is matched).
  bool elas_fill_gaps = true;
  // Keep a pixel only when its best cost is clearly lower than the best cost
  // more than one disparity away (stages.h, passes_uniqueness): the
  // percentage by which that rival must exceed the best, 0 = off, up to
  // kMaxUniquenessRatio; -1 = the method's default (resolve_uniqueness_ratio:
  // off for progressive, which stays as it was; kBlockUniquenessRatio for
  // block, whose SSD costs need it to beat StereoBM on Aloe).
  int uniqueness_ratio = -1;

  // The caller reads the per-pixel confidence (Outputs::confidence, or the
  // encoder's OutputFormat::Confidence; the element's output-mode=confidence).
  // It changes no result. The CUDA engine's method progressive keeps the
  // level-0 costs behind the confidence (and tracks each pixel's rival
  // there) only while it is set, and refuses a confidence asked without it
  // by name, so that no caller reads a map that was never written.
  bool confidence = false;

  // Rectification before everything else (stages.h stage 0, issue 40): each
  // view resampled through its map (rectify.h, made from a calibration for
  // the views' size); null: the views come rectified.
  std::shared_ptr<const RectificationMaps> rectification;

  // Returns an empty string when valid, else a sentence naming the problem.
  std::string validate() const;
  // Checks that also need the size of one view (width x height).
  std::string validate_for_size(int width, int height) const;
};

// 64 rather than 32: on Middlebury Aloe (256 disparities) one level less
// (coarsest 1/4 size) lowers bad-2 from 14.8 % to 11.9 % for little time.
constexpr int kAutoCoarseRange = 64;
// The coarsest level is the only one searched over its whole range. Its
// full search costs a fixed part per pixel (window state, the winner and
// rival, both views' results) plus a part per pixel and disparity, while each
// finer level costs its pixels times a handful of candidates. So the
// coarsest level is bounded both in pixels and in work (pixels times range):
//  - pixels: 1920x1080 x 32 takes 3 levels (480x270 x 8) rather than 2
//    (960x540 x 16: 8.3 M pixel-disparities, but twice the time on the H100,
//    bench/RESULTS.md), 640x480 x 64 takes 2 rather than a full search at
//    full size; 384 x 384 since the refinement takes its tiles longest
//    first (tile_order.h): 1024x768 x 64 then cost more with a full search
//    of 512x384 x 32 than x 128 with three levels (H100, bench/RESULTS.md),
//    so it takes three (256x192 x 16);
//  - work: 1024x768 x 128 takes 3 levels (256x192 x 32), as x 256 does,
//    rather than a full search of 512x384 x 64 (12.6 M), which cost more
//    than x 256's three levels on the H100. 6.5 Mi since refined levels
//    match the left view alone (stages.h stage 7: the right map offered),
//    which made a refined level about half as dear against the full
//    search: on the H100 (bench/RESULTS.md, fourteenth session) 800x600 x
//    128 (400x300 x 64 = 7.7 M) and 768x576 x 128 (7.1 M) cost less with
//    three levels than two, 720x576 x 128 (6.6 M) and 640x480 x 128 (4.9 M)
//    more; with 8 Mi 800x600 x 128 cost more than x 256.
// Aloe's accuracy configurations (1282x1110 x 256 and 641x555 x 128, both
// coarsest 320x277 x 64 = 5.7 M) keep their levels.
constexpr int kAutoCoarseSide = 384;
constexpr int kAutoCoarsePixels = kAutoCoarseSide * kAutoCoarseSide;
constexpr int64_t kAutoCoarseWork = int64_t{13} << 19;
constexpr int kMinLevelSize = 16;
constexpr int kMinViewWidth = 16;
constexpr int kMinViewHeight = 16;
constexpr int kMaxLevels = 8;
// Method block's SSD window, odd: 3 x 3 is the smallest with neighbours;
// 31 x 31 windows keep every SSD sum, and the sub-pixel parabola's integer
// arithmetic on it (stereo_math.h), inside 32 bits.
constexpr int kMinMatchBlockSize = 3;
constexpr int kMaxMatchBlockSize = 31;
// SSD grows with the square of the intensity differences, so its useful
// ratios are larger than StereoBM's SAD ones (5 .. 15 there).
constexpr int kMaxUniquenessRatio = 1000;
// Aloe half x 128, block 9 (bench/README.md, method=block): 80 keeps 69.9 %
// of the pixels with ground truth at 1.37 % valid-only bad-2 (StereoBM:
// 62.4 %, 1.86 %); 60 keeps 72.3 % at 1.87 %.
constexpr int kBlockUniquenessRatio = 80;
// Method cross's limits (Params): an arm reaches at most 16 pixels (the
// paper's L; the GPU tile's apron), so a region holds at most 33 x 33
// pixels; a pixel's cost is at most 765 + 8 * 24 (kMaxCrossPixelCost) and
// an aggregated cost at most 33 * 33 * 957 < 2^20.
constexpr int kMaxCrossArm = 16;
constexpr int kMaxCrossTau = 255;
constexpr int kMaxCrossTruncation = 765;
constexpr int kMaxCrossCensusWeight = 24;
constexpr int kMaxCrossPixelCost = kMaxCrossTruncation + 8 * kMaxCrossCensusWeight;
static_assert(kMaxCrossPixelCost * (2 * kMaxCrossArm + 1) * (2 * kMaxCrossArm + 1) < (1 << 20) - 1,
              "an aggregated cost of method cross below 2^20 - 1");
constexpr int kMaxSampleRestore = 3;

// The uniqueness ratio in force: uniqueness_ratio, or for -1 the method's
// default (0 for progressive, kBlockUniquenessRatio for block).
int resolve_uniqueness_ratio(const Params& p);

// The left-right tolerance in force: lr_tolerance, or for -1 the method's
// default. Progressive (Aloe bad-2 10.7 % at 2, 11.9 % at 1), block and
// elas (ELAS's own 2): kDefaultLrTolerance. Cross: kCrossLrTolerance (the
// paper asks for a "similar" disparity, read as equal; with the census term
// Aloe's bad-2 at half size 5.57 % against 5.68 at 1 or 2, at full size
// 6.39 against 6.48).
constexpr int kDefaultLrTolerance = 2;
constexpr int kCrossLrTolerance = 0;
int resolve_lr_tolerance(const Params& p);

// Levels actually used for a view of width x height (resolves levels = 0).
int resolve_levels(const Params& p, int width, int height);
// Levels the pipeline builds: resolve_levels, except methods block and
// cross, which match at full size only (1; the background model works at
// full size).
int pipeline_levels(const Params& p, int width, int height);

// ---------------------------------------------------------------- results

struct FrameStats {
  int levels = 0;
  uint64_t frame_index = 0;            // frames processed since start/reset
  bool warming_up = false;             // background model still learning
  double foreground_fraction = 1.0;    // of the left view at full size
  // Background tests made after the warm-up (none during it): every cell of
  // both views and the pixels their cells left to their own test (stages.h
  // stage 3), against a test of every pixel of both views at full size.
  uint64_t background_tests = 0;
  uint64_t background_tests_full = 0;
  // The matching work: left-view pixels given candidates (the foreground
  // with the background model, every pixel without), summed over the levels
  // matched (method block: level 0), and the same for a full frame. Their
  // ratio is the part of a full frame's matching the model leaves.
  uint64_t matched_pixels = 0;
  uint64_t matched_pixels_full = 0;
  // matched_pixels / matched_pixels_full; 0 before any frame.
  double matched_fraction() const {
    return matched_pixels_full ? static_cast<double>(matched_pixels) / matched_pixels_full : 0.0;
  }
  double valid_fraction = 0.0;         // of left pixels with a valid disparity
  int coarse_range_factor = 1;         // the factor this frame's levels used
};

// What one call produces. Any view with data == nullptr is not produced.
// The views' memory kind must match the engine (host for the CPU engine).
struct Outputs {
  ImageView<uint16_t> disparity_q4;  // d * 16, 0 = invalid (left-referenced)
  ImageView<uint8_t> foreground;     // 255 = foreground (left view)
  // 0 = invalid or no margin .. 255 = unique (stages.h, confidence), left view
  ImageView<uint8_t> confidence;
  Memory memory = Memory::Host;
};

// ---------------------------------------------------------------- reference

// The CPU reference pipeline. Holds per-stream state (background models).
// Not thread-safe; one instance per stream.
class Matcher {
 public:
  explicit Matcher(const Params& params);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Replaces the parameters; the background model restarts when a parameter
  // that shapes it changes. Returns the validation message on error.
  std::string set_params(const Params& params);
  const Params& params() const;

  // Processes one pair. Both views must have the same size and format.
  // Returns an empty string on success, else the reason (nothing written).
  std::string process(const FrameView& left, const FrameView& right, const Outputs& out);

  // Forgets the background model; the next frame starts a new warm-up.
  void reset_background();
  const FrameStats& stats() const;

  // Intermediate results of the last call, for tests and tools.
  struct Debug;
  const Debug& debug() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cs
