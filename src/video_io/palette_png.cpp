#include "video_io/palette_png.h"

#include <png.h>

#include "sam3/error.h"

namespace sam3::video_io {
namespace {

void append(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void no_flush(png_structp) {}
[[noreturn]] void fail(png_structp png, png_const_charp message) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}
void no_warning(png_structp, png_const_charp) {}

Palette make_davis_palette() {
  Palette p{};
  for (int i = 0; i < 256; ++i) {
    int r = 0, g = 0, b = 0, c = i;
    for (int bit = 7; bit >= 0; --bit, c >>= 3) {  // three bits of the index per step, high bits first
      r |= (c & 1) << bit;
      g |= ((c >> 1) & 1) << bit;
      b |= ((c >> 2) & 1) << bit;
    }
    p[static_cast<size_t>(i)] = {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b)};
  }
  return p;
}

}  // namespace

const Palette& davis_palette() {
  static const Palette palette = make_davis_palette();
  return palette;
}

std::string encode_palette_png(const std::vector<std::uint8_t>& indices, int width, int height, const Palette& palette) {
  std::string out, message;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &message, fail, no_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    throw Error(ErrorCode::kIo, "cannot encode a PNG (out of memory)");
  }
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) {
    rows[static_cast<size_t>(y)] = const_cast<png_bytep>(indices.data()) + static_cast<size_t>(y) * width;
  }
  png_color colours[256];
  for (int i = 0; i < 256; ++i) colours[i] = {palette[i][0], palette[i][1], palette[i][2]};
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(ErrorCode::kIo, "cannot encode a PNG (" + message + ")");
  }
  png_set_write_fn(png, &out, append, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_PLTE(png, info, colours, 256);
  png_set_compression_level(png, 3);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace sam3::video_io
