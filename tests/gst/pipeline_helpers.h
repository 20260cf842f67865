// Helpers of the element tests that run real pipelines (live behaviour and
// reliability): build from a launch line, change state with a deadline,
// wait for bus messages, count buffers, read the process's memory. Header
// only; include after <gst/check/gstcheck.h>.
#pragma once

#include <gst/gst.h>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace pipeline_helpers {

// A buffer of `bytes` bytes of xorshift noise from `seed` (the same bytes for
// the same seed), with pts and duration: GRAY8 frames for appsrc and harnesses.
inline GstBuffer* noise_buffer(gsize bytes, GstClockTime pts, GstClockTime duration, guint32 seed) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, bytes, nullptr);
  GstMapInfo map;
  fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
  guint32 x = seed;
  for (gsize i = 0; i < map.size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    map.data[i] = static_cast<guint8>(x);
  }
  gst_buffer_unmap(b, &map);
  GST_BUFFER_PTS(b) = pts;
  GST_BUFFER_DURATION(b) = duration;
  return b;
}

inline GstElement* launch(const std::string& desc) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  fail_unless(p != nullptr && err == nullptr, "could not build '%s': %s", desc.c_str(), err ? err->message : "");
  return p;
}

inline GstElement* by_name(GstElement* bin, const char* name) {
  GstElement* e = gst_bin_get_by_name(GST_BIN(bin), name);
  fail_unless(e != nullptr, "no element named %s", name);
  return e;  // a reference
}

// gst_element_set_state on a thread of its own, so that a state change that
// never returns fails the test after `limit` instead of hanging it.
struct StateChange {
  GstElement* element;
  GstState state;
  GstStateChangeReturn result;
  GMutex lock;
  GCond done_cond;
  bool done;
};

inline gpointer state_change_thread(gpointer data) {
  StateChange* c = static_cast<StateChange*>(data);
  const GstStateChangeReturn r = gst_element_set_state(c->element, c->state);
  g_mutex_lock(&c->lock);
  c->result = r;
  c->done = true;
  g_cond_signal(&c->done_cond);
  g_mutex_unlock(&c->lock);
  return nullptr;
}

inline GstStateChangeReturn set_state_within(GstElement* e, GstState state, GstClockTime limit = 20 * GST_SECOND) {
  // Leaked on a timeout: the thread still owns it.
  StateChange* c = new StateChange{e, state, GST_STATE_CHANGE_FAILURE, {}, {}, false};
  g_mutex_init(&c->lock);
  g_cond_init(&c->done_cond);
  GThread* t = g_thread_new("state-change", state_change_thread, c);
  const gint64 end = g_get_monotonic_time() + static_cast<gint64>(limit / 1000);
  g_mutex_lock(&c->lock);
  while (!c->done)
    if (!g_cond_wait_until(&c->done_cond, &c->lock, end)) break;
  const bool done = c->done;
  const GstStateChangeReturn r = c->result;
  g_mutex_unlock(&c->lock);
  fail_unless(done, "%s: the change to %s did not return within %" GST_TIME_FORMAT " (a hang)", GST_OBJECT_NAME(e),
              gst_element_state_get_name(state), GST_TIME_ARGS(limit));
  g_thread_join(t);
  g_mutex_clear(&c->lock);
  g_cond_clear(&c->done_cond);
  delete c;
  return r;
}

// Sets `state` and waits until the element reached it (ASYNC included).
inline void reach_state(GstElement* e, GstState state, GstClockTime limit = 20 * GST_SECOND) {
  const GstStateChangeReturn r = set_state_within(e, state, limit);
  fail_unless(r != GST_STATE_CHANGE_FAILURE, "%s: the change to %s failed", GST_OBJECT_NAME(e),
              gst_element_state_get_name(state));
  if (r == GST_STATE_CHANGE_ASYNC) {
    GstState now = GST_STATE_VOID_PENDING;
    fail_unless_equals_int(gst_element_get_state(e, &now, nullptr, limit), GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int(now, state);
  }
}

// The ERROR text of a message: "element: message (debug)".
inline std::string error_text(GstMessage* m) {
  GError* err = nullptr;
  gchar* dbg = nullptr;
  gst_message_parse_error(m, &err, &dbg);
  std::string s = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(m))) + ": " + (err ? err->message : "") + " (" +
                  (dbg ? dbg : "") + ")";
  g_clear_error(&err);
  g_free(dbg);
  return s;
}

// Pops messages until one of `types` comes (returned, a reference) or
// `limit` passes (null). LATENCY messages are acted on as an application
// does (gst_bin_recalculate_latency) when `pipeline` is given.
inline GstMessage* wait_for(GstBus* bus, GstMessageType types, GstClockTime limit, GstElement* pipeline = nullptr) {
  const gint64 end = g_get_monotonic_time() + static_cast<gint64>(limit / 1000);
  for (;;) {
    const gint64 left = end - g_get_monotonic_time();
    if (left <= 0) return nullptr;
    GstMessage* m = gst_bus_timed_pop(bus, static_cast<GstClockTime>(left) * 1000);
    if (!m) return nullptr;
    if (GST_MESSAGE_TYPE(m) & types) return m;
    if (pipeline && GST_MESSAGE_TYPE(m) == GST_MESSAGE_LATENCY) gst_bin_recalculate_latency(GST_BIN(pipeline));
    gst_message_unref(m);
  }
}

// Waits for EOS; fails on an ERROR or after `limit`.
inline void wait_eos(GstElement* pipeline, GstClockTime limit = 60 * GST_SECOND) {
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* m = wait_for(bus, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), limit, pipeline);
  gst_object_unref(bus);
  fail_unless(m != nullptr, "%s: no EOS within %" GST_TIME_FORMAT, GST_OBJECT_NAME(pipeline), GST_TIME_ARGS(limit));
  if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
    const std::string text = error_text(m);
    gst_message_unref(m);
    fail("%s: error instead of EOS: %s", GST_OBJECT_NAME(pipeline), text.c_str());
  }
  gst_message_unref(m);
}

// Buffers through a pad, counted by a probe.
struct Counter {
  gint buffers = 0;
  gint eos = 0;
};

inline GstPadProbeReturn count_probe(GstPad*, GstPadProbeInfo* info, gpointer data) {
  Counter* c = static_cast<Counter*>(data);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) g_atomic_int_inc(&c->buffers);
  if ((GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) &&
      GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_EOS)
    g_atomic_int_inc(&c->eos);
  return GST_PAD_PROBE_OK;
}

// Counts buffers and EOS on pad `pad_name` of element `name` in `bin`.
inline void count_on(GstElement* bin, const char* name, const char* pad_name, Counter* c) {
  GstElement* e = by_name(bin, name);
  GstPad* pad = gst_element_get_static_pad(e, pad_name);
  fail_unless(pad != nullptr);
  gst_pad_add_probe(pad, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
                    count_probe, c, nullptr);
  gst_object_unref(pad);
  gst_object_unref(e);
}

// Waits until `c` counted at least `n` buffers; false after `limit`.
inline bool wait_buffers(const Counter& c, gint n, GstClockTime limit = 20 * GST_SECOND) {
  const gint64 end = g_get_monotonic_time() + static_cast<gint64>(limit / 1000);
  while (g_atomic_int_get(&c.buffers) < n) {
    if (g_get_monotonic_time() > end) return false;
    g_usleep(2000);
  }
  return true;
}

// The element's `stats` field `name`.
inline guint64 stat_u64(GstElement* e, const char* name) {
  GstStructure* s = nullptr;
  g_object_get(e, "stats", &s, nullptr);
  fail_unless(s != nullptr);
  guint64 v = 0;
  fail_unless(gst_structure_get_uint64(s, name, &v), "stats lack %s", name);
  gst_structure_free(s);
  return v;
}

// Resident memory of this process, bytes (/proc/self/statm).
inline size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace pipeline_helpers
