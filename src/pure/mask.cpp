// sam3::Mask (sam3/types.h): an image's size and the bytes of its pixels' bounds only.
#include <algorithm>
#include <string>

#include "sam3/error.h"
#include "sam3/types.h"

namespace sam3 {
namespace {

std::string size_text(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

void check_sides(int width, int height) {
  if (width < 0 || height < 0) {
    throw Error(ErrorCode::kInvalidArgument, "a mask's image cannot be " + size_text(width, height) + ": sides are 0 or more");
  }
}

}  // namespace

Mask::Mask(int width, int height) : width_(width), height_(height) { check_sides(width, height); }

Mask Mask::from_raster(int width, int height, std::span<const std::uint8_t> raster) {
  check_sides(width, height);
  if (raster.size() != static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height)) {
    throw Error(ErrorCode::kInvalidArgument,
                "a raster of " + std::to_string(raster.size()) + " bytes is no mask of a " + size_text(width, height) + " image");
  }
  return from_window(width, height, {0, 0, width, height}, raster);
}

Mask Mask::from_window(int width, int height, TileRect window, std::span<const std::uint8_t> bytes) {
  Mask m(width, height);
  if (window.x0 < 0 || window.y0 < 0 || window.x1 < window.x0 || window.y1 < window.y0 || window.x1 > width || window.y1 > height) {
    throw Error(ErrorCode::kInvalidArgument, "the window [" + std::to_string(window.x0) + ", " + std::to_string(window.y0) + ", " +
                                                 std::to_string(window.x1) + ", " + std::to_string(window.y1) + ") is not inside the " +
                                                 size_text(width, height) + " image of its mask");
  }
  const int ww = window.x1 - window.x0, wh = window.y1 - window.y0;
  if (bytes.size() != static_cast<std::uint64_t>(ww) * static_cast<std::uint64_t>(wh)) {
    throw Error(ErrorCode::kInvalidArgument, std::to_string(bytes.size()) + " bytes are no " + size_text(ww, wh) + " window of a mask");
  }
  // The window's pixels' own bounds, then their rows copied as 0 or 1.
  int x0 = ww, y0 = wh, x1 = -1, y1 = -1;
  for (int y = 0; y < wh; ++y) {
    const std::uint8_t* r = bytes.data() + static_cast<size_t>(y) * ww;
    const auto first = std::find_if(r, r + ww, [](std::uint8_t v) { return v != 0; });
    if (first == r + ww) continue;
    const auto last =
        std::find_if(std::make_reverse_iterator(r + ww), std::make_reverse_iterator(r), [](std::uint8_t v) { return v != 0; });
    x0 = std::min(x0, static_cast<int>(first - r));
    x1 = std::max(x1, static_cast<int>(last.base() - r) - 1);
    y0 = std::min(y0, y);
    y1 = y;
  }
  if (x1 < 0) return m;
  m.bounds_ = {window.x0 + x0, window.y0 + y0, window.x0 + x1 + 1, window.y0 + y1 + 1};
  const int bw = x1 + 1 - x0;
  m.bits_.resize(static_cast<size_t>(bw) * static_cast<size_t>(y1 + 1 - y0));
  for (int y = y0; y <= y1; ++y) {
    const std::uint8_t* r = bytes.data() + static_cast<size_t>(y) * ww + x0;
    std::uint8_t* d = m.bits_.data() + static_cast<size_t>(y - y0) * bw;
    for (int x = 0; x < bw; ++x) {
      d[x] = r[x] ? 1 : 0;
      m.area_ += d[x];
    }
  }
  return m;
}

bool Mask::at(int x, int y) const noexcept {
  if (x < bounds_.x0 || y < bounds_.y0 || x >= bounds_.x1 || y >= bounds_.y1) return false;
  return bits_[static_cast<size_t>(y - bounds_.y0) * static_cast<size_t>(bounds_.x1 - bounds_.x0) + static_cast<size_t>(x - bounds_.x0)] !=
         0;
}

std::span<const std::uint8_t> Mask::row(int y) const noexcept {
  if (y < bounds_.y0 || y >= bounds_.y1) return {};
  const size_t w = static_cast<size_t>(bounds_.x1 - bounds_.x0);
  return {bits_.data() + static_cast<size_t>(y - bounds_.y0) * w, w};
}

std::vector<std::uint8_t> Mask::to_raster() const {
  std::vector<std::uint8_t> raster(static_cast<size_t>(width_) * static_cast<size_t>(height_), 0);
  paint(raster, 1);
  return raster;
}

void Mask::paint(std::span<std::uint8_t> raster, std::uint8_t value) const {
  if (raster.size() != static_cast<std::uint64_t>(width_) * static_cast<std::uint64_t>(height_)) {
    throw Error(ErrorCode::kInvalidArgument, "a raster of " + std::to_string(raster.size()) + " bytes is not the size of this mask's " +
                                                 size_text(width_, height_) + " image");
  }
  for (int y = bounds_.y0; y < bounds_.y1; ++y) {
    const auto r = row(y);
    std::uint8_t* d = raster.data() + static_cast<size_t>(y) * static_cast<size_t>(width_) + bounds_.x0;
    for (size_t x = 0; x < r.size(); ++x) {
      if (r[x]) d[x] = value;
    }
  }
}

}  // namespace sam3
