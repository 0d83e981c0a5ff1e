#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/image_header.h"
#include "sam3/error.h"
#include "sam3/image.h"

namespace sam3 {
namespace {

std::string too_large(const std::string& name, std::int64_t w, std::int64_t h, std::int64_t limit) {
  return name + ": image is " + std::to_string(w) + "x" + std::to_string(h) + " = " +
         std::to_string(w * h) + " pixels, over the limit of " + std::to_string(limit) +
         "; downscale it or raise the pixel limit (--max-pixels)";
}

}  // namespace

Image decode_image(std::span<const std::uint8_t> bytes, const std::string& name,
                   const ImageLoadOptions& options) {
  if (bytes.empty()) throw Error(ErrorCode::kImageUnreadable, name + ": file is empty");
  const ImageFormat format = sniff_format(bytes);
  if (format == ImageFormat::kUnknown || format == ImageFormat::kGif) {
    throw Error(ErrorCode::kImageUnsupported,
                name + ": " + (format == ImageFormat::kGif ? "GIF" : "unrecognised") +
                    " image format; use JPEG, PNG, WebP, BMP or TIFF");
  }
  if (auto size = read_header_size(bytes, format)) {
    if (size->width <= 0 || size->height <= 0) {
      throw Error(ErrorCode::kImageCorrupt, name + ": " + format_name(format) +
                                                " header has a zero image size; the file is corrupt");
    }
    if (size->width * size->height > options.max_pixels) {
      throw Error(ErrorCode::kImageTooLarge, too_large(name, size->width, size->height, options.max_pixels));
    }
  }
  cv::Mat bgr;
  try {
    // IMREAD_COLOR applies the EXIF orientation and gives 8-bit BGR for any bit depth/alpha.
    const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<std::uint8_t*>(bytes.data()));
    bgr = cv::imdecode(buffer, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    throw Error(ErrorCode::kImageCorrupt, name + ": " + format_name(format) + " data cannot be decoded (" +
                                              e.err + "); the file is corrupt or truncated");
  }
  if (bgr.empty()) {
    throw Error(ErrorCode::kImageCorrupt, name + ": " + format_name(format) +
                                              " data cannot be decoded; the file is corrupt or truncated");
  }
  if (std::int64_t{bgr.cols} * bgr.rows > options.max_pixels) {
    throw Error(ErrorCode::kImageTooLarge, too_large(name, bgr.cols, bgr.rows, options.max_pixels));
  }
  Image image;
  image.width = bgr.cols;
  image.height = bgr.rows;
  image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
  cv::Mat rgb(image.height, image.width, CV_8UC3, image.rgb.data());
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return image;
}

Image load_image(const std::filesystem::path& path, const ImageLoadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ErrorCode::kImageUnreadable, path.string() + ": is a directory, not an image file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorCode::kImageUnreadable,
                path.string() + ": cannot open image (" +
                    (std::filesystem::exists(path, ec) ? "permission denied" : "no such file") + ")");
  }
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_image(bytes, path.string(), options);
}

}  // namespace sam3
