#include "pure/layout_names.h"

#include "sam3/error.h"

namespace sam3::pure {

const std::vector<LayoutNames>& text_layouts() {
  // usls's release files carry a precision suffix (vision-encoder-q4f16.onnx) and usls's own
  // runtime calls the decoder geo-encoder-mask-decoder.
  // geti-instant-learn shares usls's encoder names: its own prompt-decoder decides, so it is
  // tried first.
  static const std::vector<LayoutNames> layouts = {
      {Family::kGeti,
       {{"image", {"vision-encoder"}, true},
        {"text", {"text-encoder"}, true},
        {"decoder", {"prompt-decoder"}, true},
        {"geometry", {"geometry-encoder"}, true}}},
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

const std::vector<const char*>& external_data_suffixes() {
  static const std::vector<const char*> suffixes = {".data"};
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

const char* family_name(Family family) {
  return family == Family::kUsls ? "usls" : family == Family::kGeti ? "geti-instant-learn" : "samexporter";
}

std::optional<ChosenFiles> choose_files(const std::string& where, const std::set<std::string>& names) {
  std::string incomplete;
  int best_present = 0, best_required = 1;
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
    // Incomplete: said only if no layout is complete, for the one most nearly there.
    if (present > 0 && present * best_required > best_present * required) {
      best_present = present, best_required = required;
      incomplete = where + ": incomplete " + std::string(family_name(candidate.family)) + " model, missing " + missing +
                   "; the layout needs " + required_names(candidate);
    }
  }
  if (!incomplete.empty()) throw Error(ErrorCode::kModelNotFound, incomplete);
  return std::nullopt;
}

}  // namespace sam3::pure
