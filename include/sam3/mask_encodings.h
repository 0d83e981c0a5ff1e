// Every way sam3 writes a mask, in one place: COCO RLE (JSON results, COCO files, the API),
// Label Studio's brush RLE, 8-bit PNG, and polygons (polygons.h). The CLI, `label`, the
// server and the Python module all encode through these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sam3/polygons.h"
#include "sam3/types.h"

namespace sam3 {

// COCO run-length encoding (column-major, first run counts zeros), as pycocotools.
std::vector<std::uint32_t> rle_counts(const Mask& mask);
// pycocotools' compressed string form of the counts (rleToString).
std::string rle_to_string(const std::vector<std::uint32_t>& counts);
std::string rle_encode(const Mask& mask);
// Inverse of rle_encode; throws kInvalidArgument on a malformed string, a negative size or a
// wrong total, kImageTooLarge over ImageLoadOptions{}.max_pixels.
Mask rle_decode(const std::string& counts, int height, int width);

// Label Studio's brush "rle": the mask as RGBA bytes (0 or 255, each pixel's byte four
// times, row-major) packed with @thi.ng/rle-pack's bit format (8-bit words, run fields of
// 3, 4, 8 and 16 bits). The bytes of the packed stream, as Label Studio's JSON holds them.
std::vector<std::uint8_t> brush_rle_encode(const Mask& mask);

// 8-bit gray PNG with 0 and 255.
std::string encode_mask_png(const Mask& mask);

}  // namespace sam3
