// The map half of `sam3 label` in a build without maps (SAM3_MAPS=OFF, or GDAL not found at
// configure time): map formats and map shards are refused with how to turn maps on.
#include <sstream>

#include "label_map.h"
#include "sam3/error.h"

namespace sam3::cli {
namespace {

[[noreturn]] void maps_are_off() {
  throw Error(ErrorCode::kInvalidArgument,
              "this sam3 was built without maps (GDAL): gpkg, fgb and shp outputs and map shards need it; install "
              "libgdal-dev (scripts/setup.sh does) and build again with -DSAM3_MAPS=ON");
}

}  // namespace

bool asks_for_maps(const std::string& formats) {
  std::stringstream in(formats);
  for (std::string f; std::getline(in, f, ',');) {
    if (f == "gpkg" || f == "fgb" || f == "shp") return true;
  }
  return false;
}
std::vector<MapFormat> map_formats(const std::string&) { maps_are_off(); }
bool is_map_shard_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "map-shard.json", ec);  // MapLabeler's shard file
}
bool is_georeferenced(const std::filesystem::path&) { return false; }
bool maps_built() { return false; }
int run_map_label(const MapLabelJob&, const ModelSelection&, int, const std::atomic<bool>*) { maps_are_off(); }
int run_map_merge(const std::vector<std::string>&, const std::string&) { maps_are_off(); }

}  // namespace sam3::cli
