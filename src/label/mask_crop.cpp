#include <algorithm>

#include "predictor/postprocess.h"
#include "label/label_image.h"

namespace sam3::label {

std::int64_t MaskCrop::area() const { return std::count(data.begin(), data.end(), std::uint8_t{1}); }

bool MaskCrop::at(int x, int y) const {
  if (x < x0 || y < y0 || x >= x0 + width || y >= y0 + height) return false;
  return data[static_cast<size_t>(y - y0) * width + (x - x0)] != 0;
}

Mask MaskCrop::to_mask() const { return Mask::from_window(full_width, full_height, {x0, y0, x0 + width, y0 + height}, data); }

MaskCrop crop_mask(const Mask& mask) {
  const TileRect b = mask.bounds();
  MaskCrop c;
  c.full_width = mask.width();
  c.full_height = mask.height();
  c.x0 = b.x0;
  c.y0 = b.y0;
  c.width = b.x1 - b.x0;
  c.height = b.y1 - b.y0;
  c.data.reserve(static_cast<size_t>(c.width) * c.height);
  for (int y = b.y0; y < b.y1; ++y) c.data.insert(c.data.end(), mask.row(y).begin(), mask.row(y).end());
  return c;
}

std::vector<std::uint32_t> rle_counts(const MaskCrop& m) {
  // Column-major runs over the full image, starting with zeros. Columns outside the crop and
  // the rows above/below it are zeros.
  std::vector<std::uint32_t> counts;
  std::uint8_t current = 0;
  std::uint64_t run = 0;
  auto push = [&](std::uint8_t v, std::uint64_t n) {
    if (n == 0) return;
    if (v != current) {
      counts.push_back(static_cast<std::uint32_t>(run));
      run = 0;
      current = v;
    }
    run += n;
  };
  const std::uint64_t H = static_cast<std::uint64_t>(m.full_height);
  push(0, static_cast<std::uint64_t>(m.x0) * H);
  for (int x = 0; x < m.width; ++x) {
    push(0, static_cast<std::uint64_t>(m.y0));
    for (int y = 0; y < m.height; ++y) push(m.data[static_cast<size_t>(y) * m.width + x] ? 1 : 0, 1);
    push(0, H - m.y0 - m.height);
  }
  push(0, static_cast<std::uint64_t>(m.full_width - m.x0 - m.width) * H);
  counts.push_back(static_cast<std::uint32_t>(run));
  return counts;
}

Mask semantic_mask(const std::vector<LabeledInstance>& instances, int category, int width, int height) {
  std::vector<std::uint8_t> raster(static_cast<size_t>(width) * height, 0);
  for (const auto& inst : instances) {
    if (inst.category != category) continue;
    const auto& c = inst.mask;
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x)
        if (c.data[static_cast<size_t>(y) * c.width + x]) raster[static_cast<size_t>(y + c.y0) * width + x + c.x0] = 1;
  }
  return Mask::from_raster(width, height, raster);
}

}  // namespace sam3::label
