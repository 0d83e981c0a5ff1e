#include "pure/layout_names.h"

#include "sam3/error.h"

namespace sam3::pure {

const std::vector<LayoutNames>& text_layouts() {
  // usls's release files carry a precision suffix (vision-encoder-q4f16.onnx) and usls's own
  // runtime calls the decoder geo-encoder-mask-decoder.
  static const std::vector<LayoutNames> layouts = {
      {Family::kUsls,
       {{"image", {"vision-encoder"}, true},
        {"text", {"text-encoder"}, true},
        {"decoder", {"decoder", "geo-encoder-mask-decoder"}, true},
        {"geometry", {"geometry-encoder"}, false}}},
      {Family::kSamexporter,
       {{"image", {"sam3_image_encoder"}, true},
        {"text", {"sam3_language_encoder"}, true},
        {"decoder", {"sam3_decoder"}, true}}},
  };
  return layouts;
}

const std::vector<const char*>& precision_suffixes() {
  static const std::vector<const char*> suffixes = {"", "-int8", "-fp32", "-fp16", "-q4f16"};
  return suffixes;
}

const std::vector<const char*>& vocabulary_names() {
  static const std::vector<const char*> names = {"tokenizer.json", "clip_tokenizer.json", "bpe_simple_vocab_16e6.txt.gz"};
  return names;
}

std::vector<std::string> candidate_names() {
  std::vector<std::string> out;
  for (const auto& layout : text_layouts()) {
    for (const auto& part : layout.parts) {
      for (const char* suffix : precision_suffixes()) {
        for (const char* stem : part.stems) out.push_back(std::string(stem) + suffix + ".onnx");
      }
    }
  }
  return out;
}

std::string required_names(const LayoutNames& l) {
  std::string s;
  for (const auto& p : l.parts) {
    if (p.required) s += (s.empty() ? "" : ", ") + std::string(p.stems[0]) + ".onnx";
  }
  return s;
}

std::optional<ChosenFiles> choose_files(const std::string& where, const std::set<std::string>& names) {
  for (const auto& candidate : text_layouts()) {
    ChosenFiles files{candidate.family, {}};
    int present = 0, required = 0;
    std::string missing;
    for (const auto& part : candidate.parts) {
      std::string found;
      for (const char* suffix : precision_suffixes()) {
        for (const char* stem : part.stems) {
          const std::string name = std::string(stem) + suffix + ".onnx";
          if (found.empty() && names.contains(name)) found = name;
        }
      }
      if (!found.empty()) files.parts[part.part] = found;
      if (!part.required) continue;
      ++required;
      if (!found.empty()) ++present;
      else missing += (missing.empty() ? "" : ", ") + std::string(part.stems[0]) + ".onnx";
    }
    if (present == required) return files;
    if (present > 0) {
      throw Error(ErrorCode::kModelNotFound, where + ": incomplete " +
                                                 (candidate.family == Family::kUsls ? "usls" : "samexporter") +
                                                 " model, missing " + missing + "; the layout needs " +
                                                 required_names(candidate));
    }
  }
  return std::nullopt;
}

}  // namespace sam3::pure
