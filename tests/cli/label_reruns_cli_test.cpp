// `sam3 label` reruns and merges that lose nothing and leave nothing stale: a merge takes every
// shard of one run or none, never shrinks a merged folder unasked; a rerun retires the outputs
// it no longer writes; a user's file in the way is refused before any image is labelled; YOLO's
// data.yaml names what sam3 wrote; a GeoTIFF asked for GeoJSON is labelled as a map.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/label_fixture.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sam3::test::kSam3;
using sam3::test::LabelCli;
using sam3::test::quote;
using sam3::test::read_file;
using sam3::test::run_command;

size_t coco_images(const fs::path& out) { return json::parse(read_file(out / "coco.json"))["images"].size(); }

size_t records_in(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".json";
  return n;
}

class LabelReruns : public LabelCli {
 protected:
  std::string merge(const std::vector<std::string>& shards, const std::string& out, const std::string& args = "") {
    std::string cmd = kSam3 + " label merge";
    for (const auto& s : shards) cmd += " " + quote((root_ / s).string());
    return cmd + " --out " + quote((root_ / out).string()) + args;
  }
  // Shards K/N of the images into folders `prefix`K.
  void shards(int n, const std::string& prefix, const std::string& inputs = "") {
    for (int k = 1; k <= n; ++k) {
      const auto r = run_command(label(inputs + " --shard " + std::to_string(k) + "/" + std::to_string(n), prefix + std::to_string(k)));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

TEST_F(LabelReruns, AMergeTakesEveryShardOfOneRunOrNone) {
  make_images(9);
  shards(3, "s");
  // One missing: the merge succeeded with fewer images.
  auto r = run_command(merge({"s1", "s3"}, "merged"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.err.find("shard 2/3 is missing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "merged" / "coco.json"));
  // Two N: shards of two runs.
  shards(2, "t");
  r = run_command(merge({"s1", "s2", "s3", "t1"}, "merged"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("is shard 1/2 and"), std::string::npos) << r.err;
  // One shard twice (a copy of its folder).
  fs::copy(root_ / "s1", root_ / "s1-copy", fs::copy_options::recursive);
  fs::remove(root_ / "s1-copy" / ".sam3-lock");
  r = run_command(merge({"s1", "s1-copy", "s2"}, "merged"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("shard 1/3 is given twice"), std::string::npos) << r.err;
  // Several missing are all named.
  shards(5, "u");
  r = run_command(merge({"u1", "u3", "u5"}, "merged"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("shards 2/5 and 4/5 are missing"), std::string::npos) << r.err;
  // All of them: as one run.
  r = run_command(merge({"s1", "s2", "s3"}, "merged"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(coco_images(root_ / "merged"), 9u);
}

TEST_F(LabelReruns, ShardsOfAnotherInputListOrWithoutARecordAreRefused) {
  make_images(6);
  ASSERT_EQ(run_command(label("--shard 1/2", "a1")).exit_code, 0);
  sam3::write_file_atomic(root_ / "images" / "late.png", sam3::encode_rgb_png(scene_.image));  // an image added between shards
  ASSERT_EQ(run_command(label("--shard 2/2", "a2")).exit_code, 0);
  auto r = run_command(merge({"a1", "a2"}, "merged"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("another list of inputs (7 images)"), std::string::npos) << r.err;
  // A folder of a sam3 that recorded no shard: which share it holds cannot be told.
  ASSERT_EQ(run_command(label("--shard 1/2", "a1")).exit_code, 0);
  fs::remove(root_ / "a1" / "shard.json");
  r = run_command(merge({"a1", "a2"}, "merged"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no shard record"), std::string::npos) << r.err;
  // Rerunning that shard (its finished images skipped) records it.
  r = run_command(label("--shard 1/2", "a1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(merge({"a1", "a2"}, "merged"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(coco_images(root_ / "merged"), 7u);
}

TEST_F(LabelReruns, AMergeNeverShrinksAFolderUnlessAsked) {
  make_images(8);
  shards(2, "big");
  ASSERT_EQ(run_command(merge({"big1", "big2"}, "merged")).exit_code, 0);
  ASSERT_EQ(coco_images(root_ / "merged"), 8u);
  // A complete set of shards of fewer images (two deleted), merged over it.
  fs::remove(root_ / "images" / "img101.png");
  fs::remove(root_ / "images" / "img102.png");
  shards(2, "small");
  auto r = run_command(merge({"small1", "small2"}, "merged"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.err.find("holds the labels of 2 images these shards do not have (img101.png, img102.png)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-fewer"), std::string::npos) << r.err;
  EXPECT_EQ(coco_images(root_ / "merged"), 8u) << "the merged folder shrank";
  r = run_command(merge({"small1", "small2"}, "merged", " --allow-fewer"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(coco_images(root_ / "merged"), 6u);
}

TEST_F(LabelReruns, ARerunWithFewerFormatsRetiresTheOthers) {
  make_images(2);
  ASSERT_EQ(run_command(label("--format coco,masks,geojson,yolo")).exit_code, 0);
  const auto out = root_ / "out";
  ASSERT_TRUE(fs::exists(out / "masks") && fs::exists(out / "geojson") && fs::exists(out / "yolo"));
  const auto r = run_command(label("--format coco"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "coco.json"));
  for (const char* stale : {"masks", "geojson", "yolo"}) EXPECT_FALSE(fs::exists(out / stale)) << stale << " of the earlier run stayed";
  const auto manifest = json::parse(read_file(out / ".sam3-outputs.json"));
  for (const auto& e : manifest["entries"]) EXPECT_NE(e, "masks");
  // With other prompts too: the new masks/ alone, of the new categories.
  ASSERT_EQ(run_command(label("--format masks -p white")).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "coco.json"));
  EXPECT_TRUE(fs::exists(out / "masks"));
}

TEST_F(LabelReruns, AUsersFileInTheWayIsRefusedBeforeAnyImageIsLabelled) {
  make_images(2);
  ASSERT_EQ(run_command(label("--format coco,masks,geojson")).exit_code, 0);
  const auto out = root_ / "out";
  std::ofstream(out / "masks" / "my_note.txt") << "mine";
  std::ofstream(out / "geojson" / "notes.txt") << "mine too";
  sam3::write_file_atomic(root_ / "images" / "new.png", sam3::encode_rgb_png(scene_.image));  // work for the rerun
  const size_t records = records_in(out / "items");
  const auto r = run_command(label("--format coco,masks,geojson"));
  EXPECT_EQ(r.exit_code, 6) << r.out;
  EXPECT_NE(r.err.find("my_note.txt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << "every file in the way is named at once: " << r.err;
  EXPECT_EQ(records_in(out / "items"), records) << "an image was labelled before the refusal";
  EXPECT_EQ(read_file(out / "masks" / "my_note.txt"), "mine");
}

TEST_F(LabelReruns, YoloDataYamlNamesTheImagesSam3Wrote) {
  make_images(3);
  ASSERT_EQ(run_command(label("--format yolo")).exit_code, 0);
  const auto yolo = root_ / "out" / "yolo";
  const auto yaml = read_file(yolo / "data.yaml");
  EXPECT_NE(yaml.find("path: '" + fs::absolute(yolo).lexically_normal().string() + "'"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("train: images\n"), std::string::npos) << yaml;
  ASSERT_TRUE(fs::is_directory(yolo / "images")) << "data.yaml names images/, which sam3 did not write";
  // As Ultralytics finds labels: the image's path with images/ turned into labels/, .txt.
  size_t images = 0;
  for (const auto& e : fs::directory_iterator(yolo / "images")) {
    ++images;
    EXPECT_TRUE(fs::is_symlink(e.path()));
    EXPECT_TRUE(fs::is_regular_file(e.path())) << "a dangling link " << e.path();
    EXPECT_TRUE(fs::exists(yolo / "labels" / e.path().filename().replace_extension(".txt"))) << e.path();
  }
  EXPECT_EQ(images, 3u);
  EXPECT_EQ(fs::read_symlink(yolo / "images" / "img101.png"), fs::absolute(root_ / "images" / "img101.png"));
}

// A little-endian GeoTIFF of an RGB image: pixel scale and tie point (2 m pixels) in UTM 33N.
std::string geotiff(const sam3::Image& im) {
  std::string b = "II*";
  b.push_back('\0');
  const auto put = [&](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  };
  const auto put_double = [&](double d) {
    std::uint64_t v;
    std::memcpy(&v, &d, 8);
    put(v, 8);
  };
  put(0, 4);  // the IFD's offset, set below
  const auto at = [&] { return static_cast<std::uint32_t>(b.size()); };
  const std::uint32_t pixels = at();
  b.append(reinterpret_cast<const char*>(im.rgb.data()), im.rgb.size());
  const std::uint32_t bits = at();
  put(8, 2), put(8, 2), put(8, 2);
  const std::uint32_t scale = at();
  put_double(2), put_double(2), put_double(0);
  const std::uint32_t tie = at();
  for (double v : {0.0, 0.0, 0.0, 500000.0, 4000000.0, 0.0}) put_double(v);
  const std::uint32_t keys = at();
  for (int v : {1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32633}) put(static_cast<std::uint32_t>(v), 2);
  const std::uint32_t ifd = at();
  for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<char>(ifd >> (8 * i));
  struct Entry {
    std::uint32_t tag, type, count, value;
  };
  const std::vector<Entry> entries = {{256, 4, 1, static_cast<std::uint32_t>(im.width)},
                                      {257, 4, 1, static_cast<std::uint32_t>(im.height)},
                                      {258, 3, 3, bits},
                                      {259, 3, 1, 1},
                                      {262, 3, 1, 2},
                                      {273, 4, 1, pixels},
                                      {277, 3, 1, 3},
                                      {278, 4, 1, static_cast<std::uint32_t>(im.height)},
                                      {279, 4, 1, static_cast<std::uint32_t>(im.rgb.size())},
                                      {284, 3, 1, 1},
                                      {33550, 12, 3, scale},
                                      {33922, 12, 6, tie},
                                      {34735, 3, 16, keys}};
  put(entries.size(), 2);
  for (const auto& e : entries) put(e.tag, 2), put(e.type, 2), put(e.count, 4), put(e.value, 4);
  put(0, 4);
  return b;
}

TEST_F(LabelReruns, AGeoTiffAskedForGeoJsonIsLabelledAsAMap) {
  fs::remove_all(root_ / "images");
  sam3::write_file_atomic(root_ / "maps" / "scene.tif", geotiff(scene_.image));
  const std::string base = kSam3 + " label " + quote((root_ / "maps" / "scene.tif").string()) + " --models " +
                           quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --out " + quote((root_ / "out").string());
  auto r = run_command(base + " --format geojson");
  if (r.err.find("built without maps") != std::string::npos) GTEST_SKIP() << "maps are off in this build";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out" / "geojson")) << "labelled as a photo: pixel coordinates, no CRS";
  const auto geo = json::parse(read_file(root_ / "out" / "labels.geojson"));
  ASSERT_FALSE(geo["features"].empty());
  json point = geo["features"][0]["geometry"]["coordinates"];  // Polygon or MultiPolygon
  while (point[0].is_array()) point = point[0];
  const double lon = point[0];
  EXPECT_NEAR(lon, 15.0, 0.1) << "WGS84 longitude of UTM 33N's central meridian";
  // With an image format too: refused before anything is labelled, saying why.
  r = run_command(base + " --format coco,geojson");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("scene.tif is a georeferenced raster"), std::string::npos) << r.err;
  // A plain image asked for GeoJSON is told what its coordinates are; the map run's outputs retire.
  sam3::write_file_atomic(root_ / "plain" / "photo.png", sam3::encode_rgb_png(scene_.image));
  r = run_command(kSam3 + " label " + quote((root_ / "plain").string()) + " --models " +
                  quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --format geojson --out " +
                  quote((root_ / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pixel coordinates (x right, y down)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no CRS"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(root_ / "out" / "geojson" / "photo.geojson"));
  EXPECT_FALSE(fs::exists(root_ / "out" / "labels.geojson")) << "the map run's output stayed beside the image run's";
}

}  // namespace
