// `sam3 models ...` and the default-model download of `sam3 segment`, against a local fake hub.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sam3/export.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/fake_hub.h"
#include "support/run_command.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::quote;
using sam3::test::run_command;

const std::string kSam3 = SAM3_CLI_PATH;

using sam3::test::read_file;

class ModelsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sam3::test::fresh_test_dir("sam3_models_cli");
    // The generated test models stand in for the published files of the two int8 entries.
    for (const auto& [repo, folder] : {std::pair{"Luminia/sam3-v2-onnx", "usls"}, std::pair{"rusen/sam3-browser-int8", "samexporter"}}) {
      for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / folder)) {
        hub_.add(repo, e.path().filename().string(), read_file(e.path()));
      }
    }
  }
  std::string env() const {
    return "env -u SAM3_MODELS HF_ENDPOINT=" + hub_.endpoint() + " SAM3_CACHE_DIR=" + quote((root_ / "cache").string()) + " ";
  }
  sam3::test::FakeHub hub_;
  fs::path root_;
};

TEST_F(ModelsCli, SegmentPullsTheDefaultModelOnFirstUse) {
  const auto image = root_ / "scene.png";
  sam3::write_file_atomic(image, sam3::encode_rgb_png(sam3::test::make_scene(false).image));
  const auto offline = run_command(env() + kSam3 + " segment --offline -i " + quote(image.string()) + " -p red");
  EXPECT_EQ(offline.exit_code, 4);
  EXPECT_NE(offline.err.find("--offline"), std::string::npos) << offline.err;
  EXPECT_NE(offline.err.find("Luminia/sam3-v2-onnx/resolve/main/vision-encoder.onnx"), std::string::npos) << offline.err;

  const auto first = run_command(env() + kSam3 + " segment -i " + quote(image.string()) + " -p red --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("first use: downloading the default model sam3-v2-int8"), std::string::npos) << first.err;
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j["images"][0]["prompts"][0]["instances"].size(), 2u);

  const auto requests = hub_.requests().size();
  const auto second = run_command(env() + kSam3 + " segment -i " + quote(image.string()) + " -p red --json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err, "") << "no download notice the second time";
  EXPECT_EQ(hub_.requests().size(), requests);
}

TEST_F(ModelsCli, ListPullPathVerify) {
  auto list = run_command(env() + kSam3 + " models list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("sam3-browser-int8"), std::string::npos);
  EXPECT_NE(list.out.find("[default]"), std::string::npos);

  // A new user's trial: path printed the folder of a model not downloaded, and the script's
  // --models "$(sam3 models path ...)" failed later on a missing folder.
  const auto before = run_command(env() + kSam3 + " models path sam3-browser-int8");
  EXPECT_EQ(before.exit_code, 4) << before.err;
  EXPECT_EQ(before.out, "") << "nothing for a script to take as the folder";
  EXPECT_NE(before.err.find("sam3-browser-int8 is not downloaded"), std::string::npos) << before.err;
  EXPECT_NE(before.err.find("sam3 models pull sam3-browser-int8"), std::string::npos) << before.err;

  const auto pull = run_command(env() + kSam3 + " models pull rusen/sam3-browser-int8");
  ASSERT_EQ(pull.exit_code, 0) << pull.err;
  const auto path = run_command(env() + kSam3 + " models path sam3-browser-int8");
  ASSERT_EQ(path.exit_code, 0);
  EXPECT_EQ(path.out, (root_ / "cache" / "sam3-browser-int8").string() + "\n") << "path prints the folder and nothing else";
  EXPECT_TRUE(fs::exists(root_ / "cache" / "sam3-browser-int8" / "sam3_decoder.onnx"));
  list = run_command(env() + kSam3 + " models list");
  EXPECT_NE(list.out.find("present"), std::string::npos) << list.out;

  const auto verify = run_command(env() + kSam3 + " models verify sam3-browser-int8");
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  std::ofstream(root_ / "cache" / "sam3-browser-int8" / "sam3_decoder.onnx", std::ios::app) << "tampered";
  const auto bad = run_command(env() + kSam3 + " models verify sam3-browser-int8");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("sam3_decoder.onnx: checksum differs"), std::string::npos) << bad.err;

  const auto unknown = run_command(env() + kSam3 + " models pull nobody/nothing");
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("known models"), std::string::npos) << unknown.err;
}

TEST_F(ModelsCli, TwoConcurrentPullsShareOneDownload) {
  hub_.slow_ms = 400;
  const std::string pull = env() + kSam3 + " models pull sam3-browser-int8";
  const auto r = run_command("(" + pull + " & " + pull + " & wait %1 && wait %2) 2>&1; echo exit=$?");
  EXPECT_NE(r.out.find("exit=0"), std::string::npos) << r.out;
  const auto encoder = read_file(sam3::test::test_models_dir() / "samexporter" / "sam3_language_encoder.onnx");
  EXPECT_EQ(hub_.cdn_hits(encoder), 1) << r.out;
  EXPECT_EQ(read_file(root_ / "cache" / "sam3-browser-int8" / "sam3_language_encoder.onnx"), encoder);
}

TEST_F(ModelsCli, OptimizePreparesOnceAndSaysWhatWasDone) {
  const fs::path dir = root_ / "usls";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "usls")) {
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  }
  const auto first = run_command(env() + kSam3 + " models optimize --models " + quote(dir.string()));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  for (const char* file : {"vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx"}) {
    EXPECT_NE(first.out.find(std::string(file) + " "), std::string::npos) << file << "\n" << first.out;
  }
  EXPECT_EQ(first.out.find("already prepared"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("1 attention block fused into MultiHeadAttention"), std::string::npos) << first.out;
  const auto second = run_command(env() + kSam3 + " models optimize --models " + quote(dir.string()));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("already prepared"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("1 attention block fused"), std::string::npos) << "recorded in the cache: " << second.out;
  const auto missing = run_command(env() + kSam3 + " models optimize --models " + quote((root_ / "nowhere").string()));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nowhere"), std::string::npos) << missing.err;
}

// oneDNN runs the large int8 products where it has exact kernels; ONEDNN_MAX_CPU_ISA=AVX2 makes
// it see a CPU without VNNI or AMX, which keeps ONNX Runtime's kernels. The test model's products
// are below ModelOptions::onednn_min_weights, so they stay with ONNX Runtime's fused kernel even
// on VNNI (tests/runtime/onednn_int8_test.cpp moves them with a threshold of 0).
TEST_F(ModelsCli, Int8ProductsRunOnOneDnnOnlyWithExactKernels) {
  for (const bool without_vnni : {false, true}) {
    const fs::path dir = root_ / (without_vnni ? "usls-avx2" : "usls-native");
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "usls")) {
      if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
    }
    const std::string isa = without_vnni ? "ONEDNN_MAX_CPU_ISA=AVX2 " : "";
    const auto r = run_command(env() + isa + kSam3 + " models optimize --int8 on --models " + quote(dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto inspect = run_command(env() + isa + kSam3 + " models inspect " + quote(dir.string()));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_EQ(r.out.find("on oneDNN"), std::string::npos) << "small products stay with ONNX Runtime: " << r.out;
    EXPECT_NE(r.out.find("1 MatMulInteger weight rewritten as int8"), std::string::npos) << r.out;
    if (!without_vnni && sam3::int8_kernels().rfind("oneDNN", 0) == 0) {  // a build with oneDNN, on VNNI/AMX
      EXPECT_NE(inspect.out.find("int8 on     oneDNN"), std::string::npos) << inspect.out;
    } else {
      EXPECT_NE(inspect.out.find("int8 on     ONNX Runtime"), std::string::npos) << inspect.out;
    }
  }
}

TEST_F(ModelsCli, ImportRegistersFilesFetchedByHand) {
  const auto r = run_command(env() + kSam3 + " models import " + quote((sam3::test::test_models_dir() / "samexporter").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported sam3-browser-int8"), std::string::npos) << r.out;
  EXPECT_EQ(run_command(env() + kSam3 + " models verify sam3-browser-int8").exit_code, 0);
  fs::create_directories(root_ / "downloads");
  std::ofstream(root_ / "downloads" / "decoder.onnx") << "only one file";
  const auto bad = run_command(env() + kSam3 + " models import " + quote((root_ / "downloads").string()));
  EXPECT_EQ(bad.exit_code, 4);
  EXPECT_NE(bad.err.find("does not hold the files of a known model"), std::string::npos) << bad.err;
}

}  // namespace

namespace {

// `sam3 models inspect` on every generated generation: what a user reads to know what they have.
struct InspectCase {
  const char* folder;
  const char* generation;
  int width, height;
  const char* quirk;  // one quirk that must be listed
};

class ModelsInspect : public ::testing::TestWithParam<InspectCase> {};

TEST_P(ModelsInspect, NamesTheGenerationInputSizeQuirksAndEveryTensor) {
  const auto& c = GetParam();
  const auto dir = sam3::test::test_models_dir() / c.folder;
  const auto r = run_command(kSam3 + " models inspect " + quote(dir.string()) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["loads"].get<bool>());
  EXPECT_EQ(j["generation"], c.generation);
  EXPECT_EQ(j["input"]["width"], c.width);
  EXPECT_EQ(j["input"]["height"], c.height);
  bool quirk = false;
  for (const auto& q : j["quirks"]) quirk = quirk || q.get<std::string>().find(c.quirk) != std::string::npos;
  EXPECT_TRUE(quirk) << "no quirk mentions \"" << c.quirk << "\": " << j["quirks"].dump();
  ASSERT_GE(j["files"].size(), 2u) << "three files, four for usls v1, two for the interactive model";
  for (const auto& f : j["files"]) {
    EXPECT_FALSE(f["inputs"].empty()) << f.dump();
    EXPECT_FALSE(f["outputs"].empty()) << f.dump();
    for (const auto& t : f["inputs"]) EXPECT_FALSE(t["type"].get<std::string>().empty());
  }
  const auto text = run_command(kSam3 + " models inspect " + quote(dir.string()));
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find(std::string("generation  ") + c.generation), std::string::npos) << text.out;
}

INSTANTIATE_TEST_SUITE_P(
    Generations, ModelsInspect,
    ::testing::Values(InspectCase{"usls", "usls", 224, 224, "attention mask"},
                      InspectCase{"usls-504x896", "usls", 896, 504, "stretched to 896x504"},
                      InspectCase{"samexporter", "samexporter", 252, 252, "frozen"},
                      InspectCase{"samexporter-int32-frozen", "samexporter", 252, 252, "threshold 0.5 inside the graph"},
                      InspectCase{"osam", "osam", 252, 252, ".onnx.data sidecars"}, InspectCase{"usls-fp16", "usls", 224, 224, "float16"},
                      InspectCase{"samexporter-float-4slots", "samexporter", 252, 252, "sequence-first"},
                      InspectCase{"usls-v1", "usls v1 (separate geometry encoder)", 224, 224, "geometry-encoder.onnx"},
                      InspectCase{"geti", "geti-instant-learn", 224, 224, "runs for every prompt"},
                      InspectCase{"efficientsam3", "EfficientSAM3", 224, 224, "no presence head"},
                      InspectCase{"sam3.1-ailia", "sam3.1 (ailia)", 224, 224, "in float16"},
                      InspectCase{"tracker", "sam3-tracker (interactive: points and boxes)", 1008, 1008, ".onnx_data sidecars"},
                      InspectCase{"tracker-root-quantized", "sam3-tracker (interactive: points and boxes)", 1008, 1008, "no text"}),
    [](const auto& info) {
      std::string n = info.param.folder;
      std::replace(n.begin(), n.end(), '-', '_');
      std::replace(n.begin(), n.end(), '.', '_');
      return n;
    });

TEST(ModelsInspectErrors, AFolderThatFitsNoGenerationSaysWhichItLookedLikeAndWhatDiffers) {
  const auto dir = sam3::test::fresh_test_dir("sam3_inspect_mismatch");
  const auto usls = sam3::test::test_models_dir() / "usls";
  for (const char* f : {"text-encoder.onnx", "decoder.onnx", "tokenizer.json"}) fs::copy_file(usls / f, dir / f);
  fs::copy_file(sam3::test::test_models_dir() / "samexporter" / "sam3_image_encoder.onnx", dir / "vision-encoder.onnx");
  const auto r = run_command(kSam3 + " models inspect " + quote(dir.string()) + " --json");
  EXPECT_NE(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["loads"].get<bool>());
  const std::string problem = j["problem"];
  EXPECT_NE(problem.find("usls layout"), std::string::npos) << problem;
  EXPECT_NE(problem.find("vision-encoder.onnx"), std::string::npos) << problem;
  EXPECT_NE(problem.find("'images'"), std::string::npos) << "the tensor expected" << problem;
  EXPECT_EQ(j["files"].size(), 3u) << "the files are still described";
  const auto none = run_command(kSam3 + " models inspect " + quote((dir / "nothing").string()));
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("unknown model"), std::string::npos) << none.err;
}

}  // namespace

namespace {

// Registry entries against a stand-in hub holding each repository's real file layout.
class RegistryLayouts : public ::testing::Test {
 protected:
  void SetUp() override { root_ = sam3::test::fresh_test_dir("sam3_registry"); }
  std::string env() const {
    return "env -u SAM3_MODELS HF_ENDPOINT=" + hub_.endpoint() + " SAM3_CACHE_DIR=" + quote((root_ / "cache").string()) + " ";
  }
  std::string segment(const fs::path& models) const {
    const auto image = root_ / "scene.png";
    sam3::write_file_atomic(image, sam3::encode_rgb_png(sam3::test::make_scene(false).image));
    const auto r = run_command(kSam3 + " segment --models " + quote(models.string()) + " -i " + quote(image.string()) + " -p red --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  sam3::test::FakeHub hub_;
  fs::path root_;
};

// vietanhdev/segment-anything-3-onnx-models holds one sam3_vit_h.zip with the files inside a
// folder; the entry downloads it, unpacks the files by name and removes the archive.
TEST_F(RegistryLayouts, AZipEntryIsDownloadedVerifiedUnpackedAndRemoved) {
  const auto staging = root_ / "zip" / "sam3_vit_h";
  fs::create_directories(staging);
  for (const char* f : {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx"}) {
    fs::copy_file(sam3::test::test_models_dir() / "samexporter" / f, staging / f);
  }
  sam3::write_file_atomic(staging / "README.txt", "not a model file");
  const auto zipped = run_command("cd " + quote((root_ / "zip").string()) + " && zip -qr sam3_vit_h.zip sam3_vit_h");
  ASSERT_EQ(zipped.exit_code, 0) << zipped.err << " (needs the zip command)";
  hub_.add("vietanhdev/segment-anything-3-onnx-models", "sam3_vit_h.zip", read_file(root_ / "zip" / "sam3_vit_h.zip"));

  const auto pull = run_command(env() + kSam3 + " models pull sam3-fp32");
  ASSERT_EQ(pull.exit_code, 0) << pull.err;
  const auto dir = root_ / "cache" / "sam3-fp32";
  for (const char* f : {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx"}) {
    EXPECT_EQ(read_file(dir / f), read_file(sam3::test::test_models_dir() / "samexporter" / f)) << f;
  }
  EXPECT_FALSE(fs::exists(dir / "sam3_vit_h.zip")) << "the archive is removed once unpacked";
  EXPECT_FALSE(fs::exists(dir / "README.txt")) << "only the model's files are taken";
  const auto verify = run_command(env() + kSam3 + " models verify sam3-fp32");
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_NE(segment(dir).find("\"instances\":[{"), std::string::npos) << "the unpacked model segments";
  const auto again = run_command(env() + kSam3 + " models pull sam3-fp32");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(hub_.cdn_hits(read_file(root_ / "zip" / "sam3_vit_h.zip")), 1) << "a complete model is not downloaded again";
}

// onnx-community/sam3-tracker-ONNX: the graphs and their weights under onnx/, the configs at the
// root. The pull keeps the layout, the model clicks, and an imported copy of the same files is
// recognised as this entry.
TEST_F(RegistryLayouts, TheInteractiveModelKeepsTheHubsOnnxFolder) {
  const auto tracker = sam3::test::test_models_dir() / "tracker";
  const std::vector<std::string> files = {"onnx/vision_encoder.onnx",
                                          "onnx/vision_encoder.onnx_data",
                                          "onnx/prompt_encoder_mask_decoder.onnx",
                                          "onnx/prompt_encoder_mask_decoder.onnx_data",
                                          "config.json",
                                          "preprocessor_config.json"};
  for (const auto& f : files) hub_.add("onnx-community/sam3-tracker-ONNX", f, read_file(tracker / f));
  const auto pull = run_command(env() + kSam3 + " models pull onnx-community/sam3-tracker-ONNX");
  ASSERT_EQ(pull.exit_code, 0) << pull.err;
  const auto dir = root_ / "cache" / "sam3-tracker";
  for (const auto& f : files) EXPECT_EQ(read_file(dir / f), read_file(tracker / f)) << f;
  const auto verify = run_command(env() + kSam3 + " models verify sam3-tracker");
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  const auto image = root_ / "scene.png";
  sam3::write_file_atomic(image, sam3::encode_rgb_png(sam3::test::make_click_scene().image));
  const auto click =
      run_command(env() + kSam3 + " segment --models " + quote(dir.string()) + " -i " + quote(image.string()) + " --point 160,160 --json");
  ASSERT_EQ(click.exit_code, 0) << click.err;
  EXPECT_NE(click.out.find("\"layout\":\"sam3-tracker\""), std::string::npos) << click.out.substr(0, 300);

  // The same files placed by hand are recognised by their names, wherever they are in the folder.
  fs::remove_all(dir);
  const auto imported = run_command(env() + kSam3 + " models import " + quote(tracker.string()));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  for (const auto& f : files) EXPECT_EQ(read_file(dir / f), read_file(tracker / f)) << f;
}

// wkentaro/sam3-onnx-models (osam's files): six files at the root, pinned by sha256. The
// stand-in holds other bytes under those names, as a changed or tampered repository would.
TEST_F(RegistryLayouts, APinnedHashThatDoesNotMatchIsReportedNotLoaded) {
  const auto osam = sam3::test::test_models_dir() / "osam";
  for (const char* f : {"sam3_image_encoder.onnx", "sam3_image_encoder.onnx.data", "sam3_language_encoder.onnx",
                        "sam3_language_encoder.onnx.data", "sam3_decoder.onnx", "sam3_decoder.onnx.data"}) {
    hub_.add("wkentaro/sam3-onnx-models", f, read_file(osam / f));
  }
  const auto dir = root_ / "cache" / "sam3-osam-fp32";
  const auto refused = run_command(env() + kSam3 + " models pull wkentaro/sam3-onnx-models");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("not the published one sam3 pins"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--accept-unpinned"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "sam3_image_encoder.onnx")) << "a file that fails its pin never becomes the model";
  EXPECT_FALSE(fs::exists(dir / "sam3_image_encoder.onnx.part"));

  const auto accepted = run_command(env() + kSam3 + " models pull wkentaro/sam3-onnx-models --accept-unpinned");
  ASSERT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_NE(accepted.err.find("differs from the pinned one"), std::string::npos) << "taken, with a warning";
  const auto verify = run_command(env() + kSam3 + " models verify sam3-osam-fp32");
  EXPECT_NE(verify.exit_code, 0) << "verify keeps saying the files are not the pinned ones";
  EXPECT_NE(verify.err.find("pins"), std::string::npos) << verify.err;
  EXPECT_NE(segment(dir).find("\"instances\":[{"), std::string::npos) << "the osam generation loads and segments";
}

}  // namespace

namespace {

// A model folder with a FIFO, a device or a looping link in it: inspect, segment and import name
// the entry and stop at once, before ONNX Runtime opens anything (each run has `timeout` around
// it: a hang fails the test instead of holding it).
class HostileModelFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sam3::test::fresh_test_dir("sam3_hostile_folder");
    folder_ = root_ / "model";
    fs::create_directories(folder_);
    for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "usls")) {
      fs::create_symlink(e.path(), folder_ / e.path().filename());
    }
    image_ = root_ / "scene.png";
    sam3::write_file_atomic(image_, sam3::encode_rgb_png(sam3::test::make_scene(false).image));
  }
  void TearDown() override { fs::remove_all(root_); }
  sam3::test::CommandResult sam3(const std::string& args) const { return run_command("timeout 60 " + kSam3 + " " + args + " </dev/null"); }
  void expect_refused(const std::string& words) const {
    for (const std::string& args : {"models inspect " + quote(folder_.string()),
                                    "segment --models " + quote(folder_.string()) + " -i " + quote(image_.string()) + " -p red"}) {
      const auto r = sam3(args);
      EXPECT_NE(r.exit_code, 0) << args;
      EXPECT_NE(r.exit_code, 124) << args << ": it hung";
      EXPECT_NE(r.err.find(words), std::string::npos) << args << ": " << r.err;
    }
  }
  fs::path root_, folder_, image_;
};

TEST_F(HostileModelFolder, AFolderLinkCycleIsHarmless) {
  fs::create_directory_symlink(folder_, folder_ / "again");
  const auto r = sam3("models inspect " + quote(folder_.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(HostileModelFolder, AFifoAsExternalDataIsNamedNotOpened) {
  ASSERT_EQ(mkfifo((folder_ / "decoder.onnx.data").c_str(), 0600), 0);
  expect_refused("decoder.onnx.data is a FIFO (named pipe), not a file");
}

TEST_F(HostileModelFolder, ADeviceAsAModelFileIsNamedNotRead) {
  fs::remove(folder_ / "decoder.onnx");
  fs::create_symlink("/dev/zero", folder_ / "decoder.onnx");
  expect_refused("decoder.onnx is a device, not a file");
}

TEST_F(HostileModelFolder, ALinkThatLoopsIsNamed) {
  fs::create_symlink(folder_ / "loop.onnx", folder_ / "loop.onnx");
  expect_refused("loop.onnx is a link that loops");
}

TEST_F(HostileModelFolder, ImportNamesAFifoInsteadOfAModelFile) {
  fs::remove(folder_ / "decoder.onnx");
  ASSERT_EQ(mkfifo((folder_ / "decoder.onnx").c_str(), 0600), 0);
  const auto r = run_command("timeout 60 env SAM3_CACHE_DIR=" + quote((root_ / "cache").string()) + " " + kSam3 + " models import " +
                             quote(folder_.string()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "it hung";
  EXPECT_NE(r.err.find("decoder.onnx is not a regular file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "cache" / "sam3-v2-int8" / "decoder.onnx.part"));
}

}  // namespace
