// `sam3 label` never loses, mixes or keeps stale labels: every input gets its own outputs,
// resume notices changed images and models, one run at a time per folder, its own output
// folder is never an input, and special files are failures, not a stop.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli/label_fixture.h"
#include "support/server_process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sam3::test::kSam3;
using sam3::test::LabelCli;
using sam3::test::quote;
using sam3::test::read_file;
using sam3::test::run_command;

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::set<std::string> coco_names(const fs::path& out) {
  std::set<std::string> names;
  const auto coco = json::parse(read_file(out / "coco.json"));
  for (const auto& im : coco["images"]) names.insert(im["file_name"].get<std::string>());
  return names;
}

// A copy of a model folder whose decoder carries one more (unknown, ignored) protobuf field:
// the same layout and shapes, different bytes, as another export or a fine-tune would be.
fs::path altered_model_copy(const fs::path& root) {
  const auto dir = root / "other-model";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(sam3::test::test_models_dir() / "usls")) {
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  }
  std::ofstream(dir / "decoder.onnx", std::ios::app | std::ios::binary) << std::string("\xC0\x3E\x01", 3);  // field 1000 = 1
  return dir;
}

TEST_F(LabelCli, EveryInputGetsItsOwnOutputsWhateverItsName) {
  const auto im = sam3::encode_rgb_png(scene_.image);
  for (const char* name : {"photo.png", "photo.webp.png", "a b.png", "a_b.png", "sub1/x.png", "sub1__x.png", "Case.png", "case.png"}) {
    sam3::write_file_atomic(root_ / "images" / name, im);
  }
  fs::remove_all(root_ / "images" / "sub");
  sam3::write_file_atomic(root_ / "more" / "photo.png", im);  // the same relative name in a second input folder
  sam3::write_file_atomic(root_ / "more" / "jpeg" / "photo.jpg", sam3::encode_rgb_jpeg(scene_.image));
  const auto r = run_command(label(quote((root_ / "more").string()) + " --format coco,yolo,masks,geojson"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto names = coco_names(root_ / "out");
  EXPECT_EQ(names.size(), 10u) << "two inputs merged into one";
  EXPECT_TRUE(names.contains("images/photo.png") && names.contains("more/photo.png")) << "named by their folders";
  EXPECT_EQ(files_in(root_ / "out" / "yolo" / "labels").size(), 10u);
  EXPECT_EQ(files_in(root_ / "out" / "geojson").size(), 10u);
  EXPECT_EQ(files_in(root_ / "out" / "masks").size(), 20u);
  EXPECT_TRUE(fs::exists(root_ / "out" / "yolo" / "labels" / "a_b.txt")) << "a name that needs no change keeps it";
}

TEST_F(LabelCli, ResumeRedoesChangedImagesAndDropsDeletedOnes) {
  make_images(4);
  ASSERT_EQ(run_command(label("")).exit_code, 0);
  const auto dir = root_ / "images";
  // Changed content under the same name; an image deleted; one only touched.
  sam3::Image changed = scene_.image;
  std::fill(changed.rgb.begin(), changed.rgb.end(), 255);
  sam3::write_file_atomic(dir / "img101.png", sam3::encode_rgb_png(changed));
  fs::remove(dir / "img102.png");
  fs::last_write_time(dir / "sub" / "img100.png", fs::file_time_type::clock::now() + std::chrono::hours(1));
  const auto r = run_command(label(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 images: 1 labeled, 2 already done"), std::string::npos) << r.out;
  const auto coco = json::parse(read_file(root_ / "out" / "coco.json"));
  ASSERT_EQ(coco["images"].size(), 3u) << "the deleted image is still in the outputs";
  for (size_t i = 0; i < coco["images"].size(); ++i) {
    if (coco["images"][i]["file_name"] != "img101.png") continue;
    for (const auto& a : coco["annotations"]) EXPECT_NE(a["image_id"], i + 1) << "stale labels of the old img101.png";
  }
}

TEST_F(LabelCli, AnotherModelOfTheSameLayoutRedoesEverythingAndCannotBeMerged) {
  make_images(3);
  ASSERT_EQ(run_command(label("", "a")).exit_code, 0);
  const auto other = altered_model_copy(root_);
  const std::string with_other =
      kSam3 + " label " + quote((root_ / "images").string()) + " --models " + quote(other.string()) + " -p red -p blue --out ";
  const auto r = run_command(with_other + quote((root_ / "a").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 labeled, 0 already done"), std::string::npos) << r.out;
  ASSERT_EQ(run_command(label("", "b")).exit_code, 0);
  const auto merge = run_command(kSam3 + " label merge " + quote((root_ / "a").string()) + " " + quote((root_ / "b").string()) + " --out " +
                                 quote((root_ / "m").string()));
  EXPECT_EQ(merge.exit_code, 3);
  EXPECT_NE(merge.err.find("model"), std::string::npos) << merge.err;
}

TEST_F(LabelCli, ASecondRunOnTheSameFolderIsRefusedWhileTheFirstRuns) {
  make_images(24, 4);
  sam3::test::ServerProcess first({"/bin/sh", "-c", "exec " + label("")}, /*read_url=*/false);
  for (int i = 0; i < 5000 && !fs::exists(root_ / "out" / "config.json"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The first run holds the folder's lock from before config.json is written; it is paused here
  // so that it cannot finish before the second run starts however fast or loaded the machine is
  // (a paused process keeps its lock).
  ASSERT_EQ(::kill(first.pid(), SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(first.pid(), &status, WUNTRACED), first.pid());
  ASSERT_TRUE(WIFSTOPPED(status)) << "the first run ended before it could be paused";
  const auto second = run_command(label(""));
  EXPECT_EQ(second.exit_code, 6) << second.err;
  EXPECT_NE(second.err.find("is writing to this folder"), std::string::npos) << second.err;
  ::kill(first.pid(), SIGINT);  // delivered once it continues
  ::kill(first.pid(), SIGCONT);
  const int first_exit = first.wait();
  EXPECT_TRUE(first_exit == 130 || first_exit == 0) << first_exit;
}

TEST_F(LabelCli, AnOutputFolderInsideTheInputsIsNeverLabeled) {
  make_images(5);
  const auto inside = [&](const std::string& args) {
    return kSam3 + " label " + quote((root_ / "images").string()) + " --models " +
           quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --format coco,masks --out " +
           quote((root_ / "images" / "labels").string()) + args;
  };
  ASSERT_EQ(run_command(inside("")).exit_code, 0);
  const auto again = run_command(inside(""));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("5 images: 0 labeled, 5 already done"), std::string::npos) << again.out;
  EXPECT_EQ(coco_names(root_ / "images" / "labels").size(), 5u);
}

TEST_F(LabelCli, SpecialFilesAreRecordedAsFailuresAndTheBatchGoesOn) {
  make_images(2);
  const auto dir = root_ / "images";
  ASSERT_EQ(::mkfifo((dir / "pipe.png").c_str(), 0644), 0);
  fs::create_symlink("loop_b.png", dir / "loop_a.png");
  fs::create_symlink("loop_a.png", dir / "loop_b.png");
  std::ofstream(root_ / "list.txt") << "/dev/zero\n/dev/urandom\n/proc/self/mem\n"
                                    << (dir / "pipe.png").string() << "\n"
                                    << (dir / "loop_a.png").string() << "\n"
                                    << (dir / "img100.png").string() << "\n";
  const auto r = run_command(kSam3 + " label " + quote((root_ / "list.txt").string()) + " " + quote(dir.string()) + " --models " +
                             quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --out " + quote((root_ / "out").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto failures = json::parse(read_file(root_ / "out" / "failures.json"));
  std::set<std::string> failed;
  for (const auto& f : failures) failed.insert(f["path"]);
  for (const auto& p : {std::string("/dev/zero"), std::string("/dev/urandom"), std::string("/proc/self/mem"), (dir / "pipe.png").string(),
                        (dir / "loop_a.png").string()}) {
    EXPECT_TRUE(failed.contains(p)) << p << " not in failures.json: " << failures.dump();
  }
  EXPECT_EQ(coco_names(root_ / "out").size(), 2u) << "the good images are labeled";

  // The folder alone: what is named like an image but is no file is recorded, not skipped unsaid.
  fs::create_symlink("gone.png", dir / "dangling.png");
  const auto walked =
      run_command(kSam3 + " label " + quote(dir.string()) + " --models " + quote((sam3::test::test_models_dir() / "usls").string()) +
                  " -p red --out " + quote((root_ / "walk").string()));
  EXPECT_EQ(walked.exit_code, 1) << walked.err;
  std::set<std::string> walk_failed;
  for (const auto& f : json::parse(read_file(root_ / "walk" / "failures.json"))) walk_failed.insert(f["path"]);
  for (const char* name : {"pipe.png", "loop_a.png", "loop_b.png", "dangling.png"}) {
    EXPECT_TRUE(walk_failed.contains((dir / name).string())) << name << " was skipped unsaid";
  }
  // A link loop given by name is a failure of its own, not the end of the batch.
  const auto named =
      run_command(kSam3 + " label " + quote((dir / "loop_a.png").string()) + " " + quote((dir / "img101.png").string()) + " --models " +
                  quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --out " + quote((root_ / "named").string()));
  EXPECT_EQ(named.exit_code, 1) << named.err;
  EXPECT_EQ(coco_names(root_ / "named").size(), 1u) << named.err;
}

TEST_F(LabelCli, AFolderWithoutImagesIsAnErrorNotAnEmptyDataset) {
  fs::create_directories(root_ / "empty");
  std::ofstream(root_ / "empty" / "notes.txt.bak") << "not an image";
  const auto r = run_command(kSam3 + " label " + quote((root_ / "empty").string()) + " --models " +
                             quote((sam3::test::test_models_dir() / "usls").string()) + " -p red --out " + quote((root_ / "out").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no images in " + (root_ / "empty").string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_ / "out")) << "an empty dataset was written";
}

TEST_F(LabelCli, BoxFilesAndShardsAreReadStrictly) {
  make_images(1);
  const auto file = root_ / "boxes.json";
  std::ofstream(file) << R"([{"name": "red", "text": "red", "boxes": [[10, 10, 60, 60, "NEG"]]}])";
  auto r = run_command(kSam3 + " label " + quote((root_ / "images").string()) + " --models " +
                       quote((sam3::test::test_models_dir() / "usls").string()) + " --box-prompt " + quote(file.string()) + " --out " +
                       quote((root_ / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto config = json::parse(read_file(root_ / "out" / "config.json"));
  EXPECT_EQ(config["categories"][0]["boxes"][0][4], "neg") << "\"NEG\" is a negative box";
  std::ofstream(file) << R"([{"name": "red", "boxes": [[10, 10, 60, 60, "maybe"]]}])";
  r = run_command(label("--box-prompt " + quote(file.string())));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("must be \"pos\" or \"neg\""), std::string::npos) << r.err;
  r = run_command(label("--shard 1/2abc"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--shard must be K/N"), std::string::npos) << r.err;
}

TEST_F(LabelCli, ClassMasksStayExactPast255Categories) {
  make_images(1);
  std::string prompts;
  for (int i = 0; i < 300; ++i) prompts += " -p " + std::string(i == 299 ? "red" : "word" + std::to_string(i));
  const auto r = run_command(kSam3 + " label " + quote((root_ / "images" / "sub").string()) + " --models " +
                             quote((sam3::test::test_models_dir() / "usls").string()) + prompts + " --format masks --out " +
                             quote((root_ / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string png = read_file(root_ / "out" / "masks" / "img100_classes.png");
  ASSERT_GT(png.size(), 25u);
  EXPECT_EQ(static_cast<int>(png[24]), 16) << "class ids up to 300 need a 16-bit PNG";
}

}  // namespace
