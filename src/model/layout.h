// Which public family a model directory holds and which file plays each part, from the file
// names (the I/O of the files then decides the generation, in the backends).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "pure/families.h"
#include "sam3/model.h"

namespace sam3::detail {

struct ModelFiles {
  Layout layout;  // the first candidate family's (or the interactive model's)
  // Text-prompted families whose names fit these files, in the registry's order: the files'
  // I/O decides between them (pure::build_generation).
  std::vector<const pure::FamilyRow*> families;
  // Part -> file: "image", "text", "decoder", and for the first usls generation "geometry".
  std::map<std::string, std::filesystem::path> parts;
  const std::filesystem::path* find(const std::string& part) const {
    auto it = parts.find(part);
    return it == parts.end() ? nullptr : &it->second;
  }
};

// Throws kModelNotFound saying which files are missing and what each layout needs.
ModelFiles detect_layout(const std::filesystem::path& dir);
// Throws kModelNotFound naming an entry of the folder that is a FIFO, socket, device or a link
// that loops, before ONNX Runtime opens anything there.
void check_model_folder_entries(const std::filesystem::path& dir);

// tokenizer.json or clip_tokenizer.json in the directory; empty when neither exists.
std::filesystem::path find_vocabulary(const std::filesystem::path& dir);

}  // namespace sam3::detail
