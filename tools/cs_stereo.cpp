// cs-stereo: disparity of one still pair through the CPU reference engine,
// written as a Q4 16-bit PNG (value = d * 16, 0 = invalid) and optionally as
// a false-colour picture. Full-frame matching: the background model is for
// video and stays off here.
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "encode.h"
#include "engine.h"
#include "imageio.h"
#include "stereo_math.h"

namespace {

const char* kUsage =
    "usage: cs-stereo --left L.png --right R.png --out disparity.png [options]\n"
    "  --left FILE, --right FILE   rectified views: PNG, JPEG, PGM or PPM of one size\n"
    "  --out FILE                  disparity, 16-bit gray PNG (or .pgm): d * 16, 0 = invalid\n"
    "  --color FILE                false-colour disparity, RGB PNG (or .ppm)\n"
    "  --colormap turbo|jet|grey   colour map of --color (default turbo)\n"
    "  --method progressive|block|cross|elas  progressive multi-resolution census (default),\n"
    "                              SSD block matching over the full range at full size,\n"
    "                              cross-based aggregation with bitwise fast voting (colour),\n"
    "                              or ELAS (support points, triangulated prior, dense matching)\n"
    "  --block-size N              method block: odd window side, 3..31 (default 9)\n"
    "  --cross-tau N               method cross: colour threshold of the arms, 0..255 (default 20)\n"
    "  --cross-arm-length N        method cross: longest arm, pixels, 1..16 (default 16)\n"
    "  --cross-truncation N        method cross: cap of a pixel's R+G+B cost, 1..765 (default 60)\n"
    "  --cross-census-weight N     method cross: cost per differing bit of the luma census,\n"
    "                              0..24 (default 15; 0 = the colour cost alone)\n"
    "  --cross-vote-arm-length N   method cross: longest arm of the voting's regions, 1..16\n"
    "                              (default 16: the aggregation's regions)\n"
    "  --sample-restore S          method cross: match every S-th pixel and row, restore by\n"
    "                              voting; 1 = off, 2, 3 (default 1)\n"
    "  --elas-short-gaps           method elas: fill only gaps of at most 3 pixels (default: all)\n"
    "  --uniqueness-ratio R        reject a pixel unless every disparity more than one away\n"
    "                              costs over R % more than the best; 0 = off, -1 = the\n"
    "                              method's default (progressive 0, block 80, cross, elas 0)\n"
    "  --max-disparity N           search min..N-1 (default 64)\n"
    "  --min-disparity N           (default 0)\n"
    "  --levels N                  pyramid levels, 0 = automatic (default 0)\n"
    "  --window box|best1|best2|best4  adaptive window variant (default best1)\n"
    "  --subwindow-radius N        sub-window radius (default 2)\n"
    "  --no-lr-check               keep pixels that fail the left-right check\n"
    "  --lr-tolerance N            left-right check tolerance in pixels (default -1: the\n"
    "                              method's, 2; cross 0)\n"
    "  --hole-span N               a hole searches at most N disparities (default 16, 0 = its\n"
    "                              neighbours' whole spread)\n"
    "  --min-support N             above level 0, drop a disparity fewer than N of its 8\n"
    "                              neighbours agree with (default 5, 0 = off)\n"
    "  --no-subpixel               whole-pixel disparities\n"
    "  --scale 1|2                 2 = match the half-size views (2x2 averages); the output\n"
    "                              is then half size too, in half-size pixels\n"
    "Exit codes: 0 done, 1 input or processing failed, 2 invalid options.\n";

bool parse_window(const std::string& s, cs::WindowVariant& w) {
  if (s == "box") w = cs::WindowVariant::Box;
  else if (s == "best1") w = cs::WindowVariant::Best1;
  else if (s == "best2") w = cs::WindowVariant::Best2;
  else if (s == "best4") w = cs::WindowVariant::Best4;
  else return false;
  return true;
}

bool parse_colormap(const std::string& s, cs::Colormap& c) {
  if (s == "turbo") c = cs::Colormap::Turbo;
  else if (s == "jet") c = cs::Colormap::Jet;
  else if (s == "grey" || s == "gray") c = cs::Colormap::Grey;
  else return false;
  return true;
}

int run(int argc, char** argv) {
  using namespace cs::tools;
  Args args;
  std::string error = args.parse(
      argc, argv,
      {{"left", true}, {"right", true}, {"out", true}, {"color", true}, {"colormap", true}, {"max-disparity", true},
       {"min-disparity", true}, {"levels", true}, {"window", true}, {"subwindow-radius", true},
       {"no-lr-check", false}, {"lr-tolerance", true}, {"no-subpixel", false}, {"scale", true}, {"method", true},
       {"block-size", true}, {"cross-tau", true}, {"cross-arm-length", true}, {"cross-truncation", true},
       {"cross-census-weight", true}, {"cross-vote-arm-length", true}, {"sample-restore", true}, {"uniqueness-ratio", true}, {"hole-span", true},
       {"min-support", true}, {"elas-short-gaps", false}, {"help", false}});
  if (args.has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  cs::Params params;
  cs::Colormap colormap = cs::Colormap::Turbo;
  int scale = 1;
  if (error.empty()) {
    // Wide bounds here; Params::validate() owns the real limits.
    args.integer("max-disparity", params.max_disparity, -100000, 100000, error);
    args.integer("min-disparity", params.min_disparity, -100000, 100000, error);
    args.integer("levels", params.levels, -1000, 1000, error);
    args.integer("subwindow-radius", params.subwindow_radius, -1000, 1000, error);
    args.integer("lr-tolerance", params.lr_tolerance, -100000, 100000, error);
    args.integer("hole-span", params.hole_span, -100000, 100000, error);
    args.integer("min-support", params.min_support, -100000, 100000, error);
    args.integer("scale", scale, 1, 2, error);
    args.integer("block-size", params.match_block_size, -1000, 1000, error);
    args.integer("cross-tau", params.cross_tau, -1000, 1000, error);
    args.integer("cross-arm-length", params.cross_arm_length, -1000, 1000, error);
    args.integer("cross-truncation", params.cross_truncation, -1000, 1000, error);
    args.integer("cross-census-weight", params.cross_census_weight, -1000, 1000, error);
    args.integer("cross-vote-arm-length", params.cross_vote_arm_length, -1000, 1000, error);
    args.integer("sample-restore", params.sample_restore, -1000, 1000, error);
    args.integer("uniqueness-ratio", params.uniqueness_ratio, -1000, 1000, error);
    if (args.has("method") && !cs::tools::parse_method(args.text("method"), params.method))
      Args::add(error, "--method must be progressive, block, cross or elas, not '" + args.text("method") + "'");
    if (args.has("window") && !parse_window(args.text("window"), params.window))
      Args::add(error, "--window must be box, best1, best2 or best4, not '" + args.text("window") + "'");
    if (args.has("colormap") && !parse_colormap(args.text("colormap"), colormap))
      Args::add(error, "--colormap must be turbo, jet or grey, not '" + args.text("colormap") + "'");
    params.lr_check = !args.has("no-lr-check");
    params.subpixel = !args.has("no-subpixel");
    params.elas_fill_gaps = !args.has("elas-short-gaps");
    params.background = false;
    for (const char* required : {"left", "right", "out"})
      if (!args.has(required)) Args::add(error, std::string("--") + required + " is required");
    if (error.empty()) {
      const std::string invalid = params.validate();
      if (!invalid.empty()) Args::add(error, invalid);
    }
  }
  if (!error.empty()) {
    std::fprintf(stderr, "cs-stereo: %s\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }

  Picture left_picture, right_picture;
  for (auto [path, picture] : {std::pair{args.text("left"), &left_picture}, {args.text("right"), &right_picture}}) {
    const std::string e = read_image(path, *picture);
    if (!e.empty()) {
      std::fprintf(stderr, "cs-stereo: %s\n", e.c_str());
      return kExitFailure;
    }
  }
  if (left_picture.width != right_picture.width || left_picture.height != right_picture.height) {
    std::fprintf(stderr, "cs-stereo: the left view is %d x %d but the right view is %d x %d\n", left_picture.width,
                 left_picture.height, right_picture.width, right_picture.height);
    return kExitFailure;
  }
  Frame8 left = to_frame8(left_picture), right = to_frame8(right_picture);
  // One format for both: a gray view next to a colour one is matched in gray.
  if (left.format != right.format) {
    Picture* colour = left.format == cs::PixelFormat::RGB ? &left_picture : &right_picture;
    Picture gray;
    gray.width = colour->width;
    gray.height = colour->height;
    gray.channels = 1;
    gray.bit_depth = 8;
    gray.max_value = 255;
    Frame8 c8 = to_frame8(*colour);
    gray.samples.resize(static_cast<size_t>(c8.width) * c8.height);
    for (size_t i = 0; i < gray.samples.size(); ++i)
      gray.samples[i] = cs::luma_from_rgb(c8.bytes[3 * i], c8.bytes[3 * i + 1], c8.bytes[3 * i + 2]);
    (colour == &left_picture ? left : right) = to_frame8(gray);
  }
  if (scale == 2) {
    left = half_size(left);
    right = half_size(right);
  }
  const std::string size_problem = params.validate_for_size(left.width, left.height);
  if (!size_problem.empty()) {
    std::fprintf(stderr, "cs-stereo: %s\n", size_problem.c_str());
    return kExitUsage;
  }

  std::unique_ptr<cs::Engine> engine = cs::make_cpu_engine(params);
  cs::Image<uint16_t> disparity_q4(left.width, left.height);
  cs::EncodeParams encode;
  encode.format = cs::OutputFormat::DisparityQ4;
  encode.max_disparity = params.max_disparity;
  cs::OutputFrame out;
  out.data = reinterpret_cast<uint8_t*>(disparity_q4.pixels.data());
  out.pitch = static_cast<std::ptrdiff_t>(disparity_q4.width) * sizeof(uint16_t);
  out.width = disparity_q4.width;
  out.height = disparity_q4.height;
  out.memory = cs::Memory::Host;

  const auto start = std::chrono::steady_clock::now();
  error = engine->process(left.view(), right.view(), encode, out);
  const auto stop = std::chrono::steady_clock::now();
  if (!error.empty()) {
    std::fprintf(stderr, "cs-stereo: %s\n", error.c_str());
    return kExitFailure;
  }
  const double ms = std::chrono::duration<double, std::milli>(stop - start).count();
  const cs::FrameStats stats = engine->stats();
  size_t valid = 0;
  for (uint16_t d : disparity_q4.pixels) valid += d != cs::kInvalidDisparity;

  error = write_image(args.text("out"), picture_from_q4(disparity_q4));
  if (error.empty() && args.has("color")) {
    cs::EncodeParams colour;
    colour.format = cs::OutputFormat::RGBx;
    colour.colormap = colormap;
    colour.max_disparity = params.max_disparity;
    std::vector<uint8_t> rgbx(static_cast<size_t>(disparity_q4.width) * disparity_q4.height * 4);
    cs::encode_output(std::as_const(disparity_q4).view(), nullptr, colour, rgbx.data(),
                      static_cast<std::ptrdiff_t>(disparity_q4.width) * 4);
    std::vector<uint8_t> rgb(rgbx.size() / 4 * 3);
    for (size_t i = 0, n = rgbx.size() / 4; i < n; ++i)
      for (int c = 0; c < 3; ++c) rgb[3 * i + c] = rgbx[4 * i + c];
    error = write_image(args.text("color"), picture_from_rgb(disparity_q4.width, disparity_q4.height, rgb));
  }
  if (!error.empty()) {
    std::fprintf(stderr, "cs-stereo: %s\n", error.c_str());
    return kExitFailure;
  }
  if (params.method == cs::Method::Block)
    std::printf("%s engine: %d x %d, disparities %d..%d, block %d x %d, uniqueness %d %%, %.1f %% valid, %.1f ms\n",
                engine->backend_name(), left.width, left.height, params.min_disparity, params.max_disparity - 1,
                params.match_block_size, params.match_block_size, cs::resolve_uniqueness_ratio(params),
                100.0 * valid / disparity_q4.pixels.size(), ms);
  else if (params.method == cs::Method::Cross)
    std::printf("%s engine: %d x %d, disparities %d..%d, cross tau %d arm %d truncation %d census weight %d, "
                "vote arm %d, sample-restore %d, uniqueness %d %%, %.1f %% valid, %.1f ms\n",
                engine->backend_name(), left.width, left.height, params.min_disparity, params.max_disparity - 1,
                params.cross_tau, params.cross_arm_length, params.cross_truncation, params.cross_census_weight,
                params.cross_vote_arm_length, params.sample_restore,
                cs::resolve_uniqueness_ratio(params), 100.0 * valid / disparity_q4.pixels.size(), ms);
  else if (params.method == cs::Method::Elas)
    std::printf("%s engine: %d x %d, disparities %d..%d, elas fill-gaps %s, uniqueness %d %%, %.1f %% valid, "
                "%.1f ms\n",
                engine->backend_name(), left.width, left.height, params.min_disparity, params.max_disparity - 1,
                params.elas_fill_gaps ? "on" : "off", cs::resolve_uniqueness_ratio(params),
                100.0 * valid / disparity_q4.pixels.size(), ms);
  else
    std::printf("%s engine: %d x %d, disparities %d..%d, %d levels, %.1f %% valid, %.1f ms\n", engine->backend_name(),
                left.width, left.height, params.min_disparity, params.max_disparity - 1, stats.levels,
                100.0 * valid / disparity_q4.pixels.size(), ms);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cs-stereo: %s\n", e.what());
    return cs::tools::kExitFailure;
  }
}
