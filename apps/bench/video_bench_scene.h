// The frames sam3-bench-video times the tracker on: `objects` squares of distinct colours on
// grey, each drifting in a small circle so that every frame differs. The colours are those the
// generated SAM 3.1 bundle's detector finds (tools/make_video_models.py's PALETTE, in its order):
// the 26 of channels 0, 128, 255 without the grey, then the 8 of channels 64, 191.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sam3/video.h"

namespace sam3::bench {

inline std::vector<std::array<std::uint8_t, 3>> video_palette() {
  std::vector<std::array<std::uint8_t, 3>> out;
  const std::uint8_t grid[] = {0, 128, 255}, centres[] = {64, 191};
  for (auto r : grid)
    for (auto g : grid)
      for (auto b : grid)
        if (!(r == 128 && g == 128 && b == 128)) out.push_back({r, g, b});
  for (auto r : centres)
    for (auto g : centres)
      for (auto b : centres) out.push_back({r, g, b});
  return out;
}

// Squares of side width/16 on a grid of 8 columns (rows 2 sides apart: 6 rows fit a 4:3
// frame, so up to 48 places; the palette limits the count). Square k has colour k.
inline VideoFrame video_bench_frame(std::int64_t index, int objects, int width, int height) {
  VideoFrame f;
  f.index = index;
  f.time_s = index / 25.0;
  f.image = {width, height, std::vector<std::uint8_t>(static_cast<size_t>(width) * height * 3, 128)};
  static const auto colours = video_palette();
  const int columns = 8, side = width / (columns * 2);
  for (int k = 0; k < objects; ++k) {
    const int cx = (k % columns) * 2 * side + side / 2 + static_cast<int>(side / 3 * std::cos(index * 0.2 + k));
    const int cy = (k / columns) * 2 * side + side / 2 + static_cast<int>(side / 3 * std::sin(index * 0.2 + k));
    for (int y = std::max(0, cy); y < std::min(height, cy + side); ++y)
      for (int x = std::max(0, cx); x < std::min(width, cx + side); ++x)
        for (int c = 0; c < 3; ++c)
          f.image.rgb[(static_cast<size_t>(y) * width + x) * 3 + c] = colours[static_cast<size_t>(k) % colours.size()][c];
  }
  return f;
}

// How many squares fit a frame of that size (and the palette).
inline int video_bench_capacity(int width, int height) {
  const int side = width / 16;  // a row's squares reach down to its top + side/2 + side/3 + side
  const int rows = side > 0 && height >= side * 11 / 6 ? (height - side * 11 / 6) / (2 * side) + 1 : 0;
  return std::min(static_cast<int>(video_palette().size()), 8 * rows);
}

}  // namespace sam3::bench
