// Pin in place (gst/pin_rules.h, gst/host_pin.h) without a GPU: the rules
// of which memory an element page-locks where it lies, when and how much;
// and what the element relies on from GStreamer (the version it is built
// against): a memory's qdata destroy notify runs before its data is freed,
// and buffer pools and buffer copies hand back the same GstMemory, qdata
// and all.
#include "pin_rules.h"

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using cs_gst::kMaxPinnedInPlaceBytes;
using cs_gst::on_freed;
using cs_gst::on_registered;
using cs_gst::on_sighting;
using cs_gst::PinBudget;
using cs_gst::PinOutcome;
using cs_gst::PinRecord;
using cs_gst::PinStep;

namespace {

constexpr size_t kFrame = 3840 * 1080 * 4;  // two 1080p RGBA views side by side
constexpr uint64_t kElement = 1, kOther = 2;

// Sightings by `element` until it asks to register; how many it took (0: never within 10).
int sightings_to_register(PinRecord* r, uint64_t element, size_t bytes, PinBudget* budget) {
  for (int n = 1; n <= 10; ++n)
    if (on_sighting(r, element, bytes, budget) == PinStep::Register) return n;
  return 0;
}

}  // namespace

TEST(PinRules, RegisteredOnTheSecondSightingOnly) {
  PinBudget budget;
  PinRecord r;
  EXPECT_EQ(on_sighting(&r, kElement, kFrame, &budget), PinStep::None);
  EXPECT_EQ(r.state, PinRecord::State::Seen);
  EXPECT_EQ(budget.registered, 0u);
  EXPECT_EQ(on_sighting(&r, kElement, kFrame, &budget), PinStep::Register);
  EXPECT_EQ(r.state, PinRecord::State::Registering);
  EXPECT_EQ(budget.registered, kFrame);  // counted while it is being registered
  // Seen again while another thread registers it: nothing more.
  EXPECT_EQ(on_sighting(&r, kElement, kFrame, &budget), PinStep::None);
  on_registered(&r, PinOutcome::Registered, &budget);
  EXPECT_EQ(r.state, PinRecord::State::Registered);
  EXPECT_EQ(budget.registrations, 1u);
  EXPECT_EQ(budget.registered, kFrame);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(on_sighting(&r, kElement, kFrame, &budget), PinStep::None);
  EXPECT_EQ(budget.registrations, 1u);
}

// A source that hands over new memory for every frame (each GstMemory seen
// once) never makes the element register anything.
TEST(PinRules, MemorySeenOnceCostsNothing) {
  PinBudget budget;
  std::vector<PinRecord> frames(100);
  for (PinRecord& r : frames) EXPECT_EQ(on_sighting(&r, kElement, kFrame, &budget), PinStep::None);
  EXPECT_EQ(budget.registered, 0u);
  EXPECT_EQ(budget.registrations, 0u);
}

// Each element counts its own sightings: memory through a tee into two
// elements is not registered on its first frame; the element that sees it a
// second time first registers it, and the other one then finds it pinned.
TEST(PinRules, EachElementCountsItsOwnSightings) {
  PinBudget mine, theirs;
  PinRecord r;
  EXPECT_EQ(on_sighting(&r, kElement, kFrame, &mine), PinStep::None);
  EXPECT_EQ(on_sighting(&r, kOther, kFrame, &theirs), PinStep::None);
  EXPECT_EQ(on_sighting(&r, kElement, kFrame, &mine), PinStep::Register);
  on_registered(&r, PinOutcome::Registered, &mine);
  EXPECT_EQ(on_sighting(&r, kOther, kFrame, &theirs), PinStep::None);
  EXPECT_EQ(theirs.registered, 0u);
  EXPECT_EQ(mine.registered, kFrame);
  // Freed: undone by its owner, whose bytes come back.
  EXPECT_TRUE(on_freed(&r, &mine));
  EXPECT_EQ(mine.registered, 0u);
}

TEST(PinRules, RememberedElementsAreBounded) {
  PinBudget budget;
  PinRecord r;
  for (uint64_t e = 1; e <= 3 * PinRecord::kMaxSeenBy; ++e) on_sighting(&r, e, kFrame, &budget);
  EXPECT_EQ(r.seen_by.size(), PinRecord::kMaxSeenBy);
  // The latest are remembered.
  EXPECT_EQ(on_sighting(&r, 3 * PinRecord::kMaxSeenBy, kFrame, &budget), PinStep::Register);
}

// Past the cap memory stays pageable (gathered) and is registered on a later
// sighting once memory registered earlier was freed.
TEST(PinRules, TheCapBoundsWhatOneElementKeepsRegistered) {
  EXPECT_EQ(kMaxPinnedInPlaceBytes, size_t{512} << 20);
  PinBudget budget;
  budget.cap = 2 * kFrame;
  PinRecord a, b, c;
  EXPECT_EQ(sightings_to_register(&a, kElement, kFrame, &budget), 2);
  on_registered(&a, PinOutcome::Registered, &budget);
  EXPECT_EQ(sightings_to_register(&b, kElement, kFrame, &budget), 2);
  on_registered(&b, PinOutcome::Registered, &budget);
  EXPECT_EQ(budget.registered, 2 * kFrame);  // exactly at the cap
  EXPECT_EQ(on_sighting(&c, kElement, kFrame, &budget), PinStep::None);
  EXPECT_EQ(on_sighting(&c, kElement, kFrame, &budget), PinStep::OverCap);
  EXPECT_EQ(on_sighting(&c, kElement, kFrame, &budget), PinStep::OverCap);
  EXPECT_EQ(c.state, PinRecord::State::Seen);
  EXPECT_EQ(budget.registered, 2 * kFrame);
  EXPECT_TRUE(on_freed(&a, &budget));
  EXPECT_EQ(budget.registered, kFrame);
  EXPECT_EQ(on_sighting(&c, kElement, kFrame, &budget), PinStep::Register);
  on_registered(&c, PinOutcome::Registered, &budget);
  EXPECT_EQ(budget.registered, 2 * kFrame);
  EXPECT_EQ(budget.registrations, 3u);

  // Memory larger than the cap is never registered.
  PinBudget small;
  small.cap = kFrame - 1;
  PinRecord big;
  EXPECT_EQ(on_sighting(&big, kElement, kFrame, &small), PinStep::None);
  EXPECT_EQ(on_sighting(&big, kElement, kFrame, &small), PinStep::OverCap);
  EXPECT_EQ(small.registered, 0u);
}

// A failed registration gives its bytes back and is never tried again.
TEST(PinRules, AFailureIsFinal) {
  PinBudget budget;
  PinRecord r;
  EXPECT_EQ(sightings_to_register(&r, kElement, kFrame, &budget), 2);
  on_registered(&r, PinOutcome::Failed, &budget);
  EXPECT_EQ(r.state, PinRecord::State::Refused);
  EXPECT_EQ(budget.registered, 0u);
  EXPECT_EQ(budget.registrations, 0u);
  EXPECT_EQ(sightings_to_register(&r, kElement, kFrame, &budget), 0);
  EXPECT_EQ(sightings_to_register(&r, kOther, kFrame, &budget), 0);
  EXPECT_FALSE(on_freed(&r, &budget));
}

// Memory page-locked by someone else counts as pinned; its registration is
// not ours, neither in the budget nor to undo.
TEST(PinRules, MemoryPinnedBySomeoneElseIsLeftAlone) {
  PinBudget budget;
  PinRecord r;
  EXPECT_EQ(sightings_to_register(&r, kElement, kFrame, &budget), 2);
  on_registered(&r, PinOutcome::AlreadyPinned, &budget);
  EXPECT_EQ(r.state, PinRecord::State::AlreadyPinned);
  EXPECT_EQ(budget.registered, 0u);
  EXPECT_EQ(budget.registrations, 0u);
  EXPECT_EQ(sightings_to_register(&r, kElement, kFrame, &budget), 0);
  EXPECT_FALSE(on_freed(&r, &budget));
}

TEST(PinRules, MemoryFreedBeforeItsSecondSightingHasNothingToUndo) {
  PinBudget budget;
  PinRecord r;
  on_sighting(&r, kElement, kFrame, &budget);
  EXPECT_FALSE(on_freed(&r, &budget));
  EXPECT_EQ(budget.registered, 0u);
  PinRecord empty;
  EXPECT_EQ(sightings_to_register(&empty, kElement, 0, &budget), 0);
}

// ---------------------------------------------------------------- what GStreamer does

namespace {

class GStreamer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { gst_init(nullptr, nullptr); }
};

std::vector<std::string> g_order;

GQuark test_quark() { return g_quark_from_static_string("cudastereo-test-pin"); }

void note_qdata(gpointer) { g_order.push_back("qdata destroy notify"); }
void note_free(gpointer) { g_order.push_back("memory freed"); }

}  // namespace

// The element unregisters memory in its qdata's destroy notify: that must
// run while the data is still there. System memory that wraps the data
// calls its own notify when the allocator frees it (_sysmem_free).
TEST_F(GStreamer, QdataDestroyNotifyRunsBeforeTheMemoryIsFreed) {
  g_order.clear();
  static guint8 data[4096];
  GstMemory* mem = gst_memory_new_wrapped(GST_MEMORY_FLAG_READONLY, data, sizeof data, 0, sizeof data, nullptr,
                                          note_free);
  ASSERT_TRUE(gst_memory_is_type(mem, GST_ALLOCATOR_SYSMEM));
  gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), test_quark(), data, note_qdata);
  gst_memory_unref(mem);
  EXPECT_EQ(g_order, (std::vector<std::string>{"qdata destroy notify", "memory freed"}));

  // The same through a buffer that owns the memory, and for a share of it
  // (the root's qdata goes last, after the share that holds it).
  g_order.clear();
  mem = gst_memory_new_wrapped(GST_MEMORY_FLAG_READONLY, data, sizeof data, 0, sizeof data, nullptr, note_free);
  gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), test_quark(), data, note_qdata);
  GstMemory* share = gst_memory_share(mem, 100, 1000);
  EXPECT_EQ(share->parent, mem);
  GstBuffer* buf = gst_buffer_new();
  gst_buffer_append_memory(buf, share);
  gst_memory_unref(mem);
  EXPECT_TRUE(g_order.empty()) << "freed while a share of it lives";
  gst_buffer_unref(buf);
  EXPECT_EQ(g_order, (std::vector<std::string>{"qdata destroy notify", "memory freed"}));
}

// Memory that comes back: a buffer pool hands out the same GstMemory, its
// qdata still on it, and frees it (notify first) when the pool goes; a copy
// of a buffer (imagefreeze pushes copies of one buffer) shares its memory.
TEST_F(GStreamer, PoolsAndCopiesHandBackTheSameMemory) {
  g_order.clear();
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGBA, 192, 64);
  GstCaps* caps = gst_video_info_to_caps(&info);
  GstBufferPool* pool = gst_video_buffer_pool_new();
  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), 1, 1);
  ASSERT_TRUE(gst_buffer_pool_set_config(pool, config));
  ASSERT_TRUE(gst_buffer_pool_set_active(pool, TRUE));
  GstBuffer* buf = nullptr;
  ASSERT_EQ(gst_buffer_pool_acquire_buffer(pool, &buf, nullptr), GST_FLOW_OK);
  GstMemory* mem = gst_buffer_peek_memory(buf, 0);
  EXPECT_TRUE(gst_memory_is_type(mem, GST_ALLOCATOR_SYSMEM));
  static int marker;
  gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), test_quark(), &marker, note_qdata);

  GstBuffer* copy = gst_buffer_copy(buf);
  EXPECT_EQ(gst_buffer_peek_memory(copy, 0), mem);
  gst_buffer_unref(copy);
  for (int round = 0; round < 3; ++round) {
    gst_buffer_unref(buf);  // back to the pool
    ASSERT_EQ(gst_buffer_pool_acquire_buffer(pool, &buf, nullptr), GST_FLOW_OK);
    EXPECT_EQ(gst_buffer_peek_memory(buf, 0), mem) << "round " << round;
    EXPECT_EQ(gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(gst_buffer_peek_memory(buf, 0)), test_quark()), &marker);
  }
  EXPECT_TRUE(g_order.empty());
  gst_buffer_unref(buf);
  gst_buffer_pool_set_active(pool, FALSE);
  gst_object_unref(pool);
  gst_caps_unref(caps);
  EXPECT_EQ(g_order, (std::vector<std::string>{"qdata destroy notify"}));
}
