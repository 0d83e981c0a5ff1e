// Which model directory a command uses: --models DIR, $SAM3_MODELS, else the default
// registry model from the store, pulled on first use unless --offline.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

namespace sam3::cli {

struct ModelSelection {
  std::string dir;
  bool offline = false;
};

void add_model_options(CLI::App& cmd, ModelSelection& selection);
// Throws kModelNotFound / kNetwork with what to do when no model is available.
std::filesystem::path resolve_model_dir(const ModelSelection& selection);

}  // namespace sam3::cli
