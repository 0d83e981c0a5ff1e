#include "pure/video/mask_prompt.h"

#include <cmath>

#include "predictor/postprocess.h"

namespace sam3::pure::video {

std::vector<float> sine_positions(const std::vector<float>& positions, int channels) {
  const int half = channels / 2;
  std::vector<float> out(positions.size() * channels);
  for (size_t n = 0; n < positions.size(); ++n) {
    for (int i = 0; i < half; ++i) {
      const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(i) / half);
      out[n * channels + i] = std::sin(positions[n] * freq);
      out[n * channels + half + i] = std::cos(positions[n] * freq);
    }
  }
  return out;
}

std::vector<float> mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height, const std::vector<float>& weight, float bias,
                               int side) {
  const int ow = (width + 3) / 4, oh = (height + 3) / 4;  // zero-padded to whole 4x4 blocks
  std::vector<float> small(static_cast<size_t>(ow) * oh);
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      float acc = bias;
      for (int dy = 0; dy < 4; ++dy) {
        for (int dx = 0; dx < 4; ++dx) {
          const int sy = y * 4 + dy, sx = x * 4 + dx;
          if (sy < height && sx < width && mask[static_cast<size_t>(sy) * width + sx]) acc += weight[dy * 4 + dx];
        }
      }
      small[static_cast<size_t>(y) * ow + x] = acc;
    }
  }
  std::vector<float> out(static_cast<size_t>(side) * side);
  predictor::resize_bilinear(small.data(), oh, ow, side, side, out.data());
  return out;
}

}  // namespace sam3::pure::video
