// The occupancy arithmetic of device_limits.h on kernels described by their
// attributes: no GPU needed. The expected counts are worked out by hand from
// each architecture's limits (registers go to warps in units of 256,
// shared memory per block plus the driver's 1 KB from sm_80, threads and
// blocks per SM), for the matching kernels' registers and shared memory as
// kernel_resources reports them.
#include <gtest/gtest.h>

#include "device_limits.h"

namespace cs::cuda {
namespace {

cudaFuncAttributes kernel(int registers, size_t static_shared, int max_threads) {
  cudaFuncAttributes a{};
  a.numRegs = registers;
  a.sharedSizeBytes = static_shared;
  a.maxThreadsPerBlock = max_threads;
  return a;
}

DeviceLimits arch(int cc, int sms) {
  DeviceLimits l;
  EXPECT_TRUE(architecture_limits(cc, sms, &l)) << cc;
  return l;
}

TEST(DeviceLimits, ArchitectureTable) {
  for (int cc : {75, 80, 86, 87, 89, 90}) {
    const DeviceLimits l = arch(cc, 10);
    EXPECT_EQ(l.major * 10 + l.minor, cc);
    EXPECT_EQ(l.sm_count, 10);
    EXPECT_EQ(l.registers_per_sm, 65536);
    EXPECT_EQ(l.max_threads_per_block, 1024);
    EXPECT_LT(l.shared_per_block_optin, l.shared_per_sm + 1);
  }
  EXPECT_EQ(arch(75, 1).shared_per_block_optin, 64u * 1024);
  EXPECT_EQ(arch(80, 1).shared_per_block_optin, 163u * 1024);
  EXPECT_EQ(arch(86, 1).shared_per_block_optin, 99u * 1024);
  EXPECT_EQ(arch(87, 1).shared_per_sm, 164u * 1024);
  EXPECT_EQ(arch(89, 1).max_threads_per_sm, 1536);
  EXPECT_EQ(arch(90, 1).shared_per_block_optin, 227u * 1024);
  DeviceLimits unknown;
  EXPECT_FALSE(architecture_limits(70, 80, &unknown));
}

TEST(DeviceLimits, BlocksPerSmOfTheMatchingKernels) {
  // Refinement, 32 rows at 256 disparities: 80 registers, 27232 + 43584
  // bytes. H100: 3 by registers (20480 a block), 3 by shared memory
  // (71840 a block of 233472). RTX 30xx: 1 (100 KB an SM). Turing: none
  // (over the 64 KB a block).
  const cudaFuncAttributes refine32 = kernel(80, 27232, 256);
  EXPECT_EQ(blocks_per_sm(arch(90, 132), refine32, 256, 43584), 3);
  EXPECT_EQ(blocks_per_sm(arch(86, 28), refine32, 256, 43584), 1);
  EXPECT_EQ(blocks_per_sm(arch(75, 40), refine32, 256, 43584), 0);
  // 24 rows (20432 + 35392): Turing holds one.
  EXPECT_EQ(blocks_per_sm(arch(75, 40), kernel(80, 20432, 256), 256, 35392), 1);
  // Coarsest level with cost slots, 48 rows: 128 registers cap it at 2 on
  // the H100; the A100's 164 KB hold one of 89936 + 1024 bytes, and two of
  // the 32-row form (21200 + 38944).
  EXPECT_EQ(blocks_per_sm(arch(90, 132), kernel(128, 31792, 256), 256, 58144), 2);
  EXPECT_EQ(blocks_per_sm(arch(80, 108), kernel(128, 31792, 256), 256, 58144), 1);
  EXPECT_EQ(blocks_per_sm(arch(80, 108), kernel(128, 21200, 256), 256, 38944), 2);
  // Generic tile kernel, radius 2 (64 registers, 16 + 20192 bytes): Turing
  // 3 by shared memory, A100 4 by registers.
  EXPECT_EQ(blocks_per_sm(arch(75, 40), kernel(64, 16, 256), 256, 20192), 3);
  EXPECT_EQ(blocks_per_sm(arch(80, 108), kernel(64, 16, 256), 256, 20192), 4);
  // Wide-pixel kernel, 128 threads of 116 registers: 4 (15360 a block).
  EXPECT_EQ(blocks_per_sm(arch(90, 132), kernel(116, 9424, 128), 128, 516), 4);
  // Small blocks stop at the architecture's blocks per SM: 16 on sm_86, 24
  // on sm_89, 32 on sm_90.
  EXPECT_EQ(blocks_per_sm(arch(86, 28), kernel(8, 0, 32), 32, 0), 16);
  EXPECT_EQ(blocks_per_sm(arch(89, 58), kernel(8, 0, 32), 32, 0), 24);
  EXPECT_EQ(blocks_per_sm(arch(90, 132), kernel(8, 0, 32), 32, 0), 32);
  // More threads than the kernel was built for, or than a block may have.
  EXPECT_EQ(blocks_per_sm(arch(90, 132), kernel(32, 0, 256), 512, 0), 0);
  EXPECT_EQ(blocks_per_sm(arch(90, 132), kernel(32, 0, 2048), 2048, 0), 0);
}

}  // namespace
}  // namespace cs::cuda
