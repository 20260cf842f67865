// The sentence a user reads when the build has no code for their GPU
// (common/gpu_code.h): every piece the user needs is in it.
#include <gtest/gtest.h>

#include <string>

#include "gpu_code.h"

namespace {

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

TEST(GpuCodeMessage, NamesTheGpuItsCapabilityTheBuildsArchitecturesAndTheRebuild) {
  const std::string m = cs::no_gpu_code_message("NVIDIA GeForce RTX 3060 Laptop GPU", 8, 6,
                                                "sm_75 sm_90 compute_90", cs::GpuCodeProblem::NoCode);
  EXPECT_TRUE(has(m, "NVIDIA GeForce RTX 3060 Laptop GPU")) << m;
  EXPECT_TRUE(has(m, "compute capability 8.6")) << m;
  EXPECT_TRUE(has(m, "sm_86")) << m;
  EXPECT_TRUE(has(m, "sm_75 sm_90 compute_90")) << m;
  EXPECT_TRUE(has(m, "meson setup build -Dgpu_archs=8.6")) << m;
  // An existing build keeps the architectures it has and gains this one.
  EXPECT_TRUE(has(m, "meson configure build -Dgpu_archs=\"7.5 9.0 8.6\"")) << m;
  EXPECT_FALSE(has(m, "CUDA_DISABLE_PTX_JIT")) << m;
  // Source positions belong in the debug string, not in what users read.
  EXPECT_FALSE(has(m, ".cu:")) << m;
}

TEST(GpuCodeMessage, SaysWhyThePtxDoesNotRun) {
  const std::string jit =
      cs::no_gpu_code_message("NVIDIA H100 80GB HBM3", 9, 0, "sm_86 compute_86", cs::GpuCodeProblem::JitDisabled);
  EXPECT_TRUE(has(jit, "NVIDIA H100 80GB HBM3")) << jit;
  EXPECT_TRUE(has(jit, "compute capability 9.0")) << jit;
  EXPECT_TRUE(has(jit, "sm_86 compute_86")) << jit;
  EXPECT_TRUE(has(jit, "CUDA_DISABLE_PTX_JIT")) << jit;
  EXPECT_TRUE(has(jit, "-Dgpu_archs=9.0")) << jit;
  EXPECT_TRUE(has(jit, "-Dgpu_archs=\"8.6 9.0\"")) << jit;

  const std::string driver =
      cs::no_gpu_code_message("NVIDIA B200", 10, 0, "sm_90 compute_90", cs::GpuCodeProblem::DriverTooOld);
  EXPECT_TRUE(has(driver, "compute capability 10.0")) << driver;
  EXPECT_TRUE(has(driver, "sm_100")) << driver;
  EXPECT_TRUE(has(driver, "driver")) << driver;
  EXPECT_TRUE(has(driver, "-Dgpu_archs=\"9.0 10.0\"")) << driver;
}

TEST(GpuCodeMessage, TheGpusOwnArchitectureIsNotListedTwice) {
  const std::string m = cs::no_gpu_code_message("GPU", 8, 6, "sm_80 sm_86 compute_86", cs::GpuCodeProblem::NoCode);
  EXPECT_TRUE(has(m, "-Dgpu_archs=\"8.0 8.6\"")) << m;
}

}  // namespace
