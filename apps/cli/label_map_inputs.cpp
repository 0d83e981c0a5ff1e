// The rasters of `sam3 label` on maps: files as given, and folders and list files read as the
// image path reads them. No GDAL, so a build without maps links it too.
#include <system_error>

#include "label_map.h"
#include "sam3/labeler.h"

namespace sam3::cli {

std::vector<std::filesystem::path> map_raster_inputs(const std::vector<std::string>& inputs, const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  std::vector<fs::path> rasters;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::path p = input;
    const bool list = fs::is_regular_file(p, ec) && (p.extension() == ".txt" || p.extension() == ".lst");
    const bool folder = fs::is_directory(p, ec);
    // A folder GDAL reads as one raster (Zarr, an ArcInfo grid) holds no image files: it stays
    // whole, for GDAL to open (or for Raster::open to say what to give instead).
    const auto found = list || folder ? collect_label_inputs({input}, out, /*allow_none=*/true) : std::vector<LabelInput>{};
    if (found.empty()) {
      rasters.push_back(p);
      continue;
    }
    for (const auto& in : found) rasters.push_back(in.path);
  }
  return rasters;
}

}  // namespace sam3::cli
