// Stages 6 and 7 as the engine calls them (matching.h): which kernel and
// configuration a level runs (the radius-2 kernels where they apply and fit,
// match_plan.h, else the tile kernel of any radius), their launches, and the
// shared-memory limits they need. The kernels are in match_tile.cu,
// match_stream.cu, match_refine.cu and match_wide.cu.
#include "matching.h"

#include <string>
#include <vector>

#include "match_args.h"
#include "match_kernels.h"
#include "match_plan.h"

namespace cs::cuda {
namespace streaming {
namespace {

// The built kernels, for the cost model.
constexpr KernelAttributes kBuiltKernels{full_range_attributes, refine_attributes, wide_attributes};

// Launches a plan in the configuration chosen for it.
// right_keys_kept: see enqueue_match_pair.
cudaError_t launch(const Plan& pl, const MatchParams& p, const MatchConfig& c, cudaStream_t stream,
                   bool* right_keys_kept = nullptr) {
  Args a = pl.a;
  if (pl.refine_kernel) {
    // No room for the wide kernel: every tile matches its own wide pixels.
    if (c.wide_grid <= 0) {
      a.wide_list = nullptr;
      a.wide_count = nullptr;
      a.wide_capacity = 0;
    }
    const cudaError_t e = enqueue_refine(a, p.best, c.tile_rows, pl.grid_views, pl.masks, pl.rival, c.dense, stream);
    if (e != cudaSuccess) return e;
    return enqueue_wide(a, p.best, pl.rival, c.wide_grid, stream);
  }
  const cudaError_t e = enqueue_full_range(a, p.best, c.tile_rows, pl.grid_views, pl.slots, c.dense, stream);
  if (e != cudaSuccess || !pl.shared_costs) return e;
  if (right_keys_kept) {
    *right_keys_kept = true;
    return cudaSuccess;
  }
  return resolve_keys(pl.a.v[1].scratch.best_keys, pl.a.v[1].disparity, stream);
}

}  // namespace
}  // namespace streaming

cudaError_t prepare_match(int radius) {
  int device = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return e;
  const size_t need = match_shared_bytes(radius);
  if (need + 64 > static_cast<size_t>(optin)) return cudaErrorInvalidConfiguration;
  // Every engine sets the same value (the device's maximum), so engines with
  // different radii never lower each other's limit.
  // Every form is raised, whatever fails.
  for (cudaError_t r : {raise_generic_limits(optin), streaming::raise_full_range_limits(optin),
                        streaming::raise_refine_limits(optin)})
    if (r != cudaSuccess) return r;
  return cudaSuccess;
}

int match_tile_count(int width, int height) { return streaming::tile_count(width, height); }

unsigned refine_tile_capacity(int width, int height) {
  using namespace streaming;
  return static_cast<unsigned>((width + kTileW - 1) / kTileW) * ((height + phased::kTinyTileH - 1) / phased::kTinyTileH) *
         2;
}

std::vector<KernelLaunch> match_kernel_launches(int range_width) {
  using streaming::dynamic_bytes;
  using streaming::kMiddleTileH;
  using streaming::kTallTileH;
  using streaming::kTileH;
  using streaming::kWideThreads;
  using streaming::wide_dynamic_bytes;
  namespace phased = streaming::phased;
  std::vector<KernelLaunch> out;
  const int mask_words = (range_width + 31) / 32;
  const std::string at = " at " + std::to_string(range_width) + " disparities";
  // The full-range kernel's shared right keys with both views at this range
  // (plan(): two warps a pair, the pairs split over slices without cost slots).
  const int pairs = (range_width + 1) / 2;
  const int slices = streaming::full_range_slices(pairs, 2);
  auto right_columns = [&](bool slots) {
    return streaming::right_key_columns(slots ? pairs : (pairs + slices - 1) / slices);
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  // The engine falls back to the generic kernel where no radius-2 tile fits,
  // and takes the smallest tiles where the taller ones do not: those must
  // fit every target at the reference range.
  // The rival forms (uniqueness, confidence) likewise, in their own tile
  // heights.
  for (int best : {0, 1, 2, 4})
    for (bool left : {true, false})
      for (bool rival : {false, true})
        out.push_back({"match_kernel<" + std::to_string(best) + ", " + flag(left) + ", " + flag(rival) + ">",
                       kTileKernelThreads, match_shared_bytes(2), 0, best != 4,
                       std::string("generic tile, radius 2") + (rival ? ", rival" : "")});
  for (int best : {0, 1, 2}) {
    const std::string b = std::to_string(best);
    for (bool slots : {false, true})
      for (int rows : {streaming::kLowTileH, kTileH, kMiddleTileH, kTallTileH}) {
        if (slots && rows == streaming::kLowTileH) continue;  // no low form with cost slots
        out.push_back({"streaming::stream_match_kernel<" + b + ", " + flag(slots) + ", " + std::to_string(rows) + ", " +
                           std::to_string(streaming::kStreamBlocksPerSm) + ">",
                       streaming::kThreads, dynamic_bytes(slots, rows, mask_words, range_width, right_columns(slots)),
                       streaming::kStreamBlocksPerSm, rows == kTileH, std::to_string(rows) + " rows" + at});
        if (!slots)  // the register-capped form: taken only where it fits better
          out.push_back({"streaming::stream_match_kernel<" + b + ", false, " + std::to_string(rows) + ", " +
                             std::to_string(streaming::kDenseStreamBlocksPerSm) + ">",
                         streaming::kThreads, dynamic_bytes(false, rows, mask_words, range_width, right_columns(false)),
                         streaming::kDenseStreamBlocksPerSm, false,
                         std::to_string(rows) + " rows, register-capped" + at});
      }
    for (bool rival : {false, true})
      for (bool masks : {false, true})
        for (int rows : {kTileH, phased::kMiddleTileH, phased::kShortTileH, phased::kLowTileH, phased::kTinyTileH}) {
          if (rival && (rows == kTileH || rows == phased::kLowTileH || rows == phased::kTinyTileH)) continue;
          out.push_back({"streaming::phased::refine_kernel<" + b + ", " + flag(masks) + ", " + std::to_string(rows) +
                             ", " + flag(rival) + ", " + std::to_string(phased::kBlocksPerSm) + ">",
                         streaming::kThreads, phased::dynamic_bytes(rows, mask_words, range_width, rival, false),
                         phased::kBlocksPerSm, rows == phased::kShortTileH,
                         std::to_string(rows) + " rows" + (rival ? ", rival" : "") + at});
          // The register-capped form: taken only where it fits better.
          if (!rival && rows != phased::kTinyTileH)
            out.push_back({"streaming::phased::refine_kernel<" + b + ", " + flag(masks) + ", " + std::to_string(rows) +
                               ", false, " + std::to_string(phased::kDenseBlocksPerSm) + ">",
                           streaming::kThreads, phased::dynamic_bytes(rows, mask_words, range_width, false, true),
                           phased::kDenseBlocksPerSm, false, std::to_string(rows) + " rows, register-capped" + at});
        }
    for (bool rival : {false, true})
      out.push_back({"streaming::wide_kernel<" + b + ", " + flag(rival) + ">", kWideThreads,
                     wide_dynamic_bytes(range_width), 0, true, std::string("wide pixels") + (rival ? ", rival" : "") + at});
  }
  out.push_back(
      {"streaming::resolve_keys_kernel", streaming::kResolveX * streaming::kResolveY, 0, 0, true, "right keys"});
  return out;
}

cudaError_t match_code_status() { return streaming::full_range_code_status(); }

namespace {

// Streaming where it applies and fits (with a plan, *streamed), else the
// generic kernel.
cudaError_t choose_config(const MatchViews* views, const bool* left, int count, const MatchParams& p,
                          const DeviceLimits& limits, streaming::Plan* plan, MatchConfig* out, bool* streamed) {
  *streamed = false;
  if (streaming::applies(p) && !p.generic_kernel) {
    *plan = streaming::plan(views, left, count, p);
    if (streaming::choose(plan, p, limits, streaming::kBuiltKernels, out)) {
      *streamed = true;
      return cudaSuccess;
    }
    if (p.tile_rows != 0) return cudaErrorInvalidConfiguration;
  }
  return choose_generic(views, left, count, p, limits, out);
}

// The right map offered by the left view's winners (MatchParams::offer_right,
// where the right view has keys to take them): enqueue_match_pair.
bool offers_right_map(const MatchViews& right, const MatchParams& p) {
  return p.offer_right && right.scratch.best_keys.data != nullptr;
}

// The left view as it is matched then: offering to the right view's keys.
MatchViews offering(const MatchViews& left, const MatchViews& right) {
  MatchViews v = left;
  v.offered_keys = right.scratch.best_keys;
  return v;
}

}  // namespace

cudaError_t choose_match_config(const MatchViews* views, int count, const MatchParams& params, MatchConfig* out) {
  if (count != 1 && count != 2) return cudaErrorInvalidValue;
  DeviceLimits own;
  const DeviceLimits* limits = nullptr;
  cudaError_t e = limits_or_current(params.limits, &own, &limits);
  if (e != cudaSuccess) return e;
  const bool one[1] = {params.reference == Reference::Left};
  const bool both[2] = {true, false};
  streaming::Plan plan;
  bool streamed = false;
  if (count == 2 && offers_right_map(views[1], params)) {
    // As enqueue_match_pair: the left view alone, offering.
    const MatchViews left = offering(views[0], views[1]);
    const bool is_left[1] = {true};
    return choose_config(&left, is_left, 1, params, *limits, &plan, out, &streamed);
  }
  return choose_config(views, count == 2 ? both : one, count, params, *limits, &plan, out, &streamed);
}

cudaError_t enqueue_match(const MatchViews& views, const MatchParams& params, cudaStream_t stream) {
  DeviceLimits own;
  const DeviceLimits* limits = nullptr;
  cudaError_t e = limits_or_current(params.limits, &own, &limits);
  if (e != cudaSuccess) return e;
  const bool left = params.reference == Reference::Left;
  streaming::Plan plan;
  MatchConfig config;
  bool streamed = false;
  e = choose_config(&views, &left, 1, params, *limits, &plan, &config, &streamed);
  if (e != cudaSuccess) return e;
  if (streamed) return streaming::launch(plan, params, config, stream);
  return enqueue_generic_match(views, params, stream);
}

cudaError_t enqueue_match_pair(const MatchViews& left, const MatchViews& right, const MatchParams& params,
                               cudaStream_t stream, bool* right_keys_kept) {
  if (right_keys_kept) *right_keys_kept = false;
  if (offers_right_map(right, params)) {
    // The right map is the one the left view's winners offer.
    MatchParams p = params;
    p.reference = Reference::Left;
    const cudaError_t e = enqueue_match(offering(left, right), p, stream);
    if (e != cudaSuccess) return e;
    if (right_keys_kept) {
      *right_keys_kept = true;
      return cudaSuccess;
    }
    return streaming::resolve_keys(right.scratch.best_keys, right.disparity, stream);
  }
  const bool same_size =
      left.census_ref.width == right.census_ref.width && left.census_ref.height == right.census_ref.height;
  const bool same_level = (left.coarser.data == nullptr) == (right.coarser.data == nullptr);
  if (streaming::applies(params) && !params.generic_kernel && same_size && same_level) {
    DeviceLimits own;
    const DeviceLimits* limits = nullptr;
    cudaError_t e = limits_or_current(params.limits, &own, &limits);
    if (e != cudaSuccess) return e;
    const MatchViews views[2] = {left, right};
    const bool is_left[2] = {true, false};
    streaming::Plan plan = streaming::plan(views, is_left, 2, params);
    MatchConfig config;
    if (streaming::choose(&plan, params, *limits, streaming::kBuiltKernels, &config))
      return streaming::launch(plan, params, config, stream, right_keys_kept);
    if (params.tile_rows != 0) return cudaErrorInvalidConfiguration;
    // No tile height fits this GPU: each view on its own (the generic kernel).
  }
  MatchParams p = params;
  p.reference = Reference::Left;
  cudaError_t e = enqueue_match(left, p, stream);
  if (e != cudaSuccess) return e;
  p.reference = Reference::Right;
  return enqueue_match(right, p, stream);
}

cudaError_t enqueue_resolve_keys(ImageView<uint32_t> keys, ImageView<int16_t> disparity, cudaStream_t stream) {
  return streaming::resolve_keys(keys, disparity, stream);
}

}  // namespace cs::cuda
