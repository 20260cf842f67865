// gtest main of the CUDA tests: skips (exit code 77, meson's "skipped")
// with a message when no GPU is present, so a GPU-less CI never passes them
// silently.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cuda_engine.h"

int main(int argc, char** argv) {
  std::string why;
  if (!cs::cuda::cuda_available(&why)) {
    std::fprintf(stderr, "SKIP: CUDA tests need a GPU: %s\n", why.c_str());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
