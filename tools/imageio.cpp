#include "imageio.h"

#include <png.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <limits>

#if CS_HAVE_JPEG
// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>
#endif

#include "stereo_math.h"

namespace cs::tools {

namespace {

// Largest picture accepted, so a corrupt header cannot ask for gigabytes.
constexpr long kMaxSide = 1 << 16;
constexpr size_t kMaxSamples = size_t{1} << 30;

std::string check_size(const std::string& path, long width, long height, int channels) {
  if (width <= 0 || height <= 0) return path + ": the picture has no pixels (" + std::to_string(width) + " x " +
                                        std::to_string(height) + ")";
  if (width > kMaxSide || height > kMaxSide ||
      static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels) > kMaxSamples)
    return path + ": the picture is too large (" + std::to_string(width) + " x " + std::to_string(height) + ")";
  return {};
}

// Closes the file on every path out of a reader or writer.
struct File {
  FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

// Unpacks rows of 8-bit or big-endian 16-bit samples.
void unpack_samples(const std::vector<uint8_t>& bytes, int bit_depth, Picture& out) {
  const size_t n = static_cast<size_t>(out.width) * out.height * out.channels;
  out.samples.resize(n);
  if (bit_depth == 16) {
    for (size_t i = 0; i < n; ++i) out.samples[i] = static_cast<uint16_t>((bytes[2 * i] << 8) | bytes[2 * i + 1]);
  } else {
    for (size_t i = 0; i < n; ++i) out.samples[i] = bytes[i];
  }
}

std::vector<uint8_t> pack_samples(const Picture& picture) {
  const size_t n = picture.samples.size();
  std::vector<uint8_t> bytes(picture.bit_depth == 16 ? 2 * n : n);
  if (picture.bit_depth == 16) {
    for (size_t i = 0; i < n; ++i) {
      bytes[2 * i] = static_cast<uint8_t>(picture.samples[i] >> 8);
      bytes[2 * i + 1] = static_cast<uint8_t>(picture.samples[i] & 0xff);
    }
  } else {
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(picture.samples[i] > 255 ? 255 : picture.samples[i]);
  }
  return bytes;
}

std::string check_picture(const std::string& path, const Picture& picture) {
  if (picture.bit_depth != 8 && picture.bit_depth != 16)
    return path + ": cannot write " + std::to_string(picture.bit_depth) + "-bit samples (8 or 16 only)";
  if (picture.channels < 1 || picture.channels > 4)
    return path + ": cannot write " + std::to_string(picture.channels) + " channels";
  if (picture.width <= 0 || picture.height <= 0) return path + ": cannot write an empty picture";
  if (picture.samples.size() != static_cast<size_t>(picture.width) * picture.height * picture.channels)
    return path + ": internal error: sample count does not match the picture's size";
  return {};
}

// ---------------------------------------------------------------- PNG
//
// libpng reports errors by calling a function that must not return; it
// jumps back to the setjmp in the function that called libpng. Everything
// that function changes after setjmp lives outside it (in the caller's
// objects), so nothing is left indeterminate by the jump.

struct PngErrorSink {
  std::jmp_buf jump;
  char message[256];
};

void png_error_to_sink(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngErrorSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", message ? message : "unknown error");
  std::longjmp(sink->jump, 1);
}

void png_warning_ignored(png_structp, png_const_charp) {}

struct PngDecoded {
  int width = 0, height = 0, channels = 0, bit_depth = 0;
  std::vector<uint8_t> bytes;
  std::vector<png_bytep> rows;
  std::string size_error;
};

// Returns false with sink.message set on a libpng error.
bool png_decode(FILE* f, PngErrorSink& sink, PngDecoded& d, const std::string& path) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &sink, png_error_to_sink, png_warning_ignored);
  if (!png) {
    std::snprintf(sink.message, sizeof sink.message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(sink.message, sizeof sink.message, "out of memory");
    return false;
  }
  if (setjmp(sink.jump)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_init_io(png, f);
  png_read_info(png, info);
  const int color_type = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);

  d.width = static_cast<int>(png_get_image_width(png, info));
  d.height = static_cast<int>(png_get_image_height(png, info));
  d.channels = png_get_channels(png, info);
  d.bit_depth = png_get_bit_depth(png, info);
  d.size_error = check_size(path, d.width, d.height, d.channels);
  if (!d.size_error.empty() || (d.bit_depth != 8 && d.bit_depth != 16)) {
    if (d.size_error.empty()) d.size_error = path + ": unsupported PNG sample depth " + std::to_string(d.bit_depth);
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
  }
  const size_t row_bytes = png_get_rowbytes(png, info);
  d.bytes.resize(row_bytes * d.height);
  d.rows.resize(d.height);
  for (int y = 0; y < d.height; ++y) d.rows[y] = d.bytes.data() + row_bytes * y;
  png_read_image(png, d.rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

std::string read_png(const std::string& path, FILE* f, Picture& out) {
  PngErrorSink sink{};
  PngDecoded d;
  if (!png_decode(f, sink, d, path)) {
    // libpng's stdio reader says only "Read Error" when the file ends early.
    const bool ended = std::strcmp(sink.message, "Read Error") == 0;
    return path + ": cannot decode PNG: " + (ended ? "the file ends early (truncated?)" : sink.message);
  }
  if (!d.size_error.empty()) return d.size_error;
  out.width = d.width;
  out.height = d.height;
  out.channels = d.channels;
  out.bit_depth = d.bit_depth;
  out.max_value = d.bit_depth == 16 ? 65535 : 255;
  unpack_samples(d.bytes, d.bit_depth, out);
  return {};
}

bool png_encode(FILE* f, PngErrorSink& sink, const Picture& picture, std::vector<png_bytep>& rows) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_error_to_sink, png_warning_ignored);
  if (!png) {
    std::snprintf(sink.message, sizeof sink.message, "out of memory");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(sink.message, sizeof sink.message, "out of memory");
    return false;
  }
  if (setjmp(sink.jump)) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  static const int kColorTypes[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                     PNG_COLOR_TYPE_RGB_ALPHA};
  png_init_io(png, f);
  png_set_IHDR(png, info, picture.width, picture.height, picture.bit_depth, kColorTypes[picture.channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // Speed over size: disparity sequences are written frame by frame.
  png_set_compression_level(png, 3);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

// ---------------------------------------------------------------- JPEG

#if CS_HAVE_JPEG
struct JpegErrorSink {
  jpeg_error_mgr manager;  // first member: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_to_sink(j_common_ptr cinfo) {
  auto* sink = reinterpret_cast<JpegErrorSink*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, sink->message);
  std::longjmp(sink->jump, 1);
}

void jpeg_message_ignored(j_common_ptr) {}

struct JpegDecoded {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> bytes;
  std::string size_error;
};

bool jpeg_decode(FILE* f, JpegErrorSink& sink, JpegDecoded& d, const std::string& path) {
  jpeg_decompress_struct cinfo;
  std::memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = jpeg_std_error(&sink.manager);
  sink.manager.error_exit = jpeg_error_to_sink;
  sink.manager.output_message = jpeg_message_ignored;
  if (setjmp(sink.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  d.width = static_cast<int>(cinfo.output_width);
  d.height = static_cast<int>(cinfo.output_height);
  d.channels = cinfo.output_components;
  d.size_error = check_size(path, d.width, d.height, d.channels);
  if (!d.size_error.empty()) {
    jpeg_destroy_decompress(&cinfo);
    return true;
  }
  const size_t row_bytes = static_cast<size_t>(d.width) * d.channels;
  d.bytes.resize(row_bytes * d.height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = d.bytes.data() + row_bytes * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

std::string read_jpeg(const std::string& path, FILE* f, Picture& out) {
  JpegErrorSink sink{};
  JpegDecoded d;
  if (!jpeg_decode(f, sink, d, path)) return path + ": cannot decode JPEG: " + sink.message;
  if (!d.size_error.empty()) return d.size_error;
  out.width = d.width;
  out.height = d.height;
  out.channels = d.channels;
  out.bit_depth = 8;
  out.max_value = 255;
  unpack_samples(d.bytes, 8, out);
  return {};
}
#endif

// ---------------------------------------------------------------- PGM/PPM

// Netpbm header fields are separated by whitespace; '#' starts a comment
// running to the end of the line.
bool pnm_next_number(const std::vector<uint8_t>& data, size_t& pos, long& value) {
  for (;;) {
    while (pos < data.size() && std::strchr(" \t\r\n\v\f", data[pos]) && data[pos] != 0) ++pos;
    if (pos < data.size() && data[pos] == '#') {
      while (pos < data.size() && data[pos] != '\n' && data[pos] != '\r') ++pos;
      continue;
    }
    break;
  }
  if (pos >= data.size() || data[pos] < '0' || data[pos] > '9') return false;
  value = 0;
  while (pos < data.size() && data[pos] >= '0' && data[pos] <= '9') {
    value = value * 10 + (data[pos] - '0');
    if (value > std::numeric_limits<int>::max()) return false;
    ++pos;
  }
  return true;
}

std::string read_pnm(const std::string& path, const std::vector<uint8_t>& data, Picture& out) {
  const int channels = data[1] == '5' ? 1 : 3;
  size_t pos = 2;
  long width = 0, height = 0, maxval = 0;
  if (!pnm_next_number(data, pos, width) || !pnm_next_number(data, pos, height) ||
      !pnm_next_number(data, pos, maxval))
    return path + ": malformed PGM/PPM header (expected width, height and maxval)";
  if (maxval < 1 || maxval > 65535) return path + ": PGM/PPM maxval " + std::to_string(maxval) + " is outside 1..65535";
  std::string err = check_size(path, width, height, channels);
  if (!err.empty()) return err;
  // Exactly one whitespace character separates maxval from the samples.
  if (pos >= data.size() || !std::strchr(" \t\r\n\v\f", data[pos]) || data[pos] == 0)
    return path + ": malformed PGM/PPM header (no whitespace after maxval)";
  ++pos;
  const int bit_depth = maxval > 255 ? 16 : 8;
  const size_t n = static_cast<size_t>(width) * height * channels;
  const size_t need = n * (bit_depth / 8);
  if (data.size() - pos < need)
    return path + ": truncated PGM/PPM: " + std::to_string(data.size() - pos) + " bytes of samples, " +
           std::to_string(need) + " needed";
  out.width = static_cast<int>(width);
  out.height = static_cast<int>(height);
  out.channels = channels;
  out.bit_depth = bit_depth;
  out.max_value = static_cast<int>(maxval);
  std::vector<uint8_t> bytes(data.begin() + pos, data.begin() + pos + need);
  unpack_samples(bytes, bit_depth, out);
  return {};
}

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = s[s.size() - n + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

}  // namespace

bool have_jpeg() { return CS_HAVE_JPEG != 0; }

std::string read_image(const std::string& path, Picture& out) {
  out = Picture();
  File file;
  file.f = std::fopen(path.c_str(), "rb");
  if (!file.f) return path + ": cannot open: " + std::strerror(errno);
  uint8_t magic[8] = {0};
  const size_t got = std::fread(magic, 1, sizeof magic, file.f);
  std::rewind(file.f);
  if (got >= 8 && png_sig_cmp(magic, 0, 8) == 0) return read_png(path, file.f, out);
  if (got >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff) {
#if CS_HAVE_JPEG
    return read_jpeg(path, file.f, out);
#else
    return path + ": is a JPEG file, but this build has no JPEG support (install libjpeg and rebuild)";
#endif
  }
  if (got >= 2 && magic[0] == 'P' && (magic[1] == '5' || magic[1] == '6')) {
    std::vector<uint8_t> data;
    uint8_t chunk[65536];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, file.f)) > 0) data.insert(data.end(), chunk, chunk + n);
    if (std::ferror(file.f)) return path + ": cannot read: " + std::strerror(errno);
    return read_pnm(path, data, out);
  }
  if (got >= 2 && magic[0] == 'P' && magic[1] >= '1' && magic[1] <= '4')
    return path + ": ASCII or 1-bit Netpbm files are not supported (only binary P5/P6)";
  return path + ": unknown image format (PNG, JPEG, PGM or PPM expected)";
}

std::string write_png(const std::string& path, const Picture& picture) {
  std::string err = check_picture(path, picture);
  if (!err.empty()) return err;
  File file;
  file.f = std::fopen(path.c_str(), "wb");
  if (!file.f) return path + ": cannot create: " + std::strerror(errno);
  std::vector<uint8_t> bytes = pack_samples(picture);
  const size_t row_bytes = bytes.size() / picture.height;
  std::vector<png_bytep> rows(picture.height);
  for (int y = 0; y < picture.height; ++y) rows[y] = bytes.data() + row_bytes * y;
  PngErrorSink sink{};
  if (!png_encode(file.f, sink, picture, rows)) return path + ": cannot write PNG: " + sink.message;
  FILE* f = file.f;
  file.f = nullptr;
  if (std::fclose(f) != 0) return path + ": cannot write: " + std::strerror(errno);
  return {};
}

std::string write_pnm(const std::string& path, const Picture& picture) {
  std::string err = check_picture(path, picture);
  if (!err.empty()) return err;
  if (picture.channels != 1 && picture.channels != 3)
    return path + ": PGM/PPM holds 1 or 3 channels, not " + std::to_string(picture.channels);
  File file;
  file.f = std::fopen(path.c_str(), "wb");
  if (!file.f) return path + ": cannot create: " + std::strerror(errno);
  const int maxval = picture.bit_depth == 16 ? 65535 : 255;
  std::fprintf(file.f, "P%c\n%d %d\n%d\n", picture.channels == 1 ? '5' : '6', picture.width, picture.height,
               maxval);
  const std::vector<uint8_t> bytes = pack_samples(picture);
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file.f);
  FILE* f = file.f;
  file.f = nullptr;
  if (std::fclose(f) != 0 || written != bytes.size()) return path + ": cannot write: " + std::strerror(errno);
  return {};
}

std::string write_image(const std::string& path, const Picture& picture) {
  if (ends_with(path, ".pgm") || ends_with(path, ".ppm") || ends_with(path, ".pnm")) return write_pnm(path, picture);
  return write_png(path, picture);
}

std::string single_channel(const Picture& picture, Image<uint16_t>& out, const char* what, bool allow_first_of_many) {
  if (picture.channels != 1 && !allow_first_of_many)
    return std::string(what) + " must be a single-channel (gray) image, but has " +
           std::to_string(picture.channels) + " channels";
  out = Image<uint16_t>(picture.width, picture.height);
  for (int y = 0; y < picture.height; ++y)
    for (int x = 0; x < picture.width; ++x) out.at(x, y) = picture.sample(x, y, 0);
  return {};
}

FrameView Frame8::view() const {
  FrameView v;
  v.format = format;
  v.width = width;
  v.height = height;
  v.plane[0] = bytes.data();
  v.pitch[0] = static_cast<std::ptrdiff_t>(width) * bytes_per_pixel;
  v.memory = Memory::Host;
  return v;
}

Frame8 to_frame8(const Picture& picture) {
  Frame8 f;
  f.width = picture.width;
  f.height = picture.height;
  const bool colour = picture.channels >= 3;
  f.format = colour ? PixelFormat::RGB : PixelFormat::GRAY8;
  f.bytes_per_pixel = colour ? 3 : 1;
  const int max_value = picture.max_value > 0 ? picture.max_value : 255;
  f.bytes.resize(static_cast<size_t>(f.width) * f.height * f.bytes_per_pixel);
  size_t o = 0;
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x)
      for (int c = 0; c < f.bytes_per_pixel; ++c) {
        const uint32_t v = picture.sample(x, y, c);
        f.bytes[o++] = static_cast<uint8_t>(max_value == 255 ? v : (v * 255 + max_value / 2) / max_value);
      }
  return f;
}

Frame8 half_size(const Frame8& frame) {
  Frame8 h;
  h.format = frame.format;
  h.bytes_per_pixel = frame.bytes_per_pixel;
  h.width = frame.width / 2;
  h.height = frame.height / 2;
  h.bytes.resize(static_cast<size_t>(h.width) * h.height * h.bytes_per_pixel);
  const int bpp = frame.bytes_per_pixel;
  const size_t in_row = static_cast<size_t>(frame.width) * bpp;
  for (int y = 0; y < h.height; ++y)
    for (int x = 0; x < h.width; ++x)
      for (int c = 0; c < bpp; ++c) {
        const uint8_t* p = frame.bytes.data() + (2 * y) * in_row + static_cast<size_t>(2 * x) * bpp + c;
        h.bytes[(static_cast<size_t>(y) * h.width + x) * bpp + c] = average4(p[0], p[bpp], p[in_row], p[in_row + bpp]);
      }
  return h;
}

Picture picture_from_q4(const Image<uint16_t>& disparity_q4) {
  Picture p;
  p.width = disparity_q4.width;
  p.height = disparity_q4.height;
  p.channels = 1;
  p.bit_depth = 16;
  p.max_value = 65535;
  p.samples = disparity_q4.pixels;
  return p;
}

Picture picture_from_rgb(int width, int height, const std::vector<uint8_t>& rgb) {
  Picture p;
  p.width = width;
  p.height = height;
  p.channels = 3;
  p.bit_depth = 8;
  p.max_value = 255;
  p.samples.assign(rgb.begin(), rgb.end());
  return p;
}

}  // namespace cs::tools
