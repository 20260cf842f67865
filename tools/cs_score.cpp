// cs-score: how good is a disparity map? Compares it with ground truth and
// prints bad-1/2/4, average error and density, for users scoring their own
// cameras or the element's raw output.
#include <cstdio>
#include <exception>
#include <string>

#include "args.h"
#include "imageio.h"
#include "score.h"

namespace {

const char* kUsage =
    "usage: cs-score --disparity D.png --gt GT.png [options]\n"
    "  --disparity FILE        estimated disparity (PNG/PGM, single channel); 0 = no estimate\n"
    "  --disparity-scale S     stored value = disparity * S (default 16: Q4, as cs-stereo and\n"
    "                          the element's GRAY16 output write it; 1 for 8-bit maps)\n"
    "  --gt FILE               ground truth disparity, single channel\n"
    "  --gt-scale S            stored value = disparity * S (default 1)\n"
    "  --gt-invalid V          ground-truth value meaning unknown (default 0)\n"
    "  --mask FILE             evaluate only where nonzero (e.g. non-occluded pixels)\n"
    "  --downscale N           take every N-th pixel of ground truth and mask, for maps\n"
    "                          computed at 1/N size (use --gt-scale N too)\n"
    "  --json                  print the result as JSON\n"
    "bad-t = percent of evaluated pixels (mask nonzero, ground truth known) whose\n"
    "estimate is missing or off by more than t pixels.\n";

int run(int argc, char** argv) {
  using namespace cs::tools;
  Args args;
  std::string error = args.parse(argc, argv,
                                 {{"disparity", true}, {"disparity-scale", true}, {"gt", true}, {"gt-scale", true},
                                  {"gt-invalid", true}, {"mask", true}, {"downscale", true}, {"json", false},
                                  {"help", false}});
  if (args.has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  ScoreOptions options;
  int downscale = 1;
  if (error.empty()) {
    args.number("disparity-scale", options.disparity_scale, 1e-6, 1e6, error);
    args.number("gt-scale", options.gt_scale, 1e-6, 1e6, error);
    args.integer("gt-invalid", options.gt_invalid, 0, 65535, error);
    args.integer("downscale", downscale, 1, 64, error);
    if (!args.has("disparity")) Args::add(error, "--disparity is required");
    if (!args.has("gt")) Args::add(error, "--gt is required");
  }
  if (!error.empty()) {
    std::fprintf(stderr, "cs-score: %s\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }

  Picture picture;
  cs::Image<uint16_t> disparity, truth, mask;
  auto load = [&](const std::string& path, cs::Image<uint16_t>& image, const char* what, bool first_of_many) {
    std::string e = read_image(path, picture);
    if (e.empty()) e = single_channel(picture, image, what, first_of_many);
    if (!e.empty()) std::fprintf(stderr, "cs-score: %s\n", e.c_str());
    return e.empty();
  };
  if (!load(args.text("disparity"), disparity, "the disparity map", false)) return kExitFailure;
  if (!load(args.text("gt"), truth, "the ground truth", false)) return kExitFailure;
  const bool have_mask = args.has("mask");
  // A mask saved as RGB is still a mask: its first channel decides.
  if (have_mask && !load(args.text("mask"), mask, "the mask", true)) return kExitFailure;
  if (downscale > 1) {
    truth = subsample(truth, downscale);
    if (have_mask) mask = subsample(mask, downscale);
  }

  ScoreResult r;
  error = score_disparity(disparity, truth, have_mask ? &mask : nullptr, options, r);
  if (!error.empty()) {
    std::fprintf(stderr, "cs-score: %s\n", error.c_str());
    return kExitFailure;
  }
  if (r.evaluated == 0) std::fprintf(stderr, "cs-score: warning: no pixel was evaluated (empty mask or ground truth)\n");

  if (args.has("json")) {
    std::printf(
        "{\"bad_1\": %.4f, \"bad_2\": %.4f, \"bad_4\": %.4f, \"average_abs_error\": %.4f, \"density\": %.6f, "
        "\"image_density\": %.6f, \"pixels\": %llu, \"evaluated\": %llu, \"valid_estimates\": %llu, "
        "\"bad_1_count\": %llu, \"bad_2_count\": %llu, \"bad_4_count\": %llu}\n",
        r.bad_percent[0], r.bad_percent[1], r.bad_percent[2], r.average_abs_error, r.density, r.image_density,
        static_cast<unsigned long long>(r.pixels), static_cast<unsigned long long>(r.evaluated),
        static_cast<unsigned long long>(r.valid_estimates), static_cast<unsigned long long>(r.bad[0]),
        static_cast<unsigned long long>(r.bad[1]), static_cast<unsigned long long>(r.bad[2]));
  } else {
    std::printf("size              %d x %d\n", disparity.width, disparity.height);
    std::printf("evaluated pixels  %llu of %llu%s\n", static_cast<unsigned long long>(r.evaluated),
                static_cast<unsigned long long>(r.pixels), have_mask ? " (mask and known ground truth)" : " (known ground truth)");
    std::printf("bad-1             %.2f %%  (%llu)\n", r.bad_percent[0], static_cast<unsigned long long>(r.bad[0]));
    std::printf("bad-2             %.2f %%  (%llu)\n", r.bad_percent[1], static_cast<unsigned long long>(r.bad[1]));
    std::printf("bad-4             %.2f %%  (%llu)\n", r.bad_percent[2], static_cast<unsigned long long>(r.bad[2]));
    std::printf("avg abs error     %.3f px  (over %llu valid estimates)\n", r.average_abs_error,
                static_cast<unsigned long long>(r.valid_estimates));
    std::printf("density           %.2f %% of evaluated, %.2f %% of image\n", 100.0 * r.density,
                100.0 * r.image_density);
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cs-score: %s\n", e.what());
    return cs::tools::kExitFailure;
  }
}
