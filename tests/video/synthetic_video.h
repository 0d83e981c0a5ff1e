// A generated video for the video tracker's tests: coloured squares on grey that move, enter,
// leave and cross, with their true positions per frame. The generated SAM 3.1 bundle
// (tools/make_video_models.py) detects each colour of its palette as one object and tracks a
// slot by the colour its memory holds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sam3/image.h"
#include "sam3/video.h"

namespace sam3::test {

struct Square {
  const char* name;
  std::array<std::uint8_t, 3> rgb;
  int first, last;       // frames it is in the picture
  float x0, y0, vx, vy;  // top-left at its first frame, pixels per frame
  int side;
};

// red moves right across the frame; green enters from the right at frame 8 and crosses red's
// path; blue sits still and leaves (vanishes) after frame 11; yellow enters at frame 14.
inline std::vector<Square> scene() {
  return {{"red", {255, 0, 0}, 0, 29, 10, 40, 3.0f, 0.5f, 22},
          {"green", {0, 255, 0}, 8, 29, 130, 50, -3.5f, 0.0f, 20},
          {"blue", {0, 0, 255}, 0, 11, 110, 10, 0.0f, 0.0f, 18},
          {"yellow", {255, 255, 0}, 14, 29, 60, 90, 0.5f, -0.5f, 18}};
}

inline constexpr int kWidth = 160, kHeight = 120, kFrames = 30;

// The square's pixel rectangle on a frame (x0, y0, x1, y1, exclusive), if it is there.
inline std::optional<std::array<int, 4>> where(const Square& s, int frame) {
  if (frame < s.first || frame > s.last) return std::nullopt;
  const int x0 = static_cast<int>(s.x0 + s.vx * (frame - s.first)), y0 = static_cast<int>(s.y0 + s.vy * (frame - s.first));
  return std::array<int, 4>{x0, y0, x0 + s.side, y0 + s.side};
}

// Later squares are drawn over earlier ones.
inline VideoFrame frame_of(int index) {
  VideoFrame f;
  f.index = index;
  f.time_s = index / 10.0;
  f.image.width = kWidth;
  f.image.height = kHeight;
  f.image.rgb.assign(static_cast<size_t>(kWidth) * kHeight * 3, 128);
  for (const auto& s : scene()) {
    const auto r = where(s, index);
    if (!r) continue;
    for (int y = std::max(0, (*r)[1]); y < std::min(kHeight, (*r)[3]); ++y)
      for (int x = std::max(0, (*r)[0]); x < std::min(kWidth, (*r)[2]); ++x)
        for (int c = 0; c < 3; ++c) f.image.rgb[(static_cast<size_t>(y) * kWidth + x) * 3 + c] = s.rgb[c];
  }
  return f;
}

}  // namespace sam3::test
