// Reads a PNG's stored pixels as they are (palette indices, 16-bit grey), with its palette:
// what a labeling tool sees, not an RGB rendering of it.
#pragma once

#include <png.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace sam3::test {

struct RawPng {
  int width = 0, height = 0, bit_depth = 0, color_type = -1;
  std::vector<std::array<std::uint8_t, 3>> palette;
  std::vector<std::uint16_t> pixels;  // one sample per pixel (grey or palette index)
};

inline RawPng read_raw_png(const std::filesystem::path& path) {
  RawPng out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(f);
    return RawPng{};
  }
  png_init_io(png, f);
  png_read_info(png, info);
  out.width = static_cast<int>(png_get_image_width(png, info));
  out.height = static_cast<int>(png_get_image_height(png, info));
  out.bit_depth = png_get_bit_depth(png, info);
  out.color_type = png_get_color_type(png, info);
  png_colorp colours = nullptr;
  int n = 0;
  if (png_get_PLTE(png, info, &colours, &n) != 0) {
    for (int i = 0; i < n; ++i) out.palette.push_back({colours[i].red, colours[i].green, colours[i].blue});
  }
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<std::uint8_t> rows(row_bytes * out.height);
  std::vector<png_bytep> pointers(out.height);
  for (int y = 0; y < out.height; ++y) pointers[y] = rows.data() + y * row_bytes;
  png_read_image(png, pointers.data());
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  const int channels = out.color_type == PNG_COLOR_TYPE_GRAY || out.color_type == PNG_COLOR_TYPE_PALETTE ? 1 : 0;
  if (channels == 0) return out;  // not a one-sample format
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      const std::uint8_t* p = pointers[y] + (out.bit_depth == 16 ? 2 * x : x);
      out.pixels.push_back(out.bit_depth == 16 ? static_cast<std::uint16_t>(p[0] << 8 | p[1]) : p[0]);
    }
  }
  return out;
}

}  // namespace sam3::test
