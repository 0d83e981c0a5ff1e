// Map shards and tile records read back from disk: a damaged or hand-edited one is a clear
// error (a tile: done again), never an index read past a list or a crop outside the raster.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "geo/map_label.h"
#include "sam3/error.h"
#include "support/files.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json shard() {
  return {{"sam3_map_shard", 2},
          {"raster", "/x/map.tif"},
          {"size", {64, 48}},
          {"shard", 0},
          {"shards", 2},
          {"settings", "s"},
          {"categories", {"car", "tree"}},
          {"grid", {64, 48, 32, 4}},
          {"tiles_skipped", 0},
          {"area_km2", 0.5},
          {"extra", json::object()},
          {"instances", {{{"category", 1}, {"score", 0.5}, {"box", {0, 0, 2, 2}}, {"crop", {0, 0, 2, 2}}, {"counts", "04"}, {"tile", 1}}}}};
}

std::string read_error(const fs::path& file, const json& j) {
  std::ofstream(file) << j.dump();
  try {
    sam3::geo::read_map_shard(file);
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "accepted";
}

TEST(MapShard, ASoundShardReadsBack) {
  const auto dir = sam3::test::fresh_test_dir("sam3_map_shard");
  std::ofstream(dir / "s.json") << shard().dump();
  const auto s = sam3::geo::read_map_shard(dir / "s.json");
  ASSERT_EQ(s.result.instances.size(), 1u);
  EXPECT_EQ(s.result.tile_of_instance[0], 1);
  EXPECT_EQ(s.result.instances[0].mask.full_width, 64);
}

TEST(MapShard, ADamagedShardIsRefusedNamingWhatIsWrong) {
  const auto dir = sam3::test::fresh_test_dir("sam3_map_shard");
  const auto with = [](const char* key, const json& v) {
    json j = shard();
    j[key] = v;
    return j;
  };
  json short_crop = shard();
  short_crop["instances"][0]["crop"] = {0, 0};  // read past the list's end before
  EXPECT_NE(read_error(dir / "a.json", short_crop).find("crop"), std::string::npos);
  json outside = shard();
  outside["instances"][0]["crop"] = {63, 0, 2, 2};  // past the raster's right edge
  EXPECT_NE(read_error(dir / "b.json", outside).find("crop width"), std::string::npos);
  json far_tile = shard();
  far_tile["instances"][0]["tile"] = 4294967297ULL;  // narrowed to tile 1 before
  EXPECT_NE(read_error(dir / "c.json", far_tile).find("tile"), std::string::npos);
  EXPECT_NE(read_error(dir / "d.json", with("size", json::array({64}))).find("size"), std::string::npos);
  EXPECT_NE(read_error(dir / "e.json", with("shard", 2)).find("shard"), std::string::npos);  // shard 2 of 2
  EXPECT_NE(read_error(dir / "f.json", with("sam3_map_shard", "2")).find("another sam3 version"), std::string::npos);
  EXPECT_NE(read_error(dir / "g.json", with("grid", json::array({64, 40, 32, 4}))).find("grid"), std::string::npos);
}

TEST(MapTileStore, ADamagedTileIsDoneAgain) {
  const auto dir = sam3::test::fresh_test_dir("sam3_map_tiles");
  const sam3::geo::MapTileStore store(dir, "settings");
  sam3::geo::TileRecord record;
  std::ofstream(dir / "tile-0.json")
      << json{{"settings", "settings"},
              {"nodata", false},
              {"area_km2", 0.1},
              {"instances", {{{"category", 7}, {"score", 0.5}, {"box", {0, 0, 2, 2}}, {"crop", {0, 0, 2, 2}}, {"counts", "04"}}}}}
             .dump();
  EXPECT_FALSE(store.load(0, 64, 48, 2, &record)) << "category 7 of 2 was taken";
  // Found by shard_records_fuzz: a "settings" of another type threw out of load() (the run died).
  for (const json& settings : {json(0.1), json::array({"settings"}), json(nullptr)}) {
    std::ofstream(dir / "tile-1.json")
        << json{{"settings", settings}, {"nodata", true}, {"area_km2", 0}, {"instances", json::array()}}.dump();
    EXPECT_FALSE(store.load(1, 64, 48, 2, &record)) << "settings " << settings.dump();
  }
  std::ofstream(dir / "tile-2.json") << "[1, 2]";
  EXPECT_FALSE(store.load(2, 64, 48, 2, &record)) << "a tile record that is not an object";
}

}  // namespace
