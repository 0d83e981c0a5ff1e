// 8-bit palette PNGs (DAVIS masks: the pixel is the object id, the palette gives it a colour).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sam3::video_io {

using Palette = std::array<std::array<std::uint8_t, 3>, 256>;

// The palette of DAVIS's annotations (PASCAL VOC's colour map): 0 black, 1 (128,0,0),
// 2 (0,128,0), 3 (128,128,0), ... made from the bits of the index.
const Palette& davis_palette();

// `indices` is width*height bytes, row-major. Throws kIo when libpng fails.
std::string encode_palette_png(const std::vector<std::uint8_t>& indices, int width, int height, const Palette& palette);

}  // namespace sam3::video_io
