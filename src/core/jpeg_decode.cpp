#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <memory>
#include <vector>
// jpeglib.h needs FILE and size_t declared first.
#include <jerror.h>
#include <jpeglib.h>

#include "core/codecs.h"
#include "sam3/error.h"

namespace sam3::core {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorManager*>(cinfo->err);
  e->pub.format_message(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

// Warnings that mean the pixels are damaged (cut-off data, corrupt entropy codes) stop the
// decode; harmless ones (an odd JFIF version, extra bytes between segments) are ignored.
void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  const int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE || code == JWRN_MUST_RESYNC) {
    on_error(cinfo);
  }
}

void silent(j_common_ptr) {}

}  // namespace

Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name, std::int64_t max_pixels) {
  // Everything longjmp may skip over lives behind this pointer, set before setjmp and never
  // changed after it (locals modified between setjmp and longjmp would be indeterminate).
  struct State {
    jpeg_decompress_struct cinfo{};
    ErrorManager err{};
    Image image;
    std::vector<std::uint8_t> row, app1;
  };
  const auto st = std::make_unique<State>();
  auto& cinfo = st->cinfo;
  cinfo.err = jpeg_std_error(&st->err.pub);
  st->err.pub.error_exit = on_error;
  st->err.pub.emit_message = on_message;
  st->err.pub.output_message = silent;
  jpeg_create_decompress(&cinfo);
  if (setjmp(st->err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw Error(ErrorCode::kImageCorrupt,
                name + ": JPEG data cannot be decoded (" + st->err.message + "); the file is corrupt or truncated");
  }
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);
  if (std::int64_t{cinfo.image_width} * cinfo.image_height > max_pixels) {
    const std::int64_t w = cinfo.image_width, h = cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    throw Error(ErrorCode::kImageTooLarge, too_large_message(name, w, h, max_pixels));
  }
  for (auto* m = cinfo.marker_list; m; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && st->app1.empty()) st->app1.assign(m->data, m->data + m->data_length);
  }
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  Image& image = st->image;
  image.width = static_cast<int>(cinfo.output_width);
  image.height = static_cast<int>(cinfo.output_height);
  image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
  st->row.resize(static_cast<size_t>(image.width) * static_cast<size_t>(cinfo.output_components));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW rows[1] = {st->row.data()};
    const auto y = cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, rows, 1);
    std::uint8_t* out = &image.rgb[static_cast<size_t>(y) * image.width * 3];
    const std::uint8_t* in = st->row.data();
    if (!cmyk) {
      std::copy(in, in + static_cast<std::ptrdiff_t>(image.width) * 3, out);
      continue;
    }
    // Adobe writes CMYK inverted (255 = no ink), as nearly every CMYK JPEG is.
    for (int x = 0; x < image.width; ++x) {
      const std::uint8_t* p = in + static_cast<size_t>(x) * 4;
      for (int c = 0; c < 3; ++c) out[x * 3 + c] = static_cast<std::uint8_t>(p[c] * p[3] / 255);
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return apply_orientation(std::move(image), exif_orientation(st->app1));
}

}  // namespace sam3::core
