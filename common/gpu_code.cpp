#include "gpu_code.h"

#include <sstream>
#include <vector>

namespace cs {

namespace {

// "sm_75 sm_86 compute_86" -> "7.5 8.6 X.Y": the build's SASS targets as
// gpu_archs takes them, with the GPU's own added, so that the suggested
// build keeps running where the current one does.
std::string archs_with(const std::string& build_archs, const std::string& wanted) {
  std::istringstream in(build_archs);
  std::vector<std::string> archs;
  for (std::string a; in >> a;) {
    if (a.rfind("sm_", 0) != 0 || a.size() < 5) continue;
    const std::string digits = a.substr(3);
    const std::string spec = digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
    if (spec != wanted) archs.push_back(spec);
  }
  archs.push_back(wanted);
  std::string out;
  for (const std::string& a : archs) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

std::string no_gpu_code_message(const std::string& gpu_name, int major, int minor, const std::string& build_archs,
                                GpuCodeProblem problem) {
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  const std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  std::ostringstream s;
  s << "this build has no GPU code for " << gpu_name << " (compute capability " << cc << ", " << sm
    << "): it carries " << (build_archs.empty() ? std::string("no CUDA code") : build_archs);
  switch (problem) {
    case GpuCodeProblem::NoCode: break;
    case GpuCodeProblem::JitDisabled:
      s << ", and compiling its PTX for this GPU is switched off (CUDA_DISABLE_PTX_JIT)";
      break;
    case GpuCodeProblem::DriverTooOld:
      s << ", and the NVIDIA driver is too old to compile its PTX (update the driver, or rebuild)";
      break;
  }
  const std::string list = archs_with(build_archs, cc);
  s << ". Rebuild with code for it: `meson setup build -Dgpu_archs=" << cc
    << "` (this GPU only), or in an existing build directory `meson configure build -Dgpu_archs=\"" << list
    << "\" && ninja -C build`";
  return s.str();
}

}  // namespace cs
