// PNG and JPEG writers on libpng and libjpeg (not OpenCV's imgcodecs, which links GDAL and
// libcurl on Debian): errors come back through longjmp and become kIo, never stderr lines.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <vector>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {
namespace {

void png_append(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), n);
}
void png_flush(png_structp) {}
[[noreturn]] void png_fail(png_structp png, png_const_charp message) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}
void png_warn(png_structp, png_const_charp) {}

struct JpegError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
};
[[noreturn]] void jpeg_fail(j_common_ptr cinfo) { std::longjmp(reinterpret_cast<JpegError*>(cinfo->err)->jump, 1); }
void jpeg_silent(j_common_ptr, int) {}

}  // namespace

std::string encode_png(const void* pixels, int width, int height, int channels, int bit_depth) {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3) || (bit_depth != 8 && bit_depth != 16) ||
      (channels == 3 && bit_depth == 16)) {
    throw Error(ErrorCode::kInvalidArgument, "encode_png: unsupported image shape");
  }
  std::string out, message;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &message, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw Error(ErrorCode::kIo, "cannot encode a PNG (out of memory)");
  }
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bit_depth / 8);
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) {
    rows[static_cast<size_t>(y)] = const_cast<png_bytep>(static_cast<const png_byte*>(pixels)) + y * row_bytes;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(ErrorCode::kIo, "cannot encode a PNG (" + message + ")");
  }
  png_set_write_fn(png, &out, png_append, png_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth,
               channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 3);  // OpenCV's default: masks compress well, quickly
  png_write_info(png, info);
  if (bit_depth == 16) png_set_swap(png);  // PNG is big-endian; the pixels are native (little)
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string encode_jpeg(const std::uint8_t* rgb, int width, int height, int quality) {
  jpeg_compress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = jpeg_fail;
  err.pub.emit_message = jpeg_silent;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    throw Error(ErrorCode::kIo, "cannot encode a JPEG");
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rgb + static_cast<size_t>(cinfo.next_scanline) * width * 3);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

}  // namespace sam3::core
