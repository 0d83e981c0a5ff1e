// `sam3 label` as a user runs it: outputs decoded independently of the writers, resume after
// a killed run, Ctrl-C, a corrupt file, shards merged equal to one run, world files.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/label_fixture.h"
#include "sam3/export.h"
#include "sam3/image.h"
#include "sam3/polygons.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/server_process.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sam3::test::kSam3;
using sam3::test::LabelCli;
using sam3::test::quote;
using sam3::test::read_file;
using sam3::test::run_command;

TEST_F(LabelCli, ExportsDecodeBackToTheMasks) {
  make_images(2);
  std::ofstream(root_ / "images" / "map.pgw") << "2.0\n0.0\n0.0\n-2.0\n1000.0\n5000.0\n";  // world file for map.png
  sam3::write_file_atomic(root_ / "images" / "map.png", sam3::encode_rgb_png(scene_.image));
  const auto r = run_command(label("--format coco,yolo,masks,geojson --semantic"));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const auto coco = json::parse(read_file(root_ / "out" / "coco.json"));
  ASSERT_EQ(coco["images"].size(), 3u);
  EXPECT_EQ(coco["categories"][0]["name"], "red");
  EXPECT_EQ(coco["categories"][1]["id"], 2);
  int red = 0;
  for (const auto& a : coco["annotations"]) {
    const auto& seg = a["segmentation"];
    const sam3::Mask m = sam3::rle_decode(seg["counts"], seg["size"][0], seg["size"][1]);
    EXPECT_EQ(a["area"], m.area()) << "COCO area equals the decoded RLE";
    if (a["image_id"] == 1 && a["category_id"] == 1 && a["score"] > 0.95) {
      EXPECT_GT(sam3::test::iou_with_rect(m, scene_.red_big), 0.85);
      ++red;
    }
    const auto& b = a["bbox"];
    EXPECT_GE(b[0].get<double>(), 0);
    EXPECT_LE(b[0].get<double>() + b[2].get<double>(), 400.01);
  }
  EXPECT_EQ(red, 1);
  EXPECT_EQ(coco["annotations"].size(), 9u) << "3 images x (2 red + 1 blue)";

  // YOLO: class ids in range, coordinates normalized, even counts.
  const auto yolo = read_file(root_ / "out" / "yolo" / "labels" / "sub__img100.txt");
  std::istringstream lines(yolo);
  int lines_seen = 0;
  for (std::string line; std::getline(lines, line); ++lines_seen) {
    std::istringstream fields(line);
    int cls;
    fields >> cls;
    EXPECT_TRUE(cls == 0 || cls == 1);
    std::vector<double> v;
    for (double x; fields >> x;) v.push_back(x);
    EXPECT_EQ(v.size() % 2, 0u);
    EXPECT_GE(v.size(), 6u);
    for (double x : v) EXPECT_TRUE(x >= 0 && x <= 1) << line;
  }
  EXPECT_EQ(lines_seen, 3);
  EXPECT_NE(read_file(root_ / "out" / "yolo" / "data.yaml").find("0: 'red'"), std::string::npos);

  // Masks: instance ids and class ids where the objects are.
  const auto classes = sam3::load_image(root_ / "out" / "masks" / "map_classes.png");
  EXPECT_EQ(classes.rgb[(static_cast<size_t>(60) * 400 + 100) * 3], 1) << "red is class 1";
  EXPECT_EQ(classes.rgb[(static_cast<size_t>(180) * 400 + 300) * 3], 2) << "blue is class 2";
  EXPECT_EQ(classes.rgb[(static_cast<size_t>(5) * 400 + 5) * 3], 0);
  EXPECT_TRUE(fs::exists(root_ / "out" / "masks" / "map_instances.png"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "masks" / "map_red.png")) << "semantic mask";

  // GeoJSON: polygon area close to the mask area; world file maps pixels to map units.
  const auto geo = json::parse(read_file(root_ / "out" / "geojson" / "map.geojson"));
  EXPECT_EQ(geo["properties"]["coordinates"], "map, from the world file map.pgw; no CRS");
  const auto& feature = geo["features"][0];
  EXPECT_EQ(feature["properties"]["category"], "red");
  // Always MultiPolygon, as the maps' outputs: one geometry type a layer (GIS tools, GDAL's
  // GeoJSON to GeoPackage or Shapefile); an instance of one part was a Polygon.
  for (const auto& f : geo["features"]) EXPECT_EQ(f["geometry"]["type"], "MultiPolygon");
  sam3::Ring ring;
  for (const auto& p : feature["geometry"]["coordinates"][0][0]) {
    ring.push_back({static_cast<float>((p[0].get<double>() - 1000.0) / 2.0), static_cast<float>((5000.0 - p[1].get<double>()) / 2.0)});
  }
  const double mask_area = feature["properties"]["area_px"];
  EXPECT_NEAR(sam3::ring_area(ring), mask_area, mask_area * 0.1) << "polygon area within 10% of the mask area";
  const auto pixel_geo = json::parse(read_file(root_ / "out" / "geojson" / "img101.geojson"));
  EXPECT_EQ(pixel_geo["properties"]["coordinates"], "pixel (x right, y down); no CRS");
}

TEST_F(LabelCli, PolygonsInCoco) {
  make_images(1);
  ASSERT_EQ(run_command(label("--polygons")).exit_code, 0);
  const auto coco = json::parse(read_file(root_ / "out" / "coco.json"));
  for (const auto& a : coco["annotations"]) {
    ASSERT_TRUE(a["segmentation"].is_array());
    sam3::Ring ring;
    const auto& flat = a["segmentation"][0];
    for (size_t i = 0; i + 1 < flat.size(); i += 2) ring.push_back({flat[i].get<float>(), flat[i + 1].get<float>()});
    EXPECT_NEAR(sam3::ring_area(ring), a["area"].get<double>(), a["area"].get<double>() * 0.15);
  }
}

// A new user's trial: the progress line said "ETA 0:00" before any image was labeled, and a
// prompt over SAM3's 32 tokens was cut without a word.
TEST_F(LabelCli, ProgressShowsNoEtaBeforeAnImageIsDoneAndACutPromptIsToldOnce) {
  make_images(3);
  std::string text = "red";
  for (int i = 0; i < 39; ++i) text += " red";  // 42 tokens
  const auto r = run_command(label("-p " + quote(text)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sam3 label: 0/3 images, 0.00 img/s, ETA --\n"), std::string::npos) << r.err;
  const std::string warning = "prompt \"" + text + "\" has 42 tokens, more than SAM3's limit of 32";
  const auto at = r.err.find(warning);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, at + 1), std::string::npos) << "told once for the 3 images: " << r.err;
}

TEST_F(LabelCli, CorruptFileIsListedAndTheRestIsLabeled) {
  make_images(2);
  std::ofstream(root_ / "images" / "broken.jpg") << "\xFF\xD8\xFF\xE0 not really";
  const auto r = run_command(label(""));
  EXPECT_EQ(r.exit_code, 1) << "some failed";
  EXPECT_NE(r.out.find("2 labeled"), std::string::npos) << r.out;
  const auto failures = json::parse(read_file(root_ / "out" / "failures.json"));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["name"], "broken.jpg");
  EXPECT_EQ(failures[0]["code"], "image_corrupt");
  EXPECT_EQ(json::parse(read_file(root_ / "out" / "coco.json"))["images"].size(), 2u);
}

TEST_F(LabelCli, KilledRunResumesAndEndsEqualToAnUninterruptedRun) {
  make_images(24, 4);  // 1600x960 each: slow enough to kill mid-way
  const auto reference = run_command(label("", "reference"));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  sam3::test::ServerProcess run({"/bin/sh", "-c", "exec " + label("")}, /*read_url=*/false);
  for (int i = 0; i < 400; ++i) {
    std::error_code ec;
    int items = 0;
    for (const auto& e : fs::directory_iterator(root_ / "out" / "items", ec)) items += e.path().extension() == ".json";
    if (items >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(run.stop(SIGKILL), -1) << "killed mid-run, not finished";
  for (const auto& e : fs::recursive_directory_iterator(root_ / "out")) {
    if (e.path().extension() == ".json") EXPECT_NO_THROW(json::parse(read_file(e.path()))) << "half-written " << e.path();
  }
  const auto resumed = run_command(label(""));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.out.find(" 0 already done"), std::string::npos) << "finished images are skipped: " << resumed.out;
  EXPECT_EQ(resumed.out.find(": 0 labeled"), std::string::npos) << "the rest are labeled now: " << resumed.out;
  EXPECT_EQ(read_file(root_ / "out" / "coco.json"), read_file(root_ / "reference" / "coco.json"));
}

TEST_F(LabelCli, CtrlCStopsAfterTheImageInFlight) {
  make_images(24, 4);
  sam3::test::ServerProcess run({kSam3, "label", (root_ / "images").string(), "--models", (sam3::test::test_models_dir() / "usls").string(),
                                 "-p", "red", "--out", (root_ / "out").string()},
                                /*read_url=*/false);
  for (int i = 0; i < 400 && !fs::exists(root_ / "out" / "items"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(run.stop(SIGINT), 130);
  const auto coco = json::parse(read_file(root_ / "out" / "coco.json"));  // outputs rebuilt from what finished
  EXPECT_LT(coco["images"].size(), 24u);
}

// The usls-slow model's encoder runs about a minute per tile: SIGTERM must end the tile's run
// itself, not wait for it, and leave no record of the image (nor a failure) for a rerun to trust.
TEST_F(LabelCli, SigtermStopsInsideATilesEncodeAndRecordsNothingForTheImage) {
  make_images(1, 4);  // 1600x960: tiled for a 224 model
  sam3::test::ServerProcess run({kSam3, "label", (root_ / "images").string(), "--models",
                                 (sam3::test::test_models_dir() / "usls-slow").string(), "-p", "red", "--out", (root_ / "out").string()},
                                /*read_url=*/false);
  // inputs.json is written once the model is loaded, just before the first image.
  for (int i = 0; i < 1200 && !fs::exists(root_ / "out" / "inputs.json"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(root_ / "out" / "inputs.json")) << "the run never started";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // inside the first tile's encode
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run.stop(SIGTERM), 130);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0)
      << "SIGTERM waited for the tile's encode to end";
  for (const auto& e : fs::recursive_directory_iterator(root_ / "out")) {
    EXPECT_NE(e.path().parent_path().filename(), "items") << "a record of an image never finished: " << e.path();
    EXPECT_NE(e.path().parent_path().filename(), "failed") << "a stopped image is no failure: " << e.path();
    if (e.path().extension() == ".json") EXPECT_NO_THROW(json::parse(read_file(e.path()))) << "half-written " << e.path();
  }
  EXPECT_EQ(json::parse(read_file(root_ / "out" / "failures.json")).size(), 0u);
  EXPECT_EQ(json::parse(read_file(root_ / "out" / "coco.json"))["images"].size(), 0u);
}

TEST_F(LabelCli, ShardsMergedEqualASingleRun) {
  make_images(10);
  ASSERT_EQ(run_command(label("--format coco,yolo", "single")).exit_code, 0);
  std::string shard_dirs;
  size_t images = 0;
  for (int k = 1; k <= 3; ++k) {
    const std::string name = "shard" + std::to_string(k);
    const auto r = run_command(label("--format coco,yolo --shard " + std::to_string(k) + "/3", name));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    images += json::parse(read_file(root_ / name / "coco.json"))["images"].size();
    shard_dirs += " " + quote((root_ / name).string());
  }
  EXPECT_EQ(images, 10u) << "every image in exactly one shard";
  const auto merge = run_command(kSam3 + " label merge" + shard_dirs + " --out " + quote((root_ / "merged").string()));
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_EQ(read_file(root_ / "merged" / "coco.json"), read_file(root_ / "single" / "coco.json"));
  EXPECT_EQ(read_file(root_ / "merged" / "yolo" / "labels" / "img101.txt"), read_file(root_ / "single" / "yolo" / "labels" / "img101.txt"));

  const auto other =
      run_command(kSam3 + " label " + quote((root_ / "images").string()) + " --models " +
                  quote((sam3::test::test_models_dir() / "usls").string()) + " -p white --out " + quote((root_ / "other").string()));
  ASSERT_EQ(other.exit_code, 0);
  const auto mixed = run_command(kSam3 + " label merge" + shard_dirs + " " + quote((root_ / "other").string()) + " --out " +
                                 quote((root_ / "mixed").string()));
  EXPECT_EQ(mixed.exit_code, 3);
  EXPECT_NE(mixed.err.find("shards must share one configuration"), std::string::npos) << mixed.err;
}

// A shard that exited 1 (an image failed): its merge says so and exits 1 too, as one run would.
TEST_F(LabelCli, AMergeOfShardsWithAFailedImageSaysSoAndExits1) {
  make_images(4);
  std::ofstream(root_ / "images" / "broken.png") << "not a png";
  std::string shard_dirs;
  int failed_shards = 0;
  for (int k = 1; k <= 2; ++k) {
    const std::string name = "shard" + std::to_string(k);
    const auto r = run_command(label("--shard " + std::to_string(k) + "/2", name));
    failed_shards += r.exit_code == 1;
    shard_dirs += " " + quote((root_ / name).string());
  }
  ASSERT_EQ(failed_shards, 1) << "the broken image is in one shard";
  const auto merge = run_command(kSam3 + " label merge" + shard_dirs + " --out " + quote((root_ / "merged").string()));
  EXPECT_EQ(merge.exit_code, 1) << merge.out << merge.err;
  EXPECT_NE(merge.out.find("merged 2 folders"), std::string::npos) << merge.out;
  EXPECT_NE(merge.out.find("1 image failed in the shards"), std::string::npos) << merge.out;
  EXPECT_EQ(json::parse(read_file(root_ / "merged" / "failures.json")).size(), 1u);
}

TEST_F(LabelCli, BadArgumentsAreClear) {
  make_images(1);
  auto r = run_command(label("--format coco,pdf"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("unknown format 'pdf'"), std::string::npos) << r.err;
  r = run_command(label("--shard 4/3"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("1 <= K <= N"), std::string::npos) << r.err;
  r = run_command(kSam3 + " label /nonexistent -p red --out " + quote((root_ / "x").string()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("/nonexistent: no such file or folder"), std::string::npos) << r.err;
  r = run_command(label("-p blue -p blue"));  // with the fixture's own prompt: every instance twice
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("category \"blue\" is given twice"), std::string::npos) << r.err;
}

}  // namespace
