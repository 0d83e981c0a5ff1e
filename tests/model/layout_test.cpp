#include <gtest/gtest.h>

#include <fstream>

#include "sam3/error.h"
#include "sam3/model.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) { return sam3::test::fresh_test_dir("sam3_layout_" + name); }

std::string load_error(const fs::path& dir, sam3::ErrorCode expected) {
  try {
    sam3::Model::load(dir);
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "loaded " << dir;
  return {};
}

TEST(Layout, DetectsBothLayoutsByFileNames) {
  EXPECT_EQ(sam3::Model::load(sam3::test::test_models_dir() / "usls")->layout(), sam3::Layout::kUsls);
  EXPECT_EQ(sam3::Model::load(sam3::test::test_models_dir() / "samexporter")->layout(), sam3::Layout::kSamexporter);
}

TEST(Layout, MissingDirectoryAndFilesAreNamed) {
  EXPECT_NE(load_error("/nonexistent/models", sam3::ErrorCode::kModelNotFound).find("does not exist"), std::string::npos);
  const auto empty = fresh_dir("empty");
  EXPECT_NE(load_error(empty, sam3::ErrorCode::kModelNotFound).find("vision-encoder.onnx"), std::string::npos);
  const auto partial = fresh_dir("partial");
  fs::copy_file(sam3::test::test_models_dir() / "usls" / "decoder.onnx", partial / "decoder.onnx");
  const auto msg = load_error(partial, sam3::ErrorCode::kModelNotFound);
  EXPECT_NE(msg.find("missing vision-encoder.onnx, text-encoder.onnx"), std::string::npos) << msg;
}

TEST(Layout, WrongFilesAreAMismatchThatSaysWhatWasExpected) {
  // usls file names, but the vision encoder is the samexporter one.
  const auto dir = fresh_dir("swapped");
  const auto usls = sam3::test::test_models_dir() / "usls";
  for (const char* f : {"text-encoder.onnx", "decoder.onnx", "tokenizer.json"}) fs::copy_file(usls / f, dir / f);
  fs::copy_file(sam3::test::test_models_dir() / "samexporter" / "sam3_image_encoder.onnx", dir / "vision-encoder.onnx");
  const auto msg = load_error(dir, sam3::ErrorCode::kModelMismatch);
  EXPECT_NE(msg.find("file names are those of the usls layout"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected input 'images'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found inputs: image"), std::string::npos) << msg;

  const auto garbage = fresh_dir("garbage");
  for (const char* f : {"text-encoder.onnx", "decoder.onnx"}) fs::copy_file(usls / f, garbage / f);
  std::ofstream(garbage / "vision-encoder.onnx") << "not a model";
  EXPECT_NE(load_error(garbage, sam3::ErrorCode::kModelMismatch).find("cannot load"), std::string::npos);
}

}  // namespace
