#include "properties.h"

#include <cstdint>
#include <locale>
#include <mutex>
#include <sstream>

#include "property_enums.h"
#include "settings.h"
#include "stats.h"

namespace cs_gst {

namespace {

enum {
  PROP_0,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_MAX_DISPARITY,
  PROP_MIN_DISPARITY,
  PROP_LEVELS,
  PROP_WINDOW,
  PROP_BACKGROUND,
  PROP_LEARNING_RATE,
  PROP_FOREGROUND_THRESHOLD,
  PROP_WARMUP_FRAMES,
  PROP_ABSORB_DELAY,
  PROP_LR_CHECK,
  PROP_LR_TOLERANCE,
  PROP_SUBPIXEL,
  PROP_COLORMAP,
  PROP_ALPHA_MASK,
  PROP_INPUT_LAYOUT,
  PROP_OUTPUT_MODE,
  PROP_BASELINE,
  PROP_FOCAL_LENGTH,
  PROP_CALIBRATION,
  PROP_RECTIFY_ALPHA,
  PROP_POST_MESSAGES,
  PROP_QOS,
  PROP_FRAMES_IN_FLIGHT,
  PROP_METHOD,
  PROP_BLOCK_SIZE,
  PROP_CROSS_TAU,
  PROP_CROSS_ARM_LENGTH,
  PROP_CROSS_TRUNCATION,
  PROP_CROSS_CENSUS_WEIGHT,
  PROP_CROSS_VOTE_ARM_LENGTH,
  PROP_SAMPLE_RESTORE,
  PROP_ELAS_FILL_GAPS,
  PROP_UNIQUENESS_RATIO,
  PROP_COARSE_RANGE_FACTOR,
  PROP_STATS,
};

// A help text with numbers from the core's limits, so that it states the
// bound the code applies. Built once, in class_init, and interned: the specs
// are G_PARAM_STATIC_STRINGS and keep the pointer for the process's life.
// The classic locale writes 6.5 and 100000 whatever the application set.
template <typename... Parts>
const char* help_text(const Parts&... parts) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  (s << ... << parts);
  return g_intern_string(s.str().c_str());
}

// A count in units of 2^20, as the texts write it ("6.5" Mi for 13 << 19).
double mebi(int64_t n) { return static_cast<double>(n) / (int64_t{1} << 20); }

}  // namespace

static void reset_background_handler(GstCudaStereo* self) {
  std::lock_guard<std::mutex> guard(PRIV(self)->lock);
  PRIV(self)->reset_requested = true;
}

static GstStructure* stats_structure(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  Stats s;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    s = priv->stats;
  }
  const HostPins::Counts pins = priv->host_pins.counts();
  s.pinned_bytes = pins.registered_bytes;
  s.pin_registrations = pins.registrations;
  s.pin_unregistrations = pins.unregistrations;
  return stats_structure(s);
}

namespace {

// What every group of properties below takes: the core's defaults and the
// two ways a property may change (while playing, or only up to READY).
struct Install {
  GObjectClass* gobject_class;
  cs::Params d;
  GParamFlags playing = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  GParamFlags ready = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
};

// Engine, GPU, search range and window (the groups install in the order gst-inspect lists).
void install_engine_and_range(const Install& in) {
  GObjectClass* gobject_class = in.gobject_class;
  [[maybe_unused]] const cs::Params& d = in.d;
  [[maybe_unused]] const GParamFlags playing = in.playing;
  [[maybe_unused]] const GParamFlags ready = in.ready;

  g_object_class_install_property(
      gobject_class, PROP_BACKEND,
      g_param_spec_enum("backend", "Backend",
                        "Engine to run: auto (CUDA if this build and the machine have it, else the CPU, saying so "
                        "on the bus), cuda (fail to start without it) or cpu",
                        gst_cuda_stereo_backend_get_type(), GST_CUDA_STEREO_BACKEND_AUTO, ready));
  g_object_class_install_property(
      gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int("cuda-device-id", "CUDA device id", "CUDA device to use, -1 = automatic", -1, G_MAXINT16, -1,
                       ready));
  g_object_class_install_property(
      gobject_class, PROP_MAX_DISPARITY,
      g_param_spec_int("max-disparity", "Maximum disparity",
                       "Exclusive upper end of the search range in pixels (searches min-disparity .. max-disparity-1); "
                       "also the full scale of GRAY8 and false-colour output",
                       1, cs::kMaxDisparity, d.max_disparity, playing));
  g_object_class_install_property(
      gobject_class, PROP_MIN_DISPARITY,
      // Up to one below max-disparity's limit: max-disparity ends the range.
      g_param_spec_int("min-disparity", "Minimum disparity", "Lowest disparity searched, pixels", 0,
                       cs::kMaxDisparity - 1, d.min_disparity, playing));
  g_object_class_install_property(
      gobject_class, PROP_LEVELS,
      g_param_spec_int("levels", "Pyramid levels",
                       help_text("Pyramid levels including full size; 0 = automatic: the fewest that bring the "
                                 "coarsest level, the only one searched over its whole range, to at most ",
                                 cs::kAutoCoarseRange, " disparities, ", cs::kAutoCoarseSide, "x", cs::kAutoCoarseSide,
                                 " pixels and ", mebi(cs::kAutoCoarseWork), " Mi pixel-disparities"),
                       0, cs::kMaxLevels, d.levels, playing));
  g_object_class_install_property(
      gobject_class, PROP_WINDOW,
      g_param_spec_enum("window", "Window variant",
                        "Adaptive window: centre sub-window plus the N best of the 8 around it (Yang & Pollefeys)",
                        gst_cuda_stereo_window_get_type(), static_cast<int>(d.window), playing));
}

// The background model.
void install_background_model(const Install& in) {
  GObjectClass* gobject_class = in.gobject_class;
  [[maybe_unused]] const cs::Params& d = in.d;
  [[maybe_unused]] const GParamFlags playing = in.playing;
  [[maybe_unused]] const GParamFlags ready = in.ready;

  g_object_class_install_property(
      gobject_class, PROP_BACKGROUND,
      g_param_spec_boolean("background", "Background model",
                           "Per-pixel Gaussian background model in HSV, tested coarse to fine: 4x4 cells first, "
                           "then the pixels where neighbouring cells disagree; only the foreground is matched, at "
                           "every level (static cameras). Changing it restarts the model",
                           d.background, playing));
  g_object_class_install_property(
      gobject_class, PROP_LEARNING_RATE,
      g_param_spec_float("learning-rate", "Learning rate", "Background model learning rate per frame (0 < rate <= 1)",
                         1e-6f, 1.0f, d.learning_rate, playing));
  g_object_class_install_property(
      gobject_class, PROP_FOREGROUND_THRESHOLD,
      g_param_spec_float("foreground-threshold", "Foreground threshold",
                         "k: a pixel is foreground when any HSV channel is beyond k standard deviations", 0.1f,
                         cs::kMaxForegroundThreshold, d.foreground_threshold, playing));
  g_object_class_install_property(
      gobject_class, PROP_WARMUP_FRAMES,
      g_param_spec_int("warmup-frames", "Warm-up frames",
                       "Frames the background model only learns (everything is foreground meanwhile)", 0,
                       cs::kMaxWarmupFrames, d.warmup_frames, playing));
  g_object_class_install_property(
      gobject_class, PROP_ABSORB_DELAY,
      g_param_spec_int("absorb-delay", "Absorb delay",
                       "Frames a pixel stays foreground before the background model starts absorbing it: an object "
                       "that passes a pixel in fewer frames leaves no trace behind it, one that stops becomes "
                       "background after this and the learning rate",
                       0, cs::kMaxAbsorbDelay, d.absorb_delay, playing));
}

// The checks and the output: its encoding, colours and metric depth.
void install_checks_and_output(const Install& in) {
  GObjectClass* gobject_class = in.gobject_class;
  [[maybe_unused]] const cs::Params& d = in.d;
  [[maybe_unused]] const GParamFlags playing = in.playing;
  [[maybe_unused]] const GParamFlags ready = in.ready;

  g_object_class_install_property(
      gobject_class, PROP_LR_CHECK,
      g_param_spec_boolean("lr-check", "Left-right check", "Invalidate disparities the right view does not confirm",
                           d.lr_check, playing));
  g_object_class_install_property(
      gobject_class, PROP_LR_TOLERANCE,
      g_param_spec_int("lr-tolerance", "Left-right tolerance",
                       help_text("Largest left/right disparity difference kept, pixels; -1 = the method's default (",
                                 cs::kDefaultLrTolerance, "; method=cross ", cs::kCrossLrTolerance,
                                 ", the paper's check)"),
                       -1, 64, d.lr_tolerance, playing));
  g_object_class_install_property(
      gobject_class, PROP_SUBPIXEL,
      g_param_spec_boolean("subpixel", "Sub-pixel",
                           "Parabola fit to 1/16 pixel (methods progressive and block; methods cross and elas "
                           "give whole pixels)",
                           d.subpixel, playing));
  g_object_class_install_property(
      gobject_class, PROP_COLORMAP,
      g_param_spec_enum("colormap", "Colour map", "False-colour map for RGBA/BGRA/RGBx/BGRx output",
                        gst_cuda_stereo_colormap_get_type(), GST_CUDA_STEREO_COLORMAP_TURBO, playing));
  g_object_class_install_property(
      gobject_class, PROP_ALPHA_MASK,
      g_param_spec_boolean("alpha-mask", "Alpha mask",
                           "RGBA/BGRA output: alpha = 255 on the foreground, 0 on the background (as the paper shows "
                           "it); off: alpha = 255 everywhere",
                           FALSE, playing));
  g_object_class_install_property(
      gobject_class, PROP_INPUT_LAYOUT,
      g_param_spec_enum("input-layout", "Input layout",
                        "How the packed `sink` frame holds the views; anything but auto overrides the caps' "
                        "multiview-mode (needed when decoders say mono)",
                        gst_cuda_stereo_input_layout_get_type(), GST_CUDA_STEREO_INPUT_LAYOUT_AUTO, playing));
  g_object_class_install_property(
      gobject_class, PROP_OUTPUT_MODE,
      g_param_spec_enum("output-mode", "Output mode",
                        "disparity; depth (GRAY16_LE millimetres, Z = baseline * focal-length / d; needs both "
                        "set, and rectified views); or confidence (GRAY8: 0 = invalid or another disparity fits as "
                        "well .. 255 = unique, from the costs of the pixel's best and next best disparity more than "
                        "one away). Confidence is "
                        "an output mode so that it is a plain GRAY8 stream any element or appsink takes at full "
                        "resolution; for disparity and confidence of the same frames, tee the input into two "
                        "elements; or rectified (the two views after the `calibration`'s rectification, left first, "
                        "side by side or one above the other as the input packs them: RGBA, BGRA, RGBx or BGRx, twice "
                        "a view's width or height; nothing is matched). Changing it renegotiates",
                        gst_cuda_stereo_output_mode_get_type(), GST_CUDA_STEREO_OUTPUT_MODE_DISPARITY, playing));
  g_object_class_install_property(
      gobject_class, PROP_BASELINE,
      g_param_spec_double("baseline", "Baseline",
                          "Distance between the two camera centres, metres, from the stereo calibration (depth "
                          "output); 0 = not set: output-mode=depth fails with an error until it is set",
                          0.0, 1000.0, kDefaultBaselineM, playing));
  g_object_class_install_property(
      gobject_class, PROP_FOCAL_LENGTH,
      g_param_spec_double("focal-length", "Focal length",
                          "Focal length of the rectified views, pixels, from the stereo calibration (depth output); "
                          "0 = not set: output-mode=depth fails with an error until it is set",
                          0.0, 1e7, kDefaultFocalPx, playing));
  g_object_class_install_property(
      gobject_class, PROP_CALIBRATION,
      g_param_spec_string("calibration", "Calibration",
                          "Stereo calibration to rectify the views with before matching, and to take baseline and "
                          "focal-length from (unless set): an OpenCV FileStorage file (YAML or XML: M1 D1 M2 D2 R T; "
                          "intrinsics.yml,extrinsics.yml), two ROS camera_info files (left.yaml,right.yaml) or a "
                          "Kalibr camchain.yaml; lengths taken as metres. Empty: the views come rectified",
                          "", playing));
  g_object_class_install_property(
      gobject_class, PROP_RECTIFY_ALPHA,
      g_param_spec_double("rectify-alpha", "Rectification crop",
                          "With a calibration (not ROS files, which fix their own): 0 = only pixels both cameras "
                          "see (no black border), 1 = every camera pixel kept (black corners), between: scaled",
                          0.0, 1.0, 0.0, playing));
}

// Live pipelines, frames in flight, the method and its parameters, statistics, and the reset-background signal.
void install_live_and_methods(const Install& in) {
  GObjectClass* gobject_class = in.gobject_class;
  [[maybe_unused]] const cs::Params& d = in.d;
  [[maybe_unused]] const GParamFlags playing = in.playing;
  [[maybe_unused]] const GParamFlags ready = in.ready;

  g_object_class_install_property(
      gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean("post-messages", "Post messages",
                           "Post an element message named \"cudastereo\" on the bus for every output frame: "
                           "timestamp, running-time, stream-time, duration, foreground-fraction, valid-fraction, "
                           "processing-time (ns), frame-index, placeholder, warming-up",
                           FALSE, playing));
  g_object_class_install_property(
      gobject_class, PROP_QOS,
      g_param_spec_boolean("qos", "QoS",
                           "Handle Quality-of-Service events from downstream: a frame that would reach the sink late "
                           "is skipped before it is matched, counted in stats (qos-skipped) and announced with a QoS "
                           "message. Off: every input frame (or pair) gives exactly one output frame",
                           TRUE, playing));
  g_object_class_install_property(
      gobject_class, PROP_FRAMES_IN_FLIGHT,
      g_param_spec_int("frames-in-flight", "Frames in flight",
                       "Frames the element may have handed to the engine and not yet pushed. From 2 on, an engine "
                       "that overlaps frames works on one while the element pushes the one before and takes in the "
                       "next (more frames a second); a frame is held back only while the next input is already "
                       "waiting, so a source that is keeping up (a live camera) gets each frame as soon as it is "
                       "done. The "
                       "CUDA engine queues frames with outputs in CUDA or pinned memory on its stream; the CPU "
                       "backend overlaps frames on a worker thread. 1: each frame is pushed before the next is "
                       "taken. "
                       "Set in the NULL or READY state",
                       1, 16, Settings().frames_in_flight,
                       static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property(
      gobject_class, PROP_METHOD,
      g_param_spec_enum("method", "Matching method",
                        "How disparities are found: progressive (Zhao & Taubin 2011: census costs, adaptive windows, "
                        "coarse to fine; window, levels and the background model's pyramid apply), block (SSD "
                        "block matching of the full-size views over the whole range, as NVIDIA's CUDA stereo sample, "
                        "with Tweddle's left-right check, uniqueness test and sub-pixel parabola; block-size and "
                        "uniqueness-ratio apply) or cross (Zhang et al. 2011: cross-shaped support regions grown "
                        "from each pixel's colour, truncated absolute differences of R, G, B aggregated over the "
                        "overlap of both views' regions, winner-takes-all over the whole range at full size, a "
                        "left-right check for reliability, bitwise fast voting of the reliable disparities over each "
                        "region, a 3x3 median; whole-pixel disparities, subpixel does not apply; cross-tau, "
                        "cross-arm-length, cross-truncation, sample-restore and uniqueness-ratio apply) or elas "
                        "(Geiger et al. 2010: Sobel descriptors, robust support points, their Delaunay "
                        "triangulation as a piecewise-planar prior, dense matching against it in both views, "
                        "left-right check, speckle removal, gap filling; whole pixels; elas-fill-gaps, lr-check, "
                        "lr-tolerance and uniqueness-ratio apply)",
                        gst_cuda_stereo_method_get_type(), static_cast<int>(d.method), playing));
  g_object_class_install_property(
      gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_int("block-size", "Block size",
                       "method=block: side of the square SSD window, pixels, odd (an even size is refused with an "
                       "error naming it when the next frame starts)",
                       cs::kMinMatchBlockSize, cs::kMaxMatchBlockSize, d.match_block_size, playing));
  g_object_class_install_property(
      gobject_class, PROP_CROSS_TAU,
      g_param_spec_int("cross-tau", "Cross colour threshold",
                       "method=cross: colour threshold of the support regions: each arm of a pixel's cross (left, "
                       "right, up, down) reaches out until just before the first two pixels in a row whose colour "
                       "differs from the pixel's by more than this in any of R, G, B (one such pixel alone does not "
                       "stop it), at most cross-arm-length pixels and never past the image's edge. Larger: wider "
                       "regions, smoother maps, object edges blur more",
                       0, cs::kMaxCrossTau, d.cross_tau, playing));
  g_object_class_install_property(
      gobject_class, PROP_CROSS_ARM_LENGTH,
      g_param_spec_int("cross-arm-length", "Cross arm length",
                       "method=cross: longest arm of a pixel's support cross, pixels, in each of the four "
                       "directions (a region spans at most 2 * length + 1 pixels each way)",
                       1, cs::kMaxCrossArm, d.cross_arm_length, playing));
  g_object_class_install_property(
      gobject_class, PROP_CROSS_TRUNCATION,
      g_param_spec_int("cross-truncation", "Cross cost truncation",
                       "method=cross: a pixel pair's cost, the sum of its R, G and B absolute differences (0 .. "
                       "765), is cut at this value before it is aggregated over the region, so that an occluded or "
                       "noisy pixel weighs no more than this",
                       1, cs::kMaxCrossTruncation, d.cross_truncation, playing));
  g_object_class_install_property(
      gobject_class, PROP_CROSS_CENSUS_WEIGHT,
      g_param_spec_int("cross-census-weight", "Cross census weight",
                       "method=cross: added to a pixel pair's truncated colour cost for each of the 8 bits in which "
                       "their census codes differ (each bit: whether the luma 2 pixels away in one of 8 directions "
                       "is darker than the pixel's; with sample-restore S, the S x S means one step away). On Aloe "
                       "it takes bad-2 from 9.7 to 5.6 %; a census compares intensities within a view, so it does "
                       "not depend on the cameras' gains; 0 = the paper's colour cost alone",
                       0, cs::kMaxCrossCensusWeight, d.cross_census_weight, playing));
  g_object_class_install_property(
      gobject_class, PROP_CROSS_VOTE_ARM_LENGTH,
      g_param_spec_int("cross-vote-arm-length", "Cross voting arm length",
                       "method=cross: longest arm of the regions the voting fills and corrects the map over (each "
                       "pixel's cross with its arms cut to this, pixels); at or above cross-arm-length the paper's "
                       "regions, the aggregation's. Smaller: the vote follows finer structure and slanted surfaces "
                       "(on Aloe 4 gives 4.3 % bad-2 at full size, 16 gives 5.6 %), fills smaller holes",
                       1, cs::kMaxCrossArm, d.cross_vote_arm_length, playing));
  g_object_class_install_property(
      gobject_class, PROP_SAMPLE_RESTORE,
      g_param_spec_int("sample-restore", "Sample and restore",
                       help_text("method=cross: sample-and-restore factor S. 1 = off; S > 1 (up to ",
                                 cs::kMaxSampleRestore, "): the initial disparities are matched only on every S-th pixel of every S-th row "
                                 "(about S * S times less matching) and the voting restores the full-size map from "
                                 "them: faster, less accurate"),
                       1, cs::kMaxSampleRestore, d.sample_restore, playing));
  g_object_class_install_property(
      gobject_class, PROP_ELAS_FILL_GAPS,
      g_param_spec_boolean("elas-fill-gaps", "ELAS gap filling",
                           "method=elas: fill every gap of the final map from its nearest estimates along the row, "
                           "then the column (the farther of the two ends between two estimates): a dense map; false: "
                           "only gaps of at most 3 pixels between two estimates, the rest stays invalid",
                           d.elas_fill_gaps, playing));
  g_object_class_install_property(
      gobject_class, PROP_UNIQUENESS_RATIO,
      g_param_spec_int("uniqueness-ratio", "Uniqueness ratio",
                       help_text("Keep a pixel only when the best cost more than one disparity away from its winner "
                                 "exceeds the winner's by more than this percentage (rival * 100 > best * (100 + "
                                 "ratio)), as OpenCV's StereoBM; 0 = off, -1 = the method's default (block: ",
                                 cs::kBlockUniquenessRatio,
                                 ", progressive, cross and elas: off; progressive applies it at every level, over each "
                                 "pixel's own candidates, cross to costs normalised by their region's size, elas to "
                                 "its energies over each pixel's candidates)"),
                       -1, cs::kMaxUniquenessRatio, d.uniqueness_ratio, playing));
  g_object_class_install_property(
      gobject_class, PROP_COARSE_RANGE_FACTOR,
      g_param_spec_int("coarse-range-factor", "Coarse range factor",
                       help_text("Method progressive: the levels above full size search this many times "
                                 "max-disparity (full size always searches the asked range); ",
                                 cs::kAutoCoarseRangeFactor, " = automatic: a probe on the first frame and every ",
                                 cs::kCoarseProbeInterval,
                                 " frames measures how far the scene's disparities reach and picks the smallest power "
                                 "of two that covers them, so content nearer than max-disparity allows costs no more "
                                 "than a wider range would. 1 = the asked range at every level"),
                       cs::kAutoCoarseRangeFactor, cs::kMaxCoarseRangeFactor, d.coarse_range_factor, playing));
  g_object_class_install_property(
      gobject_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Read-only GstStructure: backend, frames, fps, foreground-fraction, matched-fraction "
                         "(the last frame's matching work against a full frame's: 1.0 without the background model), "
                         "valid-fraction, levels, model-frames, warming-up, "
                         "unpaired-frames, dropped-frames, uploaded-ahead (frames whose upload to the GPU began as "
                         "they arrived), qos-skipped (frames not matched because they would have been late), "
                         "overlapped-frames (frames handed to the engine while an earlier one was still in flight), "
                         "processing-time (ns, recent maximum to match a frame), latency (ns, what the element adds "
                         "to the latency query), coarse-range-factor (the factor the last frame's coarse levels used), "
                         "pinned-in-place-frames and gathered-frames (CUDA backend, system "
                         "memory in: frames moved to the GPU by DMA from pinned memory other than the element's pool, "
                         "and frames copied through its staging area), pinned-in-place-bytes, pin-registrations, "
                         "pin-unregistrations (system memory page-locked where it lies because it came back: bytes "
                         "now, registrations and their undoing when the memory was freed, since the element was "
                         "made)",
                         GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  /**
   * GstCudaStereo::reset-background:
   *
   * Forgets the background model; the next frame starts a new warm-up.
   */
  g_signal_new_class_handler("reset-background", G_TYPE_FROM_CLASS(gobject_class),
                             static_cast<GSignalFlags>(G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION),
                             G_CALLBACK(reset_background_handler), nullptr, nullptr, nullptr, G_TYPE_NONE, 0);
}

}  // namespace

void install_properties_and_signals(GObjectClass* gobject_class) {
  const Install in{gobject_class, cs::Params()};
  install_engine_and_range(in);
  install_background_model(in);
  install_checks_and_output(in);
  install_live_and_methods(in);
  mark_property_enums_as_plugin_api();
}

void set_property(GstCudaStereo* self, guint prop_id, const GValue* value, GParamSpec* pspec) {
  GstCudaStereoPrivate* priv = PRIV(self);
  bool renegotiate = false;
  // The device and engine are chosen in start: past READY they stay.
  GST_OBJECT_LOCK(self);
  const bool running = GST_STATE(self) > GST_STATE_READY;
  GST_OBJECT_UNLOCK(self);
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    Settings& s = priv->settings;
    cs::Params& p = s.params;
    switch (prop_id) {
      case PROP_BACKEND:
        if (running)
          GST_WARNING_OBJECT(self, "backend can only change in the NULL or READY state; kept");
        else
          s.backend = static_cast<GstCudaStereoBackend>(g_value_get_enum(value));
        break;
      case PROP_CUDA_DEVICE_ID:
        if (running)
          GST_WARNING_OBJECT(self, "cuda-device-id can only change in the NULL or READY state; kept");
        else
          s.cuda_device_id = g_value_get_int(value);
        break;
      case PROP_MAX_DISPARITY: p.max_disparity = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_MIN_DISPARITY: p.min_disparity = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_LEVELS: p.levels = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_WINDOW:
        p.window = static_cast<cs::WindowVariant>(g_value_get_enum(value));
        priv->params_dirty = true;
        break;
      case PROP_BACKGROUND: p.background = g_value_get_boolean(value); priv->params_dirty = true; break;
      case PROP_LEARNING_RATE: p.learning_rate = g_value_get_float(value); priv->params_dirty = true; break;
      case PROP_FOREGROUND_THRESHOLD:
        p.foreground_threshold = g_value_get_float(value);
        priv->params_dirty = true;
        break;
      case PROP_WARMUP_FRAMES: p.warmup_frames = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_ABSORB_DELAY: p.absorb_delay = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_LR_CHECK: p.lr_check = g_value_get_boolean(value); priv->params_dirty = true; break;
      case PROP_LR_TOLERANCE: p.lr_tolerance = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_SUBPIXEL: p.subpixel = g_value_get_boolean(value); priv->params_dirty = true; break;
      case PROP_COLORMAP: s.colormap = static_cast<GstCudaStereoColormap>(g_value_get_enum(value)); break;
      case PROP_ALPHA_MASK: s.alpha_mask = g_value_get_boolean(value); break;
      case PROP_INPUT_LAYOUT:
        s.input_layout = static_cast<GstCudaStereoInputLayout>(g_value_get_enum(value));
        priv->geometry_dirty = true;
        break;
      case PROP_OUTPUT_MODE:
        s.output_mode = static_cast<GstCudaStereoOutputMode>(g_value_get_enum(value));
        // The engine learns that the confidence is read (method progressive's
        // CUDA kernels keep the costs behind it only then).
        p.confidence = confidence_output(s);
        priv->params_dirty = true;
        renegotiate = true;
        break;
      case PROP_METHOD:
        p.method = static_cast<cs::Method>(g_value_get_enum(value));
        priv->params_dirty = true;
        break;
      case PROP_BLOCK_SIZE: p.match_block_size = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_CROSS_TAU: p.cross_tau = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_CROSS_ARM_LENGTH: p.cross_arm_length = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_CROSS_TRUNCATION: p.cross_truncation = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_CROSS_CENSUS_WEIGHT:
        p.cross_census_weight = g_value_get_int(value);
        priv->params_dirty = true;
        break;
      case PROP_CROSS_VOTE_ARM_LENGTH:
        p.cross_vote_arm_length = g_value_get_int(value);
        priv->params_dirty = true;
        break;
      case PROP_SAMPLE_RESTORE: p.sample_restore = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_ELAS_FILL_GAPS: p.elas_fill_gaps = g_value_get_boolean(value); priv->params_dirty = true; break;
      case PROP_UNIQUENESS_RATIO: p.uniqueness_ratio = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_COARSE_RANGE_FACTOR: p.coarse_range_factor = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_BASELINE: s.baseline_m = g_value_get_double(value); break;
      case PROP_FOCAL_LENGTH: s.focal_px = g_value_get_double(value); break;
      case PROP_CALIBRATION: {
        const gchar* v = g_value_get_string(value);
        s.calibration = v ? v : "";
        priv->params_dirty = true;
        break;
      }
      case PROP_RECTIFY_ALPHA: s.rectify_alpha = g_value_get_double(value); priv->params_dirty = true; break;
      case PROP_POST_MESSAGES: s.post_messages = g_value_get_boolean(value); break;
      case PROP_QOS: s.qos = g_value_get_boolean(value); break;
      case PROP_FRAMES_IN_FLIGHT:
        if (running)
          GST_WARNING_OBJECT(self, "frames-in-flight can only change in the NULL or READY state; kept");
        else
          s.frames_in_flight = g_value_get_int(value);
        break;
      default: G_OBJECT_WARN_INVALID_PROPERTY_ID(self, prop_id, pspec); break;
    }
  }
  if (renegotiate) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
}

void get_property(GstCudaStereo* self, guint prop_id, GValue* value, GParamSpec* pspec) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (prop_id == PROP_STATS) {
    g_value_take_boxed(value, stats_structure(self));
    return;
  }
  std::lock_guard<std::mutex> guard(priv->lock);
  const Settings& s = priv->settings;
  const cs::Params& p = s.params;
  switch (prop_id) {
    case PROP_BACKEND: g_value_set_enum(value, s.backend); break;
    case PROP_CUDA_DEVICE_ID: g_value_set_int(value, s.cuda_device_id); break;
    case PROP_MAX_DISPARITY: g_value_set_int(value, p.max_disparity); break;
    case PROP_MIN_DISPARITY: g_value_set_int(value, p.min_disparity); break;
    case PROP_LEVELS: g_value_set_int(value, p.levels); break;
    case PROP_WINDOW: g_value_set_enum(value, static_cast<int>(p.window)); break;
    case PROP_BACKGROUND: g_value_set_boolean(value, p.background); break;
    case PROP_LEARNING_RATE: g_value_set_float(value, p.learning_rate); break;
    case PROP_FOREGROUND_THRESHOLD: g_value_set_float(value, p.foreground_threshold); break;
    case PROP_WARMUP_FRAMES: g_value_set_int(value, p.warmup_frames); break;
    case PROP_ABSORB_DELAY: g_value_set_int(value, p.absorb_delay); break;
    case PROP_LR_CHECK: g_value_set_boolean(value, p.lr_check); break;
    case PROP_LR_TOLERANCE: g_value_set_int(value, p.lr_tolerance); break;
    case PROP_SUBPIXEL: g_value_set_boolean(value, p.subpixel); break;
    case PROP_COLORMAP: g_value_set_enum(value, s.colormap); break;
    case PROP_ALPHA_MASK: g_value_set_boolean(value, s.alpha_mask); break;
    case PROP_INPUT_LAYOUT: g_value_set_enum(value, s.input_layout); break;
    case PROP_OUTPUT_MODE: g_value_set_enum(value, s.output_mode); break;
    case PROP_BASELINE: g_value_set_double(value, s.baseline_m); break;
    case PROP_FOCAL_LENGTH: g_value_set_double(value, s.focal_px); break;
    case PROP_CALIBRATION: g_value_set_string(value, s.calibration.c_str()); break;
    case PROP_RECTIFY_ALPHA: g_value_set_double(value, s.rectify_alpha); break;
    case PROP_POST_MESSAGES: g_value_set_boolean(value, s.post_messages); break;
    case PROP_QOS: g_value_set_boolean(value, s.qos); break;
    case PROP_FRAMES_IN_FLIGHT: g_value_set_int(value, s.frames_in_flight); break;
    case PROP_METHOD: g_value_set_enum(value, static_cast<int>(p.method)); break;
    case PROP_BLOCK_SIZE: g_value_set_int(value, p.match_block_size); break;
    case PROP_CROSS_TAU: g_value_set_int(value, p.cross_tau); break;
    case PROP_CROSS_ARM_LENGTH: g_value_set_int(value, p.cross_arm_length); break;
    case PROP_CROSS_TRUNCATION: g_value_set_int(value, p.cross_truncation); break;
    case PROP_CROSS_CENSUS_WEIGHT: g_value_set_int(value, p.cross_census_weight); break;
    case PROP_CROSS_VOTE_ARM_LENGTH: g_value_set_int(value, p.cross_vote_arm_length); break;
    case PROP_SAMPLE_RESTORE: g_value_set_int(value, p.sample_restore); break;
    case PROP_ELAS_FILL_GAPS: g_value_set_boolean(value, p.elas_fill_gaps); break;
    case PROP_UNIQUENESS_RATIO: g_value_set_int(value, p.uniqueness_ratio); break;
    case PROP_COARSE_RANGE_FACTOR: g_value_set_int(value, p.coarse_range_factor); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(self, prop_id, pspec); break;
  }
}

}  // namespace cs_gst
