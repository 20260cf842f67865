// Moving objects over a static stereo pair (moving_objects.h).
//
// Determinism across machines: positions are integers in 1/256 px, random
// numbers come from splitmix64 (integer only), and the noise is drawn as the
// rounded Gaussian directly. For an integer pixel value v, round(v + n) =
// v + round(n) (ties have probability 0), so sampling the integer k =
// round(n) from its exact distribution P(k) = Phi((k + 1/2) / sigma) -
// Phi((k - 1/2) / sigma) gives the same pictures as adding a real Gaussian
// and rounding. The cumulative table is kept in 32-bit integers: libm's
// erfc enters only through those, so a machine whose erfc differs in the
// last bits still builds the same table (but for a threshold within 1e-7 of
// a step, which no sigma used here has). It is also several times faster
// than Box-Muller (no log, sqrt or cosine per sample).
#include "moving_objects.h"

#include <algorithm>
#include <cmath>

namespace cs {

namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// splitmix64 (Steele, Lea & Flood 2014): a counter through a mixer, so a
// stream is fixed by its starting key alone.
struct SplitMix {
  uint64_t state;
  uint64_t next() { return mix64(state += kGolden); }
};

// The key of one stream: the spec's seed, what the stream is for, and up to
// two indices.
uint64_t stream_key(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b) {
  return mix64(mix64(mix64(seed ^ purpose) + a * kGolden) + b * 0xd1b54a32d192ed03ull);
}

constexpr uint64_t kPatchPurpose = 0x7061746368ull;  // "patch"
constexpr uint64_t kNoisePurpose = 0x6e6f697365ull;  // "noise"

// Rounded Gaussian noise: integer k from a uniform 32-bit u.
class NoiseTable {
 public:
  explicit NoiseTable(double sigma) {
    if (sigma <= 0) return;
    // Beyond 8 sigma the probability (1e-15) is below the table's 2^-32 steps.
    lowest_ = -static_cast<int>(std::ceil(8 * sigma)) - 1;
    const int highest = -lowest_;
    // upper_[i]: 2^32 P(k <= lowest_ + i); u maps to the first i with u < upper_[i].
    for (int k = lowest_; k < highest; ++k) {
      const double p = 0.5 * std::erfc(-(k + 0.5) / (sigma * std::sqrt(2.0)));
      upper_.push_back(static_cast<uint64_t>(std::min(4294967296.0, std::floor(p * 4294967296.0))));
    }
    upper_.push_back(uint64_t{1} << 32);  // k = highest takes what is left
    // guide_[b]: the first i whose range reaches u = b << 24, so a lookup
    // starts at most a step or two below its answer.
    for (uint64_t b = 0; b < 256; ++b) {
      size_t i = 0;
      while (upper_[i] <= (b << 24)) ++i;
      guide_[b] = static_cast<uint16_t>(i);
    }
  }
  bool empty() const { return upper_.empty(); }
  int sample(uint32_t u) const {
    size_t i = guide_[u >> 24];
    while (upper_[i] <= u) ++i;
    return lowest_ + static_cast<int>(i);
  }

 private:
  int lowest_ = 0;
  std::vector<uint64_t> upper_;
  uint16_t guide_[256] = {};
};

uint32_t add_noise(uint32_t rgba, const int k[3]) {
  uint32_t out = 0xff000000u;
  for (int c = 0; c < 3; ++c) {
    const int v = std::clamp(static_cast<int>((rgba >> (8 * c)) & 0xff) + k[c], 0, 255);
    out |= static_cast<uint32_t>(v) << (8 * c);
  }
  return out;
}

void add_noise(Image<uint32_t>& picture, const NoiseTable& table, uint64_t key) {
  SplitMix rng{key};
  for (uint32_t& px : picture.pixels) {
    // Three channels from two 64-bit draws (the fourth half is left unused,
    // so pixel i always takes draws 2i and 2i + 1).
    const uint64_t a = rng.next(), b = rng.next();
    const int k[3] = {table.sample(static_cast<uint32_t>(a)), table.sample(static_cast<uint32_t>(a >> 32)),
                      table.sample(static_cast<uint32_t>(b))};
    px = add_noise(px, k);
  }
}

// Mirrors index i into 0 .. n - 1 (period 2n, edges repeated), for textures
// larger than the picture they are taken from.
int mirror(int i, int n) {
  const int period = 2 * n;
  int m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}

// Floor division of a by 256 with rounding to nearest (halves up).
int64_t round_q8(int64_t a) {
  const int64_t t = a + 128;
  return t >= 0 ? t / 256 : -((-t + 255) / 256);
}

template <typename T>
void reshape(Image<T>& img, int width, int height, T fill) {
  img.width = width;
  img.height = height;
  img.pixels.assign(static_cast<size_t>(width) * height, fill);
}

// Draws one object into one view: rows top.., columns x0.. (clipped).
void draw(const Image<uint32_t>& texture, int x0, int top, int disparity, Image<uint32_t>& picture,
          Image<uint8_t>& mask, Image<int16_t>* disparity_map) {
  const int xa = std::max(0, x0), xb = std::min(picture.width, x0 + texture.width);
  const int ya = std::max(0, top), yb = std::min(picture.height, top + texture.height);
  if (xa >= xb || ya >= yb) return;
  for (int y = ya; y < yb; ++y) {
    const uint32_t* src = &texture.pixels[static_cast<size_t>(y - top) * texture.width + (xa - x0)];
    std::copy(src, src + (xb - xa), &picture.at(xa, y));
    std::fill(&mask.at(xa, y), &mask.at(xa, y) + (xb - xa), uint8_t{255});
    if (disparity_map)
      std::fill(&disparity_map->at(xa, y), &disparity_map->at(xa, y) + (xb - xa), static_cast<int16_t>(disparity));
  }
}

}  // namespace

std::string validate_moving_objects(const MovingObjectsSpec& spec, int width, int height) {
  if (width < 1 || height < 1) return "the background is empty";
  if (spec.warmup_frames < 0 || spec.moving_frames < 0) return "the frame counts must not be negative";
  if (!(spec.noise_sigma >= 0 && spec.noise_sigma <= kMaxNoiseSigma))
    return "the noise sigma must be between 0 and 64";
  for (size_t i = 0; i < spec.objects.size(); ++i) {
    const MovingObject& o = spec.objects[i];
    const std::string which = "object " + std::to_string(i) + ": ";
    if (o.width < 1 || o.height < 1) return which + "its size must be positive";
    if (o.width > 4 * width || o.height > 4 * height) return which + "larger than four times the frame";
    if (o.disparity < 0 || o.disparity > 32767) return which + "its disparity must be 0 to 32767";
    if (!(std::fabs(o.speed) <= 1 << 16)) return which + "its speed must be a number of at most 65536 px a frame";
    if (o.bounce && o.bounce_min > o.bounce_max) return which + "bounce_min is above bounce_max";
  }
  return {};
}

int object_left_edge(const MovingObject& o, int moving_frame) {
  const int64_t speed_q8 = std::llround(o.speed * 256.0);
  int64_t x_q8 = int64_t{o.start_x} * 256 + speed_q8 * moving_frame;
  if (o.bounce) {
    const int64_t lo = int64_t{o.bounce_min} * 256, span = (int64_t{o.bounce_max} - o.bounce_min) * 256;
    if (span == 0) return o.bounce_min;
    int64_t m = (x_q8 - lo) % (2 * span);
    if (m < 0) m += 2 * span;
    x_q8 = lo + (m <= span ? m : 2 * span - m);
  }
  return static_cast<int>(round_q8(x_q8));
}

Image<uint32_t> object_texture(const Image<uint32_t>& background_left, const MovingObjectsSpec& spec,
                               int object_index) {
  const MovingObject& o = spec.objects[object_index];
  const int W = background_left.width, H = background_left.height;
  SplitMix rng{stream_key(spec.seed, kPatchPurpose, static_cast<uint64_t>(object_index), 0)};
  const int px = o.width < W ? static_cast<int>(rng.next() % static_cast<uint64_t>(W - o.width + 1)) : 0;
  const int py = o.height < H ? static_cast<int>(rng.next() % static_cast<uint64_t>(H - o.height + 1)) : 0;
  Image<uint32_t> t(o.width, o.height);
  for (int v = 0; v < o.height; ++v) {
    const int sy = mirror(py + o.height - 1 - v, H);
    for (int u = 0; u < o.width; ++u) t.at(u, v) = background_left.at(mirror(px + o.width - 1 - u, W), sy);
  }
  return t;
}

std::string render_moving_objects(const Image<uint32_t>& background_left, const Image<uint32_t>& background_right,
                                  const MovingObjectsSpec& spec, int frame, MovingObjectsFrame* out) {
  const int W = background_left.width, H = background_left.height;
  if (background_right.width != W || background_right.height != H)
    return "the background views differ in size (" + std::to_string(W) + "x" + std::to_string(H) + " and " +
           std::to_string(background_right.width) + "x" + std::to_string(background_right.height) + ")";
  if (frame < 0) return "the frame index must not be negative";
  if (std::string e = validate_moving_objects(spec, W, H); !e.empty()) return e;
  out->left_rgba = background_left;
  out->right_rgba = background_right;
  reshape<uint8_t>(out->mask_left, W, H, 0);
  reshape<uint8_t>(out->mask_right, W, H, 0);
  reshape<int16_t>(out->disparity_left, W, H, -1);
  if (frame >= spec.warmup_frames) {
    const int t = frame - spec.warmup_frames;
    for (size_t i = 0; i < spec.objects.size(); ++i) {
      const MovingObject& o = spec.objects[i];
      const int x = object_left_edge(o, t);
      // Outside both views: no texture needed.
      const bool in_left = x < W && x + o.width > 0, in_right = x - o.disparity < W && x - o.disparity + o.width > 0;
      if (!(in_left || in_right) || o.top >= H || o.top + o.height <= 0) continue;
      const Image<uint32_t> texture = object_texture(background_left, spec, static_cast<int>(i));
      draw(texture, x, o.top, o.disparity, out->left_rgba, out->mask_left, &out->disparity_left);
      draw(texture, x - o.disparity, o.top, o.disparity, out->right_rgba, out->mask_right, nullptr);
    }
  }
  const NoiseTable noise(spec.noise_sigma);
  if (!noise.empty()) {
    add_noise(out->left_rgba, noise, stream_key(spec.seed, kNoisePurpose, static_cast<uint64_t>(frame), 0));
    add_noise(out->right_rgba, noise, stream_key(spec.seed, kNoisePurpose, static_cast<uint64_t>(frame), 1));
  }
  return {};
}

MovingObjectsSpec crossing_objects_spec(int width, int height, int count, int disparity, int warmup_frames,
                                        uint64_t seed, double speed, int tail_frames) {
  MovingObjectsSpec s;
  s.warmup_frames = warmup_frames;
  s.seed = seed;
  if (speed <= 0) speed = std::max(1, width / 40);
  const int w = std::max(1, width / 5), h = std::max(1, height / 3);
  // One after another: each enters when the one before is three quarters in.
  const int spacing = std::max(1, w * 3 / 4);
  int last_start = 0;
  for (int i = 0; i < count; ++i) {
    MovingObject o;
    o.width = w;
    o.height = h;
    o.top = static_cast<int>(static_cast<int64_t>(i + 1) * (height - h) / (count + 1));
    o.disparity = disparity;
    // The first one shows a first step's worth on the first moving frame.
    o.start_x = -w + static_cast<int>(std::ceil(speed)) - i * spacing;
    o.speed = speed;
    s.objects.push_back(o);
    last_start = o.start_x;
  }
  // Gone from both views once its left edge passes width + disparity (one
  // frame more for the rounding of positions).
  const int travel = count > 0 ? width + disparity - last_start : 0;
  s.moving_frames = (count > 0 ? static_cast<int>(std::ceil(travel / speed)) + 1 : 0) + std::max(0, tail_frames);
  return s;
}

MovingObjectsSpec fraction_objects_spec(int width, int height, double fraction, int disparity, int warmup_frames,
                                        int moving_frames, uint64_t seed) {
  MovingObjectsSpec s;
  s.warmup_frames = warmup_frames;
  s.moving_frames = moving_frames;
  s.seed = seed;
  if (!(fraction > 0) || width < 1 || height < 1) return s;
  if (fraction >= 1) {
    // Covers the left view at 0 .. width and the right one at -disparity ..
    // width wherever its left edge lies in [-travel, 0]: it swings there, so
    // that every pixel sees its texture move (a camera that keeps moving; a
    // still one would become background).
    const int travel = std::max(2, width / 16);
    MovingObject o;
    o.width = width + disparity + travel;
    o.height = height;
    o.disparity = disparity;
    o.bounce = true;
    o.bounce_min = -travel;
    o.bounce_max = 0;
    o.start_x = -travel / 2;
    o.speed = std::max(1, width / 64);
    s.objects.push_back(o);
    return s;
  }
  const int bands = std::min(height, static_cast<int>(std::ceil(fraction * 4 - 1e-9)));
  std::vector<int> band_height(bands), top(bands);
  if (bands <= 3) {
    // Bands a third of the height, the free rows spread around them.
    const int h = std::max(1, height / 3), free_rows = height - bands * h;
    for (int i = 0; i < bands; ++i) {
      band_height[i] = h;
      top[i] = static_cast<int>(static_cast<int64_t>(i + 1) * free_rows / (bands + 1)) + i * h;
    }
  } else {
    // Four bands sharing every row.
    for (int i = 0; i < bands; ++i) {
      top[i] = static_cast<int>(static_cast<int64_t>(i) * height / bands);
      band_height[i] = static_cast<int>(static_cast<int64_t>(i + 1) * height / bands) - top[i];
    }
  }
  // Widths that add up to the asked area: each object takes its share of
  // what the ones before left, rounded.
  double area_left = fraction * width * height;
  int rows_left = 0;
  for (int h : band_height) rows_left += h;
  const double speed = std::max(1, width / 64);
  for (int i = 0; i < bands; ++i) {
    const int h = band_height[i];
    const int w = std::clamp(static_cast<int>(std::lround(area_left / rows_left)), 0, width);
    area_left -= static_cast<double>(w) * h;
    rows_left -= h;
    if (w == 0) continue;
    MovingObject o;
    o.width = w;
    o.height = h;
    o.top = top[i];
    o.disparity = disparity;
    o.bounce = true;
    o.bounce_max = width - w;
    // Whole in the right view too (the left edge at disparity or more) when
    // that leaves it room to move; else it swings over the whole left view.
    o.bounce_min = o.bounce_max - disparity >= std::max(1, width / 32) ? disparity : 0;
    // Alternate directions, starting at different places of the swing.
    o.speed = i % 2 ? -speed : speed;
    o.start_x = o.bounce_min + static_cast<int>(static_cast<int64_t>(o.bounce_max - o.bounce_min) * i / bands);
    s.objects.push_back(o);
  }
  return s;
}

}  // namespace cs
