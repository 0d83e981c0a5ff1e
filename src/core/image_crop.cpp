#include <algorithm>

#include "sam3/error.h"
#include "sam3/image.h"

namespace sam3 {

Image crop_image(const Image& image, const TileRect& r) {
  if (r.x0 < 0 || r.y0 < 0 || r.x1 > image.width || r.y1 > image.height || r.x1 <= r.x0 || r.y1 <= r.y0) {
    throw Error(ErrorCode::kInvalidArgument, "the window (" + std::to_string(r.x0) + ", " + std::to_string(r.y0) + ", " +
                                                 std::to_string(r.x1) + ", " + std::to_string(r.y1) + ") is not inside the " +
                                                 std::to_string(image.width) + "x" + std::to_string(image.height) + " image");
  }
  Image out{r.x1 - r.x0, r.y1 - r.y0, {}};
  out.rgb.resize(static_cast<size_t>(out.width) * out.height * 3);
  for (int y = 0; y < out.height; ++y) {
    std::copy_n(&image.rgb[(static_cast<size_t>(y + r.y0) * image.width + r.x0) * 3], static_cast<size_t>(out.width) * 3,
                &out.rgb[static_cast<size_t>(y) * out.width * 3]);
  }
  return out;
}

}  // namespace sam3
