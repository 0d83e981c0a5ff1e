#include <cstdio>
#include <opencv2/imgproc.hpp>

#include "core/codecs.h"
#include "sam3/error.h"
#include "sam3/export.h"

namespace sam3 {

std::string encode_mask_png(const Mask& mask) {
  std::vector<std::uint8_t> grey(static_cast<size_t>(mask.width()) * static_cast<size_t>(mask.height()), 0);
  mask.paint(grey, 255);
  return core::encode_png(grey.data(), mask.width(), mask.height(), 1, 8);
}

std::string encode_rgb_png(const Image& image) { return core::encode_png(image.rgb.data(), image.width, image.height, 3, 8); }

std::string encode_rgb_jpeg(const Image& image, int quality) {
  return core::encode_jpeg(image.rgb.data(), image.width, image.height, quality);
}

Image render_overlay(const Image& image, const std::vector<Instance>& instances, const std::string& label) {
  static const std::uint8_t kPalette[][3] = {{230, 25, 75},   {60, 180, 75},  {0, 130, 200},   {245, 130, 48},
                                             {145, 30, 180},  {70, 240, 240}, {240, 50, 230},  {210, 245, 60},
                                             {250, 190, 212}, {0, 128, 128},  {220, 190, 255}, {170, 110, 40}};
  Image out = image;
  cv::Mat canvas(out.height, out.width, CV_8UC3, out.rgb.data());
  const double scale = std::max(0.4, std::min(out.width, out.height) / 900.0);
  const int thickness = std::max(1, static_cast<int>(scale * 2));
  for (size_t i = instances.size(); i-- > 0;) {  // best instance drawn last, on top
    const auto* c = kPalette[i % std::size(kPalette)];
    const auto& m = instances[i].mask;
    const TileRect mb = m.bounds();
    for (int y = mb.y0; y < std::min(mb.y1, out.height); ++y) {
      const auto row = m.row(y);
      for (int x = mb.x0; x < std::min(mb.x1, out.width); ++x) {
        if (!row[static_cast<size_t>(x - mb.x0)]) continue;
        std::uint8_t* px = &out.rgb[(static_cast<size_t>(y) * out.width + x) * 3];
        for (int k = 0; k < 3; ++k) px[k] = static_cast<std::uint8_t>((px[k] + c[k]) / 2);
      }
    }
    const auto& b = instances[i].box;
    const cv::Scalar colour(c[0], c[1], c[2]);
    cv::rectangle(canvas, cv::Point(static_cast<int>(b.x0), static_cast<int>(b.y0)),
                  cv::Point(static_cast<int>(b.x1), static_cast<int>(b.y1)), colour, thickness);
    char text[256];
    std::snprintf(text, sizeof text, "%s %.2f", label.c_str(), instances[i].score);
    int baseline = 0;
    const auto size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale * 0.6, thickness, &baseline);
    const cv::Point origin(static_cast<int>(b.x0), std::max(size.height + 4, static_cast<int>(b.y0) - 4));
    cv::rectangle(canvas, origin + cv::Point(0, baseline), origin + cv::Point(size.width, -size.height - 4), colour, cv::FILLED);
    cv::putText(canvas, text, origin, cv::FONT_HERSHEY_SIMPLEX, scale * 0.6, cv::Scalar(255, 255, 255), thickness, cv::LINE_AA);
  }
  return out;
}

}  // namespace sam3
