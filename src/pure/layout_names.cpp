#include "pure/layout_names.h"

#include <algorithm>

#include "sam3/error.h"

namespace sam3::pure {

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
  for (const auto& family : families()) {
    for (const auto& part : family.parts) {
      for (const char* suffix : precision_suffixes()) {
        for (const char* stem : part.stems) {
          const std::string name = std::string(stem) + suffix + ".onnx";
          if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
        }
      }
    }
  }
  return out;
}

std::string required_names(const FamilyRow& family) {
  std::string s;
  for (const auto& p : family.parts) {
    if (p.required) s += (s.empty() ? "" : ", ") + std::string(p.stems[0]) + ".onnx";
  }
  return s;
}

std::string every_family_names() {
  // Families that share their files (EfficientSAM3 is geti's layout) are one entry.
  std::vector<std::pair<std::string, std::string>> entries;  // files -> "display / display"
  for (const auto& row : families()) {
    const std::string files = required_names(row);
    auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == files; });
    if (it == entries.end())
      entries.emplace_back(files, row.display);
    else
      it->second += " / " + std::string(row.display);
  }
  std::string s;
  for (size_t i = 0; i < entries.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == entries.size() ? " or " : ", ") + entries[i].first + " (" + entries[i].second + ")";
  }
  return s;
}

std::optional<ChosenFiles> choose_files(const std::string& where, const std::set<std::string>& names) {
  std::string incomplete;
  int best_present = 0, best_required = 1;
  std::optional<ChosenFiles> chosen;
  for (const auto& candidate : families()) {
    std::map<std::string, std::string> parts;
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
      if (!found.empty()) parts[part.part] = found;
      if (!part.required) continue;
      ++required;
      if (!found.empty())
        ++present;
      else
        missing += (missing.empty() ? "" : ", ") + std::string(part.stems[0]) + ".onnx";
    }
    if (present == required) {
      if (!chosen)
        chosen = ChosenFiles{{&candidate}, parts};
      else if (chosen->parts == parts)
        chosen->families.push_back(&candidate);
      continue;
    }
    // Incomplete: said only if no family is complete, for the one most nearly there.
    if (present > 0 && present * best_required > best_present * required) {
      best_present = present, best_required = required;
      incomplete = where + ": incomplete " + std::string(candidate.display) + " model, missing " + missing + "; the family needs " +
                   required_names(candidate);
    }
  }
  if (chosen) return chosen;
  if (!incomplete.empty()) throw Error(ErrorCode::kModelNotFound, incomplete);
  return std::nullopt;
}

}  // namespace sam3::pure
