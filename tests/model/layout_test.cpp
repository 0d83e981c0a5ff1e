#include <gtest/gtest.h>

#include <fstream>

#include "model/text_inputs.h"
#include "sam3/error.h"
#include "sam3/model.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("sam3_layout_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

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

// Each layout's own text-mask rule: the usls exports take Hugging Face's attention mask, in
// which "!" (CLIP id 0) is a real token; SAM3's rule (ids != 0) masks it.
TEST(TextInputs, UslsTakesHuggingFacesMaskWithTheExclamationMarkAndEndTokenPadding) {
  const auto tokenizer = sam3::ClipTokenizer::from_file(SAM3_TEST_CLIP_DIR "/tokenizer.json");
  const auto tokens = tokenizer.encode("stop !~");  // "!~" has no merge: a bare "!" and "~"
  ASSERT_EQ(tokens.length, 5) << "start, stop, !, ~, end";
  ASSERT_EQ(tokens.ids[2], 0) << "a bare \"!\" is CLIP id 0";
  EXPECT_EQ(tokens.mask[2], 0) << "SAM3's rule (the samexporter graphs compute the same) masks it";
  const auto in = sam3::detail::hf_text_inputs(tokens);
  EXPECT_EQ(in.attention_mask, (std::vector<std::int64_t>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                           0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(in.ids[2], 0);
  EXPECT_EQ(in.ids[4], sam3::kEndOfText);
  EXPECT_EQ(in.ids[5], sam3::kEndOfText) << "padding is the end token, as Hugging Face's CLIP tokenizer pads";
  EXPECT_EQ(in.ids[31], sam3::kEndOfText);
}
