// Prints every launch configuration of the matching kernels (matching.h
// match_kernel_launches, block_matching.h block_kernel_launches, cross_matching.h
// cross_kernel_launches) as
// kernel_resources.py reads them: kernel, threads,
// dynamic shared bytes, blocks an SM, required or optional, what. Host code
// only: runs without a GPU.
#include <cstdio>
#include <cstdlib>

#include "block_matching.h"
#include "cross_matching.h"
#include "matching.h"

int main(int argc, char** argv) {
  // The reference range: the README's 1024x768 x 256 example refines 256
  // disparities at level 0.
  const int range_width = argc > 1 ? std::atoi(argv[1]) : 256;
  std::vector<cs::cuda::KernelLaunch> launches = cs::cuda::match_kernel_launches(range_width);
  for (const cs::cuda::KernelLaunch& k : cs::cuda::block_kernel_launches()) launches.push_back(k);
  for (const cs::cuda::KernelLaunch& k : cs::cuda::cross_kernel_launches()) launches.push_back(k);
  for (const cs::cuda::KernelLaunch& k : launches)
    std::printf("%s\t%d\t%zu\t%d\t%s\t%s\n", k.kernel.c_str(), k.threads, k.dynamic_shared, k.min_blocks_per_sm,
                k.required ? "required" : "optional", k.what.c_str());
  return 0;
}
