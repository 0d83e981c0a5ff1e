#include "model_resolver.h"

#include <cstdlib>

#include "sam3/error.h"

namespace sam3::cli {

void add_model_options(CLI::App& cmd, ModelSelection& selection) {
  cmd.add_option("-m,--models", selection.dir, "Model directory (usls or samexporter layout); default $SAM3_MODELS");
  cmd.add_flag("--offline", selection.offline, "Never download a model");
}

std::filesystem::path resolve_model_dir(const ModelSelection& selection) {
  if (!selection.dir.empty()) return selection.dir;
  if (const char* env = std::getenv("SAM3_MODELS"); env && *env) return env;
  throw Error(ErrorCode::kModelNotFound,
              "no model given: pass --models DIR with the SAM3 ONNX files (vision-encoder.onnx, text-encoder.onnx, "
              "decoder.onnx, tokenizer.json) or set SAM3_MODELS");
}

}  // namespace sam3::cli
