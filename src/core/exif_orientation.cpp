#include <opencv2/core.hpp>

#include "core/codecs.h"

namespace sam3::core {

int exif_orientation(std::span<const std::uint8_t> a) {
  // "Exif\0\0", then a TIFF header and IFD0; tag 0x0112 (SHORT) is the orientation.
  if (a.size() < 14 || std::string_view(reinterpret_cast<const char*>(a.data()), 6) != std::string_view("Exif\0\0", 6)) return 1;
  const std::span<const std::uint8_t> t = a.subspan(6);
  const bool le = t[0] == 'I';
  const auto u16 = [&](size_t at) -> unsigned { return le ? t[at] | (t[at + 1] << 8) : (t[at] << 8) | t[at + 1]; };
  const auto u32 = [&](size_t at) -> std::uint64_t {
    return le ? (t[at] | (t[at + 1] << 8) | (t[at + 2] << 16) | (std::uint64_t{t[at + 3]} << 24))
              : ((std::uint64_t{t[at]} << 24) | (t[at + 1] << 16) | (t[at + 2] << 8) | t[at + 3]);
  };
  const std::uint64_t ifd = u32(4);
  if (ifd > t.size() || t.size() - ifd < 2) return 1;
  const unsigned count = u16(ifd);
  for (unsigned i = 0; i < count; ++i) {
    const std::uint64_t at = ifd + 2 + std::uint64_t{i} * 12;
    if (at > t.size() || t.size() - at < 12) break;
    if (u16(at) == 0x0112 && u16(at + 2) == 3) {
      const unsigned o = u16(at + 8);
      return o >= 1 && o <= 8 ? static_cast<int>(o) : 1;
    }
  }
  return 1;
}

Image apply_orientation(Image image, int o) {
  if (o <= 1 || o > 8) return image;
  const cv::Mat in(image.height, image.width, CV_8UC3, image.rgb.data());
  cv::Mat out;
  switch (o) {
    case 2:
      cv::flip(in, out, 1);
      break;  // mirrored
    case 3:
      cv::rotate(in, out, cv::ROTATE_180);
      break;
    case 4:
      cv::flip(in, out, 0);
      break;  // mirrored vertically
    case 5:
      cv::transpose(in, out);
      break;  // mirrored, then 270
    case 6:
      cv::rotate(in, out, cv::ROTATE_90_CLOCKWISE);
      break;
    case 7:
      cv::transpose(in, out), cv::rotate(out, out, cv::ROTATE_180);
      break;  // mirrored, then 90
    case 8:
      cv::rotate(in, out, cv::ROTATE_90_COUNTERCLOCKWISE);
      break;
  }
  Image turned{out.cols, out.rows, std::vector<std::uint8_t>(out.data, out.data + out.total() * 3)};
  return turned;
}

}  // namespace sam3::core
