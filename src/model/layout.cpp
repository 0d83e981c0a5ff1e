#include "model/layout.h"

#include <array>
#include <string>

#include "sam3/error.h"

namespace sam3::detail {
namespace {

struct LayoutFiles {
  Layout layout;
  std::array<const char*, 3> files;
};

constexpr std::array<LayoutFiles, 2> kLayouts = {{
    {Layout::kUsls, {"vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx"}},
    {Layout::kSamexporter, {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx"}},
}};

std::string join(const std::array<const char*, 3>& names) {
  return std::string(names[0]) + ", " + names[1] + ", " + names[2];
}

}  // namespace

Layout detect_layout(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound, dir.string() + ": is a file, not a model folder; pass --models the folder "
                                                          "that holds the SAM3 .onnx files");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound,
                dir.string() + ": model directory does not exist; pass --models DIR with the SAM3 ONNX "
                               "files, or fetch them with 'sam3 models pull'");
  }
  for (const auto& candidate : kLayouts) {
    int present = 0;
    std::string missing;
    for (const char* f : candidate.files) {
      if (std::filesystem::is_regular_file(dir / f, ec)) ++present;
      else missing += (missing.empty() ? "" : ", ") + std::string(f);
    }
    if (present == 3) return candidate.layout;
    if (present > 0) {
      throw Error(ErrorCode::kModelNotFound,
                  dir.string() + ": incomplete " + layout_name(candidate.layout) + " model, missing " + missing +
                      "; the layout needs " + join(candidate.files));
    }
  }
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".onnx") found += (found.empty() ? "" : ", ") + entry.path().filename().string();
  }
  throw Error(ErrorCode::kModelNotFound,
              dir.string() + ": not a SAM3 model directory; expected " + join(kLayouts[0].files) +
                  " (usls layout) or " + join(kLayouts[1].files) + " (samexporter layout), found " +
                  (found.empty() ? "no .onnx files" : found));
}

std::filesystem::path find_vocabulary(const std::filesystem::path& dir) {
  for (const char* name : {"tokenizer.json", "clip_tokenizer.json", "bpe_simple_vocab_16e6.txt.gz"}) {
    if (std::filesystem::is_regular_file(dir / name)) return dir / name;
  }
  return {};
}

}  // namespace sam3::detail
