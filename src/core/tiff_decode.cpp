// TIFF through libtiff directly (OpenCV's imgcodecs would bring GDAL and libcurl into every
// program that decodes an image): any bit depth, photometric and layout libtiff's RGBA reader
// knows, read from memory; libtiff's messages become the error, never lines on stderr.
#include <tiffio.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {
namespace {

struct MemoryFile {
  std::span<const std::uint8_t> bytes;
  toff_t at = 0;
  std::string message;  // libtiff's last error
};

tmsize_t read_fn(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemoryFile*>(h);
  if (n <= 0 || f->at >= f->bytes.size()) return 0;
  const auto k = std::min<toff_t>(static_cast<toff_t>(n), f->bytes.size() - f->at);
  std::memcpy(buf, f->bytes.data() + f->at, k);
  f->at += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t write_fn(thandle_t, void*, tmsize_t) { return 0; }
toff_t seek_fn(thandle_t h, toff_t off, int whence) {
  auto* f = static_cast<MemoryFile*>(h);
  const toff_t base = whence == SEEK_CUR ? f->at : whence == SEEK_END ? f->bytes.size() : 0;
  f->at = base + off;
  return f->at;
}
int close_fn(thandle_t) { return 0; }
toff_t size_fn(thandle_t h) { return static_cast<MemoryFile*>(h)->bytes.size(); }
int map_fn(thandle_t, void**, toff_t*) { return 0; }
void unmap_fn(thandle_t, void*, toff_t) {}

// Per-file handlers (libtiff 4.5): messages go to the file being read, not to stderr.
int on_error(TIFF*, void* user, const char*, const char* fmt, va_list ap) {
  char buf[256];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  auto* f = static_cast<MemoryFile*>(user);
  if (f->message.empty()) f->message = buf;
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

}  // namespace

Image decode_tiff(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  MemoryFile file{bytes, 0, {}};
  const auto corrupt = [&](const char* what) {
    return Error(ErrorCode::kImageCorrupt, name + ": TIFF data cannot be decoded (" +
                                               (file.message.empty() ? std::string(what) : file.message) +
                                               "); the file is corrupt or truncated");
  };
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, &file);
  TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, &file);
  TIFFOpenOptionsSetMaxSingleMemAlloc(options, tmsize_t{1} << 30);  // a damaged strip size cannot take the machine
  TIFF* tif = TIFFClientOpenExt(name.c_str(), "rm", &file, read_fn, write_fn, seek_fn, close_fn, size_fn, map_fn, unmap_fn, options);
  TIFFOpenOptionsFree(options);
  if (!tif) throw corrupt("bad header");
  struct Closer {
    TIFF* t;
    ~Closer() { TIFFClose(t); }
  } closer{tif};
  std::uint32_t w = 0, h = 0;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
  if (w == 0 || h == 0) throw corrupt("zero image size");
  if (std::int64_t{w} > max_pixels / h) throw Error(ErrorCode::kImageTooLarge, too_large_message(name, w, h, max_pixels));
  char why[1024] = "";
  if (!TIFFRGBAImageOK(tif, why)) {
    throw Error(ErrorCode::kImageUnsupported, name + ": this TIFF is not supported (" + why + "); convert it to PNG");
  }
  // Alpha is dropped with the colour kept, never composited: libtiff's RGBA reader multiplies
  // unassociated alpha into the colour (a fully transparent pixel turned black), so that alpha
  // is declared associated (stored as is) for this read; the file is not touched.
  std::uint16_t extra_count = 0;
  std::uint16_t* extra_kinds = nullptr;
  if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra_kinds) && extra_count > 0) {
    std::vector<std::uint16_t> kinds(extra_kinds, extra_kinds + extra_count);
    for (auto& k : kinds) k = k == EXTRASAMPLE_UNASSALPHA ? EXTRASAMPLE_ASSOCALPHA : k;
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, extra_count, kinds.data());
  }
  TIFFRGBAImage reader{};
  if (!TIFFRGBAImageBegin(&reader, tif, 0, why)) {
    throw Error(ErrorCode::kImageUnsupported, name + ": this TIFF is not supported (" + why + "); convert it to PNG");
  }
  struct ReaderEnd {
    TIFFRGBAImage* r;
    ~ReaderEnd() { TIFFRGBAImageEnd(r); }
  } reader_end{&reader};
  // 16-bit samples keep their high byte (v >> 8), as Pillow reads TIFFs and sam3 reads PNGs
  // (libtiff's own table rounds v / 257, one level apart at most).
  if (reader.Bitdepth16To8) {
    for (std::uint32_t v = 0; v < 65536; ++v) reader.Bitdepth16To8[v] = static_cast<std::uint8_t>(v >> 8);
  }
  reader.req_orientation = ORIENTATION_TOPLEFT;
  std::vector<std::uint32_t> rgba(static_cast<size_t>(w) * h);
  if (!TIFFRGBAImageGet(&reader, rgba.data(), w, h)) throw corrupt("bad data");
  Image image;
  image.width = static_cast<int>(w);
  image.height = static_cast<int>(h);
  image.rgb.resize(rgba.size() * 3);
  for (size_t i = 0; i < rgba.size(); ++i) {
    image.rgb[i * 3] = static_cast<std::uint8_t>(TIFFGetR(rgba[i]));
    image.rgb[i * 3 + 1] = static_cast<std::uint8_t>(TIFFGetG(rgba[i]));
    image.rgb[i * 3 + 2] = static_cast<std::uint8_t>(TIFFGetB(rgba[i]));
  }
  return image;
}

}  // namespace sam3::core
