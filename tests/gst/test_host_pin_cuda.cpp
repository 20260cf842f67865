// Pin in place on the CUDA backend (needs a GPU; exit 77 = skipped without
// one). System memory that comes back to `appsrc ! cudastereo backend=cuda`
// (one buffer pushed again and again, a pool of three recycled buffers, one
// buffer through a tee into two elements) is page-locked where it lies on
// its second sighting and its frames go to the GPU from there by DMA; the
// outputs equal those of the same frames in new memory each time (which is
// never registered); a buffer freed mid-stream is unregistered as it goes;
// nothing stays registered once every buffer is gone.
// Run with CK_FORK=no (CUDA and fork() do not mix).
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/video/video.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "gstcudastereometa.h"
#include "synthetic.h"

namespace {

constexpr int kW = 96;  // one view
constexpr int kH = 64;
constexpr int kMaxD = 24;
constexpr GstClockTime kFrame = 40 * GST_MSECOND;
constexpr size_t kFrameBytes = static_cast<size_t>(2 * kW) * kH * 4;  // RGBA side by side

using Bytes = std::vector<uint8_t>;

int disparity_of(size_t i) { return 3 + static_cast<int>(i % 7); }

// Frame i's pixels: a textured plane of its own disparity and texture, so a
// stale frame, or one read while it was rewritten, shows.
Bytes frame_pixels(size_t i) {
  const cs::SyntheticPair pair = cs::make_plane_pair(kW, kH, disparity_of(i), 4000 + static_cast<uint32_t>(i));
  Bytes out(kFrameBytes);
  for (int y = 0; y < kH; ++y) {
    std::memcpy(&out[(static_cast<size_t>(y) * 2 * kW) * 4], &pair.left_rgba.at(0, y), kW * 4);
    std::memcpy(&out[(static_cast<size_t>(y) * 2 * kW + kW) * 4], &pair.right_rgba.at(0, y), kW * 4);
  }
  return out;
}

// New system memory for one frame, page-aligned and whole pages long: no
// page of it is shared with another allocation, so whether it can be
// registered does not depend on how the driver treats two registrations
// in one page (tests/cuda's HostMemoryRegisteredInPlace prints that).
GstBuffer* new_frame_buffer() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  params.align = page - 1;
  GstBuffer* b = gst_buffer_new_allocate(nullptr, (kFrameBytes + page - 1) / page * page, &params);
  fail_unless(b != nullptr);
  gst_buffer_set_size(b, kFrameBytes);
  return b;
}

size_t memory_bytes(GstBuffer* b) { return gst_buffer_peek_memory(b, 0)->maxsize; }

// Writes frame i into `b`, which only the caller holds, and stamps it.
// Returns where the pixels went (for the diagnostics).
const void* fill(GstBuffer* b, size_t i) {
  const Bytes px = frame_pixels(i);
  GstMapInfo map;
  fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE), "frame %zu: the buffer cannot be written", i);
  std::memcpy(map.data, px.data(), px.size());
  const void* data = map.data;
  gst_buffer_unmap(b, &map);
  GST_BUFFER_PTS(b) = i * kFrame;
  GST_BUFFER_DURATION(b) = kFrame;
  return data;
}

// ---- diagnostics: the element's "cudastereopin" debug lines (one per
// sighting, registration, classified frame and freed record), captured so a
// test can print them next to what it pushed when a count differs.

std::mutex g_pin_log_lock;
std::vector<std::string> g_pin_log;
bool g_forward_default = false;  // gst_debug_log_default was installed: other categories still go there

void capture_pin_log(GstDebugCategory* category, GstDebugLevel level, const gchar* file, const gchar* function,
                     gint line, GObject* object, GstDebugMessage* message, gpointer) {
  if (std::strcmp(gst_debug_category_get_name(category), "cudastereopin") == 0) {
    std::lock_guard<std::mutex> guard(g_pin_log_lock);
    g_pin_log.emplace_back(gst_debug_message_get(message));
    return;
  }
  if (g_forward_default) gst_debug_log_default(category, level, file, function, line, object, message, nullptr);
}

void install_pin_log() {
  gst_debug_set_threshold_for_name("cudastereopin", GST_LEVEL_DEBUG);
  g_forward_default = gst_debug_remove_log_function(gst_debug_log_default) > 0;
  gst_debug_add_log_function(capture_pin_log, nullptr, nullptr);
}

// One frame the test pushed: which pool slot, buffer and memory it was.
struct Pushed {
  size_t frame;
  int slot;
  GstBuffer* buffer;
  GstMemory* memory;
  const void* data;
};

// Per pushed frame: the element's lines about it (same pts): its sighting
// (record state before -> after), a registration if any, and its
// classification (record state then, the driver's answer for the plane's
// first and last byte, pinned-in-place or gathered); then every other line
// (records freed), in order.
void print_pin_table(const std::vector<Pushed>& pushed) {
  std::vector<std::string> log;
  {
    std::lock_guard<std::mutex> guard(g_pin_log_lock);
    log = g_pin_log;
  }
  std::vector<bool> shown(log.size(), false);
  g_printerr("[ pin table ] %zu frames pushed, %zu element lines\n", pushed.size(), log.size());
  for (const Pushed& p : pushed) {
    const std::string key = "pts=" + std::to_string(p.frame * kFrame) + " ";
    g_printerr("  frame %2zu  slot %d  buffer %p  memory %p  data %p\n", p.frame, p.slot, static_cast<void*>(p.buffer),
               static_cast<void*>(p.memory), p.data);
    for (size_t k = 0; k < log.size(); ++k)
      if (log[k].find(key) != std::string::npos) {
        g_printerr("      %s\n", log[k].c_str());
        shown[k] = true;
      }
  }
  g_printerr("  other lines, in order:\n");
  for (size_t k = 0; k < log.size(); ++k)
    if (!shown[k]) g_printerr("      %s\n", log[k].c_str());
}

// Waits until the caller holds the only reference to `b`: appsrc and the
// element let it go (the element keeps it until the GPU has read it), so
// nothing reads it while it is rewritten or freed.
// The element receives another GstBuffer than the one pushed, sharing its
// memory (a shallow copy made on the way while the test still holds the
// original; the H100 diagnostics showed the element's buffer pointers differ
// from the test's, the memory the same): the buffer is ours again only once
// that copy is gone too, else fill()'s write map copies the memory and the
// test pushes new memory (seen on the H100: one frame too many gathered, its
// memory a first sighting).
void wait_until_ours(GstBuffer* b) {
  for (int ms = 0; !gst_buffer_is_writable(b) || !gst_buffer_is_all_memory_writable(b); ++ms) {
    fail_unless(ms < 30000, "the pipeline kept a buffer for 30 s");
    g_usleep(1000);
  }
}

Bytes tight_pixels(GstBuffer* buf, GstCaps* caps) {
  GstVideoInfo info;
  fail_unless(gst_video_info_from_caps(&info, caps));
  GstVideoFrame f;
  fail_unless(gst_video_frame_map(&f, &info, buf, GST_MAP_READ));
  const int row = GST_VIDEO_INFO_WIDTH(&info) * GST_VIDEO_FRAME_COMP_PSTRIDE(&f, 0);
  Bytes out(static_cast<size_t>(row) * GST_VIDEO_INFO_HEIGHT(&info));
  const auto* plane = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0));
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y)
    std::memcpy(out.data() + y * row, plane + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0), row);
  gst_video_frame_unmap(&f);
  return out;
}

// Fraction of 16-bit values equal to d * 16 (a plane at d without sub-pixel: most are).
double fraction_at(const Bytes& q4, int d) {
  size_t hit = 0;
  for (size_t k = 0; k + 1 < q4.size(); k += 2) hit += (q4[k] | (q4[k + 1] << 8)) == d * 16;
  return static_cast<double>(hit) / (q4.size() / 2);
}

void fail_on_bus_error(GstBus* bus) {
  GstMessage* err = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  if (!err) return;
  GError* e = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_error(err, &e, &dbg);
  fail("pipeline error from %s: %s (%s)", GST_OBJECT_NAME(GST_MESSAGE_SRC(err)), e->message, dbg ? dbg : "");
}

// The element's pin-in-place numbers (its `stats`).
struct PinStats {
  guint64 pinned_frames = 0, gathered_frames = 0, bytes = 0, registrations = 0, unregistrations = 0;
};

PinStats pin_stats(GstElement* stereo) {
  GstStructure* st = nullptr;
  g_object_get(stereo, "stats", &st, nullptr);
  fail_unless(st != nullptr);
  PinStats p;
  fail_unless(gst_structure_get_uint64(st, "pinned-in-place-frames", &p.pinned_frames) &&
                  gst_structure_get_uint64(st, "gathered-frames", &p.gathered_frames) &&
                  gst_structure_get_uint64(st, "pinned-in-place-bytes", &p.bytes) &&
                  gst_structure_get_uint64(st, "pin-registrations", &p.registrations) &&
                  gst_structure_get_uint64(st, "pin-unregistrations", &p.unregistrations),
              "stats lack the pin-in-place fields: %" GST_PTR_FORMAT, st);
  gst_structure_free(st);
  return p;
}

// appsrc ! cudastereo (GRAY16_LE, no sub-pixel) ! appsink, once or through a
// tee into `elements` of them (stereo<i> ! appsink sink<i>).
struct Run {
  GstElement* pipeline = nullptr;
  GstElement* src = nullptr;
  std::vector<GstElement*> stereo, sink;
  GstBus* bus = nullptr;
};

std::vector<Run*> g_runs;  // stopped by the teardown, also after a failed check

Run* start_run(int elements = 1) {
  const std::string caps = "video/x-raw,format=RGBA,width=" + std::to_string(2 * kW) + ",height=" +
                           std::to_string(kH) + ",framerate=25/1";
  std::string desc = "appsrc name=src format=time caps=\"" + caps + "\" ";
  if (elements > 1) desc += "! tee name=t ";
  for (int e = 0; e < elements; ++e) {
    const std::string n = std::to_string(e);
    desc += std::string(elements > 1 ? " t. ! queue " : "") + "! cudastereo name=stereo" + n +
            " backend=cuda input-layout=side-by-side subpixel=false max-disparity=" + std::to_string(kMaxD) +
            " ! video/x-raw,format=GRAY16_LE ! appsink name=sink" + n + " sync=false max-buffers=0 ";
  }
  GError* err = nullptr;
  auto* r = new Run();
  r->pipeline = gst_parse_launch(desc.c_str(), &err);
  fail_unless(r->pipeline && !err, "could not build '%s': %s", desc.c_str(), err ? err->message : "");
  g_runs.push_back(r);
  r->src = gst_bin_get_by_name(GST_BIN(r->pipeline), "src");
  for (int e = 0; e < elements; ++e) {
    r->stereo.push_back(gst_bin_get_by_name(GST_BIN(r->pipeline), ("stereo" + std::to_string(e)).c_str()));
    r->sink.push_back(gst_bin_get_by_name(GST_BIN(r->pipeline), ("sink" + std::to_string(e)).c_str()));
  }
  r->bus = gst_element_get_bus(r->pipeline);
  fail_unless(gst_element_set_state(r->pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  return r;
}

void push(Run* r, GstBuffer* b) {  // takes `b`
  fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(r->src), b), GST_FLOW_OK);
}

// The next output of sink `e`, or empty at EOS.
Bytes pull(Run* r, int e = 0) {
  for (int waited_ms = 0; waited_ms < 60000; waited_ms += 200) {
    if (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(r->sink[e]), 200 * GST_MSECOND)) {
      GstBuffer* b = gst_sample_get_buffer(s);
      GstCudaStereoMeta* m = gst_buffer_get_cuda_stereo_meta(b);
      fail_unless(m && !m->placeholder && std::strcmp(m->backend, "cuda") == 0, "not a CUDA backend frame");
      Bytes px = tight_pixels(b, gst_sample_get_caps(s));
      gst_sample_unref(s);
      return px;
    }
    if (gst_app_sink_is_eos(GST_APP_SINK(r->sink[e]))) return {};
    fail_on_bus_error(r->bus);
  }
  fail("no output and no EOS within 60 s");
  return {};
}

// Ends the stream and collects what sink `e` still has.
std::vector<Bytes> drain(Run* r, int e = 0) {
  gst_app_src_end_of_stream(GST_APP_SRC(r->src));
  std::vector<Bytes> outs;
  for (Bytes px = pull(r, e); !px.empty(); px = pull(r, e)) outs.push_back(std::move(px));
  return outs;
}

// To NULL; the elements stay (their stats are read after the buffers go).
void stop(Run* r) {
  if (r->pipeline) gst_element_set_state(r->pipeline, GST_STATE_NULL);
}

void free_run(Run* r) {
  stop(r);
  for (GstElement* e : r->stereo) gst_object_unref(e);
  for (GstElement* e : r->sink) gst_object_unref(e);
  if (r->src) gst_object_unref(r->src);
  if (r->bus) gst_object_unref(r->bus);
  if (r->pipeline) gst_object_unref(r->pipeline);
  delete r;
}

void stop_runs() {
  for (Run* r : g_runs) free_run(r);
  g_runs.clear();
}

void forget_run(Run* r) {
  g_runs.erase(std::find(g_runs.begin(), g_runs.end(), r));
  free_run(r);
}

void announce_test() {
  g_printerr("-- next pin-in-place test\n");
  std::lock_guard<std::mutex> guard(g_pin_log_lock);
  g_pin_log.clear();
}

void expect_identical(const std::vector<Bytes>& got, const std::vector<Bytes>& want, const char* what) {
  fail_unless_equals_int(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    size_t differ = 0;
    for (size_t k = 0; k < want[i].size() && k < got[i].size(); ++k) differ += got[i][k] != want[i][k];
    fail_unless(got[i].size() == want[i].size() && differ == 0,
                "%s, frame %zu: %zu bytes differ from the same frame in new memory", what, i, differ);
  }
}

// Frames 0 .. n-1, each in new memory, pushed and pulled one at a time:
// the reference. New memory is never registered: every frame is gathered
// (also when the allocator hands out the address of a freed buffer that was
// registered: it was unregistered before it was freed).
std::vector<Bytes> fresh_outputs(size_t n) {
  Run* r = start_run();
  std::vector<Bytes> outs;
  for (size_t i = 0; i < n; ++i) {
    GstBuffer* b = new_frame_buffer();
    fill(b, i);
    push(r, b);
    outs.push_back(pull(r));
  }
  fail_unless(drain(r).empty());
  const PinStats s = pin_stats(r->stereo[0]);
  fail_unless_equals_uint64(s.gathered_frames, n);
  fail_unless_equals_uint64(s.pinned_frames, 0);
  fail_unless_equals_uint64(s.registrations, 0);
  forget_run(r);
  for (size_t i = 0; i < n; ++i)
    if (disparity_of(i) <= 6)
      fail_unless(fraction_at(outs[i], disparity_of(i)) >= 0.7, "frame %zu: only %.3f at d = %d", i,
                  fraction_at(outs[i], disparity_of(i)), disparity_of(i));
  return outs;
}

}  // namespace

// One buffer, rewritten and pushed again for every frame: its first frame is
// gathered, it is registered on its second sighting, every later frame goes
// up from it by DMA, and the outputs equal the same frames in new memory.
// The registration outlives the element's run (NULL state) and goes with
// the buffer.
GST_START_TEST(test_one_buffer_again_and_again) {
  constexpr size_t kFrames = 12;
  const std::vector<Bytes> fresh = fresh_outputs(kFrames);
  Run* r = start_run();
  GstBuffer* b = new_frame_buffer();
  std::vector<Bytes> outs;
  for (size_t i = 0; i < kFrames; ++i) {
    wait_until_ours(b);
    fill(b, i);
    push(r, gst_buffer_ref(b));
    outs.push_back(pull(r));
    const PinStats s = pin_stats(r->stereo[0]);
    fail_unless_equals_uint64(s.registrations, i == 0 ? 0 : 1);
    fail_unless_equals_uint64(s.bytes, i == 0 ? 0 : memory_bytes(b));
  }
  fail_unless(drain(r).empty());
  expect_identical(outs, fresh, "one buffer again and again");
  PinStats s = pin_stats(r->stereo[0]);
  fail_unless_equals_uint64(s.gathered_frames, 1);
  fail_unless_equals_uint64(s.pinned_frames, kFrames - 1);
  stop(r);
  s = pin_stats(r->stereo[0]);
  fail_unless_equals_uint64(s.registrations, 1);
  fail_unless_equals_uint64(s.unregistrations, 0);
  fail_unless_equals_uint64(s.bytes, memory_bytes(b));
  wait_until_ours(b);
  gst_buffer_unref(b);
  s = pin_stats(r->stereo[0]);
  fail_unless_equals_uint64(s.unregistrations, 1);
  fail_unless_equals_uint64(s.bytes, 0);
  forget_run(r);
}
GST_END_TEST;

// Three recycled buffers (a source's pool), up to three frames in flight
// (uploaded ahead, submitted while earlier ones run): each buffer is
// gathered once and pinned from its second frame on. One of them is freed
// mid-stream: it is unregistered as it goes and its replacement, new
// memory (often at the freed one's address: its first frame reads as
// pinned if the unregistration did not happen), starts over. Once the
// stream stopped and every buffer went, nothing stays registered.
GST_START_TEST(test_recycled_pool_and_a_buffer_freed_mid_stream) {
  constexpr size_t kFrames = 24, kFreedAt = 12;
  const std::vector<Bytes> fresh = fresh_outputs(kFrames);
  Run* r = start_run();
  std::vector<GstBuffer*> pool = {new_frame_buffer(), new_frame_buffer(), new_frame_buffer()};
  std::vector<Pushed> pushed;
  for (size_t i = 0; i < kFrames; ++i) {
    if (i == kFreedAt) {
      wait_until_ours(pool[1]);
      const PinStats before = pin_stats(r->stereo[0]);
      const size_t bytes = memory_bytes(pool[1]);
      gst_buffer_unref(pool[1]);  // freed here: unregistered here
      const PinStats after = pin_stats(r->stereo[0]);
      fail_unless_equals_uint64(before.registrations, 3);
      fail_unless_equals_uint64(after.unregistrations, before.unregistrations + 1);
      fail_unless_equals_uint64(after.bytes, before.bytes - bytes);
      pool[1] = new_frame_buffer();
    }
    GstBuffer* b = pool[i % pool.size()];
    wait_until_ours(b);
    const void* data = fill(b, i);
    pushed.push_back({i, static_cast<int>(i % pool.size()), b, gst_buffer_peek_memory(b, 0), data});
    push(r, gst_buffer_ref(b));
  }
  const std::vector<Bytes> outs = drain(r);
  expect_identical(outs, fresh, "three recycled buffers");
  PinStats s = pin_stats(r->stereo[0]);
  if (s.gathered_frames != 4 || s.pinned_frames != kFrames - 4 || s.registrations != 4) {
    g_printerr("[ pin counts ] gathered %" G_GUINT64_FORMAT " (want 4), pinned in place %" G_GUINT64_FORMAT
               " (want %zu), registrations %" G_GUINT64_FORMAT " (want 4), unregistrations %" G_GUINT64_FORMAT "\n",
               s.gathered_frames, s.pinned_frames, kFrames - 4, s.registrations, s.unregistrations);
    print_pin_table(pushed);
  }
  fail_unless_equals_uint64(s.gathered_frames, 4);  // each buffer's first frame, the replacement's too
  fail_unless_equals_uint64(s.pinned_frames, kFrames - 4);
  fail_unless_equals_uint64(s.registrations, 4);
  stop(r);
  for (GstBuffer* b : pool) {
    wait_until_ours(b);
    gst_buffer_unref(b);
  }
  s = pin_stats(r->stereo[0]);
  fail_unless_equals_uint64(s.unregistrations, 4);
  fail_unless_equals_uint64(s.bytes, 0);
  forget_run(r);
}
GST_END_TEST;

// One buffer through a tee into two elements (each maps it, one registers
// it): registered once between them, never twice, the other element finding
// it pinned; both outputs equal the same frames in new memory; unregistered
// once when the buffer goes.
GST_START_TEST(test_one_buffer_into_two_elements) {
  constexpr size_t kFrames = 10;
  const std::vector<Bytes> fresh = fresh_outputs(kFrames);
  Run* r = start_run(2);
  GstBuffer* b = new_frame_buffer();
  for (size_t i = 0; i < kFrames; ++i) {
    wait_until_ours(b);
    fill(b, i);
    push(r, gst_buffer_ref(b));
  }
  gst_app_src_end_of_stream(GST_APP_SRC(r->src));
  for (int e = 0; e < 2; ++e) {
    std::vector<Bytes> outs;
    for (Bytes px = pull(r, e); !px.empty(); px = pull(r, e)) outs.push_back(std::move(px));
    expect_identical(outs, fresh, e == 0 ? "tee, first element" : "tee, second element");
  }
  const PinStats a = pin_stats(r->stereo[0]), c = pin_stats(r->stereo[1]);
  fail_unless_equals_uint64(a.registrations + c.registrations, 1);
  for (const PinStats& s : {a, c}) {
    fail_unless_equals_uint64(s.pinned_frames + s.gathered_frames, kFrames);
    // Its first frame is gathered; so may be a frame that arrived while the
    // other element was registering the buffer.
    fail_unless(s.pinned_frames >= kFrames - 2, "only %" G_GUINT64_FORMAT " frames pinned in place",
                s.pinned_frames);
  }
  stop(r);
  wait_until_ours(b);
  gst_buffer_unref(b);
  fail_unless_equals_uint64(pin_stats(r->stereo[0]).unregistrations + pin_stats(r->stereo[1]).unregistrations, 1);
  fail_unless_equals_uint64(pin_stats(r->stereo[0]).bytes + pin_stats(r->stereo[1]).bytes, 0);
  forget_run(r);
}
GST_END_TEST;

static Suite* host_pin_cuda_suite(void) {
  Suite* s = suite_create("cudastereo-pin-in-place");
  TCase* tc = tcase_create("cuda");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, announce_test, stop_runs);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_one_buffer_again_and_again);
  tcase_add_test(tc, test_recycled_pool_and_a_buffer_freed_mid_stream);
  tcase_add_test(tc, test_one_buffer_into_two_elements);
  return s;
}

int main(int argc, char** argv) {
  gst_check_init(&argc, &argv);
  install_pin_log();
  // Skip (77) only when there is no GPU; a GPU without the element fails.
  GstCudaContext* probe = gst_cuda_load_library() ? gst_cuda_context_new(0) : nullptr;
  if (!probe) {
    g_print("SKIP: no usable CUDA GPU (driver library or device 0 missing): pin-in-place tests not run\n");
    return 77;
  }
  gst_object_unref(probe);
  return gst_check_run_suite(host_pin_cuda_suite(), "cudastereo-pin-in-place", __FILE__);
}
