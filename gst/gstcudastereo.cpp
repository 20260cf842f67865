/**
 * SECTION:element-cudastereo
 * @title: cudastereo
 *
 * Computes a disparity map from stereo video, following Zhao & Taubin 2011,
 * "Real-time stereo on GPGPU using progressive multi-resolution adaptive
 * windows": an image pyramid, an optional per-pixel Gaussian background model
 * tested coarse to fine, adaptive-window census matching over the full range
 * at the coarsest level only, +-2 refinement at each finer level, a
 * left-right check and sub-pixel interpolation. Disparity convention: left
 * pixel x matches right pixel x - d.
 *
 * Methods (`method`): progressive, the default, is the above. block is SSD
 * block matching of the full-size views over the whole range (a square
 * window of `block-size` pixels, odd, 3 .. 31), as NVIDIA's CUDA stereo
 * sample does it (Stam 2008), with Tweddle's (2009) left-right check,
 * uniqueness test and parabolic sub-pixel refinement; it reads the same
 * inputs, honours background, both input modes and every output format.
 * `uniqueness-ratio` keeps a pixel only when the best cost more than one
 * disparity away from its winner exceeds the winner's by more than that
 * percentage (OpenCV StereoBM's rule; 0 = off, -1 = the method's default:
 * 80 for block, which on the Middlebury Aloe pair at half size keeps 69.9 %
 * of the pixels with ground truth at 1.37 % bad-2 where StereoBM keeps
 * 62.4 % at 1.86 %; off for progressive). Both backends run method block
 * bit-identically; method=progressive with a uniqueness ratio or the
 * confidence output runs on the CPU backend only in this version (the CUDA
 * backend refuses them by name, and backend=auto then takes the CPU).
 *
 * Input, one of (never both):
 *  - packed: the always `sink` pad takes frames holding both views side by
 *    side or top-bottom. The layout comes from the caps' multiview-mode
 *    (side-by-side, top-bottom; flag right-view-first swaps the views,
 *    half-aspect only changes the output pixel-aspect-ratio) or from
 *    input-layout, which wins whenever it is not `auto` (decoders often
 *    announce multiview-mode=mono on side-by-side cameras).
 *  - two pads: request `sink_left` and `sink_right` (requesting one removes
 *    the unused `sink` pad; requesting one while `sink` is linked fails).
 *
 * Formats: RGB-family, GRAY8, I420, NV12, and the packed 4:2:2 YUY2 and UYVY
 * of USB cameras (v4l2src straight in). Side by side, I420, NV12, YUY2 and
 * UYVY need a frame width divisible by 4 so that each view starts on a
 * whole chroma sample (YUY2/UYVY: a whole 2-pixel macropixel); other widths
 * are refused with an error naming the widths that work.
 *
 * Pairing (two pads): frames are paired by running time, not arrival order.
 * Two frames pair when their running times differ by at most half a frame
 * (duration of the buffer, else from the caps' framerate; exact equality
 * when neither is known). When the two head frames do not pair, the earlier
 * one is unpaired. In a live pipeline a frame also becomes unpaired when its
 * partner has not arrived by its running time plus the reported latency; a
 * frame facing EOS or a GAP on the other pad is unpaired as well. An
 * unpaired frame still gives one output frame with its timestamp, all
 * invalid (disparity 0), flagged by GstCudaStereoMeta.placeholder; the first
 * one posts a warning on the bus. A frame whose running time is not later
 * than the last output (its partner already went out unpaired) is dropped
 * with a warning, since two outputs may not share a timestamp.
 *
 * Latency: what matching actually takes, measured: a robust recent maximum
 * of the per-frame processing time (the largest of the last 32 frames once
 * the two largest are set aside as outliers) plus a quarter, rounded up to a
 * whole millisecond; 0 until three frames were matched. When it grows, the
 * element posts a LATENCY message so that the pipeline queries the latency
 * again (gst-launch and GstPlayer do; an application calls
 * gst_bin_recalculate_latency on it). It never shrinks while streaming:
 * sinks would render the following frames early. It adds to the upstream
 * latency and to GstAggregator's `latency` property, which keeps its meaning
 * (extra time a live two-pad input waits for a late partner). `stats` has
 * processing-time and latency.
 *
 * QoS (`qos`, on by default as in video filters): a sink that syncs to the
 * clock sends QoS events upstream; as GstBaseTransform does, the element
 * keeps the earliest running time still on time (timestamp + jitter of the
 * last event). A frame (or pair) whose running time lies before that plus
 * the expected processing time (the recent maximum above) would reach the
 * sink late even if matched at once, so it is skipped before matching:
 * counted in `stats` (qos-skipped) and announced with a QoS message (the
 * frame's running time, stream time, timestamp and duration; jitter = how
 * late it would be; the sink's proportion; processed = output frames and
 * dropped = frames skipped since the element started, in buffers); the next
 * output is flagged DISCONT. A late placeholder (a view without its partner,
 * an unreadable frame) is skipped alike; GAP buffers always go out. In a live
 * two-pad pipeline that runs behind, a partner often misses the deadline, so
 * placeholders are what catching up skips. A sink that was early waited for
 * the clock before it sent its event, so a negative jitter counts as 0
 * (GstBaseTransform counts it as slack, which would let frames through that
 * arrive late by the wait). With qos=false every input frame (or pair)
 * gives exactly one output frame, however late.
 *
 * Output: one view's size, same timestamp and duration as the input frame or
 * pair. GRAY16_LE raw disparity (d * 16, 0 = invalid), GRAY8 (0 = invalid,
 * 1..255 = 0..max-disparity), or false colour RGBA/BGRA/RGBx/BGRx through
 * `colormap` (with alpha-mask, alpha = 255 on the foreground, 0 on the
 * background). output-mode=depth gives GRAY16_LE millimetres,
 * Z = baseline * focal-length / d (0 = invalid, 65535 = 65.535 m or
 * farther). baseline (metres between the camera centres) and focal-length
 * (pixels, of the rectified views) come from your stereo calibration; both
 * start unset (0), and output-mode=depth posts an error naming the one that
 * is missing instead of guessing. Every output buffer carries a
 * GstCudaStereoMeta (gstcudastereometa.h); the `stats` property sums up.
 *
 * Confidence: output-mode=confidence gives GRAY8 frames of a per-pixel
 * confidence, derived from the matching costs of the pixel's left view:
 * floor(255 * (rival - best) / rival), where best is the cost of its
 * disparity and rival the least cost more than one disparity away (0 =
 * invalid, background, or another disparity fits as well; 255 = nothing
 * else comes close). A threshold on it acts like a uniqueness ratio r at
 * 255 * r / (100 + r). It is an output mode rather than a second source
 * pad or the alpha of false colour because a GRAY8 stream is what any
 * element, appsink, numpy or OpenCV takes as is, at full 8-bit resolution,
 * through tee, queue and encoders alike (an aggregator has one source pad,
 * and alpha is dropped by videoconvert to most formats and already carries
 * the foreground mask with alpha-mask); for disparity and confidence of the
 * same frames, run two elements on the input (tee).
 *
 * Rectified views: the two views must be rectified, that is row-aligned: a
 * point of the scene lies on the same row in both (what a stereo
 * calibration and rectification step gives, e.g. OpenCV's stereoRectify
 * with initUndistortRectifyMap, or a stereo camera that outputs rectified
 * pairs). The search runs along the row only, so views that are not
 * rectified (a vertical offset, a rotation, lens distortion) give wrong
 * disparities, and many of them pass the left-right check: the output
 * looks like a disparity map but is not one, and depth from it is wrong.
 * On the Middlebury Aloe pair, moving one view down by 1 row raises the
 * share of wrong pixels (bad-2) from 11 % to 25 %, 2 rows to 60 %, 4 rows
 * to 91 %.
 *
 * Messages: with post-messages=true the element posts, for every output
 * frame and before the frame is pushed, an element message whose structure
 * is named `cudastereo`: timestamp (the output buffer's PTS), running-time,
 * stream-time, duration (GstClockTime, guint64), foreground-fraction and
 * valid-fraction (gdouble, of the left view; foreground-fraction is 1.0
 * without background model), processing-time (guint64, nanoseconds spent
 * matching this frame), frame-index (guint64, output frames since the
 * element started, from 0, placeholders included), placeholder and
 * warming-up (gboolean). A placeholder (unpaired frame) has both fractions
 * and processing-time 0. So an application can react to motion from the bus
 * without polling `stats`.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 multifilesrc location=sbs_%04d.png index=0 caps=image/png,framerate=10/1 ! pngdec ! videoconvert ! cudastereo input-layout=side-by-side max-disparity=64 ! videoconvert ! fakesink
 * ]| Side-by-side frames from PNG files; raw disparity.
 * |[
 * gst-launch-1.0 cudastereo name=s ! video/x-raw,format=RGBA ! videoconvert ! autovideosink videotestsrc pattern=smpte num-buffers=30 ! video/x-raw,width=320,height=240 ! s.sink_left videotestsrc pattern=smpte num-buffers=30 ! video/x-raw,width=320,height=240 ! s.sink_right
 * ]| Two views from two sources, false colour to a display.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240,format=GRAY8 ! cudastereo input-layout=side-by-side ! video/x-raw,format=GRAY16_LE ! filesink location=disparity.raw
 * ]| Raw Q4 disparity (320x240 GRAY16_LE per frame) to a file.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240,format=GRAY8 ! cudastereo input-layout=side-by-side method=block block-size=9 max-disparity=64 ! videoconvert ! fakesink
 * ]| SSD block matching (method=block) of side-by-side frames, with the
 * uniqueness test at its default ratio.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240,format=GRAY8 ! cudastereo input-layout=side-by-side method=block output-mode=confidence ! video/x-raw,format=GRAY8 ! fakesink
 * ]| The per-pixel confidence of method block's disparities (GRAY8, 0 =
 * invalid .. 255 = unique).
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,width=640,height=480 ! cudastereo input-layout=top-bottom output-mode=depth baseline=0.12 focal-length=700 ! fakesink
 * ]| Depth in millimetres from top-bottom frames (baseline and focal-length
 * from your calibration; without them the element posts an error).
 * |[
 * gst-launch-1.0 -m cudastereo name=s background=true warmup-frames=5 post-messages=true ! fakesink videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=320,height=240 ! tee name=v ! queue ! s.sink_left v. ! queue ! s.sink_right
 * ]| One `cudastereo` element message per frame on the bus (-m prints them);
 * once the model has warmed up, foreground-fraction follows the moving ball
 * (both pads get the same picture here, so every disparity is 0).
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,width=640,height=240,format=NV12 ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudastereo backend=cuda input-layout=side-by-side ! cudadownload ! video/x-raw,format=RGBA ! fakesink
 * ]| CUDA memory in and out (needs a GPU): the frames stay on the GPU from
 * cudaupload to cudadownload, in the CUDA context the three elements share
 * (cudaupload passes system memory through unless caps ask for CUDA memory).
 * CUDA memory output is false colour (RGBA, BGRA, RGBx, BGRx): GStreamer
 * 1.22's CUDA memory holds no GRAY formats, so raw GRAY16_LE disparity and
 * depth always come out in system memory.
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,width=640,height=240,format=RGBA ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudastereo backend=cuda input-layout=side-by-side ! video/x-raw,format=GRAY16_LE ! filesink location=disparity.raw
 * ]| CUDA memory in, raw disparity out in system memory (320x240 GRAY16_LE).
 * |[
 * gst-launch-1.0 filesrc location=sbs.h264 ! h264parse ! nvh264dec ! cudastereo input-layout=side-by-side ! cudadownload ! videoconvert ! autovideosink
 * ]| A side-by-side H.264 camera stream decoded on the GPU (NVDEC says
 * multiview-mode=mono, so input-layout names the packing); the decoded NV12
 * frames go to the engine without a copy through the host.
 *
 * ## CUDA
 * backend=auto runs on the GPU when this build has CUDA and a device answers,
 * else on the CPU with one warning; backend=cuda fails the state change with
 * a message when there is none. The element shares its GstCudaContext with
 * neighbouring CUDA elements (context queries and messages, as nvcodec's
 * elements do), or makes one on cuda-device-id (-1: automatic). CUDA memory
 * in the same (or a peer) context is read in place; output in CUDA memory
 * (chosen when downstream names memory:CUDAMemory) comes from a
 * GstCudaBufferPool and is written on the GPU. Each element owns its engine and CUDA stream, so many elements (one
 * per camera) can run at once on one GPU. GStreamer 1.22's CUDA memory
 * carries no stream, so each frame is finished before it is pushed.
 *
 * Upload ahead: with the CUDA engine, a frame in system memory starts its
 * way to the GPU when it arrives, in the upstream streaming thread (a buffer
 * probe on each sink pad, before the aggregator queues it): pageable planes
 * are copied into pinned staging there and DMA'd on a stream of the engine's
 * own, pinned planes (the pool the element proposes) are DMA'd in place. So
 * the upload of the next frame overlaps the work on the current one, and no
 * latency is added: the frame is processed exactly when it would have been.
 * A few frames per element can be in flight this way; beyond that, or for
 * CUDA memory, a frame is copied up when it is processed, as before. The
 * `stats` field uploaded-ahead counts the frames that went the early way.
 */
#include "gstcudastereo.h"

#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <string>
#include <vector>

#include "config.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif
#include "allocation.h"
#include "cuda_context_scope.h"
#include "cuda_memory.h"
#include "encode.h"
#include "engine.h"
#include "engine_factory.h"
#include "error_text.h"
#include "geometry.h"
#include "gstcudastereometa.h"
#include "live_timing.h"
#include "pinned_allocator.h"
#include "pairing.h"
#include "settings.h"
#include "stats.h"
#include "stereo.h"
#include "upload_ahead.h"

// Not static: the units of the element (upload_ahead.cpp) log in it too.
GST_DEBUG_CATEGORY(gst_cuda_stereo_debug);
#define GST_CAT_DEFAULT gst_cuda_stereo_debug

#define INPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, GRAY8, I420, NV12, YUY2, UYVY }"
#define OUTPUT_FORMATS "{ GRAY16_LE, GRAY8, RGBA, BGRA, RGBx, BGRx }"

// With GStreamer's CUDA library the pads also take and give CUDA device
// memory (listed first: preferred), so the element sits between nvh264dec or
// cudaupload and cudadownload without a copy through the host.
// GStreamer 1.22's CUDA allocator knows no GRAY formats (it aborts on
// them), so CUDA memory carries only these; raw GRAY16_LE disparity, GRAY8
// and depth leave in system memory.
#define CUDA_INPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, I420, NV12, YUY2, UYVY }"
#define CUDA_OUTPUT_FORMATS "{ RGBA, BGRA, RGBx, BGRx }"
#if HAVE_GST_CUDA
#define CUDA_MEMORY_CAPS(formats) GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, formats) "; "
#else
#define CUDA_MEMORY_CAPS(formats) ""
#endif
#define SINK_CAPS CUDA_MEMORY_CAPS(CUDA_INPUT_FORMATS) GST_VIDEO_CAPS_MAKE(INPUT_FORMATS)
#define SRC_CAPS CUDA_MEMORY_CAPS(CUDA_OUTPUT_FORMATS) GST_VIDEO_CAPS_MAKE(OUTPUT_FORMATS)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate sink_left_template =
    GST_STATIC_PAD_TEMPLATE("sink_left", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate sink_right_template =
    GST_STATIC_PAD_TEMPLATE("sink_right", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(SRC_CAPS));

// ---------------------------------------------------------------- private state

using cs_gst::describe_info;
using cs_gst::frame_view;
using cs_gst::Geometry;
using cs_gst::is_yuv420;
using cs_gst::is_yuv422;
using cs_gst::Layout;
using cs_gst::PadInput;
using cs_gst::same_picture;
using cs_gst::confidence_output;
using cs_gst::depth_settings_problem;
using cs_gst::encode_params;
using cs_gst::kDefaultBaselineM;
using cs_gst::kDefaultFocalPx;
using cs_gst::Settings;
using cs_gst::Stats;
using cs_gst::to_pixel_format;
using cs_gst::whole_frame_view;
#if HAVE_GST_CUDA
using cs_gst::caps_have_cuda_memory;
using cs_gst::readable_on_device;
#endif

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
  PROP_LR_CHECK,
  PROP_LR_TOLERANCE,
  PROP_SUBPIXEL,
  PROP_COLORMAP,
  PROP_ALPHA_MASK,
  PROP_INPUT_LAYOUT,
  PROP_OUTPUT_MODE,
  PROP_BASELINE,
  PROP_FOCAL_LENGTH,
  PROP_POST_MESSAGES,
  PROP_QOS,
  PROP_METHOD,
  PROP_BLOCK_SIZE,
  PROP_UNIQUENESS_RATIO,
  PROP_STATS,
};

}  // namespace

struct GstCudaStereoPrivate {
  std::mutex lock;  // guards settings, the dirty flags and stats
  Settings settings;
  bool params_dirty = true;       // engine needs set_params
  bool geometry_dirty = true;     // input-layout changed
  bool output_dirty = true;       // output-mode etc. changed: renegotiate
  bool reset_requested = false;   // reset-background emitted
  Stats stats;

  // Streaming thread only (and start/stop).
  std::unique_ptr<cs::Engine> engine;
  const char* backend_name = "";
  Settings active;                 // the settings the engine runs with
  PadInput packed_in, left_in, right_in;
  Geometry geometry;
  bool params_checked = false;     // active params validated for the geometry
  bool two_pad_caps_dirty = false; // sink_left/sink_right caps changed since last compared
  GstVideoInfo out_info;
  bool out_configured = false;
  cs::OutputFormat out_format = cs::OutputFormat::DisparityQ4;
  cs::Image<uint16_t> invalid_q4;  // all-invalid disparity, for placeholders
  GstClockTime last_output_rt = GST_CLOCK_TIME_NONE;
  bool warned_unpaired = false;
  bool warned_late = false;
  bool warned_short = false;
  bool notice_posted = false;
  std::chrono::steady_clock::time_point fps_window_start;
  uint64_t fps_window_frames = 0;

  // Live behaviour (live_timing.h). Streaming thread: the processing times,
  // the latency reported from them, and whether the next output follows a
  // skipped frame. `qos` is written by QoS events from downstream, under lock.
  cs_gst::ProcessingTimes processing_times;
  GstClockTime reported_latency = 0;
  bool discont_pending = false;
  cs_gst::QosState qos;

  // CUDA (GStreamer's CUDA library). cuda_ctx is the context shared with
  // neighbouring CUDA elements: set by start (gst_cuda_ensure_element_context)
  // or by set_context, read by context queries from any thread, hence its own
  // lock (recursive: set_context may come from inside a query's handling).
  std::recursive_mutex ctx_lock;
#if HAVE_GST_CUDA
  GstCudaContext* cuda_ctx = nullptr;
  // Streaming thread (set in start, cleared in stop): the context the CUDA
  // engine runs in, null with the CPU engine.
  GstCudaContext* engine_ctx = nullptr;
#endif
  bool out_cuda_memory = false;  // negotiated output caps carry memory:CUDAMemory
  // With the CUDA engine: page-locked host memory, which the engine moves to
  // and from the GPU by DMA without a CPU copy. Offered upstream in a pool
  // for system-memory input and used for system-memory output. Set in start,
  // cleared in stop; read by allocation queries, hence under ctx_lock.
  GstAllocator* pinned_allocator = nullptr;
  bool out_pinned_pool = false;  // streaming thread: the output pool is our pinned one

  // Upload ahead (CUDA engine, system-memory input): a buffer probe on each
  // sink pad starts a frame's upload in the upstream thread as it arrives,
  // before the aggregator queues it, so it overlaps the src thread's work on
  // the previous frame (upload_ahead.h).
  cs_gst::UploadsAhead uploads_ahead;

  // Pads; changed under the object lock by request/release.
  GstAggregatorPad* sink_pad = nullptr;  // packed, not owned (the element owns it)
  GstAggregatorPad* left_pad = nullptr;
  GstAggregatorPad* right_pad = nullptr;
};

struct _GstCudaStereo {
  GstAggregator parent;
  GstCudaStereoPrivate* priv;
};

G_DEFINE_TYPE(GstCudaStereo, gst_cuda_stereo, GST_TYPE_AGGREGATOR);
GST_ELEMENT_REGISTER_DEFINE(cudastereo, "cudastereo", GST_RANK_NONE, GST_TYPE_CUDA_STEREO);

#define PRIV(self) ((self)->priv)

namespace {

// The GstCudaContext the engine runs in, for CudaContextScope: the context
// the neighbouring CUDA elements share (the engine adopts the current
// context); null with the CPU engine.
gpointer engine_context(const GstCudaStereoPrivate* priv) {
#if HAVE_GST_CUDA
  return priv->engine_ctx;
#else
  (void)priv;
  return nullptr;
#endif
}


}  // namespace

static void post_unpaired_warning(GstCudaStereo* self, const std::string& why) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GST_INFO_OBJECT(self, "placeholder output: %s", why.c_str());
  if (priv->warned_unpaired) return;
  priv->warned_unpaired = true;
  GST_ELEMENT_WARNING(self, STREAM, FAILED, ("Stereo input frame without a partner: %s", why.c_str()),
                      ("It gets an all-invalid output frame (disparity 0, GstCudaStereoMeta.placeholder = TRUE). "
                       "Further cases are only logged; the `stats` property counts them (unpaired-frames)."));
}

// ---------------------------------------------------------------- geometry

// Works out the views from the negotiated pads and the input-layout setting.
// Returns an empty string or the reason the input cannot be used.
static std::string resolve_geometry(GstCudaStereo* self, Geometry* out) {
  GstCudaStereoPrivate* priv = PRIV(self);
  Geometry g;
  const GstVideoInfo* info = nullptr;
  const bool two_pads = priv->left_in.configured || priv->right_in.configured;
  if (two_pads) {
    if (!priv->left_in.configured || !priv->right_in.configured) return "";  // wait for the other pad
    const GstVideoInfo& l = priv->left_in.info;
    const GstVideoInfo& r = priv->right_in.info;
    if (GST_VIDEO_INFO_FORMAT(&l) != GST_VIDEO_INFO_FORMAT(&r) || GST_VIDEO_INFO_WIDTH(&l) != GST_VIDEO_INFO_WIDTH(&r) ||
        GST_VIDEO_INFO_HEIGHT(&l) != GST_VIDEO_INFO_HEIGHT(&r))
      return "sink_left caps (" + describe_info(l) + ") and sink_right caps (" + describe_info(r) +
             ") differ: both views need the same format and size";
    info = &l;
    g.packed = false;
    g.view_width = GST_VIDEO_INFO_WIDTH(info);
    g.view_height = GST_VIDEO_INFO_HEIGHT(info);
    g.par_n = GST_VIDEO_INFO_PAR_N(info);
    g.par_d = GST_VIDEO_INFO_PAR_D(info);
  } else {
    if (!priv->packed_in.configured) return "";
    info = &priv->packed_in.info;
    const GstVideoMultiviewMode mode = GST_VIDEO_INFO_MULTIVIEW_MODE(info);
    const GstVideoMultiviewFlags flags = GST_VIDEO_INFO_MULTIVIEW_FLAGS(info);
    GstCudaStereoInputLayout layout;
    {
      std::lock_guard<std::mutex> guard(priv->lock);
      layout = priv->settings.input_layout;
    }
    if (layout == GST_CUDA_STEREO_INPUT_LAYOUT_SIDE_BY_SIDE) {
      g.layout = Layout::SideBySide;
    } else if (layout == GST_CUDA_STEREO_INPUT_LAYOUT_TOP_BOTTOM) {
      g.layout = Layout::TopBottom;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_SIDE_BY_SIDE) {
      g.layout = Layout::SideBySide;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_TOP_BOTTOM) {
      g.layout = Layout::TopBottom;
    } else if (mode == GST_VIDEO_MULTIVIEW_MODE_NONE || mode == GST_VIDEO_MULTIVIEW_MODE_MONO) {
      return "the caps on `sink` do not say how the two views are packed (multiview-mode is " +
             std::string(mode == GST_VIDEO_MULTIVIEW_MODE_MONO ? "mono" : "absent") +
             "): set input-layout=side-by-side or input-layout=top-bottom, or use sink_left/sink_right";
    } else {
      const char* name = gst_video_multiview_mode_to_caps_string(mode);
      return std::string("multiview-mode ") + (name ? name : "?") +
             " is not supported: cudastereo takes side-by-side or top-bottom frames (or two pads)";
    }
    // The flags describe the caps' own layout; with an overriding property
    // only right-view-first still makes sense when the mode agrees.
    const bool caps_layout_used = (g.layout == Layout::SideBySide && mode == GST_VIDEO_MULTIVIEW_MODE_SIDE_BY_SIDE) ||
                                  (g.layout == Layout::TopBottom && mode == GST_VIDEO_MULTIVIEW_MODE_TOP_BOTTOM);
    g.right_first = caps_layout_used && (flags & GST_VIDEO_MULTIVIEW_FLAGS_RIGHT_VIEW_FIRST);
    const bool half_aspect = caps_layout_used && (flags & GST_VIDEO_MULTIVIEW_FLAGS_HALF_ASPECT);
    const int w = GST_VIDEO_INFO_WIDTH(info), h = GST_VIDEO_INFO_HEIGHT(info);
    g.par_n = GST_VIDEO_INFO_PAR_N(info);
    g.par_d = GST_VIDEO_INFO_PAR_D(info);
    if (g.layout == Layout::SideBySide) {
      if (w % 2 != 0)
        return "side-by-side frame width " + std::to_string(w) + " is odd: the two views cannot be equal";
      g.view_width = w / 2;
      g.view_height = h;
      if (half_aspect) g.par_n *= 2;  // each view was squeezed to half width
    } else {
      if (h % 2 != 0)
        return "top-bottom frame height " + std::to_string(h) + " is odd: the two views cannot be equal";
      g.view_width = w;
      g.view_height = h / 2;
      if (half_aspect) g.par_d *= 2;
    }
  }
  g.video_format = GST_VIDEO_INFO_FORMAT(info);
  if (!to_pixel_format(g.video_format, &g.format))
    return std::string("format ") + gst_video_format_to_string(g.video_format) + " is not supported";
  if (g.packed && (is_yuv420(g.format) || is_yuv422(g.format))) {
    // The second view's chroma must start on a whole chroma sample (for
    // YUY2/UYVY: on a whole 2-pixel macropixel). Here the width is even.
    if (g.layout == Layout::SideBySide && g.view_width % 2 != 0) {
      const int w = GST_VIDEO_INFO_WIDTH(info);
      return std::string("side-by-side ") + gst_video_format_to_string(g.video_format) +
             " needs a frame width divisible by 4 (each view's chroma must start on a sample), got " +
             std::to_string(w) + " (views of " + std::to_string(g.view_width) + " pixels): crop or scale to " +
             std::to_string(w - 2) + " or " + std::to_string(w + 2) + ", or use sink_left/sink_right";
    }
    // YUY2/UYVY rows carry their own chroma: any split between rows works.
    if (g.layout == Layout::TopBottom && is_yuv420(g.format) && g.view_height % 2 != 0)
      return std::string("top-bottom ") + gst_video_format_to_string(g.video_format) +
             " needs a frame height divisible by 4 (each view's chroma must start on a sample), got " +
             std::to_string(GST_VIDEO_INFO_HEIGHT(info));
  }
  if (g.view_width < cs::kMinViewWidth || g.view_height < cs::kMinViewHeight)
    return "each view is " + std::to_string(g.view_width) + "x" + std::to_string(g.view_height) +
           ", smaller than the minimum " + std::to_string(cs::kMinViewWidth) + "x" +
           std::to_string(cs::kMinViewHeight);
  {
    const int gcd = gst_util_greatest_common_divisor(g.par_n, g.par_d);
    if (gcd > 1) g.par_n /= gcd, g.par_d /= gcd;
  }
  g.fps_n = GST_VIDEO_INFO_FPS_N(info);
  g.fps_d = GST_VIDEO_INFO_FPS_D(info);
  g.valid = true;
  *out = g;
  return "";
}

// Re-derives the geometry; on an output change, asks for renegotiation and
// restarts the background model (a new size is a new scene for the model).
static bool update_geometry(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  Geometry g;
  const std::string error = resolve_geometry(self, &g);
  if (!error.empty()) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unusable stereo input: %s", error.c_str()), (nullptr));
    priv->geometry = Geometry();
    return false;
  }
  if (!g.valid) return true;  // still waiting for the second pad's caps
  const bool size_changed = !priv->geometry.valid || g.view_width != priv->geometry.view_width ||
                            g.view_height != priv->geometry.view_height;
  if (!g.same_output_as(priv->geometry)) {
    priv->out_configured = false;
    gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
  }
  if (size_changed) {
    if (priv->geometry.valid && priv->engine) {
      GST_INFO_OBJECT(self, "view size changed to %dx%d: background model restarts", g.view_width, g.view_height);
      CudaContextScope cuda_scope(engine_context(priv));
      priv->engine->reset_background();
    }
    priv->invalid_q4 = cs::Image<uint16_t>(g.view_width, g.view_height, 0);
    priv->params_checked = false;
  }
  priv->geometry = g;
  return true;
}

// ---------------------------------------------------------------- settings -> engine

// Takes settings changed since the last frame into the engine. Returns false
// (after posting an error) when they do not fit.
static bool apply_settings(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  bool params_dirty, reset, geometry_dirty;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    params_dirty = priv->params_dirty;
    reset = priv->reset_requested;
    geometry_dirty = priv->geometry_dirty;
    priv->params_dirty = priv->reset_requested = priv->geometry_dirty = false;
    priv->active = priv->settings;
  }
  if (geometry_dirty && (priv->packed_in.configured || priv->left_in.configured)) {
    if (!update_geometry(self)) return false;
  }
  const std::string depth_problem = depth_settings_problem(priv->active);
  if (!depth_problem.empty()) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("%s", depth_problem.c_str()), (nullptr));
    return false;
  }
  if (params_dirty) {
    const std::string text = priv->engine->set_params(priv->active.params);
    if (!text.empty()) {
      const cs::ErrorParts error = cs::split_error_text(text);
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Invalid stereo settings: %s", error.message.c_str()),
                        ("%s", error.detail.c_str()));
      return false;
    }
    priv->params_checked = false;
  }
  if (!priv->params_checked && priv->geometry.valid) {
    const std::string error =
        priv->active.params.validate_for_size(priv->geometry.view_width, priv->geometry.view_height);
    if (!error.empty()) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                        ("Invalid stereo settings for %dx%d views: %s", priv->geometry.view_width,
                         priv->geometry.view_height, error.c_str()),
                        (nullptr));
      return false;
    }
    priv->params_checked = true;
  }
  if (reset) priv->engine->reset_background();
  return true;
}

// ---------------------------------------------------------------- output

static void record_output(GstCudaStereo* self, bool placeholder) {
  GstCudaStereoPrivate* priv = PRIV(self);
  const auto now = std::chrono::steady_clock::now();
  if (priv->fps_window_frames == 0) priv->fps_window_start = now;
  priv->fps_window_frames++;
  const double elapsed = std::chrono::duration<double>(now - priv->fps_window_start).count();
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->stats.frames++;
  if (placeholder) priv->stats.unpaired_frames++;
  if (elapsed >= 1.0) {
    priv->stats.fps = (priv->fps_window_frames - 1) / elapsed;
    priv->fps_window_frames = 0;
  }
  priv->stats.engine = priv->engine->stats();
  priv->stats.backend = priv->backend_name;
}

// The element message of one output frame (post-messages), so that an
// application can react to what the camera sees from the bus instead of
// polling `stats`. `fs`: the engine's numbers for this frame, null for a
// placeholder (nothing matched: no foreground, nothing valid).
static void post_frame_message(GstCudaStereo* self, GstClockTime pts, GstClockTime duration,
                               const cs::FrameStats* fs, guint64 processing_ns) {
  GstCudaStereoPrivate* priv = PRIV(self);
  guint64 frame_index;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    frame_index = priv->stats.frames - 1;  // record_output counted this frame
  }
  GstClockTime running_time = GST_CLOCK_TIME_NONE, stream_time = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    const GstSegment* seg = &GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(self))->segment;
    GST_OBJECT_LOCK(self);
    running_time = gst_segment_to_running_time(seg, GST_FORMAT_TIME, pts);
    stream_time = gst_segment_to_stream_time(seg, GST_FORMAT_TIME, pts);
    GST_OBJECT_UNLOCK(self);
  }
  GstStructure* s =
      cs_gst::frame_message_structure(pts, running_time, stream_time, duration, fs, processing_ns, frame_index);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
}

// ---------------------------------------------------------------- live: latency and QoS

// After a matched frame: its processing time joins the recent ones. When
// their robust maximum outgrows the latency reported so far, the element
// reports more: gst_aggregator_set_latency posts a LATENCY message, upon
// which the application (gst-launch, playbin) has the pipeline query the
// latency again and its sinks wait that much longer.
static void note_processing_time(GstCudaStereo* self, guint64 processing_ns) {
  GstCudaStereoPrivate* priv = PRIV(self);
  priv->processing_times.add(processing_ns);
  const GstClockTime latency = priv->processing_times.latency_for(priv->reported_latency);
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->stats.processing_time = priv->processing_times.recent_max();
    priv->stats.latency = latency;
  }
  if (latency == priv->reported_latency) return;
  GST_INFO_OBJECT(self, "matching takes up to %" GST_TIME_FORMAT " a frame: latency %" GST_TIME_FORMAT
                  " -> %" GST_TIME_FORMAT, GST_TIME_ARGS(priv->processing_times.recent_max()),
                  GST_TIME_ARGS(priv->reported_latency), GST_TIME_ARGS(latency));
  priv->reported_latency = latency;
  gst_aggregator_set_latency(GST_AGGREGATOR(self), latency, latency);
}

// QoS (qos=true), as GstBaseTransform does it: a frame that would reach the
// sink late even if matched at once is not matched (nor a late placeholder
// made). It is counted (stats
// qos-skipped), announced with a QoS message, and the next output is marked
// DISCONT. `running_time`, `pts` and `duration` are the frame's (pts in the
// output segment). True: skip it.
static bool skip_late_frame(GstCudaStereo* self, GstClockTime running_time, GstClockTime pts,
                            GstClockTime duration) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!priv->active.qos) return false;
  cs_gst::QosState::Verdict verdict;
  guint64 processed, skipped;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    verdict = priv->qos.judge(running_time, priv->processing_times.recent_max());
    if (!verdict.late) return false;
    skipped = ++priv->stats.qos_skipped;
    processed = priv->stats.frames;
  }
  priv->discont_pending = true;
  GST_DEBUG_OBJECT(self, "QoS: skipping the frame at running time %" GST_TIME_FORMAT ", it would be %" GST_STIME_FORMAT
                   " late", GST_TIME_ARGS(running_time), GST_STIME_ARGS(verdict.jitter));
  GstClockTime stream_time = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    GST_OBJECT_LOCK(self);
    stream_time = gst_segment_to_stream_time(&GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(self))->segment,
                                             GST_FORMAT_TIME, pts);
    GST_OBJECT_UNLOCK(self);
  }
  const gboolean live = GST_CLOCK_TIME_IS_VALID(gst_aggregator_get_latency(GST_AGGREGATOR(self)));
  GstMessage* msg = gst_message_new_qos(GST_OBJECT(self), live, running_time, stream_time, pts, duration);
  gst_message_set_qos_values(msg, verdict.jitter, verdict.proportion, 1000000);
  gst_message_set_qos_stats(msg, GST_FORMAT_BUFFERS, processed, skipped);
  gst_element_post_message(GST_ELEMENT(self), msg);
  return true;
}

// Makes one output frame: from the views when both are given, else an
// all-invalid placeholder. `pts` is in the output segment. *engine_took (when
// given) says whether the views reached the engine (which then owns upload
// slots among them, whatever the outcome).
static GstFlowReturn produce(GstCudaStereo* self, const cs::FrameView* left, const cs::FrameView* right,
                             GstClockTime pts, GstClockTime duration, bool gap, bool* engine_took = nullptr) {
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!priv->out_configured && priv->geometry.valid) gst_aggregator_negotiate(GST_AGGREGATOR(self));
  if (!priv->out_configured) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("No output format could be agreed with downstream for %dx%d views: cudastereo gives "
                       "GRAY16_LE, GRAY8, RGBA, BGRA, RGBx or BGRx (GRAY16_LE only with output-mode=depth, GRAY8 "
                       "only with output-mode=confidence); put videoconvert after it or ask for one of these",
                       priv->geometry.view_width, priv->geometry.view_height),
                      (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const bool placeholder = !(left && right);
  GstBuffer* outbuf = nullptr;
  GstFlowReturn alloc_ret = GST_FLOW_OK;
  GstBufferPool* pool = priv->out_cuda_memory || priv->out_pinned_pool
                            ? gst_aggregator_get_buffer_pool(GST_AGGREGATOR(self))
                            : nullptr;
  if (pool) {
    if (!gst_buffer_pool_is_active(pool) && !gst_buffer_pool_set_active(pool, TRUE)) {
      gst_object_unref(pool);
      if (priv->out_cuda_memory) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not activate the CUDA output buffer pool"), (nullptr));
        return GST_FLOW_ERROR;
      }
      // Pinned memory is only faster, never needed: go on in plain memory.
      GST_WARNING_OBJECT(self, "could not activate the pinned output pool; output goes to plain system memory");
      priv->out_pinned_pool = false;
    } else {
      alloc_ret = gst_buffer_pool_acquire_buffer(pool, &outbuf, nullptr);
      gst_object_unref(pool);
      if (alloc_ret != GST_FLOW_OK && (priv->out_cuda_memory || alloc_ret == GST_FLOW_FLUSHING)) {
        GST_DEBUG_OBJECT(self, "no output buffer from the pool: %s", gst_flow_get_name(alloc_ret));
        // A pool posts nothing on the bus: an error here would end the
        // stream with EOS and no word of why.
        if (alloc_ret == GST_FLOW_ERROR)
          GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                            ("Could not get an output frame in CUDA memory (out of GPU memory?)"), (nullptr));
        return alloc_ret;
      }
      if (alloc_ret != GST_FLOW_OK) {
        GST_WARNING_OBJECT(self, "no buffer from the pinned output pool (%s); output goes to plain system memory",
                           gst_flow_get_name(alloc_ret));
        priv->out_pinned_pool = false;
        outbuf = nullptr;
      }
    }
  }
  if (!outbuf) outbuf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&priv->out_info), nullptr);
  // The engine writes device memory directly when the inputs are on the
  // device too (CUDA in, CUDA out: nothing crosses the host). Host inputs or
  // placeholders write through the CUDA memory's host staging instead.
  bool out_device = false;
#if HAVE_GST_CUDA
  out_device = !placeholder && priv->engine_ctx && left->memory == cs::Memory::Device &&
               readable_on_device(outbuf, priv->engine_ctx);
#endif
  GstVideoFrame out;
  const GstMapFlags out_flags =
#if HAVE_GST_CUDA
      out_device ? static_cast<GstMapFlags>(GST_MAP_WRITE | GST_MAP_CUDA) :
#endif
                 GST_MAP_WRITE;
  if (!gst_video_frame_map(&out, &priv->out_info, outbuf, out_flags)) {
    gst_buffer_unref(outbuf);
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Could not map the output buffer"), (nullptr));
    return GST_FLOW_ERROR;
  }
  const cs::EncodeParams enc = encode_params(priv->active, priv->out_format);
  guint64 processing_ns = 0;
  cs::OutputFrame dst;
  dst.data = static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&out, 0));
  dst.pitch = GST_VIDEO_FRAME_PLANE_STRIDE(&out, 0);
  dst.width = priv->geometry.view_width;
  dst.height = priv->geometry.view_height;
  dst.memory = out_device ? cs::Memory::Device : cs::Memory::Host;
  if (!placeholder) {
    // Blocking: with a device output the engine queues the frame on its own
    // stream and waits for it. GStreamer 1.22's CUDA memory carries no
    // stream, so a downstream CUDA element could not otherwise order its
    // reads after our writes.
    if (engine_took) *engine_took = true;
    const auto started = std::chrono::steady_clock::now();
    const std::string error = priv->engine->process(*left, *right, enc, dst);
    processing_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
                        .count();
    if (!error.empty()) {
      gst_video_frame_unmap(&out);
      gst_buffer_unref(outbuf);
      const cs::ErrorParts e = cs::split_error_text(error);
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Stereo matching failed: %s", e.message.c_str()),
                        ("%s", e.detail.c_str()));
      return GST_FLOW_ERROR;
    }
  } else {
    cs::encode_output(static_cast<const cs::Image<uint16_t>&>(priv->invalid_q4).view(), nullptr, enc, dst.data, dst.pitch);
  }
  gst_video_frame_unmap(&out);

  GST_BUFFER_PTS(outbuf) = pts;
  GST_BUFFER_DURATION(outbuf) = duration;
  if (gap) GST_BUFFER_FLAG_SET(outbuf, GST_BUFFER_FLAG_GAP);
  if (priv->discont_pending) GST_BUFFER_FLAG_SET(outbuf, GST_BUFFER_FLAG_DISCONT);  // frames were skipped (QoS)
  priv->discont_pending = false;

  const cs::FrameStats fs = priv->engine->stats();
  GstCudaStereoMeta* meta = gst_buffer_add_cuda_stereo_meta(outbuf);
  meta->scale = 16;
  meta->invalid_value = 0;
  meta->min_disparity = priv->active.params.min_disparity;
  meta->max_disparity = priv->active.params.max_disparity;
  meta->foreground_fraction = placeholder ? 0.0 : fs.foreground_fraction;
  meta->levels = cs::pipeline_levels(priv->active.params, priv->geometry.view_width, priv->geometry.view_height);
  meta->backend = g_intern_string(priv->backend_name);
  meta->depth = priv->active.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
  meta->confidence = confidence_output(priv->active);
  meta->placeholder = placeholder;
  meta->frame_index = fs.frame_index;
  gst_buffer_add_cuda_stereo_custom_meta(outbuf, meta, priv->active.baseline_m, priv->active.focal_px);

  record_output(self, placeholder);
  if (!placeholder) note_processing_time(self, processing_ns);
  if (priv->active.post_messages) post_frame_message(self, pts, duration, placeholder ? nullptr : &fs, processing_ns);

  GstAggregator* agg = GST_AGGREGATOR(self);
  {
    GstSegment* seg = &GST_AGGREGATOR_PAD(agg->srcpad)->segment;
    GST_OBJECT_LOCK(self);
    if (GST_CLOCK_TIME_IS_VALID(pts))
      seg->position = GST_CLOCK_TIME_IS_VALID(duration) ? pts + duration : pts;
    GST_OBJECT_UNLOCK(self);
  }
  GST_LOG_OBJECT(self, "output %" GST_TIME_FORMAT "%s", GST_TIME_ARGS(pts), placeholder ? " (placeholder)" : "");
  return gst_aggregator_finish_buffer(agg, outbuf);
}

// True when the CUDA engine can read `buf` where it lies on the GPU.
static bool input_on_device(GstCudaStereo* self, GstBuffer* buf) {
#if HAVE_GST_CUDA
  return readable_on_device(buf, PRIV(self)->engine_ctx);
#else
  (void)self;
  (void)buf;
  return false;
#endif
}

// Maps an input buffer, checking that it holds what its caps promise.
// `device`: map CUDA memory for the GPU (GST_MAP_CUDA: device pointers);
// otherwise CUDA memory is downloaded to its host staging by the map.
// False: not mapped; a buffer that does not hold what its caps say gets a
// placeholder output, but when *gpu_failed is set the GPU failed to give
// CUDA memory back (an error was posted) and the stream must stop.
static bool map_input(GstCudaStereo* self, GstBuffer* buf, const GstVideoInfo& info, const char* pad_name,
                      bool device, GstVideoFrame* frame, bool* gpu_failed) {
  GstCudaStereoPrivate* priv = PRIV(self);
#if !HAVE_GST_CUDA
  (void)device;  // no CUDA memory without GStreamer's CUDA library
#endif
  const gsize size = gst_buffer_get_size(buf);
  std::string problem;
  if (!gst_buffer_get_video_meta(buf) && size < GST_VIDEO_INFO_SIZE(&info)) {
    problem = "buffer on " + std::string(pad_name) + " holds " + std::to_string(size) + " bytes, fewer than the " +
              std::to_string(GST_VIDEO_INFO_SIZE(&info)) + " its caps (" + describe_info(info) + ") need";
  } else if (!gst_video_frame_map(frame, &info, buf,
#if HAVE_GST_CUDA
                                  device ? static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_CUDA) :
#endif
                                         GST_MAP_READ)) {
    problem = "buffer on " + std::string(pad_name) + " (" + std::to_string(size) +
              " bytes) cannot be mapped as " + describe_info(info) + " (video meta out of bounds?)";
  }
  if (problem.empty()) return true;
#if HAVE_GST_CUDA
  if (cs_gst::holds_cuda_memory(buf) && (gst_buffer_get_video_meta(buf) || size >= GST_VIDEO_INFO_SIZE(&info))) {
    *gpu_failed = true;
    GST_ELEMENT_ERROR(self, RESOURCE, READ,
                      ("Could not read a frame in CUDA memory on %s: the GPU or its driver failed (see the log)",
                       pad_name),
                      ("%s", problem.c_str()));
    return false;
  }
#endif
  GST_INFO_OBJECT(self, "%s", problem.c_str());
  if (!priv->warned_short) {
    priv->warned_short = true;
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Input buffer too short: %s", problem.c_str()),
                        ("The frame gets an all-invalid output frame; later cases are only logged."));
  }
  return false;
}

// ---------------------------------------------------------------- aggregate

static GstClockTime running_time_of(GstAggregatorPad* pad, GstBuffer* buf) {
  GstClockTime ts = GST_BUFFER_PTS_IS_VALID(buf) ? GST_BUFFER_PTS(buf) : GST_BUFFER_DTS(buf);
  if (!GST_CLOCK_TIME_IS_VALID(ts)) return GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK(pad);
  const GstClockTime rt = gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME, ts);
  GST_OBJECT_UNLOCK(pad);
  return rt;
}

static GstClockTime output_pts_for(GstCudaStereo* self, GstClockTime running_time) {
  if (!GST_CLOCK_TIME_IS_VALID(running_time)) return GST_CLOCK_TIME_NONE;
  GstAggregator* agg = GST_AGGREGATOR(self);
  GST_OBJECT_LOCK(self);
  const GstClockTime pts =
      gst_segment_position_from_running_time(&GST_AGGREGATOR_PAD(agg->srcpad)->segment, GST_FORMAT_TIME, running_time);
  GST_OBJECT_UNLOCK(self);
  return pts;
}

static bool is_gap(GstBuffer* buf) {
  return GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(buf) == 0;
}

// ---------------------------------------------------------------- upload ahead

static void count_uploaded_ahead(GstCudaStereoPrivate* priv) {
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->stats.uploaded_ahead++;
}

static GstFlowReturn aggregate_packed(GstCudaStereo* self, GstAggregatorPad* pad) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstBuffer* buf = gst_aggregator_pad_pop_buffer(pad);
  if (!buf) return gst_aggregator_pad_is_eos(pad) ? GST_FLOW_EOS : GST_FLOW_OK;
  cs_gst::UploadsAhead::Taken upload(&priv->uploads_ahead, GST_PAD(pad), buf);
  if (!priv->geometry.valid) {
    const bool gap = is_gap(buf);
    gst_buffer_unref(buf);
    if (gap) return GST_FLOW_OK;  // nothing known yet to make a frame of
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("A frame arrived on `sink` before usable caps: upstream must send video/x-raw caps first"),
                      ("a buffer arrived without (valid) caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const GstClockTime rt = running_time_of(pad, buf);
  const GstClockTime pts = output_pts_for(self, rt);
  const GstClockTime duration = GST_BUFFER_DURATION(buf);
  if (!is_gap(buf) && skip_late_frame(self, rt, pts, duration)) {
    priv->last_output_rt = rt;
    gst_buffer_unref(buf);
    return GST_FLOW_OK;
  }
  GstFlowReturn ret;
  if (is_gap(buf)) {
    ret = produce(self, nullptr, nullptr, pts, duration, true);
  } else {
    GstVideoFrame frame;
    const bool device = input_on_device(self, buf);
    bool gpu_failed = false;
    if (!map_input(self, buf, priv->packed_in.info, "sink", device, &frame, &gpu_failed)) {
      ret = gpu_failed ? GST_FLOW_ERROR : produce(self, nullptr, nullptr, pts, duration, false);
    } else {
      cs::FrameView whole;
      const bool ahead = !device && upload.device_copy_of(frame, &whole);
      if (!ahead) whole_frame_view(frame, device, &whole);
      cs::FrameView a = frame_view(frame, whole, priv->geometry, 0);
      cs::FrameView b = frame_view(frame, whole, priv->geometry, 1);
      bool engine_took = false;
      ret = priv->geometry.right_first ? produce(self, &b, &a, pts, duration, false, &engine_took)
                                       : produce(self, &a, &b, pts, duration, false, &engine_took);
      if (ahead && engine_took) {
        upload.taken_by_engine();
        count_uploaded_ahead(priv);
      }
      gst_video_frame_unmap(&frame);
    }
  }
  priv->last_output_rt = rt;
  gst_buffer_unref(buf);
  return ret;
}

// The head frame of a two-pad sink as the pairing rules see it.
static cs_gst::PadHead pad_head(GstAggregatorPad* pad, GstBuffer* head) {
  cs_gst::PadHead h;
  h.has_frame = head != nullptr;
  if (head) {
    h.running_time = running_time_of(pad, head);
    h.duration = GST_BUFFER_DURATION(head);
  }
  h.eos = gst_aggregator_pad_is_eos(pad);
  return h;
}

static GstFlowReturn aggregate_two_pads(GstCudaStereo* self, GstAggregatorPad* lpad, GstAggregatorPad* rpad,
                                        gboolean timeout) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstBuffer* lb = gst_aggregator_pad_peek_buffer(lpad);
  GstBuffer* rb = gst_aggregator_pad_peek_buffer(rpad);
  const cs_gst::PadHead lhead = pad_head(lpad, lb), rhead = pad_head(rpad, rb);
  GstFlowReturn ret = GST_FLOW_OK;
  const uint64_t tolerance =
      cs_gst::pairing_tolerance(lhead, rhead, priv->geometry.fps_n, priv->geometry.fps_d);
  const cs_gst::Decision decision = cs_gst::decide_pairing(lhead, rhead, tolerance, timeout);
  if (lb) gst_buffer_unref(lb);
  if (rb) gst_buffer_unref(rb);
  if (decision.action == cs_gst::Decision::kEndOfStream) return GST_FLOW_EOS;
  if (decision.action == cs_gst::Decision::kWait) return GST_FLOW_OK;

  const GstClockTime lt = lhead.running_time, rt = rhead.running_time;
  const bool take_left = decision.action != cs_gst::Decision::kRightAlone;
  const bool take_right = decision.action != cs_gst::Decision::kLeftAlone;
  const std::string& why = decision.why_unpaired;
  lb = take_left ? gst_aggregator_pad_pop_buffer(lpad) : nullptr;
  rb = take_right ? gst_aggregator_pad_pop_buffer(rpad) : nullptr;
  cs_gst::UploadsAhead::Taken lup(&priv->uploads_ahead, GST_PAD(lpad), lb);
  cs_gst::UploadsAhead::Taken rup(&priv->uploads_ahead, GST_PAD(rpad), rb);
  GstBuffer* primary = lb ? lb : rb;
  if (!primary) return GST_FLOW_OK;  // flushed meanwhile
  const GstClockTime out_rt = lb ? lt : rt;
  const GstClockTime duration = GST_BUFFER_DURATION(primary);

  if (cs_gst::is_late(out_rt, priv->last_output_rt)) {
    // Its partner already went out as a placeholder at this time.
    GST_INFO_OBJECT(self, "dropping late frame at running time %" GST_TIME_FORMAT, GST_TIME_ARGS(out_rt));
    if (!priv->warned_late) {
      priv->warned_late = true;
      GST_ELEMENT_WARNING(self, STREAM, FAILED,
                          ("Late stereo frame dropped: it came after its partner had gone out alone; raise the "
                           "`latency` property when the two sources lag each other"),
                          ("A frame at running time %" GST_TIME_FORMAT
                           " arrived after an output at that time was made (its partner went out unpaired).",
                           GST_TIME_ARGS(out_rt)));
    }
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->stats.dropped_frames++;
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    return GST_FLOW_OK;
  }

  if (!priv->geometry.valid) {
    const bool gaps_only = (!lb || is_gap(lb)) && (!rb || is_gap(rb));
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    if (gaps_only) return GST_FLOW_OK;
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("A frame arrived before both sink_left and sink_right had usable caps: upstream must send "
                       "video/x-raw caps on both first"),
                      ("a buffer arrived before both pads had valid caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const GstClockTime pts = output_pts_for(self, out_rt);
  const cs_gst::OutputKind kind = cs_gst::output_kind(lb && rb, lb && is_gap(lb), rb && is_gap(rb));
  if (kind != cs_gst::OutputKind::kGap && skip_late_frame(self, out_rt, pts, duration)) {
    priv->last_output_rt = out_rt;
    if (lb) gst_buffer_unref(lb);
    if (rb) gst_buffer_unref(rb);
    return GST_FLOW_OK;
  }
  if (kind == cs_gst::OutputKind::kDisparity) {
    GstVideoFrame lf, rf;
    // The engine takes both views from one kind of memory: when only one
    // view is on the GPU, both are read on the host.
    const bool device = input_on_device(self, lb) && input_on_device(self, rb);
    bool gpu_failed = false;
    const bool lok = map_input(self, lb, priv->left_in.info, "sink_left", device, &lf, &gpu_failed);
    const bool rok = !gpu_failed && map_input(self, rb, priv->right_in.info, "sink_right", device, &rf, &gpu_failed);
    if (gpu_failed) {
      ret = GST_FLOW_ERROR;
    } else if (lok && rok) {
      // Both views from upload slots, or neither: one kind of memory.
      cs::FrameView lwhole, rwhole;
      const bool ahead = !device && lup.device_copy_of(lf, &lwhole) && rup.device_copy_of(rf, &rwhole);
      if (!ahead) {
        whole_frame_view(lf, device, &lwhole);
        whole_frame_view(rf, device, &rwhole);
      }
      cs::FrameView l = frame_view(lf, lwhole, priv->geometry, 0);
      cs::FrameView r = frame_view(rf, rwhole, priv->geometry, 0);
      bool engine_took = false;
      ret = produce(self, &l, &r, pts, duration, false, &engine_took);
      if (ahead && engine_took) {
        lup.taken_by_engine();
        rup.taken_by_engine();
        count_uploaded_ahead(priv);
      }
    } else {
      ret = produce(self, nullptr, nullptr, pts, duration, false);
    }
    if (lok) gst_video_frame_unmap(&lf);
    if (rok) gst_video_frame_unmap(&rf);
  } else {
    if (lb && rb && kind == cs_gst::OutputKind::kPlaceholder)
      GST_INFO_OBJECT(self, "%s is a gap: placeholder output", is_gap(lb) ? "sink_left" : "sink_right");
    if (!(lb && rb) && kind == cs_gst::OutputKind::kPlaceholder) post_unpaired_warning(self, why);
    ret = produce(self, nullptr, nullptr, pts, duration, kind == cs_gst::OutputKind::kGap);
  }
  priv->last_output_rt = out_rt;
  if (lb) gst_buffer_unref(lb);
  if (rb) gst_buffer_unref(rb);
  return ret;
}

static GstFlowReturn gst_cuda_stereo_aggregate(GstAggregator* agg, gboolean timeout) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);

  GstAggregatorPad *sink = nullptr, *left = nullptr, *right = nullptr;
  GST_OBJECT_LOCK(self);
  if (priv->sink_pad) sink = GST_AGGREGATOR_PAD(gst_object_ref(priv->sink_pad));
  if (priv->left_pad) left = GST_AGGREGATOR_PAD(gst_object_ref(priv->left_pad));
  if (priv->right_pad) right = GST_AGGREGATOR_PAD(gst_object_ref(priv->right_pad));
  GST_OBJECT_UNLOCK(self);

  CudaContextScope cuda_scope(engine_context(priv));
  GstFlowReturn ret = GST_FLOW_OK;
  if ((left || right) && !(left && right)) {
    GST_ELEMENT_ERROR(self, CORE, PAD,
                      ("Two-pad input needs both sink_left and sink_right, but only %s was requested: request and "
                       "link the other one too, or use the packed `sink` pad",
                       left ? "sink_left" : "sink_right"),
                      (nullptr));
    ret = GST_FLOW_ERROR;
  } else if (!apply_settings(self)) {
    ret = GST_FLOW_ERROR;
  } else if (left && right) {
    if (priv->two_pad_caps_dirty && priv->left_in.configured && priv->right_in.configured) {
      priv->two_pad_caps_dirty = false;
      if (!update_geometry(self)) ret = GST_FLOW_NOT_NEGOTIATED;
    }
    if (ret == GST_FLOW_OK) ret = aggregate_two_pads(self, left, right, timeout);
  } else if (sink) {
    ret = aggregate_packed(self, sink);
  } else {
    ret = GST_FLOW_EOS;
  }
  if (sink) gst_object_unref(sink);
  if (left) gst_object_unref(left);
  if (right) gst_object_unref(right);
  return ret;
}

// Live mode: wait for the earliest queued frame's running time (plus the
// latency, added by the base class); with nothing queued, wait for data.
static GstClockTime gst_cuda_stereo_get_next_time(GstAggregator* agg) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  GstClockTime next = GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK(self);
  GstAggregatorPad* pads[3] = {priv->sink_pad, priv->left_pad, priv->right_pad};
  for (GstAggregatorPad*& p : pads)
    if (p) gst_object_ref(p);
  GST_OBJECT_UNLOCK(self);
  for (GstAggregatorPad* p : pads) {
    if (!p) continue;
    if (GstBuffer* b = gst_aggregator_pad_peek_buffer(p)) {
      const GstClockTime t = running_time_of(p, b);
      if (GST_CLOCK_TIME_IS_VALID(t) && (!GST_CLOCK_TIME_IS_VALID(next) || t < next)) next = t;
      gst_buffer_unref(b);
    }
    gst_object_unref(p);
  }
  return next;
}

// ---------------------------------------------------------------- caps

// The formats an output mode gives, in the user's words (for messages).
static const char* output_formats_text(GstCudaStereoOutputMode mode) {
  switch (mode) {
    case GST_CUDA_STEREO_OUTPUT_MODE_DEPTH: return "GRAY16_LE (output-mode=depth gives depth in GRAY16_LE only)";
    case GST_CUDA_STEREO_OUTPUT_MODE_CONFIDENCE: return "GRAY8 (output-mode=confidence gives GRAY8 only)";
    default: return "GRAY16_LE, GRAY8, RGBA, BGRA, RGBx or BGRx";
  }
}

static GstCaps* output_caps(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  bool depth, confidence;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    depth = priv->settings.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
    confidence = confidence_output(priv->settings);
  }
  const Geometry& g = priv->geometry;
  GstCaps* caps;
  if (depth) {
    caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "GRAY16_LE", nullptr);
  } else if (confidence) {
    caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "GRAY8", nullptr);
  } else {
    caps = gst_caps_from_string("video/x-raw, format=(string)" OUTPUT_FORMATS);
  }
  gst_caps_set_simple(caps, "width", G_TYPE_INT, g.view_width, "height", G_TYPE_INT, g.view_height,
                      "pixel-aspect-ratio", GST_TYPE_FRACTION, g.par_n, g.par_d, "framerate", GST_TYPE_FRACTION,
                      g.fps_n, g.fps_d, nullptr);
#if HAVE_GST_CUDA
  if (priv->engine_ctx && !depth && !confidence) {
    // The CUDA engine can write device memory: offer it first, in the
    // formats GStreamer's CUDA allocator can hold.
    GstCaps* device = gst_caps_from_string(GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY,
                                                                             CUDA_OUTPUT_FORMATS));
    gst_caps_set_simple(device, "width", G_TYPE_INT, g.view_width, "height", G_TYPE_INT, g.view_height,
                        "pixel-aspect-ratio", GST_TYPE_FRACTION, g.par_n, g.par_d, "framerate", GST_TYPE_FRACTION,
                        g.fps_n, g.fps_d, nullptr);
    gst_caps_append(device, caps);
    caps = device;
  }
#endif
  return caps;
}

static GstFlowReturn gst_cuda_stereo_update_src_caps(GstAggregator* agg, GstCaps* downstream, GstCaps** ret) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  if (!priv->geometry.valid) return GST_AGGREGATOR_FLOW_NEED_DATA;
  GstCaps* ours = output_caps(self);
  // `downstream` is filtered by our template, so ask the peer again: only a
  // neighbour that names CUDA memory itself (cudadownload, an encoder) gets
  // it. Elements taking anything (fakesink, filesink, videoconvert's ANY
  // features) read on the host, where CUDA memory would only add a download.
#if HAVE_GST_CUDA
  GstCaps* peer = gst_pad_peer_query_caps(GST_AGGREGATOR_SRC_PAD(agg), nullptr);
  const bool peer_wants_cuda = caps_have_cuda_memory(peer);
  if (peer) gst_caps_unref(peer);
#else
  const bool peer_wants_cuda = false;
#endif
  if (!peer_wants_cuda) {
    GstCaps* system = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(ours); ++i) {
      GstCapsFeatures* f = gst_caps_get_features(ours, i);
      if (!f || gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
        gst_caps_append_structure(system, gst_structure_copy(gst_caps_get_structure(ours, i)));
    }
    gst_caps_unref(ours);
    ours = system;
  }
  // Our order first: CUDA memory when both sides can, and raw disparity
  // unless downstream refuses it.
  *ret = gst_caps_intersect_full(ours, downstream, GST_CAPS_INTERSECT_FIRST);
  if (gst_caps_is_empty(*ret)) {
    GstCudaStereoOutputMode mode;
    {
      std::lock_guard<std::mutex> guard(priv->lock);
      mode = priv->settings.output_mode;
    }
    gchar* ours_str = gst_caps_to_string(ours);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("Downstream accepts none of the output formats: cudastereo gives %s; put videoconvert "
                       "after it or ask for one of these",
                       output_formats_text(mode)),
                      ("cudastereo can give %s", ours_str));
    g_free(ours_str);
    gst_caps_unref(ours);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  gst_caps_unref(ours);
  return GST_FLOW_OK;
}

static gboolean gst_cuda_stereo_negotiated_src_caps(GstAggregator* agg, GstCaps* caps) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps)) return FALSE;
  bool depth, confidence;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    depth = priv->settings.output_mode == GST_CUDA_STEREO_OUTPUT_MODE_DEPTH;
    confidence = confidence_output(priv->settings);
  }
  switch (GST_VIDEO_INFO_FORMAT(&info)) {
    case GST_VIDEO_FORMAT_GRAY16_LE:
      priv->out_format = depth ? cs::OutputFormat::DepthMm : cs::OutputFormat::DisparityQ4;
      break;
    case GST_VIDEO_FORMAT_GRAY8:
      priv->out_format = confidence ? cs::OutputFormat::Confidence : cs::OutputFormat::Gray8;
      break;
    case GST_VIDEO_FORMAT_RGBA: priv->out_format = cs::OutputFormat::RGBA; break;
    case GST_VIDEO_FORMAT_BGRA: priv->out_format = cs::OutputFormat::BGRA; break;
    case GST_VIDEO_FORMAT_RGBx: priv->out_format = cs::OutputFormat::RGBx; break;
    case GST_VIDEO_FORMAT_BGRx: priv->out_format = cs::OutputFormat::BGRx; break;
    default: return FALSE;
  }
  if (depth && priv->out_format != cs::OutputFormat::DepthMm) return FALSE;
  if (confidence && priv->out_format != cs::OutputFormat::Confidence) return FALSE;
  priv->out_info = info;
  priv->out_configured = true;
#if HAVE_GST_CUDA
  priv->out_cuda_memory = caps_have_cuda_memory(caps);
#endif
  GST_DEBUG_OBJECT(self, "output %" GST_PTR_FORMAT " (%s)", caps, cs::output_format_name(priv->out_format));
  return TRUE;
}

static gboolean gst_cuda_stereo_sink_event(GstAggregator* agg, GstAggregatorPad* pad, GstEvent* event) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
      GstCaps* caps;
      gst_event_parse_caps(event, &caps);
      GstVideoInfo info;
      if (!gst_video_info_from_caps(&info, caps)) {
        gchar* s = gst_caps_to_string(caps);
        GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unsupported caps on %s: %s", GST_PAD_NAME(pad), s), (nullptr));
        g_free(s);
        gst_event_unref(event);
        return FALSE;
      }
      PadInput* in = (pad == priv->left_pad) ? &priv->left_in : (pad == priv->right_pad) ? &priv->right_in
                                                                                        : &priv->packed_in;
      in->info = info;
      in->configured = true;
      GST_DEBUG_OBJECT(pad, "input caps %" GST_PTR_FORMAT, caps);
      gst_event_unref(event);
      if (in != &priv->packed_in) {
        // The two views may change caps one after the other: compare them
        // only when a pair is about to be matched.
        priv->two_pad_caps_dirty = true;
        return TRUE;
      }
      return update_geometry(self) ? TRUE : FALSE;
    }
    case GST_EVENT_SEGMENT: {
      // The output follows the timeline of the packed or left input, so a
      // packed stream keeps its timestamps exactly.
      const bool primary = pad == priv->sink_pad || pad == priv->left_pad;
      if (primary) {
        const GstSegment* seg;
        gst_event_parse_segment(event, &seg);
        if (seg->format == GST_FORMAT_TIME) gst_aggregator_update_segment(agg, seg);
      }
      break;
    }
    default:
      break;
  }
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->sink_event(agg, pad, event);
}

// Offers upstream a pool to write input into: CUDA buffers of our context for
// CUDA caps (the engine reads them in place); for system memory, with the
// CUDA engine, video buffers in pinned memory (the engine uploads them by DMA
// without a CPU copy), else plain video buffers. Only a pool, no allocator:
// pools recycle their buffers, whereas an element allocating per buffer would
// pay for page-locking (cudaHostAlloc) on every frame.
static void propose_pool(GstCudaStereo* self, GstQuery* query) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstCudaContext* cuda_ctx = nullptr;
  GstAllocator* pinned = nullptr;
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
#if HAVE_GST_CUDA
    if (priv->cuda_ctx) cuda_ctx = GST_CUDA_CONTEXT(gst_object_ref(priv->cuda_ctx));
#endif
    if (priv->pinned_allocator) pinned = GST_ALLOCATOR(gst_object_ref(priv->pinned_allocator));
  }
  cs_gst::propose_input_pool(GST_OBJECT(self), query, cuda_ctx, pinned);
  if (cuda_ctx) gst_object_unref(cuda_ctx);
  if (pinned) gst_object_unref(pinned);
}

static gboolean gst_cuda_stereo_sink_query(GstAggregator* agg, GstAggregatorPad* pad, GstQuery* query) {
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
      // Inputs never take their caps from downstream: answer with the template.
      GstCaps* filter;
      gst_query_parse_caps(query, &filter);
      GstCaps* templ = gst_pad_get_pad_template_caps(GST_PAD(pad));
      GstCaps* result = filter ? gst_caps_intersect_full(filter, templ, GST_CAPS_INTERSECT_FIRST) : gst_caps_ref(templ);
      gst_query_set_caps_result(query, result);
      gst_caps_unref(result);
      gst_caps_unref(templ);
      return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS: {
      GstCaps* caps;
      gst_query_parse_accept_caps(query, &caps);
      GstCaps* templ = gst_pad_get_pad_template_caps(GST_PAD(pad));
      gst_query_set_accept_caps_result(query, gst_caps_is_subset(caps, templ));
      gst_caps_unref(templ);
      return TRUE;
    }
    case GST_QUERY_ALLOCATION:
      // Any stride and plane offset is fine (GstVideoMeta).
      gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
      propose_pool(GST_CUDA_STEREO(agg), query);
      return TRUE;
#if HAVE_GST_CUDA
    case GST_QUERY_CONTEXT: {
      GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
      std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
      if (gst_cuda_handle_context_query(GST_ELEMENT(agg), query, priv->cuda_ctx)) return TRUE;
      break;
    }
#endif
    default:
      break;
  }
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->sink_query(agg, pad, query);
}

static gboolean gst_cuda_stereo_src_query(GstAggregator* agg, GstQuery* query) {
#if HAVE_GST_CUDA
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT) {
    GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    if (gst_cuda_handle_context_query(GST_ELEMENT(agg), query, priv->cuda_ctx)) return TRUE;
  }
#endif
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->src_query(agg, query);
}

// QoS events come up from a sink that syncs to the clock: keep the last
// observation for skip_late_frame (with qos=false too, so that turning it on
// acts at once), and pass the event on upstream as GstBaseTransform does.
static gboolean gst_cuda_stereo_src_event(GstAggregator* agg, GstEvent* event) {
  if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) {
    GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
    GstQOSType type;
    gdouble proportion;
    GstClockTimeDiff diff;
    GstClockTime timestamp;
    gst_event_parse_qos(event, &type, &proportion, &diff, &timestamp);
    GST_LOG_OBJECT(agg, "QoS: proportion %f, diff %" GST_STIME_FORMAT ", timestamp %" GST_TIME_FORMAT, proportion,
                   GST_STIME_ARGS(diff), GST_TIME_ARGS(timestamp));
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->qos.observe(proportion, diff, timestamp);
  }
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->src_event(agg, event);
}

static void gst_cuda_stereo_set_context(GstElement* element, GstContext* context) {
#if HAVE_GST_CUDA
  GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(element));
  int device_id;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    device_id = priv->settings.cuda_device_id;
  }
  {
    // Takes the context only while none is held, and only of our device.
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    gst_cuda_handle_set_context(element, context, device_id, &priv->cuda_ctx);
  }
#endif
  GST_ELEMENT_CLASS(gst_cuda_stereo_parent_class)->set_context(element, context);
}

// Output buffers in CUDA memory come from a GstCudaBufferPool of our context
// (downstream's own when it offers one of the same context).
// System-memory output with the CUDA engine comes from a pool of pinned
// buffers (the engine downloads into them by DMA), unless downstream offers a
// pool of its own kind (special memory it needs): then, as without the CUDA
// engine, plain system memory.
static gboolean gst_cuda_stereo_decide_allocation(GstAggregator* agg, GstQuery* query) {
  GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
  GstAllocator* pinned = nullptr;
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    if (priv->pinned_allocator) pinned = GST_ALLOCATOR(gst_object_ref(priv->pinned_allocator));
  }
  GstCudaContext* engine_ctx = nullptr;
#if HAVE_GST_CUDA
  engine_ctx = priv->engine_ctx;
#endif
  const cs_gst::OutputPool picked = cs_gst::decide_output_pool(GST_OBJECT(agg), query, engine_ctx, pinned);
  if (pinned) gst_object_unref(pinned);
  priv->out_pinned_pool = picked == cs_gst::OutputPool::kPinned;
  if (picked == cs_gst::OutputPool::kFailed) return FALSE;
  if (picked != cs_gst::OutputPool::kDefault) return TRUE;
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->decide_allocation
             ? GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->decide_allocation(agg, query)
             : TRUE;
}

// ---------------------------------------------------------------- start / stop / flush

static void reset_stream_state(GstCudaStereoPrivate* priv) {
  priv->last_output_rt = GST_CLOCK_TIME_NONE;
  priv->warned_unpaired = priv->warned_late = priv->warned_short = false;
  // A QoS observation belongs to the timeline before a seek (as in GstBaseTransform).
  priv->discont_pending = false;
  std::lock_guard<std::mutex> guard(priv->lock);
  priv->qos.reset();
}

#if HAVE_GST_CUDA
// Finds the CUDA context the pipeline shares (from a neighbour or the
// application) or makes one for cuda-device-id and announces it. Returns a
// reference in *ctx, or the reason there is none.
static std::string open_cuda_context(GstCudaStereo* self, int device_id, GstCudaContext** ctx) {
  GstCudaStereoPrivate* priv = PRIV(self);
  *ctx = nullptr;
  if (!gst_cuda_load_library())
    return "the CUDA driver library (libcuda.so.1) could not be loaded: no NVIDIA driver on this machine";
  gst_cuda_memory_init_once();
  // Not under ctx_lock: ensure_element_context takes a lock of its own and
  // queries the neighbours, whose own ensure may query us meanwhile (a lock
  // order inversion). It writes priv->cuda_ctx only while none is held, as
  // set_context does, and nothing else writes it before stop.
  const gboolean found = gst_cuda_ensure_element_context(GST_ELEMENT(self), device_id, &priv->cuda_ctx);
  std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
  if (!found || !priv->cuda_ctx) {
    return device_id < 0 ? std::string("no CUDA context could be opened (no usable GPU?)")
                         : "no CUDA context could be opened on cuda-device-id=" + std::to_string(device_id) +
                               " (no such GPU, or it is unusable)";
  }
  *ctx = static_cast<GstCudaContext*>(gst_object_ref(priv->cuda_ctx));
  return "";
}
#endif

// Developer detail for a debug string: the error text's own detail and the
// engine factory's (the failing CUDA call), either of which may be empty.
static std::string join_details(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty() || a == b) return a;
  return a + "; " + b;
}

static gboolean gst_cuda_stereo_start(GstAggregator* agg) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  Settings s;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    s = priv->settings;
    priv->stats = Stats();
  }
  const auto backend = static_cast<cs_gst::Backend>(s.backend);
  cs_gst::EngineChoice choice;
#if HAVE_GST_CUDA
  GstCudaContext* ctx = nullptr;
  if (backend != cs_gst::Backend::Cpu) {
    const std::string cuda_error = open_cuda_context(self, s.cuda_device_id, &ctx);
    if (ctx) {
      // The engine adopts the pushed context (device_id -1): its memory,
      // stream and graph live in the context the pipeline shares.
      gst_cuda_context_push(ctx);
      choice = cs_gst::create_engine(backend, -1, s.params);
      gst_cuda_context_pop(nullptr);
    } else if (backend == cs_gst::Backend::Cuda) {
      choice.error = "backend=cuda was requested but " + cuda_error;
    } else {
      choice = cs_gst::create_engine(cs_gst::Backend::Cpu, -1, s.params);
      if (choice.engine) choice.notice = "backend=auto runs on the CPU: " + cuda_error;
    }
  } else {
    choice = cs_gst::create_engine(backend, s.cuda_device_id, s.params);
  }
  if (choice.engine && ctx && std::strcmp(choice.engine->backend_name(), "cuda") == 0)
    priv->engine_ctx = ctx;
  else if (ctx)
    gst_object_unref(ctx);
#else
  choice = cs_gst::create_engine(backend, s.cuda_device_id, s.params);
#endif
  if (!choice.engine) {
    const cs::ErrorParts error = cs::split_error_text(choice.error);
    const std::string detail = join_details(error.detail, choice.debug);
    GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("No stereo engine: %s", error.message.c_str()),
                      ("backend=%s, cuda-device-id=%d%s%s",
                       g_enum_get_value(G_ENUM_CLASS(g_type_class_peek(gst_cuda_stereo_backend_get_type())), s.backend)
                           ->value_nick,
                       s.cuda_device_id, detail.empty() ? "" : "; ", detail.c_str()));
    return FALSE;
  }
  if (!choice.notice.empty() && !priv->notice_posted) {
    // Once per element: repeated start/stop cycles would otherwise repeat it.
    priv->notice_posted = true;
    const cs::ErrorParts notice = cs::split_error_text(choice.notice);
    const std::string detail = join_details(notice.detail, choice.debug);
    GST_ELEMENT_WARNING(self, LIBRARY, INIT, ("%s", notice.message.c_str()),
                        ("set backend=cpu to choose the CPU explicitly and silence this%s%s",
                         detail.empty() ? "" : "; ", detail.c_str()));
  }
  priv->engine = std::move(choice.engine);
  priv->backend_name = priv->engine->backend_name();
  if (std::strcmp(priv->backend_name, "cuda") == 0) {
    GstObject* alloc_ctx = nullptr;
#if HAVE_GST_CUDA
    alloc_ctx = GST_OBJECT(priv->engine_ctx);
#endif
    GstAllocator* pinned = gst_cuda_stereo_pinned_allocator_new(alloc_ctx);
    // Pinned memory is an optimisation: without it (a locked-memory limit,
    // say) buffers stay in plain memory and the engine copies through staging.
    GstMemory* probe = gst_allocator_alloc(pinned, 4096, nullptr);
    if (probe) {
      gst_memory_unref(probe);
      std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
      gst_object_replace(reinterpret_cast<GstObject**>(&priv->pinned_allocator), GST_OBJECT(pinned));
    } else {
      GST_WARNING_OBJECT(self, "no pinned host memory: system-memory frames are copied through staging");
    }
    gst_object_unref(pinned);
  }
  if (cs_gst::engine_uploads_ahead(priv->engine.get())) {
    priv->uploads_ahead.start(priv->engine.get(), engine_context(priv));
  }
  GST_INFO_OBJECT(self, "engine: %s", priv->backend_name);
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->params_dirty = true;
    priv->geometry_dirty = false;
    priv->stats.backend = priv->backend_name;
  }
  priv->packed_in = PadInput();
  priv->left_in = PadInput();
  priv->right_in = PadInput();
  priv->geometry = Geometry();
  priv->params_checked = false;
  priv->out_configured = false;
  priv->fps_window_frames = 0;
  reset_stream_state(priv);
  // The latency is measured anew for this engine: nothing until frames were matched.
  priv->processing_times.reset();
  priv->reported_latency = 0;
  gst_aggregator_set_latency(agg, 0, 0);
  return TRUE;
}

static gboolean gst_cuda_stereo_stop(GstAggregator* agg) {
  GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
  // Probes stop uploading; uploads never processed go back.
  priv->uploads_ahead.stop();
  {
    // The engine frees its device memory in the context it was made in.
    CudaContextScope cuda_scope(engine_context(priv));
    priv->engine.reset();
  }
#if HAVE_GST_CUDA
  gst_clear_object(&priv->engine_ctx);
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    gst_clear_object(&priv->cuda_ctx);
  }
#endif
  {
    std::lock_guard<std::recursive_mutex> guard(priv->ctx_lock);
    gst_clear_object(&priv->pinned_allocator);  // pools still holding buffers keep their own reference
  }
  priv->out_cuda_memory = false;
  priv->out_pinned_pool = false;
  priv->invalid_q4 = cs::Image<uint16_t>();
  priv->geometry = Geometry();
  priv->out_configured = false;
  return TRUE;
}

static GstFlowReturn gst_cuda_stereo_flush(GstAggregator* agg) {
  // A seek moves the timeline: forget pairing history. The background model
  // stays (the camera has not moved). Frames uploaded ahead were flushed.
  reset_stream_state(PRIV(GST_CUDA_STEREO(agg)));
  PRIV(GST_CUDA_STEREO(agg))->uploads_ahead.drop(nullptr);
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->flush
             ? GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->flush(agg)
             : GST_FLOW_OK;
}

// ---------------------------------------------------------------- pads

static GstAggregatorPad* make_sink_pad(GstCudaStereo* self) {
  GstPadTemplate* templ = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(self), "sink");
  GstAggregatorPad* pad = GST_AGGREGATOR_PAD(
      g_object_new(GST_TYPE_AGGREGATOR_PAD, "name", "sink", "direction", GST_PAD_SINK, "template", templ, nullptr));
  PRIV(self)->uploads_ahead.add_probe(GST_PAD(pad));
  return pad;
}

static GstPad* gst_cuda_stereo_request_new_pad(GstElement* element, GstPadTemplate* templ, const gchar* name,
                                               const GstCaps* caps) {
  GstCudaStereo* self = GST_CUDA_STEREO(element);
  GstCudaStereoPrivate* priv = PRIV(self);
  const bool want_left = g_strcmp0(GST_PAD_TEMPLATE_NAME_TEMPLATE(templ), "sink_left") == 0;
  const bool want_right = g_strcmp0(GST_PAD_TEMPLATE_NAME_TEMPLATE(templ), "sink_right") == 0;
  if (!want_left && !want_right) return nullptr;

  GST_OBJECT_LOCK(self);
  GstAggregatorPad* existing = want_left ? priv->left_pad : priv->right_pad;
  GstAggregatorPad* packed = priv->sink_pad;
  const bool packed_linked = packed && gst_pad_is_linked(GST_PAD(packed));
  GST_OBJECT_UNLOCK(self);
  if (existing) {
    GST_WARNING_OBJECT(self, "%s already exists", GST_PAD_TEMPLATE_NAME_TEMPLATE(templ));
    return nullptr;
  }
  if (packed_linked) {
    GST_ELEMENT_ERROR(self, CORE, PAD, ("Cannot use both the packed `sink` pad and sink_left/sink_right"),
                      ("`sink` is linked; request %s only on an element whose `sink` is unused",
                       GST_PAD_TEMPLATE_NAME_TEMPLATE(templ)));
    return nullptr;
  }
  if (packed) {
    // The aggregator waits for data on every sink pad: an unused `sink`
    // would stall two-pad input, so it goes while the request pads exist.
    GST_OBJECT_LOCK(self);
    priv->sink_pad = nullptr;
    GST_OBJECT_UNLOCK(self);
    gst_element_remove_pad(element, GST_PAD(packed));
  }
  GstPad* pad = GST_ELEMENT_CLASS(gst_cuda_stereo_parent_class)->request_new_pad(element, templ, name, caps);
  if (!pad) return nullptr;
  PRIV(self)->uploads_ahead.add_probe(pad);
  GST_OBJECT_LOCK(self);
  if (want_left)
    priv->left_pad = GST_AGGREGATOR_PAD(pad);
  else
    priv->right_pad = GST_AGGREGATOR_PAD(pad);
  GST_OBJECT_UNLOCK(self);
  return pad;
}

static void gst_cuda_stereo_release_pad(GstElement* element, GstPad* pad) {
  GstCudaStereo* self = GST_CUDA_STEREO(element);
  GstCudaStereoPrivate* priv = PRIV(self);
  bool restore_packed = false;
  GST_OBJECT_LOCK(self);
  if (pad == GST_PAD(priv->left_pad)) priv->left_pad = nullptr;
  if (pad == GST_PAD(priv->right_pad)) priv->right_pad = nullptr;
  restore_packed = !priv->left_pad && !priv->right_pad && !priv->sink_pad;
  GST_OBJECT_UNLOCK(self);
  GST_ELEMENT_CLASS(gst_cuda_stereo_parent_class)->release_pad(element, pad);
  priv->uploads_ahead.drop(pad);
  if (restore_packed) {
    GstAggregatorPad* sink = make_sink_pad(self);
    GST_OBJECT_LOCK(self);
    priv->sink_pad = sink;
    GST_OBJECT_UNLOCK(self);
    gst_element_add_pad(element, GST_PAD(sink));
  }
}

// ---------------------------------------------------------------- properties

static void reset_background_handler(GstCudaStereo* self) {
  std::lock_guard<std::mutex> guard(PRIV(self)->lock);
  PRIV(self)->reset_requested = true;
}

static GstStructure* stats_structure(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  std::lock_guard<std::mutex> guard(priv->lock);
  return cs_gst::stats_structure(priv->stats);
}

static void gst_cuda_stereo_set_property(GObject* object, guint prop_id, const GValue* value, GParamSpec* pspec) {
  GstCudaStereo* self = GST_CUDA_STEREO(object);
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
        // The engine learns that the confidence is read (it may refuse it by name).
        p.confidence = confidence_output(s);
        priv->params_dirty = true;
        renegotiate = true;
        break;
      case PROP_METHOD:
        p.method = static_cast<cs::Method>(g_value_get_enum(value));
        priv->params_dirty = true;
        break;
      case PROP_BLOCK_SIZE: p.match_block_size = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_UNIQUENESS_RATIO: p.uniqueness_ratio = g_value_get_int(value); priv->params_dirty = true; break;
      case PROP_BASELINE: s.baseline_m = g_value_get_double(value); break;
      case PROP_FOCAL_LENGTH: s.focal_px = g_value_get_double(value); break;
      case PROP_POST_MESSAGES: s.post_messages = g_value_get_boolean(value); break;
      case PROP_QOS: s.qos = g_value_get_boolean(value); break;
      default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
    }
  }
  if (renegotiate) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
}

static void gst_cuda_stereo_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  GstCudaStereo* self = GST_CUDA_STEREO(object);
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
    case PROP_LR_CHECK: g_value_set_boolean(value, p.lr_check); break;
    case PROP_LR_TOLERANCE: g_value_set_int(value, p.lr_tolerance); break;
    case PROP_SUBPIXEL: g_value_set_boolean(value, p.subpixel); break;
    case PROP_COLORMAP: g_value_set_enum(value, s.colormap); break;
    case PROP_ALPHA_MASK: g_value_set_boolean(value, s.alpha_mask); break;
    case PROP_INPUT_LAYOUT: g_value_set_enum(value, s.input_layout); break;
    case PROP_OUTPUT_MODE: g_value_set_enum(value, s.output_mode); break;
    case PROP_BASELINE: g_value_set_double(value, s.baseline_m); break;
    case PROP_FOCAL_LENGTH: g_value_set_double(value, s.focal_px); break;
    case PROP_POST_MESSAGES: g_value_set_boolean(value, s.post_messages); break;
    case PROP_QOS: g_value_set_boolean(value, s.qos); break;
    case PROP_METHOD: g_value_set_enum(value, static_cast<int>(p.method)); break;
    case PROP_BLOCK_SIZE: g_value_set_int(value, p.match_block_size); break;
    case PROP_UNIQUENESS_RATIO: g_value_set_int(value, p.uniqueness_ratio); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
  }
}

// ---------------------------------------------------------------- GObject

static void gst_cuda_stereo_init(GstCudaStereo* self) {
  self->priv = new GstCudaStereoPrivate();
  GstAggregatorPad* sink = make_sink_pad(self);
  self->priv->sink_pad = sink;
  gst_element_add_pad(GST_ELEMENT(self), GST_PAD(sink));
}

static void gst_cuda_stereo_finalize(GObject* object) {
  GstCudaStereo* self = GST_CUDA_STEREO(object);
#if HAVE_GST_CUDA
  gst_clear_object(&self->priv->cuda_ctx);  // given by set_context without a start
#endif
  delete self->priv;
  self->priv = nullptr;
  G_OBJECT_CLASS(gst_cuda_stereo_parent_class)->finalize(object);
}

static void gst_cuda_stereo_class_init(GstCudaStereoClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstAggregatorClass* agg_class = GST_AGGREGATOR_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_cuda_stereo_debug, "cudastereo", 0, "Stereo disparity (Zhao & Taubin 2011)");

  gobject_class->set_property = gst_cuda_stereo_set_property;
  gobject_class->get_property = gst_cuda_stereo_get_property;
  gobject_class->finalize = gst_cuda_stereo_finalize;

  const cs::Params d;
  const auto playing = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                                GST_PARAM_MUTABLE_PLAYING);
  const auto ready = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

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
                       1, 4096, d.max_disparity, playing));
  g_object_class_install_property(
      gobject_class, PROP_MIN_DISPARITY,
      g_param_spec_int("min-disparity", "Minimum disparity", "Lowest disparity searched, pixels", 0, 4095,
                       d.min_disparity, playing));
  g_object_class_install_property(
      gobject_class, PROP_LEVELS,
      g_param_spec_int("levels", "Pyramid levels",
                       "Pyramid levels including full size; 0 = automatic (coarsest search range of at most 64 disparities)", 0,
                       cs::kMaxLevels, d.levels, playing));
  g_object_class_install_property(
      gobject_class, PROP_WINDOW,
      g_param_spec_enum("window", "Window variant",
                        "Adaptive window: centre sub-window plus the N best of the 8 around it (Yang & Pollefeys)",
                        gst_cuda_stereo_window_get_type(), static_cast<int>(d.window), playing));
  g_object_class_install_property(
      gobject_class, PROP_BACKGROUND,
      g_param_spec_boolean("background", "Background model",
                           "Per-pixel Gaussian background model in HSV, tested coarse to fine; only foreground is "
                           "matched (static cameras). Changing it restarts the model",
                           d.background, playing));
  g_object_class_install_property(
      gobject_class, PROP_LEARNING_RATE,
      g_param_spec_float("learning-rate", "Learning rate", "Background model learning rate per frame (0 < rate <= 1)",
                         1e-6f, 1.0f, d.learning_rate, playing));
  g_object_class_install_property(
      gobject_class, PROP_FOREGROUND_THRESHOLD,
      g_param_spec_float("foreground-threshold", "Foreground threshold",
                         "k: a pixel is foreground when any HSV channel is beyond k standard deviations", 0.1f, 100.0f,
                         d.foreground_threshold, playing));
  g_object_class_install_property(
      gobject_class, PROP_WARMUP_FRAMES,
      g_param_spec_int("warmup-frames", "Warm-up frames",
                       "Frames the background model only learns (everything is foreground meanwhile)", 0, 100000,
                       d.warmup_frames, playing));
  g_object_class_install_property(
      gobject_class, PROP_LR_CHECK,
      g_param_spec_boolean("lr-check", "Left-right check", "Invalidate disparities the right view does not confirm",
                           d.lr_check, playing));
  g_object_class_install_property(
      gobject_class, PROP_LR_TOLERANCE,
      g_param_spec_int("lr-tolerance", "Left-right tolerance", "Largest left/right disparity difference kept, pixels",
                       0, 64, d.lr_tolerance, playing));
  g_object_class_install_property(
      gobject_class, PROP_SUBPIXEL,
      g_param_spec_boolean("subpixel", "Sub-pixel", "Parabola fit to 1/16 pixel", d.subpixel, playing));
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
                        "one away; method=progressive has it on the CPU backend only in this version). Confidence is "
                        "an output mode so that it is a plain GRAY8 stream any element or appsink takes at full "
                        "resolution; for disparity and confidence of the same frames, tee the input into two "
                        "elements. Changing it renegotiates",
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
      gobject_class, PROP_METHOD,
      g_param_spec_enum("method", "Matching method",
                        "How disparities are found: progressive (Zhao & Taubin 2011: census costs, adaptive windows, "
                        "coarse to fine; window, levels and the background model's pyramid apply) or block (SSD "
                        "block matching of the full-size views over the whole range, as NVIDIA's CUDA stereo sample, "
                        "with Tweddle's left-right check, uniqueness test and sub-pixel parabola; block-size and "
                        "uniqueness-ratio apply)",
                        gst_cuda_stereo_method_get_type(), static_cast<int>(d.method), playing));
  g_object_class_install_property(
      gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_int("block-size", "Block size",
                       "method=block: side of the square SSD window, pixels, odd (an even size is refused with an "
                       "error naming it when the next frame starts)",
                       3, cs::kMaxMatchBlockSize, d.match_block_size, playing));
  g_object_class_install_property(
      gobject_class, PROP_UNIQUENESS_RATIO,
      g_param_spec_int("uniqueness-ratio", "Uniqueness ratio",
                       "Keep a pixel only when the best cost more than one disparity away from its winner exceeds "
                       "the winner's by more than this percentage (rival * 100 > best * (100 + ratio)), as OpenCV's "
                       "StereoBM; 0 = off, -1 = the method's default (block: 80, progressive: off). With "
                       "method=progressive a ratio runs on the CPU backend only in this version",
                       -1, cs::kMaxUniquenessRatio, d.uniqueness_ratio, playing));
  g_object_class_install_property(
      gobject_class, PROP_STATS,
      g_param_spec_boxed("stats", "Statistics",
                         "Read-only GstStructure: backend, frames, fps, foreground-fraction, background-tests-ratio "
                         "(tests made / a full per-pixel test), valid-fraction, levels, model-frames, warming-up, "
                         "unpaired-frames, dropped-frames, uploaded-ahead (frames whose upload to the GPU began as "
                         "they arrived), qos-skipped (frames not matched because they would have been late), "
                         "processing-time (ns, recent maximum to match a frame), latency (ns, what the element adds "
                         "to the latency query)",
                         GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  /**
   * GstCudaStereo::reset-background:
   *
   * Forgets the background model; the next frame starts a new warm-up.
   */
  g_signal_new_class_handler("reset-background", G_TYPE_FROM_CLASS(klass),
                             static_cast<GSignalFlags>(G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION),
                             G_CALLBACK(reset_background_handler), nullptr, nullptr, nullptr, G_TYPE_NONE, 0);

  gst_element_class_add_pad_template(
      element_class, gst_pad_template_new_from_static_pad_template_with_gtype(&sink_template, GST_TYPE_AGGREGATOR_PAD));
  gst_element_class_add_pad_template(element_class, gst_pad_template_new_from_static_pad_template_with_gtype(
                                                        &sink_left_template, GST_TYPE_AGGREGATOR_PAD));
  gst_element_class_add_pad_template(element_class, gst_pad_template_new_from_static_pad_template_with_gtype(
                                                        &sink_right_template, GST_TYPE_AGGREGATOR_PAD));
  gst_element_class_add_pad_template(
      element_class, gst_pad_template_new_from_static_pad_template_with_gtype(&src_template, GST_TYPE_AGGREGATOR_PAD));

  gst_element_class_set_static_metadata(
      element_class, "Stereo disparity (progressive multi-resolution adaptive windows)", "Filter/Analyzer/Video",
      "Disparity or depth from a rectified (row-aligned) stereo pair: packed side-by-side/top-bottom frames on `sink`, or two views on "
      "sink_left/sink_right paired by timestamp. Zhao & Taubin 2011 (pyramid, optional HSV background model, "
      "adaptive-window census matching, left-right check, sub-pixel), or SSD block matching (method=block) with "
      "uniqueness test. Output GRAY16_LE d*16 (0 = invalid), GRAY8, false colour, depth in mm or a GRAY8 confidence; "
      "per-buffer GstCudaStereoMeta. Backends: cpu, cuda (auto picks)",
      "gst-cudastereo developers");

  element_class->request_new_pad = GST_DEBUG_FUNCPTR(gst_cuda_stereo_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR(gst_cuda_stereo_release_pad);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cuda_stereo_set_context);

  agg_class->aggregate = GST_DEBUG_FUNCPTR(gst_cuda_stereo_aggregate);
  agg_class->get_next_time = GST_DEBUG_FUNCPTR(gst_cuda_stereo_get_next_time);
  agg_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_stereo_sink_event);
  agg_class->sink_query = GST_DEBUG_FUNCPTR(gst_cuda_stereo_sink_query);
  agg_class->src_query = GST_DEBUG_FUNCPTR(gst_cuda_stereo_src_query);
  agg_class->src_event = GST_DEBUG_FUNCPTR(gst_cuda_stereo_src_event);
  agg_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_cuda_stereo_decide_allocation);
  agg_class->update_src_caps = GST_DEBUG_FUNCPTR(gst_cuda_stereo_update_src_caps);
  agg_class->negotiated_src_caps = GST_DEBUG_FUNCPTR(gst_cuda_stereo_negotiated_src_caps);
  agg_class->start = GST_DEBUG_FUNCPTR(gst_cuda_stereo_start);
  agg_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_stereo_stop);
  agg_class->flush = GST_DEBUG_FUNCPTR(gst_cuda_stereo_flush);

  gst_type_mark_as_plugin_api(gst_cuda_stereo_backend_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_colormap_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_input_layout_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_output_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_window_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(gst_cuda_stereo_method_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_cuda_stereo_meta_get_info();
  gst_cuda_stereo_custom_meta_get_info();
}
