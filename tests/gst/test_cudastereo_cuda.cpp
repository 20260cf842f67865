// Element tests on the CUDA backend (need a GPU; exit 77 = skipped without
// one). The CPU backend is the reference: for the same input the CUDA
// element must give byte-identical GRAY16_LE (and colour) output, whether
// frames arrive in system memory, in CUDA memory (cudaupload, nvh264dec) or
// leave in either, whether system-memory frames were uploaded ahead or not;
// several elements in one process must not interfere.
// Run with CK_FORK=no (CUDA and fork() do not mix).
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/video/video.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "gstcudastereometa.h"
#include "pipeline_helpers.h"
#include "rig_scene.h"
#include "synthetic.h"

using pipeline_helpers::by_name;
using pipeline_helpers::launch;
using pipeline_helpers::set_state_within;
using pipeline_helpers::wait_eos;

namespace {

constexpr int kW = 96;  // one view
constexpr int kH = 64;
constexpr int kMaxD = 24;
constexpr GstClockTime kFrame = 40 * GST_MSECOND;

using Bytes = std::vector<uint8_t>;

// One side-by-side frame: a textured plane at disparity d, in `format`, rows
// padded (GstVideoMeta carries the strides).
GstBuffer* sbs_frame(GstVideoFormat format, int d, uint32_t seed, GstClockTime pts) {
  const cs::SyntheticPair pair = cs::make_plane_pair(kW, kH, d, seed);
  const int fw = 2 * kW;
  std::vector<uint32_t> rgba(static_cast<size_t>(fw) * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      rgba[y * fw + x] = pair.left_rgba.at(x, y);
      rgba[y * fw + kW + x] = pair.right_rgba.at(x, y);
    }
  GstVideoInfo in_info, out_info;
  gst_video_info_set_format(&in_info, GST_VIDEO_FORMAT_RGBA, fw, kH);
  gst_video_info_set_format(&out_info, format, fw, kH);
  GstVideoAlignment align;
  gst_video_alignment_reset(&align);
  align.padding_right = 8;
  fail_unless(gst_video_info_align(&out_info, &align));
  GstBuffer* in = gst_buffer_new_wrapped(g_memdup2(rgba.data(), rgba.size() * 4), rgba.size() * 4);
  GstBuffer* out = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&out_info), nullptr);
  gst_buffer_memset(out, 0, 0x5A, GST_VIDEO_INFO_SIZE(&out_info));
  gst_buffer_add_video_meta_full(out, GST_VIDEO_FRAME_FLAG_NONE, format, fw, kH, GST_VIDEO_INFO_N_PLANES(&out_info),
                                 out_info.offset, out_info.stride);
  GstVideoFrame fin, fout;
  fail_unless(gst_video_frame_map(&fin, &in_info, in, GST_MAP_READ));
  fail_unless(gst_video_frame_map(&fout, &out_info, out, GST_MAP_WRITE));
  GstVideoConverter* conv = gst_video_converter_new(&in_info, &out_info, nullptr);
  gst_video_converter_frame(conv, &fin, &fout);
  gst_video_converter_free(conv);
  gst_video_frame_unmap(&fin);
  gst_video_frame_unmap(&fout);
  gst_buffer_unref(in);
  GST_BUFFER_PTS(out) = pts;
  GST_BUFFER_DURATION(out) = kFrame;
  return out;
}

std::string in_caps(GstVideoFormat format) {
  return std::string("video/x-raw,format=") + gst_video_format_to_string(format) +
         ",width=" + std::to_string(2 * kW) + ",height=" + std::to_string(kH) + ",framerate=25/1";
}

// The pixels of an output frame, rows packed tightly (strides differ between
// system and CUDA memory).
Bytes tight_pixels(GstBuffer* buf, GstCaps* caps) {
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, caps));
  GstVideoFrame f;
  fail_unless(gst_video_frame_map(&f, &info, buf, GST_MAP_READ));
  const int row = GST_VIDEO_INFO_WIDTH(&info) * GST_VIDEO_FRAME_COMP_PSTRIDE(&f, 0);
  Bytes out(static_cast<size_t>(row) * GST_VIDEO_INFO_HEIGHT(&info));
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y)
    std::memcpy(out.data() + y * row,
                static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0),
                row);
  gst_video_frame_unmap(&f);
  return out;
}

bool has_cuda_feature(GstCaps* caps) {
  if (!caps || gst_caps_is_empty(caps)) return false;
  GstCapsFeatures* f = gst_caps_get_features(caps, 0);
  return f && gst_caps_features_contains(f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

struct Frames {
  GstVideoFormat format;
  std::vector<int> disparity;  // per frame
  uint32_t seed;
};

GstBuffer* frame_of(const Frames& fr, size_t i) {
  return sbs_frame(fr.format, fr.disparity[i], fr.seed + static_cast<uint32_t>(i), i * kFrame);
}

// The element's count of frames read from copies uploaded ahead.
uint64_t uploaded_ahead_of(GstElement* e) {
  GstStructure* stats = nullptr;
  g_object_get(e, "stats", &stats, nullptr);
  fail_unless(stats != nullptr);
  guint64 n = 0;
  fail_unless(gst_structure_get_uint64(stats, "uploaded-ahead", &n), "stats lack uploaded-ahead");
  gst_structure_free(stats);
  return n;
}

// Runs the frames through one element on a harness; returns the output
// pixels and the meta's backend of the last frame, and optionally how many
// frames were read from copies uploaded ahead.
std::vector<Bytes> run_harness(const char* backend, const Frames& fr, const char* props, const char* out_caps,
                               std::string* backend_seen, uint64_t* uploaded_ahead = nullptr) {
  GstElement* e = gst_element_factory_make("cudastereo", nullptr);
  fail_unless(e != nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "backend", backend);
  gst_util_set_object_arg(G_OBJECT(e), "input-layout", "side-by-side");
  g_object_set(e, "max-disparity", kMaxD, nullptr);
  if (props) {
    gchar** kv = g_strsplit(props, " ", -1);
    for (gchar** p = kv; *p; ++p) {
      gchar** pair = g_strsplit(*p, "=", 2);
      gst_util_set_object_arg(G_OBJECT(e), pair[0], pair[1]);
      g_strfreev(pair);
    }
    g_strfreev(kv);
  }
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src");
  gst_harness_set_sink_caps_str(h, out_caps);
  gst_harness_set_src_caps_str(h, in_caps(fr.format).c_str());
  std::vector<Bytes> outs;
  for (size_t i = 0; i < fr.disparity.size(); ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame_of(fr, i));
    fail_unless(out != nullptr, "no output for frame %zu (backend %s)", i, backend);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), i * kFrame);
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    outs.push_back(tight_pixels(out, caps));
    gst_caps_unref(caps);
    GstCudaStereoMeta* m = gst_buffer_get_cuda_stereo_meta(out);
    fail_unless(m != nullptr);
    if (backend_seen) *backend_seen = m->backend;
    gst_buffer_unref(out);
  }
  if (uploaded_ahead) *uploaded_ahead = uploaded_ahead_of(e);
  gst_object_unref(e);
  gst_harness_teardown(h);
  return outs;
}

void expect_identical(const std::vector<Bytes>& cuda, const std::vector<Bytes>& cpu, const char* what) {
  fail_unless_equals_int(cuda.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    fail_unless_equals_int(cuda[i].size(), cpu[i].size());
    size_t differ = 0;
    for (size_t k = 0; k < cpu[i].size(); ++k) differ += cuda[i][k] != cpu[i][k];
    fail_unless(differ == 0, "%s, frame %zu: %zu of %zu bytes differ from the CPU backend", what, i, differ,
                cpu[i].size());
  }
}

// Fraction of 16-bit values equal to d * 16 (a plane at d: most are).
double fraction_at(const Bytes& q4, int d) {
  size_t hit = 0;
  for (size_t k = 0; k + 1 < q4.size(); k += 2) hit += (q4[k] | (q4[k + 1] << 8)) == d * 16;
  return static_cast<double>(hit) / (q4.size() / 2);
}

GstCudaContext* context_of(GstElement* e, GstPadDirection dir) {
  GstQuery* q = gst_query_new_context(GST_CUDA_CONTEXT_TYPE);
  GstPad* pad = dir == GST_PAD_SRC ? gst_element_get_static_pad(e, "src") : gst_element_get_static_pad(e, "sink");
  GstCudaContext* ctx = nullptr;
  if (pad && gst_pad_query(pad, q)) {
    GstContext* c = nullptr;
    gst_query_parse_context(q, &c);
    if (c) gst_structure_get(gst_context_get_structure(c), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &ctx, nullptr);
  }
  if (pad) gst_object_unref(pad);
  gst_query_unref(q);
  return ctx;  // a reference, or null
}

void require_element(const char* name) {
  GstElementFactory* f = gst_element_factory_find(name);
  fail_unless(f != nullptr, "element %s is missing (GStreamer's nvcodec/openh264 plugins on a GPU machine?)", name);
  gst_object_unref(f);
}

// Fails with the pipeline's error message, if it posted one.
void fail_on_bus_error(GstBus* bus) {
  GstMessage* err = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (!err) return;
  GError* e = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_error(err, &e, &dbg);
  fail("pipeline error from %s: %s (%s)", GST_OBJECT_NAME(GST_MESSAGE_SRC(err)), e->message, dbg ? dbg : "");
}

// The next sample of an appsink, or null at EOS; fails on a pipeline error
// or when nothing comes for `wait` (never hangs on a broken branch).
GstSample* pull(GstElement* sink, GstBus* bus, GstClockTime wait = 60 * GST_SECOND) {
  for (GstClockTime waited = 0; waited < wait; waited += 200 * GST_MSECOND) {
    if (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 200 * GST_MSECOND)) return s;
    if (gst_app_sink_is_eos(GST_APP_SINK(sink))) return nullptr;
    fail_on_bus_error(bus);
  }
  fail("%s: no frame and no EOS within %" GST_TIME_FORMAT, GST_OBJECT_NAME(sink), GST_TIME_ARGS(wait));
  return nullptr;
}

// Pushes each branch's frames into appsrc name=src<i>, pulls from appsink
// name=sink<i> until EOS. Branches run on their own streaming threads.
std::vector<std::vector<Bytes>> run_pipeline(GstElement* pipeline, const std::vector<Frames>& branches,
                                             std::vector<std::vector<GstClockTime>>* pts = nullptr) {
  GstBus* bus = gst_element_get_bus(pipeline);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (size_t b = 0; b < branches.size(); ++b) {
    GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), ("src" + std::to_string(b)).c_str());
    if (!src) continue;  // a source element of its own
    for (size_t i = 0; i < branches[b].disparity.size(); ++i)
      fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), frame_of(branches[b], i)), GST_FLOW_OK);
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    gst_object_unref(src);
  }
  std::vector<std::vector<Bytes>> outs(branches.size());
  if (pts) pts->assign(branches.size(), {});
  for (size_t b = 0; b < branches.size(); ++b) {
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), ("sink" + std::to_string(b)).c_str());
    fail_unless(sink != nullptr);
    while (GstSample* s = pull(sink, bus)) {
      outs[b].push_back(tight_pixels(gst_sample_get_buffer(s), gst_sample_get_caps(s)));
      if (pts) (*pts)[b].push_back(GST_BUFFER_PTS(gst_sample_get_buffer(s)));
      GstCudaStereoMeta* m = gst_buffer_get_cuda_stereo_meta(gst_sample_get_buffer(s));
      fail_unless(m && std::strcmp(m->backend, "cuda") == 0, "branch %zu: output not made by the CUDA backend", b);
      gst_sample_unref(s);
    }
    gst_object_unref(sink);
  }
  fail_on_bus_error(bus);
  gst_object_unref(bus);
  return outs;
}

// Every pipeline a test builds, kept until the test's teardown stops it: a
// failing check leaves the test early, and a pipeline left PLAYING would
// keep streaming threads and GPU work alive into the next test and the exit.
std::vector<GstElement*> g_pipelines;

GstElement* parse(const std::string& desc) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  fail_unless(p != nullptr && err == nullptr, "could not build '%s': %s", desc.c_str(), err ? err->message : "");
  g_pipelines.push_back(GST_ELEMENT(gst_object_ref(p)));
  return p;
}

void stop_pipelines() {
  for (GstElement* p : g_pipelines) {
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(p);
  }
  g_pipelines.clear();
}

void announce_test() { g_printerr("-- next cudastereo-cuda test\n"); }

std::string appsrc(int i, GstVideoFormat format) {
  return "appsrc name=src" + std::to_string(i) + " format=time caps=\"" + in_caps(format) + "\" ";
}

std::string appsink(int i) {
  return " appsink name=sink" + std::to_string(i) + " sync=false max-buffers=0 ";
}

// ---------------------------------------------------------------- pinned system memory

// Runs the frames through a CUDA element on a harness, written into buffers
// of the pool the element proposes upstream (as an upstream element that
// honours allocation queries does). The proposed pool must hold pinned
// memory, and so must the element's own system-memory output.
std::vector<Bytes> run_harness_proposed_pool(const Frames& fr, const char* out_caps) {
  GstElement* e = gst_element_factory_make("cudastereo", nullptr);
  fail_unless(e != nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "backend", "cuda");
  gst_util_set_object_arg(G_OBJECT(e), "input-layout", "side-by-side");
  g_object_set(e, "max-disparity", kMaxD, nullptr);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src");
  gst_object_unref(e);
  gst_harness_set_sink_caps_str(h, out_caps);
  gst_harness_set_src_caps_str(h, in_caps(fr.format).c_str());

  GstCaps* caps = gst_caps_from_string(in_caps(fr.format).c_str());
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, caps));
  GstQuery* q = gst_query_new_allocation(caps, TRUE);
  fail_unless(gst_pad_peer_query(h->srcpad, q), "the allocation query was not answered");
  fail_unless(gst_query_get_n_allocation_pools(q) > 0, "no pool was proposed for system memory");
  GstBufferPool* pool = nullptr;
  gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
  gst_query_unref(q);
  fail_unless(pool != nullptr);
  GstStructure* config = gst_buffer_pool_get_config(pool);
  GstAllocator* allocator = nullptr;
  fail_unless(gst_buffer_pool_config_get_allocator(config, &allocator, nullptr));
  fail_unless(allocator != nullptr && g_strcmp0(allocator->mem_type, "CudaStereoPinned") == 0,
              "the proposed pool's allocator is %s, not the pinned one", allocator ? allocator->mem_type : "(none)");
  gst_structure_free(config);
  fail_unless(gst_buffer_pool_set_active(pool, TRUE));

  std::vector<Bytes> outs;
  for (size_t i = 0; i < fr.disparity.size(); ++i) {
    GstBuffer* made = frame_of(fr, i);
    GstBuffer* in = nullptr;
    fail_unless_equals_int(gst_buffer_pool_acquire_buffer(pool, &in, nullptr), GST_FLOW_OK);
    fail_unless(gst_memory_is_type(gst_buffer_peek_memory(in, 0), "CudaStereoPinned"));
    GstVideoFrame src, dst;
    fail_unless(gst_video_frame_map(&src, &info, made, GST_MAP_READ));
    fail_unless(gst_video_frame_map(&dst, &info, in, GST_MAP_WRITE));
    fail_unless(gst_video_frame_copy(&dst, &src));
    gst_video_frame_unmap(&src);
    gst_video_frame_unmap(&dst);
    GST_BUFFER_PTS(in) = GST_BUFFER_PTS(made);
    GST_BUFFER_DURATION(in) = GST_BUFFER_DURATION(made);
    gst_buffer_unref(made);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    fail_unless(out != nullptr, "no output for frame %zu", i);
    fail_unless(gst_memory_is_type(gst_buffer_peek_memory(out, 0), "CudaStereoPinned"),
                "frame %zu: the system-memory output is not in pinned memory", i);
    GstCaps* out_negotiated = gst_pad_get_current_caps(h->sinkpad);
    outs.push_back(tight_pixels(out, out_negotiated));
    gst_caps_unref(out_negotiated);
    GstCudaStereoMeta* m = gst_buffer_get_cuda_stereo_meta(out);
    fail_unless(m && std::strcmp(m->backend, "cuda") == 0);
    gst_buffer_unref(out);
  }
  gst_buffer_pool_set_active(pool, FALSE);
  gst_object_unref(pool);
  gst_caps_unref(caps);
  gst_harness_teardown(h);
  return outs;
}

}  // namespace

// Frames written into the pinned pool the element proposes, and output into
// its pinned pool, come out byte-identical to the CPU backend (the engine
// moves them by DMA, without its staging copy).
GST_START_TEST(test_pinned_pool_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420};
  const char* out_caps[] = {"video/x-raw,format=GRAY16_LE", "video/x-raw,format=RGBA"};
  for (GstVideoFormat fmt : formats)
    for (const char* oc : out_caps) {
      const Frames fr{fmt, {5, 9, 9, 3}, 300};
      const std::vector<Bytes> pinned = run_harness_proposed_pool(fr, oc);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, nullptr, oc, nullptr);
      const std::string what = std::string("pinned pool ") + gst_video_format_to_string(fmt) + " -> " + oc;
      expect_identical(pinned, cpu, what.c_str());
    }
}
GST_END_TEST;

// ---------------------------------------------------------------- system memory in and out

// backend=auto takes the GPU; its output equals the CPU backend's, byte for
// byte, for every input format, with sub-pixel, the background model and
// colour output.
GST_START_TEST(test_cuda_matches_cpu_system_memory) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_GRAY8,
                                    GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12};
  // A calibration of the example rig for these views (issue 40): rectified
  // before matching, depth from the file, and the rectified views themselves.
  const std::string calibration = "/tmp/cs-cuda-calib-" + std::to_string(getpid()) + ".yml";
  g_file_set_contents(calibration.c_str(), cs::opencv_calibration_yaml(cs::example_rig(kW, kH)).c_str(), -1,
                      nullptr);
  struct Case {
    std::string props;
    const char* out_caps;
  } cases[] = {
      {"subpixel=true", "video/x-raw,format=GRAY16_LE"},
      {"subpixel=false lr-check=false", "video/x-raw,format=GRAY16_LE"},
      {"background=true warmup-frames=2", "video/x-raw,format=GRAY16_LE"},
      {"colormap=jet alpha-mask=true background=true warmup-frames=1", "video/x-raw,format=RGBA"},
      {"output-mode=depth baseline=0.1 focal-length=400", "video/x-raw,format=GRAY16_LE"},
      {"output-mode=depth calibration=" + calibration, "video/x-raw,format=GRAY16_LE"},
      {"output-mode=rectified calibration=" + calibration, "video/x-raw,format=BGRx"},
  };
  for (GstVideoFormat fmt : formats) {
    for (const Case& c : cases) {
      // Different planes per frame, so a stale frame would show.
      const Frames fr{fmt, {5, 9, 9, 3}, 100};
      std::string cuda_backend, cpu_backend;
      const std::vector<Bytes> cuda = run_harness("auto", fr, c.props.c_str(), c.out_caps, &cuda_backend);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, c.props.c_str(), c.out_caps, &cpu_backend);
      fail_unless_equals_string(cuda_backend.c_str(), "cuda");
      fail_unless_equals_string(cpu_backend.c_str(), "cpu");
      const std::string what = std::string(gst_video_format_to_string(fmt)) + " " + c.props;
      expect_identical(cuda, cpu, what.c_str());
    }
  }
  g_unlink(calibration.c_str());
  // And the answer is right, not only equal: the plane at d = 5.
  const Frames fr{GST_VIDEO_FORMAT_RGBA, {5}, 7};
  const std::vector<Bytes> out = run_harness("cuda", fr, "subpixel=false", "video/x-raw,format=GRAY16_LE", nullptr);
  fail_unless(fraction_at(out[0], 5) >= 0.8, "only %.3f of the pixels at d = 5", fraction_at(out[0], 5));
}
GST_END_TEST;

// ---------------------------------------------------------------- packed 4:2:2 (USB cameras)

namespace {

// Whether `factory`'s src pad can give `caps` (GStreamer versions differ in
// the formats their CUDA elements take).
bool factory_can_give(const char* factory, const char* caps) {
  GstElementFactory* f = gst_element_factory_find(factory);
  if (!f) return false;
  bool can = false;
  GstCaps* want = gst_caps_from_string(caps);
  for (const GList* l = gst_element_factory_get_static_pad_templates(f); l; l = l->next) {
    const GstStaticPadTemplate* t = static_cast<const GstStaticPadTemplate*>(l->data);
    if (t->direction != GST_PAD_SRC) continue;
    GstCaps* tc = gst_static_pad_template_get_caps(const_cast<GstStaticPadTemplate*>(t));
    can = can || gst_caps_can_intersect(tc, want);
    gst_caps_unref(tc);
  }
  gst_caps_unref(want);
  gst_object_unref(f);
  return can;
}

}  // namespace

// YUY2 and UYVY side by side: the CUDA backend equals the CPU backend byte
// for byte from system memory (uploaded ahead; with the background model,
// which reads the chroma, and false colour out) and from CUDA memory
// (cudaupload), where this GStreamer's cudaupload takes the format.
GST_START_TEST(test_yuv422_cuda_matches_cpu) {
  const char* background = "background=true warmup-frames=2";
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY}) {
    const char* name = gst_video_format_to_string(fmt);
    const Frames fr{fmt, {5, 9, 9, 3, 12}, 700};
    for (const char* props : {static_cast<const char*>(nullptr), background}) {
      for (const char* oc : {"video/x-raw,format=GRAY16_LE", "video/x-raw,format=RGBA"}) {
        std::string cuda_backend;
        uint64_t ahead = 0;
        const std::vector<Bytes> cuda = run_harness("cuda", fr, props, oc, &cuda_backend, &ahead);
        const std::vector<Bytes> cpu = run_harness("cpu", fr, props, oc, nullptr);
        fail_unless_equals_string(cuda_backend.c_str(), "cuda");
        const std::string what = std::string(name) + " " + (props ? props : "") + " -> " + oc;
        expect_identical(cuda, cpu, what.c_str());
        fail_unless_equals_uint64(ahead, fr.disparity.size());
      }
    }
    // And the answer is right, not only equal.
    const std::vector<Bytes> out =
        run_harness("cuda", Frames{fmt, {5}, 7}, "subpixel=false", "video/x-raw,format=GRAY16_LE", nullptr);
    fail_unless(fraction_at(out[0], 5) >= 0.8, "%s: only %.3f of the pixels at d = 5", name, fraction_at(out[0], 5));

    const std::string cuda_caps = std::string("video/x-raw(memory:CUDAMemory),format=") + name;
    if (!factory_can_give("cudaupload", cuda_caps.c_str())) {
      g_printerr("%s from CUDA memory not tested: this GStreamer's cudaupload does not give %s\n", name,
                 cuda_caps.c_str());
      continue;
    }
    const std::vector<Bytes> cpu = run_harness("cpu", fr, background, "video/x-raw,format=GRAY16_LE", nullptr);
    GstElement* pipeline = parse(appsrc(0, fmt) + "! cudaupload ! video/x-raw(memory:CUDAMemory) ! cudastereo "
                                 "name=stereo backend=cuda input-layout=side-by-side max-disparity=" +
                                 std::to_string(kMaxD) + " " + background + " ! video/x-raw,format=GRAY16_LE !" +
                                 appsink(0));
    const std::vector<std::vector<Bytes>> outs = run_pipeline(pipeline, {fr});
    expect_identical(outs[0], cpu, (std::string(name) + " from CUDA memory").c_str());
    GstElement* stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
    GstPad* sink = gst_element_get_static_pad(stereo, "sink");
    GstCaps* in = gst_pad_get_current_caps(sink);
    fail_unless(has_cuda_feature(in), "%s: the input was not in CUDA memory: %" GST_PTR_FORMAT, name, in);
    gst_caps_unref(in);
    gst_object_unref(sink);
    gst_object_unref(stereo);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }
}
GST_END_TEST;

// ---------------------------------------------------------------- upload ahead

namespace {

// One view as a buffer of its own in plain (pageable) system memory.
GstBuffer* view_buffer(const cs::Image<uint32_t>& img, size_t index) {
  GstBuffer* b = gst_buffer_new_memdup(img.pixels.data(), img.pixels.size() * 4);
  GST_BUFFER_PTS(b) = index * kFrame;
  GST_BUFFER_DURATION(b) = kFrame;
  return b;
}

// Starts `cudastereo <props> ! GRAY16_LE ! appsink name=sink0` fed by two
// appsrc on sink_left and sink_right (through cudaupload into CUDA memory
// when `upload`; through videoconvert into `view_format` when one is given),
// pushes frame i's views, pair(i) for i < frames, from the test thread and
// ends both streams. The pipeline is PLAYING.
template <typename PairOf>
GstElement* start_two_pads(const std::string& props, bool upload, size_t frames, PairOf pair,
                           const char* view_format = nullptr) {
  const std::string caps = "video/x-raw,format=RGBA,width=" + std::to_string(kW) + ",height=" + std::to_string(kH) +
                           ",framerate=25/1";
  std::string into = upload ? " ! cudaupload ! video/x-raw(memory:CUDAMemory) ! " : " ! ";
  if (view_format) into = " ! videoconvert ! video/x-raw,format=" + std::string(view_format) + into;
  GstElement* pipeline = parse("cudastereo name=stereo " + props +
                               " ! video/x-raw,format=GRAY16_LE ! appsink name=sink0 sync=false max-buffers=0 "
                               "appsrc name=l format=time caps=\"" + caps + "\"" + into + "stereo.sink_left "
                               "appsrc name=r format=time caps=\"" + caps + "\"" + into + "stereo.sink_right");
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (const char* name : {"l", "r"}) {
    GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), name);
    for (size_t i = 0; i < frames; ++i) {
      const cs::SyntheticPair p = pair(i);
      GstBuffer* b = view_buffer(name[0] == 'l' ? p.left_rgba : p.right_rgba, i);
      fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), b), GST_FLOW_OK);
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    gst_object_unref(src);
  }
  return pipeline;
}

// appsrc ! sink_left, appsrc ! sink_right in system memory (RGBA, or
// view_format after videoconvert); GRAY16_LE out. The element's counter of
// frames uploaded ahead goes to *uploaded_ahead.
std::vector<Bytes> run_two_pads(const char* backend, const std::vector<int>& disparity, uint64_t* uploaded_ahead,
                                const char* view_format = nullptr, const char* props = nullptr) {
  GstElement* pipeline = start_two_pads(
      std::string("backend=") + backend + " max-disparity=" + std::to_string(kMaxD) + " " + (props ? props : ""), false,
      disparity.size(),
      [&](size_t i) { return cs::make_plane_pair(kW, kH, disparity[i], 500 + static_cast<uint32_t>(i)); },
      view_format);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink0");
  GstBus* bus = gst_element_get_bus(pipeline);
  std::vector<Bytes> outs;
  while (GstSample* smp = pull(sink, bus)) {
    GstBuffer* b = gst_sample_get_buffer(smp);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), outs.size() * kFrame);
    GstCudaStereoMeta* m = gst_buffer_get_cuda_stereo_meta(b);
    fail_unless(m && !m->placeholder && std::strcmp(m->backend, backend) == 0);
    outs.push_back(tight_pixels(b, gst_sample_get_caps(smp)));
    gst_sample_unref(smp);
  }
  fail_on_bus_error(bus);
  GstElement* stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
  *uploaded_ahead = uploaded_ahead_of(stereo);
  gst_object_unref(stereo);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return outs;
}

}  // namespace

// YUY2 and UYVY on two pads (videoconvert makes each view, deterministic, so
// both backends see the same bytes): the CUDA backend equals the CPU backend
// byte for byte, with and without the background model (which reads the
// chroma), and the planes' disparities come out.
GST_START_TEST(test_yuv422_two_pads_cuda_matches_cpu) {
  const std::vector<int> ds = {5, 9, 9, 3, 12};
  for (const char* fmt : {"YUY2", "UYVY"})
    for (const char* props : {"subpixel=false", "background=true warmup-frames=2"}) {
      uint64_t ahead = 0;
      const std::vector<Bytes> cuda = run_two_pads("cuda", ds, &ahead, fmt, props);
      const std::vector<Bytes> cpu = run_two_pads("cpu", ds, &ahead, fmt, props);
      fail_unless_equals_int(cuda.size(), ds.size());
      const std::string what = std::string("two pads ") + fmt + " " + props;
      expect_identical(cuda, cpu, what.c_str());
      if (std::strcmp(props, "subpixel=false") == 0)
        for (size_t i = 0; i < ds.size(); ++i)
          fail_unless(fraction_at(cuda[i], ds[i]) >= 0.8, "%s, frame %zu: only %.3f of the pixels at d = %d",
                      what.c_str(), i, fraction_at(cuda[i], ds[i]), ds[i]);
    }
}
GST_END_TEST;

// System-memory frames start their upload as they arrive (a pad probe, in
// the upstream thread): the output stays byte-identical to the CPU backend,
// and the counter shows the copies were used. A harness pushes one frame
// and waits for its output, so every frame goes that way; padded rows
// (GstVideoMeta strides), two- and three-plane formats, the background
// model across frames.
GST_START_TEST(test_upload_ahead_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12};
  const char* props[] = {nullptr, "background=true warmup-frames=2"};
  for (GstVideoFormat fmt : formats)
    for (const char* pr : props) {
      const Frames fr{fmt, {5, 9, 9, 3, 12}, 200};
      uint64_t ahead = 0;
      const std::vector<Bytes> cuda = run_harness("cuda", fr, pr, "video/x-raw,format=GRAY16_LE", nullptr, &ahead);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, pr, "video/x-raw,format=GRAY16_LE", nullptr);
      const std::string what = std::string("upload ahead ") + gst_video_format_to_string(fmt) + " " + (pr ? pr : "");
      expect_identical(cuda, cpu, what.c_str());
      fail_unless_equals_uint64(ahead, fr.disparity.size());
    }

  // A packed pipeline: appsrc pushes its own (pageable) buffers from its
  // streaming thread while the element works on earlier frames.
  const Frames fr{GST_VIDEO_FORMAT_I420, {4, 8, 12, 16, 3, 7, 11, 15, 5, 9, 13, 6}, 900};
  GstElement* pipeline = parse(appsrc(0, fr.format) + "! cudastereo name=stereo backend=cuda "
                               "input-layout=side-by-side max-disparity=" + std::to_string(kMaxD) +
                               " ! video/x-raw,format=GRAY16_LE !" + appsink(0));
  const std::vector<std::vector<Bytes>> piped = run_pipeline(pipeline, {fr});
  GstElement* stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
  const uint64_t packed_ahead = uploaded_ahead_of(stereo);
  gst_object_unref(stereo);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  const std::vector<Bytes> cpu = run_harness("cpu", fr, nullptr, "video/x-raw,format=GRAY16_LE", nullptr);
  expect_identical(piped[0], cpu, "packed appsrc pipeline");
  fail_unless(packed_ahead > 0, "no frame of the packed pipeline was uploaded ahead");
  g_printerr("packed pipeline: %" G_GUINT64_FORMAT " of %zu frames uploaded ahead\n", packed_ahead,
             fr.disparity.size());

  // Two pads, each view from its own appsrc thread.
  const std::vector<int> ds = {4, 8, 12, 16, 3, 7, 11, 15, 5, 9};
  uint64_t two_ahead = 0, cpu_ahead = 0;
  const std::vector<Bytes> two_cuda = run_two_pads("cuda", ds, &two_ahead);
  const std::vector<Bytes> two_cpu = run_two_pads("cpu", ds, &cpu_ahead);
  fail_unless_equals_int(two_cuda.size(), ds.size());
  expect_identical(two_cuda, two_cpu, "two-pad appsrc pipeline");
  fail_unless(two_ahead > 0, "no pair of the two-pad pipeline was uploaded ahead");
  fail_unless_equals_uint64(cpu_ahead, 0);
  g_printerr("two-pad pipeline: %" G_GUINT64_FORMAT " of %zu pairs uploaded ahead\n", two_ahead, ds.size());
}
GST_END_TEST;

// ---------------------------------------------------------------- CUDA memory

// cudaupload ! cudastereo ! cudadownload: CUDA memory on both sides of the
// element (no host copy), one context shared with the neighbours; and the
// mixed cases. Every variant equals the CPU backend.
GST_START_TEST(test_cuda_memory_pipelines) {
  require_element("cudaupload");
  require_element("cudadownload");
  const Frames fr{GST_VIDEO_FORMAT_RGBA, {4, 6, 8, 6, 4}, 300};
  // GStreamer 1.22's cudadownload/cudaupload know no GRAY formats: CUDA
  // memory output goes through them as false colour.
  const char* colour = "colormap=jet alpha-mask=true background=true warmup-frames=1";
  const std::vector<Bytes> cpu_raw = run_harness("cpu", fr, nullptr, "video/x-raw,format=GRAY16_LE", nullptr);
  const std::vector<Bytes> cpu_rgba = run_harness("cpu", fr, colour, "video/x-raw,format=RGBA", nullptr);
  struct Variant {
    const char* before;  // between appsrc and cudastereo
    const char* after;   // between cudastereo and the caps filter
    bool colour;         // RGBA false colour, else raw GRAY16_LE
    bool cuda_in, cuda_out;
  } variants[] = {
      {"! cudaupload ! video/x-raw(memory:CUDAMemory) ", "! cudadownload ", true, true, true},
      {"! cudaupload ! video/x-raw(memory:CUDAMemory) ", "", false, true, false},
      {"", "! cudadownload ", true, false, true},
  };
  for (const Variant& v : variants) {
    const std::string desc = appsrc(0, fr.format) + v.before +
                             "! cudastereo name=stereo backend=cuda input-layout=side-by-side max-disparity=" +
                             std::to_string(kMaxD) + " " + (v.colour ? colour : "") + " " + v.after +
                             "! video/x-raw,format=" + (v.colour ? "RGBA" : "GRAY16_LE") + " !" + appsink(0);
    GstElement* pipeline = parse(desc);
    const std::vector<std::vector<Bytes>> outs = run_pipeline(pipeline, {fr});
    expect_identical(outs[0], v.colour ? cpu_rgba : cpu_raw, desc.c_str());

    GstElement* stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
    GstPad* sink = gst_element_get_static_pad(stereo, "sink");
    GstPad* src = gst_element_get_static_pad(stereo, "src");
    GstCaps* in = gst_pad_get_current_caps(sink);
    GstCaps* out = gst_pad_get_current_caps(src);
    fail_unless(has_cuda_feature(in) == v.cuda_in, "%s: input caps %" GST_PTR_FORMAT, desc.c_str(), in);
    fail_unless(has_cuda_feature(out) == v.cuda_out, "%s: output caps %" GST_PTR_FORMAT, desc.c_str(), out);
    gst_caps_unref(in);
    gst_caps_unref(out);
    gst_object_unref(sink);
    gst_object_unref(src);
    // The neighbours and the element answer with one shared context.
    GstCudaContext* ours = context_of(stereo, GST_PAD_SRC);
    fail_unless(ours != nullptr, "cudastereo does not answer the CUDA context query");
    GstIterator* it = gst_bin_iterate_elements(GST_BIN(pipeline));
    GValue item = G_VALUE_INIT;
    int neighbours = 0;
    while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
      GstElement* e = GST_ELEMENT(g_value_get_object(&item));
      const gchar* factory = GST_OBJECT_NAME(gst_element_get_factory(e));
      if (g_str_has_prefix(factory, "cudaupload") || g_str_has_prefix(factory, "cudadownload")) {
        GstCudaContext* theirs = context_of(e, GST_PAD_SRC);
        fail_unless(theirs == ours, "%s holds another CUDA context than cudastereo", factory);
        if (theirs) gst_object_unref(theirs);
        neighbours++;
      }
      g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    fail_unless(neighbours >= 1);
    gst_object_unref(ours);
    gst_object_unref(stereo);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }
}
GST_END_TEST;

// Two views on sink_left/sink_right, both uploaded to the GPU.
GST_START_TEST(test_cuda_memory_two_pads) {
  require_element("cudaupload");
  const int d = 6;
  const cs::SyntheticPair pair = cs::make_plane_pair(kW, kH, d, 21);
  GstElement* pipeline = start_two_pads("backend=cuda subpixel=false max-disparity=" + std::to_string(kMaxD), true, 3,
                                        [&](size_t) { return pair; });
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink0");
  int frames = 0;
  GstBus* bus = gst_element_get_bus(pipeline);
  while (GstSample* s = pull(sink, bus)) {
    GstBuffer* b = gst_sample_get_buffer(s);
    fail_unless_equals_uint64(GST_BUFFER_PTS(b), frames * kFrame);
    fail_unless(!gst_buffer_get_cuda_stereo_meta(b)->placeholder);
    const Bytes q4 = tight_pixels(b, gst_sample_get_caps(s));
    // Whole view, borders and the occluded left strip included.
    fail_unless(fraction_at(q4, d) >= 0.7, "frame %d: only %.3f at d = %d", frames, fraction_at(q4, d), d);
    gst_sample_unref(s);
    frames++;
  }
  fail_unless_equals_int(frames, 3);
  gst_object_unref(bus);
  GstElement* stereo = gst_bin_get_by_name(GST_BIN(pipeline), "stereo");
  // Request pads are named sink_<n> by the aggregator: look at all of them.
  GST_OBJECT_LOCK(stereo);
  std::vector<GstPad*> pads;
  for (GList* l = GST_ELEMENT(stereo)->sinkpads; l; l = l->next) pads.push_back(GST_PAD(gst_object_ref(l->data)));
  GST_OBJECT_UNLOCK(stereo);
  fail_unless_equals_int(pads.size(), 2);
  for (GstPad* pad : pads) {
    GstCaps* in = gst_pad_get_current_caps(pad);
    fail_unless(has_cuda_feature(in), "%s: %" GST_PTR_FORMAT, GST_PAD_NAME(pad), in);
    if (in) gst_caps_unref(in);
    gst_object_unref(pad);
  }
  gst_object_unref(stereo);
  gst_object_unref(sink);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

// ---------------------------------------------------------------- decoder input

// An H.264 side-by-side stream decoded by nvh264dec (NV12 in CUDA memory,
// announced as mono: input-layout overrides) goes into the element without a
// host copy; every frame comes out, with its timestamp, equal to the CPU
// backend on the same decoded frames.
GST_START_TEST(test_nvh264dec_pipeline) {
  for (const char* e : {"openh264enc", "h264parse", "matroskamux", "matroskademux", "nvh264dec", "cudadownload"})
    require_element(e);
  gchar* dir = g_dir_make_tmp("cudastereo-XXXXXX", nullptr);
  // Matroska keeps the timestamps a raw H.264 stream would lose.
  const std::string file = std::string(dir) + "/sbs.mkv";
  constexpr int kFrames = 30;
  {
    GstElement* enc = parse("videotestsrc pattern=ball num-buffers=" + std::to_string(kFrames) +
                            " ! video/x-raw,format=I420,width=640,height=240,framerate=30/1 ! openh264enc ! "
                            "h264parse ! matroskamux ! filesink location=" + file);
    fail_unless(gst_element_set_state(enc, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(enc);
    GstMessage* m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    fail_unless(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS, "could not make the H.264 stream");
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_element_set_state(enc, GST_STATE_NULL);
    gst_object_unref(enc);
  }
  const std::string common = "cudastereo name=stereo input-layout=side-by-side max-disparity=32 ";
  const std::string head = "filesrc location=" + file + " ! matroskademux ! h264parse ! nvh264dec ! ";
  // Decoded frames in CUDA memory in, raw disparity out in system memory.
  GstElement* gpu = parse(head + common + "backend=cuda ! video/x-raw,format=GRAY16_LE !" + appsink(0));
  GstElement* cpu = parse(head + "cudadownload ! " + common + "backend=cpu ! video/x-raw,format=GRAY16_LE !" + appsink(0));
  // And false colour staying on the GPU up to cudadownload.
  GstElement* gpu_colour =
      parse(head + common + "backend=cuda ! cudadownload ! video/x-raw,format=RGBA !" + appsink(0));
  const Frames none{GST_VIDEO_FORMAT_NV12, {}, 0};
  std::vector<std::vector<GstClockTime>> pts_gpu, pts_cpu, pts_colour;
  const std::vector<Bytes> out_gpu = run_pipeline(gpu, {none}, &pts_gpu)[0];
  const std::vector<Bytes> out_colour = run_pipeline(gpu_colour, {none}, &pts_colour)[0];
  for (GstElement* p : {gpu, gpu_colour}) {
    GstElement* stereo = gst_bin_get_by_name(GST_BIN(p), "stereo");
    GstPad* sink = gst_element_get_static_pad(stereo, "sink");
    GstPad* src = gst_element_get_static_pad(stereo, "src");
    GstCaps* in = gst_pad_get_current_caps(sink);
    GstCaps* out = gst_pad_get_current_caps(src);
    fail_unless(has_cuda_feature(in), "nvh264dec did not hand CUDA memory to cudastereo: %" GST_PTR_FORMAT, in);
    fail_unless(has_cuda_feature(out) == (p == gpu_colour), "output caps %" GST_PTR_FORMAT, out);
    gst_caps_unref(in);
    gst_caps_unref(out);
    gst_object_unref(sink);
    gst_object_unref(src);
    gst_object_unref(stereo);
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(p);
  }
  // Matroska stores milliseconds: each frame at i/30 s to within 1 ms.
  auto near_frame_time = [](GstClockTime t, int i) {
    const GstClockTime ideal = gst_util_uint64_scale(i, GST_SECOND, 30);
    return GST_CLOCK_TIME_IS_VALID(t) && (t > ideal ? t - ideal : ideal - t) <= GST_MSECOND;
  };
  fail_unless_equals_int(out_colour.size(), kFrames);
  for (int i = 0; i < kFrames; ++i)
    fail_unless(near_frame_time(pts_colour[0][i], i), "colour frame %d at %" GST_TIME_FORMAT, i,
                GST_TIME_ARGS(pts_colour[0][i]));
  // The CPU pipeline's meta says "cpu": collect it without run_pipeline's check.
  fail_unless(gst_element_set_state(cpu, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstElement* appsink_cpu = gst_bin_get_by_name(GST_BIN(cpu), "sink0");
  std::vector<Bytes> out_cpu;
  GstBus* cpu_bus = gst_element_get_bus(cpu);
  std::vector<GstClockTime> cpu_times;
  while (GstSample* s = pull(appsink_cpu, cpu_bus, 120 * GST_SECOND)) {
    out_cpu.push_back(tight_pixels(gst_sample_get_buffer(s), gst_sample_get_caps(s)));
    cpu_times.push_back(GST_BUFFER_PTS(gst_sample_get_buffer(s)));
    gst_sample_unref(s);
  }
  gst_object_unref(cpu_bus);
  gst_object_unref(appsink_cpu);
  gst_element_set_state(cpu, GST_STATE_NULL);
  gst_object_unref(cpu);

  fail_unless_equals_int(out_gpu.size(), kFrames);
  fail_unless_equals_int(cpu_times.size(), kFrames);
  for (int i = 0; i < kFrames; ++i) {
    fail_unless(near_frame_time(pts_gpu[0][i], i), "frame %d at %" GST_TIME_FORMAT, i, GST_TIME_ARGS(pts_gpu[0][i]));
    fail_unless_equals_uint64(pts_gpu[0][i], cpu_times[i]);  // the decoder's own timestamps, kept exactly
  }
  expect_identical(out_gpu, out_cpu, "nvh264dec input");
  g_unlink(file.c_str());
  g_rmdir(dir);
  g_free(dir);
}
GST_END_TEST;

// ---------------------------------------------------------------- many elements

// Eight cameras on one GPU: eight elements in one pipeline, each on its own
// streaming thread, each seeing its own scene. Each output equals the CPU
// backend on that scene: no element sees another's frames or state.
GST_START_TEST(test_concurrent_elements) {
  require_element("cudaupload");
  require_element("cudadownload");
  constexpr int kCameras = 8;
  std::vector<Frames> cams;
  std::vector<std::vector<Bytes>> expected;
  std::string desc;
  for (int c = 0; c < kCameras; ++c) {
    // Even cameras: false colour in CUDA memory to cudadownload; odd: raw
    // disparity to system memory.
    const bool colour = c % 2 == 0;
    const std::string props = std::string("background=true warmup-frames=2") + (colour ? " colormap=turbo" : "");
    const char* out_caps = colour ? "video/x-raw,format=RGBA" : "video/x-raw,format=GRAY16_LE";
    cams.push_back({c % 4 < 2 ? GST_VIDEO_FORMAT_RGBA : GST_VIDEO_FORMAT_NV12,
                    {2 + c, 3 + c, 2 + c, 4 + c, 2 + c, 3 + c}, static_cast<uint32_t>(1000 + 50 * c)});
    expected.push_back(run_harness("cpu", cams.back(), props.c_str(), out_caps, nullptr));
    desc += appsrc(c, cams.back().format) + "! cudaupload ! video/x-raw(memory:CUDAMemory) ! cudastereo backend=cuda input-layout=side-by-side " +
            props + " max-disparity=" + std::to_string(kMaxD) + (colour ? " ! cudadownload" : "") + " ! " + out_caps +
            " !" + appsink(c);
  }
  GstElement* pipeline = parse(desc);
  const std::vector<std::vector<Bytes>> outs = run_pipeline(pipeline, cams);
  for (int c = 0; c < kCameras; ++c) {
    const std::string what = "camera " + std::to_string(c);
    expect_identical(outs[c], expected[c], what.c_str());
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

// ---------------------------------------------------------------- contexts

guint device_of(GstCudaContext* ctx) {
  guint device = 0;
  g_object_get(ctx, "cuda-device-id", &device, nullptr);
  return device;
}

// One pipeline whose branches alternate between the GPUs, as gst-launch-1.0
// with a chain a camera builds it (issue 36): a pipeline keeps one CUDA
// context, the last announced, so each element asking it was handed the
// other GPU's, refused it and made one of its own: a context a branch, and
// a GPU switching between them. Now every branch on a GPU runs in one
// context (cudastereo's and cudaupload's), one a GPU. And a second pipeline
// that shares nothing with the first gets the same context on the same GPU.
// With one GPU the branches all take device 0 (the same checks, one context).
GST_START_TEST(test_one_context_per_gpu) {
  require_element("cudaupload");
  GstCudaContext* second = gst_cuda_context_new(1);
  const int gpus = second ? 2 : 1;
  if (second) gst_object_unref(second);
  constexpr int kBranches = 6;
  std::string desc;
  for (int b = 0; b < kBranches; ++b) {
    const std::string dev = std::to_string(b % gpus), n = std::to_string(b);
    desc += "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,format=RGBA,width=192,height=48 ! cudaupload name=up" +
            n + " cuda-device-id=" + dev + " ! cudastereo name=st" + n +
            " backend=cuda input-layout=side-by-side max-disparity=16 cuda-device-id=" + dev +
            " ! video/x-raw,format=GRAY16_LE ! fakesink sync=false ";
  }
  GstElement* pipeline = launch(desc);
  fail_unless(set_state_within(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  wait_eos(pipeline);
  GstCudaContext* per_gpu[2] = {nullptr, nullptr};
  for (int b = 0; b < kBranches; ++b) {
    const std::string n = std::to_string(b);
    GstElement* st = by_name(pipeline, ("st" + n).c_str());
    GstElement* up = by_name(pipeline, ("up" + n).c_str());
    GstCudaContext* ours = context_of(st, GST_PAD_SRC);
    fail_unless(ours != nullptr, "branch %d: cudastereo holds no CUDA context", b);
    fail_unless_equals_int(device_of(ours), b % gpus);
    GstCudaContext* theirs = context_of(up, GST_PAD_SRC);
    fail_unless(theirs == ours, "branch %d: cudaupload runs in another CUDA context than its cudastereo", b);
    GstCudaContext*& first = per_gpu[b % gpus];
    if (!first)
      first = GST_CUDA_CONTEXT(gst_object_ref(ours));
    else
      fail_unless(first == ours, "branch %d on GPU %d has a CUDA context of its own", b, b % gpus);
    if (theirs) gst_object_unref(theirs);
    gst_object_unref(ours);
    gst_object_unref(st);
    gst_object_unref(up);
  }
  if (gpus == 2) fail_unless(per_gpu[0] != per_gpu[1]);
  // A pipeline of its own, nothing shared with the first: the same context.
  GstElement* other = launch(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=192,height=48 ! cudastereo name=st backend=cuda "
      "input-layout=side-by-side max-disparity=16 ! video/x-raw,format=GRAY16_LE ! fakesink sync=false");
  fail_unless(set_state_within(other, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  wait_eos(other);
  GstElement* st = by_name(other, "st");
  GstCudaContext* ctx = context_of(st, GST_PAD_SRC);
  fail_unless(ctx == per_gpu[0], "a second pipeline on GPU 0 made a CUDA context of its own");
  if (ctx) gst_object_unref(ctx);
  gst_object_unref(st);
  gst_element_set_state(other, GST_STATE_NULL);
  gst_object_unref(other);
  for (GstCudaContext* c : per_gpu)
    if (c) gst_object_unref(c);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

// Streams on every GPU (up to four) started and stopped in rounds, each in a
// pipeline of its own, beside two that fail: one on cuda-device-id=99 (no
// such GPU: an error at start naming it) and one on GPU 0 whose engine fails
// a kernel launch at its third frame (CUDASTEREO_INJECT_FAULT, a sticky
// device error). Neither stops the others: every good stream gives all its
// frames, in every round (issue 36, item 4).
GST_START_TEST(test_gpu_failures_stay_with_their_stream) {
  int gpus = 1;
  for (guint d = 1; d < 4; ++d) {
    GstCudaContext* c = gst_cuda_context_new(d);
    if (!c) break;
    gst_object_unref(c);
    gpus++;
  }
  constexpr int kFrames = 30, kRounds = 3;
  const std::string source =
      "videotestsrc is-live=true num-buffers=" + std::to_string(kFrames) +
      " pattern=ball ! video/x-raw,format=RGBA,width=192,height=48,framerate=120/1 ! ";
  const std::string stereo = "cudastereo name=st backend=cuda input-layout=side-by-side max-disparity=16 ";
  for (int round = 0; round < kRounds; ++round) {
    std::vector<GstElement*> good;
    std::vector<pipeline_helpers::Counter> counts(gpus);
    for (int d = 0; d < gpus; ++d) {
      good.push_back(launch(source + stereo + "cuda-device-id=" + std::to_string(d) +
                            " ! video/x-raw,format=GRAY16_LE ! fakesink name=sink sync=false"));
      pipeline_helpers::count_on(good.back(), "sink", "sink", &counts[d]);
    }
    for (GstElement* p : good) fail_unless(set_state_within(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    // A device error: the fault is armed while this engine is made only.
    g_setenv("CUDASTEREO_INJECT_FAULT", "launch@3", TRUE);
    GstElement* faulty = launch(source + stereo + "cuda-device-id=0 ! fakesink sync=false");
    const GstStateChangeReturn faulty_start = set_state_within(faulty, GST_STATE_PAUSED);
    g_unsetenv("CUDASTEREO_INJECT_FAULT");
    fail_unless(faulty_start != GST_STATE_CHANGE_FAILURE);
    fail_unless(set_state_within(faulty, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    // No such GPU: refused at start, with its number in the error.
    GstElement* missing = launch(source + stereo + "cuda-device-id=99 ! fakesink sync=false");
    fail_unless_equals_int(set_state_within(missing, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(missing);
    GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != nullptr, "round %d: cuda-device-id=99 failed without an error message", round);
    fail_unless(pipeline_helpers::error_text(m).find("cuda-device-id=99") != std::string::npos, "round %d: %s", round,
                pipeline_helpers::error_text(m).c_str());
    gst_message_unref(m);
    gst_object_unref(bus);
    bus = gst_element_get_bus(faulty);
    m = pipeline_helpers::wait_for(bus, GST_MESSAGE_ERROR, 30 * GST_SECOND, faulty);
    fail_unless(m != nullptr, "round %d: the injected device error was not reported", round);
    fail_unless(pipeline_helpers::error_text(m).find("injected") != std::string::npos, "round %d: %s", round,
                pipeline_helpers::error_text(m).c_str());
    gst_message_unref(m);
    gst_object_unref(bus);
    for (int d = 0; d < gpus; ++d) {
      wait_eos(good[d]);
      fail_unless_equals_int(g_atomic_int_get(&counts[d].buffers), kFrames);
    }
    for (GstElement* p : {faulty, missing}) {
      fail_unless_equals_int(set_state_within(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
      gst_object_unref(p);
    }
    for (GstElement* p : good) {
      fail_unless_equals_int(set_state_within(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
      gst_object_unref(p);
    }
  }
}
GST_END_TEST;

// ---------------------------------------------------------------- device choice

GST_START_TEST(test_bad_device_id) {
  GstElement* e = gst_element_factory_make("cudastereo", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  gst_util_set_object_arg(G_OBJECT(e), "backend", "cuda");
  g_object_set(e, "cuda-device-id", 99, nullptr);
  fail_unless_equals_int(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(m != nullptr);
  GError* err = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_error(m, &err, &dbg);
  fail_unless(strstr(err->message, "cuda-device-id=99") != nullptr, "unclear error: %s", err->message);
  g_error_free(err);
  g_free(dbg);
  gst_message_unref(m);
  gst_element_set_state(e, GST_STATE_NULL);
  // Device 0 works after that.
  g_object_set(e, "cuda-device-id", 0, nullptr);
  fail_unless(gst_element_set_state(e, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  gst_element_set_state(e, GST_STATE_NULL);
  gst_bus_set_flushing(bus, TRUE);
  gst_object_unref(bus);
  gst_object_unref(e);
}
GST_END_TEST;

// CUDA memory in (cudaupload) with each variant's properties, the output
// after `after` in the variant's format: the same bytes as the CPU backend.
struct MemoryVariant {
  const char* props;
  const char* after;
  const char* format;
};
void expect_cuda_memory_matches_cpu(const Frames& fr, const std::vector<MemoryVariant>& variants) {
  for (const MemoryVariant& v : variants) {
    const std::string out_caps = std::string("video/x-raw,format=") + v.format;
    const std::vector<Bytes> cpu = run_harness("cpu", fr, v.props, out_caps.c_str(), nullptr);
    const std::string desc = appsrc(0, fr.format) +
                             "! cudaupload ! video/x-raw(memory:CUDAMemory) ! cudastereo backend=cuda "
                             "input-layout=side-by-side max-disparity=" + std::to_string(kMaxD) + " " + v.props + " " +
                             v.after + "! " + out_caps + " !" + appsink(0);
    GstElement* pipeline = parse(desc);
    const std::vector<std::vector<Bytes>> outs = run_pipeline(pipeline, {fr});
    expect_identical(outs[0], cpu, desc.c_str());
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }
}

// ---------------------------------------------------------------- method cross

// method=cross on the GPU equals the CPU backend byte for byte: colour,
// grey and YUV input, every sample-restore factor, its parameters at their
// ends, uniqueness, the check off, min-disparity > 0, the background model,
// a calibration (the colour rectified in the conversion), and every output.
GST_START_TEST(test_cross_cuda_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_GRAY8,
                                    GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YUY2};
  const std::string calibration = "/tmp/cs-cuda-cross-calib-" + std::to_string(getpid()) + ".yml";
  g_file_set_contents(calibration.c_str(), cs::opencv_calibration_yaml(cs::example_rig(kW, kH)).c_str(), -1,
                      nullptr);
  struct Case {
    std::string props;
    const char* out_caps;
  } cases[] = {
      {"method=cross", "video/x-raw,format=GRAY16_LE"},
      {"method=cross sample-restore=2", "video/x-raw,format=GRAY16_LE"},
      {"method=cross sample-restore=3 cross-arm-length=5 min-disparity=2", "video/x-raw,format=GRAY16_LE"},
      {"method=cross cross-tau=0 cross-truncation=765 uniqueness-ratio=20 lr-check=false",
       "video/x-raw,format=GRAY16_LE"},
      {"method=cross cross-tau=255 cross-arm-length=1 cross-truncation=1", "video/x-raw,format=GRAY16_LE"},
      {"method=cross background=true warmup-frames=2", "video/x-raw,format=GRAY16_LE"},
      {"method=cross colormap=jet alpha-mask=true background=true warmup-frames=1", "video/x-raw,format=RGBA"},
      {"method=cross output-mode=depth calibration=" + calibration, "video/x-raw,format=GRAY16_LE"},
      {"method=cross output-mode=confidence", "video/x-raw,format=GRAY8"},
  };
  for (GstVideoFormat fmt : formats) {
    for (const Case& c : cases) {
      const Frames fr{fmt, {5, 9, 9, 3}, 300};
      std::string cuda_backend, cpu_backend;
      const std::vector<Bytes> cuda = run_harness("auto", fr, c.props.c_str(), c.out_caps, &cuda_backend);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, c.props.c_str(), c.out_caps, &cpu_backend);
      fail_unless_equals_string(cuda_backend.c_str(), "cuda");
      fail_unless_equals_string(cpu_backend.c_str(), "cpu");
      const std::string what = std::string(gst_video_format_to_string(fmt)) + " " + c.props + " -> " + c.out_caps;
      expect_identical(cuda, cpu, what.c_str());
    }
  }
  g_unlink(calibration.c_str());
  // Right as well as equal: the plane at d = 5.
  const Frames fr{GST_VIDEO_FORMAT_RGBA, {5}, 7};
  const std::vector<Bytes> out = run_harness("cuda", fr, "method=cross", "video/x-raw,format=GRAY16_LE", nullptr);
  fail_unless(fraction_at(out[0], 5) >= 0.8, "only %.3f of the pixels at d = 5", fraction_at(out[0], 5));
}
GST_END_TEST;

// CUDA memory in (cudaupload), method=cross, raw disparity out in system
// memory and false colour in CUDA memory: equal to the CPU.
GST_START_TEST(test_cross_cuda_memory) {
  require_element("cudaupload");
  require_element("cudadownload");
  const Frames fr{GST_VIDEO_FORMAT_NV12, {4, 6, 8, 6}, 900};
  expect_cuda_memory_matches_cpu(fr, {{"method=cross", "", "GRAY16_LE"},
                                      {"method=cross sample-restore=2 colormap=turbo", "! cudadownload ", "RGBA"}});
}
GST_END_TEST;

// ---------------------------------------------------------------- method elas

// method=elas on the GPU equals the CPU backend byte for byte: colour, grey
// and YUV input, min-disparity > 0, uniqueness, the check off, short gaps
// only, the background model, a calibration, and every output.
GST_START_TEST(test_elas_cuda_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420};
  const std::string calibration = "/tmp/cs-cuda-elas-calib-" + std::to_string(getpid()) + ".yml";
  g_file_set_contents(calibration.c_str(), cs::opencv_calibration_yaml(cs::example_rig(kW, kH)).c_str(), -1,
                      nullptr);
  struct Case {
    std::string props;
    const char* out_caps;
  } cases[] = {
      {"method=elas", "video/x-raw,format=GRAY16_LE"},
      {"method=elas min-disparity=2 uniqueness-ratio=20", "video/x-raw,format=GRAY16_LE"},
      {"method=elas lr-check=false elas-fill-gaps=false", "video/x-raw,format=GRAY16_LE"},
      {"method=elas background=true warmup-frames=2", "video/x-raw,format=GRAY16_LE"},
      {"method=elas colormap=jet alpha-mask=true background=true warmup-frames=1", "video/x-raw,format=RGBA"},
      {"method=elas output-mode=depth calibration=" + calibration, "video/x-raw,format=GRAY16_LE"},
      {"method=elas output-mode=confidence elas-fill-gaps=false", "video/x-raw,format=GRAY8"},
  };
  for (GstVideoFormat fmt : formats) {
    for (const Case& c : cases) {
      const Frames fr{fmt, {5, 9, 9, 3}, 300};
      std::string cuda_backend, cpu_backend;
      const std::vector<Bytes> cuda = run_harness("auto", fr, c.props.c_str(), c.out_caps, &cuda_backend);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, c.props.c_str(), c.out_caps, &cpu_backend);
      fail_unless_equals_string(cuda_backend.c_str(), "cuda");
      fail_unless_equals_string(cpu_backend.c_str(), "cpu");
      const std::string what = std::string(gst_video_format_to_string(fmt)) + " " + c.props + " -> " + c.out_caps;
      expect_identical(cuda, cpu, what.c_str());
    }
  }
  g_unlink(calibration.c_str());
  // Right as well as equal: the plane at d = 5.
  const Frames fr{GST_VIDEO_FORMAT_RGBA, {5}, 7};
  const std::vector<Bytes> out = run_harness("cuda", fr, "method=elas", "video/x-raw,format=GRAY16_LE", nullptr);
  fail_unless(fraction_at(out[0], 5) >= 0.8, "only %.3f of the pixels at d = 5", fraction_at(out[0], 5));
}
GST_END_TEST;

// ---------------------------------------------------------------- method block, confidence

// method=block on the GPU equals the CPU backend byte for byte: every input
// format, block sizes 3 .. 31, uniqueness ratios 0 / default / 300, the
// check off, min-disparity > 0, the background model, and every output
// (raw, GRAY8, false colour, depth, confidence).
GST_START_TEST(test_block_cuda_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420,
                                    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_YUY2};
  struct Case {
    const char* props;
    const char* out_caps;
  } cases[] = {
      {"method=block", "video/x-raw,format=GRAY16_LE"},
      {"method=block block-size=3 uniqueness-ratio=0 subpixel=false", "video/x-raw,format=GRAY16_LE"},
      {"method=block block-size=31 uniqueness-ratio=300 lr-check=false", "video/x-raw,format=GRAY16_LE"},
      {"method=block min-disparity=3 background=true warmup-frames=2", "video/x-raw,format=GRAY16_LE"},
      {"method=block", "video/x-raw,format=GRAY8"},
      {"method=block colormap=jet alpha-mask=true background=true warmup-frames=1", "video/x-raw,format=RGBA"},
      {"method=block output-mode=depth baseline=0.1 focal-length=400", "video/x-raw,format=GRAY16_LE"},
      {"method=block output-mode=confidence", "video/x-raw,format=GRAY8"},
      {"method=block block-size=11 output-mode=confidence background=true warmup-frames=1", "video/x-raw,format=GRAY8"},
  };
  for (GstVideoFormat fmt : formats) {
    for (const Case& c : cases) {
      const Frames fr{fmt, {5, 9, 9, 3}, 700};
      std::string cuda_backend, cpu_backend;
      const std::vector<Bytes> cuda = run_harness("auto", fr, c.props, c.out_caps, &cuda_backend);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, c.props, c.out_caps, &cpu_backend);
      fail_unless_equals_string(cuda_backend.c_str(), "cuda");
      fail_unless_equals_string(cpu_backend.c_str(), "cpu");
      const std::string what = std::string(gst_video_format_to_string(fmt)) + " " + c.props + " -> " + c.out_caps;
      expect_identical(cuda, cpu, what.c_str());
    }
  }
  // Right as well as equal: the plane at d = 5.
  const Frames fr{GST_VIDEO_FORMAT_RGBA, {5}, 7};
  const std::vector<Bytes> out =
      run_harness("cuda", fr, "method=block subpixel=false", "video/x-raw,format=GRAY16_LE", nullptr);
  fail_unless(fraction_at(out[0], 5) >= 0.8, "only %.3f of the pixels at d = 5", fraction_at(out[0], 5));
}
GST_END_TEST;

// CUDA memory in (cudaupload), method=block, raw disparity and confidence
// out in system memory, false colour out in CUDA memory: equal to the CPU.
GST_START_TEST(test_block_cuda_memory) {
  require_element("cudaupload");
  require_element("cudadownload");
  const Frames fr{GST_VIDEO_FORMAT_NV12, {4, 6, 8, 6}, 900};
  expect_cuda_memory_matches_cpu(fr, {{"method=block", "", "GRAY16_LE"},
                                      {"method=block output-mode=confidence", "", "GRAY8"},
                                      {"method=block colormap=turbo", "! cudadownload ", "RGBA"}});
}
GST_END_TEST;

// method=progressive with a uniqueness ratio and the confidence output on
// the GPU equals the CPU backend byte for byte (backend=auto takes the GPU
// for them): ratios 0, 10 and 25, the check off, the background model, the
// confidence and the raw disparity; and from CUDA memory.
GST_START_TEST(test_progressive_uniqueness_and_confidence_cuda_matches_cpu) {
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12};
  struct Case {
    const char* props;
    const char* out_caps;
  } cases[] = {
      {"output-mode=confidence", "video/x-raw,format=GRAY8"},
      {"uniqueness-ratio=10", "video/x-raw,format=GRAY16_LE"},
      {"uniqueness-ratio=25 output-mode=confidence", "video/x-raw,format=GRAY8"},
      {"uniqueness-ratio=25 lr-check=false levels=1", "video/x-raw,format=GRAY16_LE"},
      {"uniqueness-ratio=10 output-mode=confidence background=true warmup-frames=1", "video/x-raw,format=GRAY8"},
  };
  for (GstVideoFormat fmt : formats) {
    for (const Case& c : cases) {
      const Frames fr{fmt, {5, 9, 9, 3}, 700};
      std::string cuda_backend, cpu_backend;
      const std::vector<Bytes> cuda = run_harness("auto", fr, c.props, c.out_caps, &cuda_backend);
      const std::vector<Bytes> cpu = run_harness("cpu", fr, c.props, c.out_caps, &cpu_backend);
      fail_unless_equals_string(cuda_backend.c_str(), "cuda");
      fail_unless_equals_string(cpu_backend.c_str(), "cpu");
      const std::string what = std::string(gst_video_format_to_string(fmt)) + " " + c.props + " -> " + c.out_caps;
      expect_identical(cuda, cpu, what.c_str());
    }
  }
  require_element("cudaupload");
  const Frames fr{GST_VIDEO_FORMAT_NV12, {4, 6, 8, 6}, 900};
  const char* props = "uniqueness-ratio=10 output-mode=confidence";
  const std::vector<Bytes> cpu = run_harness("cpu", fr, props, "video/x-raw,format=GRAY8", nullptr);
  const std::string desc = appsrc(0, fr.format) +
                           "! cudaupload ! video/x-raw(memory:CUDAMemory) ! cudastereo backend=cuda "
                           "input-layout=side-by-side max-disparity=" + std::to_string(kMaxD) + " " + props +
                           " ! video/x-raw,format=GRAY8 !" + appsink(0);
  GstElement* pipeline = parse(desc);
  const std::vector<std::vector<Bytes>> outs = run_pipeline(pipeline, {fr});
  expect_identical(outs[0], cpu, desc.c_str());
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite* cudastereo_cuda_suite(void) {
  Suite* s = suite_create("cudastereo-cuda");
  TCase* tc = tcase_create("cuda");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, announce_test, stop_pipelines);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_cuda_matches_cpu_system_memory);
  tcase_add_test(tc, test_pinned_pool_matches_cpu);
  tcase_add_test(tc, test_upload_ahead_matches_cpu);
  tcase_add_test(tc, test_yuv422_cuda_matches_cpu);
  tcase_add_test(tc, test_cuda_memory_pipelines);
  tcase_add_test(tc, test_cuda_memory_two_pads);
  tcase_add_test(tc, test_yuv422_two_pads_cuda_matches_cpu);
  tcase_add_test(tc, test_nvh264dec_pipeline);
  tcase_add_test(tc, test_concurrent_elements);
  tcase_add_test(tc, test_bad_device_id);
  tcase_add_test(tc, test_one_context_per_gpu);
  tcase_add_test(tc, test_gpu_failures_stay_with_their_stream);
  tcase_add_test(tc, test_block_cuda_matches_cpu);
  tcase_add_test(tc, test_block_cuda_memory);
  tcase_add_test(tc, test_cross_cuda_matches_cpu);
  tcase_add_test(tc, test_elas_cuda_matches_cpu);
  tcase_add_test(tc, test_cross_cuda_memory);
  tcase_add_test(tc, test_progressive_uniqueness_and_confidence_cuda_matches_cpu);
  return s;
}

int main(int argc, char** argv) {
  gst_check_init(&argc, &argv);
  // Skip (77) only when there is no GPU; a GPU without the elements fails.
  GstCudaContext* probe = gst_cuda_load_library() ? gst_cuda_context_new(0) : nullptr;
  if (!probe) {
    g_print("SKIP: no usable CUDA GPU (driver library or device 0 missing): CUDA element tests not run\n");
    return 77;
  }
  gst_object_unref(probe);
  return gst_check_run_suite(cudastereo_cuda_suite(), "cudastereo-cuda", __FILE__);
}
