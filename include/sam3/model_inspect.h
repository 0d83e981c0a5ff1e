// What a model folder holds, for `sam3 models inspect`: the generation sam3 recognises, each
// ONNX file's inputs and outputs, the input size, the quirks sam3 applies, and whether this
// host's prepared graphs are cached. Nothing is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sam3/model.h"

namespace sam3 {

struct TensorDescription {
  std::string name, type;           // type as ONNX names it ("float", "int64", "bool", ...)
  std::vector<std::int64_t> shape;  // -1 for a dynamic dimension
};

struct OnnxFileDescription {
  std::filesystem::path file;
  std::uintmax_t bytes = 0;
  std::uintmax_t external_bytes = 0;  // a "<file>.data" sidecar holding its weights
  std::vector<TensorDescription> inputs, outputs;
  bool prepared = false;  // this host's prepared graph is in the cache (`sam3 models optimize`)
  std::string error;      // when ONNX Runtime cannot read the file
};

struct ModelInspection {
  std::filesystem::path directory;
  std::string generation;  // empty when the folder does not load
  std::string problem;     // why not: the layout its file names suggest and what differs
  int input_width = 0, input_height = 0;
  std::vector<std::string> quirks;
  std::filesystem::path vocabulary;  // the tokenizer file the model uses
  std::vector<OnnxFileDescription> files;
  std::string int8_kernels;  // what runs the int8 products with these options (sam3::int8_kernels())
};

// What Model::load checks before it opens a file, at once: the folder exists and its file names
// are those of a layout sam3 knows, every file of it present. Throws as Model::load would
// (kModelNotFound, saying what is missing); returns the layout (Layout::kTracker for the
// interactive model). For a front that checks its folders before it starts (sam3 serve).
Layout check_model_folder(const std::filesystem::path& directory);

// Throws only for a path that is not a folder; everything else is reported in the result.
ModelInspection inspect_model(const std::filesystem::path& directory, const ModelOptions& options = {});

}  // namespace sam3
