// Synthetic scenes with known geometry for the end-to-end tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "sam3/image.h"
#include "sam3/types.h"

namespace sam3::test {

struct Rect {
  int x0, y0, x1, y1;  // pixel bounds, x1/y1 exclusive
  Box box() const { return {float(x0), float(y0), float(x1), float(y1)}; }
  std::int64_t area() const { return std::int64_t{x1 - x0} * (y1 - y0); }
};

inline void fill(Image& image, const Rect& r, std::uint8_t red, std::uint8_t green, std::uint8_t blue) {
  for (int y = r.y0; y < r.y1; ++y) {
    for (int x = r.x0; x < r.x1; ++x) {
      std::uint8_t* p = &image.rgb[(static_cast<size_t>(y) * image.width + x) * 3];
      p[0] = red, p[1] = green, p[2] = blue;
    }
  }
}

// The image with every pixel repeated s x s times (a bigger image with the same objects).
inline Image upscale(const Image& in, int s) {
  Image out{in.width * s, in.height * s, std::vector<std::uint8_t>(static_cast<size_t>(in.width) * in.height * 3 * s * s)};
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x)
      for (int c = 0; c < 3; ++c)
        out.rgb[(static_cast<size_t>(y) * out.width + x) * 3 + c] = in.rgb[(static_cast<size_t>(y / s) * in.width + x / s) * 3 + c];
  return out;
}

// Each object sits inside one quadrant (the test models give one query per quadrant).
struct Scene {
  Image image;
  Rect red_big, magenta, red_small, blue;
};

// Landscape 400x240 or, transposed, portrait 240x400.
inline Scene make_scene(bool portrait) {
  Scene s;
  const int w = portrait ? 240 : 400, h = portrait ? 400 : 240;
  s.image = {w, h, std::vector<std::uint8_t>(static_cast<size_t>(w) * h * 3, 0)};
  auto place = [&](Rect r) { return portrait ? Rect{r.y0, r.x0, r.y1, r.x1} : r; };
  s.red_big = place({40, 20, 160, 100});
  s.magenta = place({260, 20, 360, 90});
  s.red_small = place({60, 160, 90, 190});
  s.blue = place({240, 140, 380, 220});
  fill(s.image, s.red_big, 255, 0, 0);
  fill(s.image, s.magenta, 255, 0, 255);
  fill(s.image, s.red_small, 255, 0, 0);
  fill(s.image, s.blue, 0, 0, 255);
  return s;
}

// For the generated interactive model (tools/make_tracker_model.py): 640x480, black, two red
// squares and a blue bar. One click gives the clicked colour within 250 model pixels of it:
// exactly the clicked square (the other one is farther away).
struct ClickScene {
  Image image;
  Rect red_left, red_right, blue;
};

inline ClickScene make_click_scene() {
  ClickScene s;
  s.image = {640, 480, std::vector<std::uint8_t>(640u * 480u * 3u, 0)};
  s.red_left = {100, 100, 220, 220};
  s.red_right = {400, 100, 520, 220};
  s.blue = {200, 300, 500, 420};
  fill(s.image, s.red_left, 255, 0, 0);
  fill(s.image, s.red_right, 255, 0, 0);
  fill(s.image, s.blue, 0, 0, 255);
  return s;
}

// For "segment everything" on the generated interactive model: three small squares of three
// colours on black, each small enough for one click inside it to give all of it.
struct EverythingScene {
  Image image;
  Rect red, green, blue;
};

inline EverythingScene make_everything_scene() {
  EverythingScene s;
  s.image = {512, 384, std::vector<std::uint8_t>(512u * 384u * 3u, 0)};
  s.red = {60, 60, 120, 120};
  s.green = {300, 80, 360, 140};
  s.blue = {180, 240, 240, 300};
  fill(s.image, s.red, 255, 0, 0);
  fill(s.image, s.green, 0, 255, 0);
  fill(s.image, s.blue, 0, 0, 255);
  return s;
}

inline double iou_with_rect(const Mask& m, const Rect& r) {
  std::int64_t inter = 0, uni = 0;
  for (int y = 0; y < m.height(); ++y) {
    for (int x = 0; x < m.width(); ++x) {
      const bool a = m.at(x, y);
      const bool b = x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
      inter += a && b;
      uni += a || b;
    }
  }
  return uni ? double(inter) / double(uni) : 0.0;
}

#ifdef SAM3_TEST_MODELS_DIR  // defined for the tests that need the generated models (sam3_test NEEDS_MODELS)
inline std::filesystem::path test_models_dir() { return SAM3_TEST_MODELS_DIR; }
#endif

}  // namespace sam3::test
