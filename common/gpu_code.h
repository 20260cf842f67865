// What to tell a user whose GPU the build carries no code for: the GPU, its
// compute capability, the architectures the build carries and how to
// rebuild. Plain text, no CUDA: the CUDA engine fills in what the driver
// says, and the CPU tests check the sentence.
#pragma once

#include <string>

namespace cs {

enum class GpuCodeProblem {
  NoCode,       // neither SASS for the GPU nor PTX it can compile
  JitDisabled,  // only PTX fits, and PTX compilation is switched off (CUDA_DISABLE_PTX_JIT)
  DriverTooOld, // only PTX fits, and the driver is older than the compiler that made it
};

// gpu_name: the device's name; major.minor: its compute capability;
// build_archs: the code the build carries, as meson lists it ("sm_75 sm_86
// compute_86"). One paragraph for a GStreamer warning or error.
std::string no_gpu_code_message(const std::string& gpu_name, int major, int minor, const std::string& build_archs,
                                GpuCodeProblem problem);

}  // namespace cs
