#include "pure/video/non_overlap.h"

#include <algorithm>

namespace sam3::pure::video {

void keep_highest_per_pixel(const std::vector<float*>& planes, std::size_t pixels) {
  if (planes.size() < 2) return;
  for (std::size_t p = 0; p < pixels; ++p) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < planes.size(); ++k)
      if (planes[k][p] > planes[best][p]) best = k;
    for (std::size_t k = 0; k < planes.size(); ++k)
      if (k != best) planes[k][p] = std::min(planes[k][p], kOverlapLoserLogit);
  }
}

}  // namespace sam3::pure::video
