// PNG through libpng's full API, not its simplified one: the simplified reader takes 16-bit
// samples as linear light and converts them to sRGB (50% grey, 0x8000, read as 186, not 128,
// for every 16-bit PNG without sRGB/gAMA chunks, which most cameras and OpenCV write), and
// composites an alpha channel onto black (a fully transparent pixel lost its colour). Here, as
// OpenCV and Pillow read a PNG into 8-bit RGB: 16-bit samples keep their high byte (v >> 8),
// alpha and tRNS are dropped with the colour kept, gamma chunks are not applied.
#include <png.h>

#include <csetjmp>
#include <cstring>
#include <memory>
#include <vector>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {
namespace {

struct Reader {
  std::span<const std::uint8_t> bytes;
  size_t at = 0;
  char message[256] = "";
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // harmless (an unknown chunk, a bad iCCP): never on stderr

void read_bytes(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->bytes.size() - r->at) png_error(png, "unexpected end of data");
  std::memcpy(out, r->bytes.data() + r->at, n);
  r->at += n;
}

}  // namespace

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  // Everything longjmp may skip over lives behind this pointer, set before setjmp and never
  // changed after it (locals modified between setjmp and longjmp would be indeterminate).
  struct State {
    Reader reader;
    png_structp png = nullptr;
    png_infop info = nullptr;
    Image image;
    std::vector<png_bytep> rows;
    ~State() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
  };
  const auto st = std::make_unique<State>();
  st->reader.bytes = bytes;
  st->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &st->reader, on_error, on_warning);
  if (st->png) st->info = png_create_info_struct(st->png);
  if (!st->png || !st->info) throw Error(ErrorCode::kRuntime, name + ": libpng could not start (out of memory)");
  png_structp png = st->png;
  png_infop info = st->info;
  if (setjmp(png_jmpbuf(png))) {
    throw Error(ErrorCode::kImageCorrupt,
                name + ": PNG data cannot be decoded (" + st->reader.message + "); the file is corrupt or truncated");
  }
  png_set_read_fn(png, &st->reader, read_bytes);
  png_read_info(png, info);
  const std::int64_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  if (w > max_pixels / std::max<std::int64_t>(h, 1)) throw Error(ErrorCode::kImageTooLarge, too_large_message(name, w, h, max_pixels));
  const int colour = png_get_color_type(png, info);
  if (colour == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);  // tRNS is left out: no alpha
  if (colour == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_16(png);     // the high byte, as OpenCV and Pillow do
  png_set_strip_alpha(png);  // the stored colour, never composited
  if (colour == PNG_COLOR_TYPE_GRAY || colour == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(w) * 3) png_error(png, "unexpected pixel layout");
  st->image.width = static_cast<int>(w);
  st->image.height = static_cast<int>(h);
  st->image.rgb.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  st->rows.resize(static_cast<size_t>(h));
  for (size_t y = 0; y < st->rows.size(); ++y) st->rows[y] = st->image.rgb.data() + y * static_cast<size_t>(w) * 3;
  png_read_image(png, st->rows.data());
  png_read_end(png, nullptr);
  return std::move(st->image);
}

}  // namespace sam3::core
