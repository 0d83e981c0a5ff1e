// libFuzzer target: arbitrary bytes as the files `sam3 label` reads back to resume and to merge
// shards (the first byte picks which): an image's record (`items/<name>.json`), the folder's
// `config.json` or `inputs.json`, and with maps a map shard (`map-shard.json`) or a map tile's
// record. A damaged file must be a sam3::Error naming it (or, for a tile, "done again"); what is
// read must be safe to use: every mask crop inside its image and filled, every category and tile
// index in range. Never another exception, a crash, hang or sanitizer report.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "label/records.h"
#include "fuzz_files.h"
#include "sam3/error.h"
#ifdef SAM3_FUZZ_MAPS
#include "geo/map_label.h"
#endif

namespace {

namespace fs = std::filesystem;
using sam3::fuzz::write;

const fs::path& work_dir() { return sam3::fuzz::work_dir("sam3_records_fuzz_"); }

void check(const sam3::label::LabeledInstance& inst, int width, int height, size_t categories) {
  const auto& m = inst.mask;
  const bool inside = m.x0 >= 0 && m.y0 >= 0 && m.width >= 0 && m.height >= 0 && m.x0 + m.width <= width && m.y0 + m.height <= height &&
                      m.full_width == width && m.full_height == height;
  if (!inside || m.data.size() != static_cast<size_t>(m.width) * static_cast<size_t>(m.height) || inst.category < 0 ||
      static_cast<size_t>(inst.category) >= categories) {
    std::abort();
  }
}

constexpr const char* kConfig = R"({"hash":"h","categories":[{"name":"car"},{"name":"tree"}],"outputs":{"formats":1}})";

void label_folder(int which, const std::string& bytes) {
  const fs::path out = work_dir() / "label";
  fs::remove_all(out);
  write(out / "config.json", which == 1 ? bytes : kConfig);
  write(out / "inputs.json", which == 2 ? bytes : R"(["a.png"])");
  write(out / "items" / (sam3::label::record_key("a.png") + ".json"),
        which == 0 ? bytes
                   : R"({"name":"a.png","path":"/x/a.png","width":4,"height":3,"config":"h","instances":[{"category":1,)"
                     R"("score":0.5,"box":[0,0,2,2],"crop":[0,0,2,2],"counts":"04"}]})");
  try {
    const auto config = sam3::label::read_config(out);
    const auto names = sam3::label::read_input_names(out);
    const size_t categories = config["categories"].size();
    for (const auto& item : sam3::label::read_items(out, config["hash"].get<std::string>(), names, categories)) {
      for (const auto& inst : item.instances) check(inst, item.width, item.height, categories);
    }
    sam3::label::read_failures(out, names);
  } catch (const sam3::Error&) {
  }
}

#ifdef SAM3_FUZZ_MAPS
void map_files(int which, const std::string& bytes) {
  if (which == 3) {
    write(work_dir() / "map-shard.json", bytes);
    try {
      const auto shard = sam3::geo::read_map_shard(work_dir() / "map-shard.json");
      const auto& r = shard.result;
      if (r.tile_of_instance.size() != r.instances.size()) std::abort();
      for (size_t i = 0; i < r.instances.size(); ++i) {
        check(r.instances[i], r.grid.width(), r.grid.height(), shard.categories.size());
        if (r.tile_of_instance[i] < 0 || r.tile_of_instance[i] >= r.grid.size()) std::abort();
      }
    } catch (const sam3::Error&) {
    }
    return;
  }
  const sam3::geo::MapTileStore store(work_dir() / "tiles", "settings");
  write(work_dir() / "tiles" / "tile-0.json", bytes);
  sam3::geo::TileRecord record;
  if (store.load(0, 64, 48, 2, &record)) {
    for (const auto& inst : record.instances) check(inst, 64, 48, 2);
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
#ifdef SAM3_FUZZ_MAPS
  const int which = data[0] % 5;
  if (which >= 3) {
    map_files(which, bytes);
    return 0;
  }
#else
  const int which = data[0] % 3;
#endif
  label_folder(which, bytes);
  return 0;
}
