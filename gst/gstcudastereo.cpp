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
 * 62.4 % at 1.86 %; off for progressive, which applies it at every level,
 * and for cross).
 * cross is cross-based aggregation with bitwise fast voting (Zhang, Lu,
 * Yang, Lafruit, Lauwereins and Van Gool 2011, "Real-time and accurate
 * stereo: a scalable approach with bitwise fast voting on CUDA"): every
 * pixel of both views gets a cross-shaped support region from its colour,
 * four arms that reach out at most `cross-arm-length` pixels (1 .. 16) and
 * stop before the first two pixels in a row whose R, G or B differs from
 * the pixel's by more than `cross-tau` (0 .. 255). A pixel pair's cost is
 * the sum of its R, G, B absolute differences cut at `cross-truncation`
 * (1 .. 765) plus `cross-census-weight` (0 .. 24, 0 = the paper's cost
 * alone) for each differing bit of the two pixels' 8-bit census codes of
 * the luma, summed over the overlap of the two views' regions and
 * normalised by its size; the least cost over the whole range at full size
 * wins; a left-right check keeps the reliable disparities; bitwise fast
 * voting over each pixel's region (its arms cut to `cross-vote-arm-length`,
 * 1 .. 16) fills and corrects the map from them, and
 * a 3x3 median smooths it. Disparities are whole pixels (`subpixel` does
 * not apply). `sample-restore` S = 2 or 3 matches only every S-th pixel of
 * every S-th row and lets the voting restore the full-size map: about S * S
 * times less matching, somewhat less accurate. It matches the views'
 * colour (YUV inputs converted to RGB; GRAY8 as three equal channels) and
 * honours background, both input modes and every output format.
 * Both backends run every method bit-identically, with a uniqueness ratio
 * and the confidence output.
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
 * Frames in flight (`frames-in-flight`, 2 by default): while the next input
 * already waits, up to that many frames stay with the engine, which works on
 * one while the element pushes the one before and takes in the next. Outputs
 * keep input order and timestamps; EOS pushes every frame in flight, a flush
 * drops them. Without a waiting input every frame is pushed as soon as it is
 * done (live sources keep their latency). The CUDA engine queues frames
 * with outputs in CUDA or pinned memory; the CPU backend overlaps frames.
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
 * Cameras that deliver unrectified views: `calibration` names the stereo
 * calibration (an OpenCV FileStorage YAML or XML file, two ROS camera_info
 * files as left.yaml,right.yaml, or a Kalibr camchain.yaml; lengths in
 * metres); the element then rectifies both views before matching
 * (`rectify-alpha` chooses the crop) and output-mode=depth takes baseline and
 * focal-length from the file unless they are set. A file that is missing,
 * malformed or for another view size stops the element with an error naming
 * the file and the field.
 * output-mode=rectified shows the views after rectification instead of a
 * disparity map (RGBA, BGRA, RGBx or BGRx, left first, side by side or one
 * above the other as the input packs them; nothing is matched): to check a
 * calibration, rows of the two views must line up.
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
 * stream-time, duration (GstClockTime, guint64), foreground-fraction,
 * valid-fraction (gdouble, of the left view; foreground-fraction is 1.0
 * without background model) and matched-fraction (gdouble, the matching
 * work against a full frame's, GstCudaStereoMeta), processing-time (guint64, nanoseconds spent
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
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240 ! cudastereo input-layout=side-by-side method=cross cross-tau=20 cross-arm-length=16 max-disparity=64 ! videoconvert ! fakesink
 * ]| Cross-based aggregation with bitwise fast voting (method=cross) of
 * side-by-side colour frames, whole-pixel disparities.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240 ! cudastereo input-layout=side-by-side method=cross sample-restore=2 ! video/x-raw,format=GRAY16_LE ! fakesink
 * ]| The same with sample-and-restore: the initial disparities are matched
 * on every second pixel of every second row and restored by the voting.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball num-buffers=30 ! video/x-raw,width=640,height=240 ! cudastereo input-layout=side-by-side method=elas max-disparity=64 ! video/x-raw,format=GRAY16_LE ! fakesink
 * ]| ELAS (method=elas): support points, their triangulation as a prior,
 * dense matching against it, gaps filled; whole-pixel disparities.
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
 *
 * Pin in place: with the CUDA engine, plain system memory that comes back
 * (a buffer pool upstream recycles its memory: videoconvert, v4l2src, appsrc
 * with a pool, imagefreeze) is page-locked where it lies the second time the
 * element sees it, and its frames then go to the GPU by DMA like the
 * element's own pool's, with no copy on the CPU. Memory seen once is never
 * registered; each element keeps at most 512 MiB registered; a registration
 * lasts as long as the memory and is undone when it is freed. `stats`
 * counts pinned-in-place-frames and gathered-frames (copied through the
 * engine's staging area), and the registrations.
 */
#include "gstcudastereo.h"

#include <gst/video/video.h>

#include <mutex>

#include "aggregate.h"
#include "allocation.h"
#include "caps.h"
#include "config.h"
#include "cuda_context.h"
#include "cuda_context_scope.h"
#include "element_private.h"
#include "engine_factory.h"
#include "engine_setup.h"
#include "gstcudastereometa.h"
#include "live.h"
#include "produce.h"
#include "properties.h"
#include "rectification.h"

// This file is the glue: the type, its pads and class, and the GObject and
// GstAggregator calls, each handing its work to the unit that does it:
//   element_private.h  the state the units share
//   properties.cpp     property specs, set/get_property
//   property_enums.cpp the properties' enum types, tied to the core's enums
//   caps.cpp           pad formats, output caps and negotiation, input caps
//   configure.cpp      geometry from the caps, settings into the engine
//   aggregate.cpp      which queued frames make the next output (packed or two pads)
//   input.cpp          mapping input buffers, on the host or the GPU
//   produce.cpp        one output frame: buffer, engine, meta, stats, push
//   live.cpp           latency from the processing time; QoS
//   engine_setup.cpp   the engine, made in start and released in stop
//   cuda_context.cpp   the GstCudaContext shared with neighbouring elements
//   allocation.cpp     the pools proposed upstream and picked for the output
//   upload_ahead.cpp   uploads to the GPU started as frames arrive
//   host_pin.cpp       system memory that comes back page-locked where it lies
// and helpers that never see the element's state: pairing.cpp (the two-pad
// pairing rules), live_timing.cpp (latency and QoS rules), pin_rules.cpp
// (which memory is pinned in place, and how much), geometry.cpp,
// settings.cpp, stats.cpp, engine_factory.cpp, pinned_allocator.cpp,
// cuda_memory.cpp.

// Not static: every unit of the element logs in it (element_private.h).
GST_DEBUG_CATEGORY(gst_cuda_stereo_debug);

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate sink_left_template =
    GST_STATIC_PAD_TEMPLATE("sink_left", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate sink_right_template =
    GST_STATIC_PAD_TEMPLATE("sink_right", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(SINK_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(SRC_CAPS));

G_DEFINE_TYPE(GstCudaStereo, gst_cuda_stereo, GST_TYPE_AGGREGATOR);
GST_ELEMENT_REGISTER_DEFINE(cudastereo, "cudastereo", GST_RANK_NONE, GST_TYPE_CUDA_STEREO);

// ---------------------------------------------------------------- aggregate

static GstFlowReturn gst_cuda_stereo_aggregate(GstAggregator* agg, gboolean timeout) {
  return cs_gst::aggregate(GST_CUDA_STEREO(agg), timeout);
}

static GstClockTime gst_cuda_stereo_get_next_time(GstAggregator* agg) {
  return cs_gst::next_time(GST_CUDA_STEREO(agg));
}

// ---------------------------------------------------------------- caps, events, queries, allocation

static GstFlowReturn gst_cuda_stereo_update_src_caps(GstAggregator* agg, GstCaps* downstream, GstCaps** ret) {
  return cs_gst::update_src_caps(GST_CUDA_STEREO(agg), downstream, ret);
}

static gboolean gst_cuda_stereo_negotiated_src_caps(GstAggregator* agg, GstCaps* caps) {
  return cs_gst::negotiated_src_caps(GST_CUDA_STEREO(agg), caps) ? TRUE : FALSE;
}

static gboolean gst_cuda_stereo_sink_event(GstAggregator* agg, GstAggregatorPad* pad, GstEvent* event) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
      GstCaps* caps;
      gst_event_parse_caps(event, &caps);
      const bool taken = cs_gst::take_input_caps(self, pad, caps);
      gst_event_unref(event);
      return taken ? TRUE : FALSE;
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
    case GST_QUERY_CAPS:
    case GST_QUERY_ACCEPT_CAPS:
      // Inputs never take their caps from downstream: answer with the template.
      return cs_gst::answer_input_caps_query(GST_PAD(pad), query) ? TRUE : FALSE;
    case GST_QUERY_ALLOCATION:
      // Any stride and plane offset is fine (GstVideoMeta).
      gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
      propose_pool(GST_CUDA_STEREO(agg), query);
      return TRUE;
    case GST_QUERY_CONTEXT:
      if (cs_gst::answer_context_query(GST_CUDA_STEREO(agg), query)) return TRUE;
      break;
    default:
      break;
  }
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->sink_query(agg, pad, query);
}

static gboolean gst_cuda_stereo_src_query(GstAggregator* agg, GstQuery* query) {
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT && cs_gst::answer_context_query(GST_CUDA_STEREO(agg), query))
    return TRUE;
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->src_query(agg, query);
}

// QoS events come up from a sink that syncs to the clock: keep the last
// observation for skip_late_frame (with qos=false too, so that turning it on
// acts at once), and pass the event on upstream as GstBaseTransform does.
static gboolean gst_cuda_stereo_src_event(GstAggregator* agg, GstEvent* event) {
  if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) cs_gst::observe_qos(GST_CUDA_STEREO(agg), event);
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->src_event(agg, event);
}

// NULL to READY: the CUDA context is found (or the process's for the GPU
// taken) before the upstream neighbours go to READY, so that they find ours
// through their downstream query and the branch runs in one context a GPU.
// A failure here is not one: start reports it, or falls back to the CPU.
static GstStateChangeReturn gst_cuda_stereo_change_state(GstElement* element, GstStateChange transition) {
#if HAVE_GST_CUDA
  GstCudaStereo* self = GST_CUDA_STEREO(element);
  if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
    int backend, device_id;
    {
      std::lock_guard<std::mutex> guard(PRIV(self)->lock);
      backend = PRIV(self)->settings.backend;
      device_id = PRIV(self)->settings.cuda_device_id;
    }
    if (static_cast<cs_gst::Backend>(backend) != cs_gst::Backend::Cpu) {
      const std::string why = cs_gst::acquire_cuda_context(self, device_id);
      if (!why.empty()) GST_DEBUG_OBJECT(self, "no CUDA context at READY: %s", why.c_str());
    }
  }
#endif
  const GstStateChangeReturn ret = GST_ELEMENT_CLASS(gst_cuda_stereo_parent_class)->change_state(element, transition);
#if HAVE_GST_CUDA
  if (transition == GST_STATE_CHANGE_READY_TO_NULL) cs_gst::release_cuda_context(PRIV(self));
#endif
  return ret;
}

static void gst_cuda_stereo_set_context(GstElement* element, GstContext* context) {
  cs_gst::take_context(GST_CUDA_STEREO(element), context);
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

static gboolean gst_cuda_stereo_start(GstAggregator* agg) {
  GstCudaStereo* self = GST_CUDA_STEREO(agg);
  GstCudaStereoPrivate* priv = PRIV(self);
  cs_gst::Settings s;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    s = priv->settings;
    priv->stats = cs_gst::Stats();
  }
  const std::string calibration_problem = cs_gst::read_calibration_files(s.calibration, &priv->rectification);
  if (!calibration_problem.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", calibration_problem.c_str()), (nullptr));
    return FALSE;
  }
  if (!cs_gst::open_engine(self, s)) return FALSE;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    priv->params_dirty = true;
    priv->geometry_dirty = false;
    priv->stats.backend = priv->backend_name;
  }
  priv->packed_in = cs_gst::PadInput();
  priv->left_in = cs_gst::PadInput();
  priv->right_in = cs_gst::PadInput();
  priv->geometry = cs_gst::Geometry();
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
  cs_gst::close_engine(priv);
  priv->out_cuda_memory = false;
  priv->out_pinned_pool = false;
  priv->invalid_q4 = cs::Image<uint16_t>();
  priv->geometry = cs_gst::Geometry();
  priv->out_configured = false;
  return TRUE;
}

static GstFlowReturn gst_cuda_stereo_flush(GstAggregator* agg) {
  // A seek moves the timeline: forget pairing history. The background model
  // stays (the camera has not moved). Frames uploaded ahead were flushed.
  GstCudaStereoPrivate* priv = PRIV(GST_CUDA_STEREO(agg));
  reset_stream_state(priv);
  priv->uploads_ahead.drop(nullptr);
  {
    // Frames in flight belong to the old timeline: finished, never pushed.
    CudaContextScope cuda_scope(engine_context(priv));
    cs_gst::drop_outputs(priv);
  }
  return GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->flush
             ? GST_AGGREGATOR_CLASS(gst_cuda_stereo_parent_class)->flush(agg)
             : GST_FLOW_OK;
}

// ---------------------------------------------------------------- pads

static GstAggregatorPad* make_sink_pad(GstCudaStereo* self) {
  GstPadTemplate* templ = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(self), "sink");
  GstAggregatorPad* pad = GST_AGGREGATOR_PAD(
      g_object_new(GST_TYPE_AGGREGATOR_PAD, "name", "sink", "direction", GST_PAD_SINK, "template", templ, nullptr));
  // Pinning first: the upload-ahead probe then finds the memory pinned.
  PRIV(self)->host_pins.add_probe(GST_PAD(pad));
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
  PRIV(self)->host_pins.add_probe(pad);
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

static void gst_cuda_stereo_set_property(GObject* object, guint prop_id, const GValue* value, GParamSpec* pspec) {
  cs_gst::set_property(GST_CUDA_STEREO(object), prop_id, value, pspec);
}

static void gst_cuda_stereo_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec) {
  cs_gst::get_property(GST_CUDA_STEREO(object), prop_id, value, pspec);
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

  cs_gst::install_properties_and_signals(gobject_class);

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
      "adaptive-window census matching, left-right check, sub-pixel), SSD block matching (method=block) with "
      "uniqueness test, or cross-based aggregation with bitwise fast voting (method=cross, Zhang et al. 2011). "
      "Output GRAY16_LE d*16 (0 = invalid), GRAY8, false colour, depth in mm or a GRAY8 confidence; "
      "per-buffer GstCudaStereoMeta. Backends: cpu, cuda (auto picks)",
      "gst-cudastereo developers");

  element_class->request_new_pad = GST_DEBUG_FUNCPTR(gst_cuda_stereo_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR(gst_cuda_stereo_release_pad);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cuda_stereo_set_context);
  element_class->change_state = GST_DEBUG_FUNCPTR(gst_cuda_stereo_change_state);

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

  gst_cuda_stereo_meta_get_info();
  gst_cuda_stereo_custom_meta_get_info();
}
