// RowCopier: the copy equals a row-by-row memcpy for every shape and pitch,
// whether it runs on the caller alone or shared between workers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "row_copy.h"

namespace cs {
namespace {

struct Shape {
  int rows;
  std::size_t row_bytes;
  std::ptrdiff_t from_pitch, to_pitch;
};

void check_copy(RowCopier& copier, const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> from(static_cast<std::size_t>(s.from_pitch) * s.rows);
  for (auto& b : from) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> to(static_cast<std::size_t>(s.to_pitch) * s.rows, 0xA5), expected = to;
  for (int y = 0; y < s.rows; ++y)
    std::copy_n(from.begin() + y * s.from_pitch, s.row_bytes, expected.begin() + y * s.to_pitch);
  copier.copy(to.data(), s.to_pitch, from.data(), s.from_pitch, s.row_bytes, s.rows);
  // Rows and the bytes between them (left alone) both compared.
  EXPECT_EQ(to, expected) << s.rows << " rows of " << s.row_bytes << " bytes, pitches " << s.from_pitch << " -> "
                          << s.to_pitch << ", " << copier.threads() << " threads";
}

const Shape kShapes[] = {
    {1, 10, 10, 10},                       // tiny: the caller alone
    {1080, 3840 * 4, 3840 * 4, 3840 * 4},  // a packed RGBA frame, contiguous: shared, one memcpy a band
    {1081, 4001, 4096, 4001},              // odd rows, padded source rows: shared, row by row
    {517, 2500, 2500, 2560},               // padded destination rows
    {3, 1 << 20, 1 << 20, 1 << 20},        // fewer rows than threads
};

TEST(RowCopier, EqualsRowByRowCopyForEveryShapeAndThreadCount) {
  for (int threads : {1, 2, 3, 4, 7}) {
    RowCopier copier(threads);
    EXPECT_EQ(copier.threads(), threads);
    unsigned seed = 1;
    for (const Shape& s : kShapes) check_copy(copier, s, seed++);
    // Again: the workers, now started, take the next job.
    for (const Shape& s : kShapes) check_copy(copier, s, seed++);
  }
}

TEST(RowCopier, AutomaticThreadCountIsBetweenOneAndFour) {
  RowCopier copier;
  EXPECT_GE(copier.threads(), 1);
  EXPECT_LE(copier.threads(), 4);
  check_copy(copier, kShapes[1], 99);
}

TEST(RowCopier, EnvironmentChoosesTheThreadCountForMeasurements) {
  ::setenv("CS_COPY_THREADS", "3", 1);
  RowCopier three;
  ::setenv("CS_COPY_THREADS", "999", 1);
  RowCopier capped;
  ::unsetenv("CS_COPY_THREADS");
  EXPECT_EQ(three.threads(), 3);
  EXPECT_EQ(capped.threads(), RowCopier::kMaxThreads);
  check_copy(three, kShapes[2], 7);
  RowCopier explicit_two(2);  // an explicit count ignores the environment
  EXPECT_EQ(explicit_two.threads(), 2);
}

TEST(RowCopier, CallsFromSeveralThreadsEachGetTheirRows) {
  RowCopier copier(3);
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&copier, t] {
      for (int i = 0; i < 5; ++i) check_copy(copier, kShapes[1 + (t + i) % 3], 100 + 10 * t + i);
    });
  for (std::thread& c : callers) c.join();
}

}  // namespace
}  // namespace cs
