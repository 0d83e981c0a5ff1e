#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/codecs.h"
#include "core/image_header.h"
#include "sam3/error.h"
#include "sam3/image.h"

namespace sam3 {
std::string core::too_large_message(const std::string& name, std::int64_t w, std::int64_t h, std::int64_t limit) {
  char pixels[32];  // exact in long double's 64-bit mantissa, where w * h overflows int64
  std::snprintf(pixels, sizeof pixels, "%.0Lf", static_cast<long double>(w) * static_cast<long double>(h));
  return name + ": image is " + std::to_string(w) + "x" + std::to_string(h) + " = " + pixels + " pixels, over the limit of " +
         std::to_string(limit) + "; downscale it or raise the pixel limit (--max-pixels)";
}

Image decode_image(std::span<const std::uint8_t> bytes, const std::string& name, const ImageLoadOptions& options) {
  if (bytes.empty()) throw Error(ErrorCode::kImageUnreadable, name + ": file is empty");
  const core::ImageFormat format = core::sniff_format(bytes);
  if (format == core::ImageFormat::kUnknown || format == core::ImageFormat::kGif || format == core::ImageFormat::kBigTiff) {
    throw Error(ErrorCode::kImageUnsupported, name + ": " +
                                                  (format == core::ImageFormat::kUnknown ? "unrecognised" : core::format_name(format)) +
                                                  " image format; use JPEG, PNG, WebP, BMP or TIFF");
  }
  if (auto problem = core::structure_problem(bytes, format)) {
    throw Error(problem->find("not supported") != std::string::npos ? ErrorCode::kImageUnsupported : ErrorCode::kImageCorrupt,
                name + ": " + *problem);
  }
  if (auto size = core::read_header_size(bytes, format)) {
    if (size->width <= 0 || size->height <= 0) {
      throw Error(ErrorCode::kImageCorrupt, name + ": " + core::format_name(format) + " header has a zero image size; the file is corrupt");
    }
    if (size->width > options.max_pixels / size->height) {  // width * height could overflow
      throw Error(ErrorCode::kImageTooLarge, core::too_large_message(name, size->width, size->height, options.max_pixels));
    }
  }
  if (format == core::ImageFormat::kJpeg) return core::decode_jpeg(bytes, name, options.max_pixels);
  if (format == core::ImageFormat::kPng) return core::decode_png(bytes, name, options.max_pixels);
  if (format == core::ImageFormat::kWebp) return core::decode_webp(bytes, name, options.max_pixels);
  if (format == core::ImageFormat::kBmp) return core::decode_bmp(bytes, name, options.max_pixels);
  return core::decode_tiff(bytes, name, options.max_pixels);
}

std::vector<std::uint8_t> read_image_file(const std::filesystem::path& path, const ImageLoadOptions& options) {
  const auto fail = [&](const std::string& why) { return Error(ErrorCode::kImageUnreadable, path.string() + ": " + why); };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the open file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw fail("cannot open image (no such file)");
    if (err == EACCES) throw fail("cannot open image (permission denied)");
    if (err == ELOOP) throw fail("cannot open image (a loop of symbolic links)");
    throw fail(std::string("cannot open image (") + std::strerror(err) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail(std::string("cannot read (") + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw fail("is a directory, not an image file");
  if (!S_ISREG(st.st_mode)) throw fail("is not a regular file (a device, FIFO or socket); give an image file");
  if (st.st_size > options.max_file_bytes) {
    throw Error(ErrorCode::kImageTooLarge, path.string() + ": file is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                                               std::to_string(options.max_file_bytes));
  }
  // Files under /proc report size 0 and can still hold data: read up to the cap in any case
  // (one byte past it tells a file of exactly the cap from a larger one).
  const auto cap = static_cast<size_t>(options.max_file_bytes) + 1;
  std::vector<std::uint8_t> bytes(std::min(static_cast<size_t>(st.st_size) + 1, cap));
  size_t used = 0;
  for (;;) {
    if (used == bytes.size()) {
      if (used >= cap) {
        throw Error(ErrorCode::kImageTooLarge,
                    path.string() + ": file is over the limit of " + std::to_string(options.max_file_bytes) + " bytes");
      }
      bytes.resize(std::min(std::max<size_t>(used * 2, 65536), cap));
    }
    const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::string("cannot read (") + std::strerror(errno) + ")");
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  bytes.resize(used);
  return bytes;
}

Image load_image(const std::filesystem::path& path, const ImageLoadOptions& options) {
  return decode_image(read_image_file(path, options), path.string(), options);
}

}  // namespace sam3
