// Which model directory a command uses: --models DIR, $SAM3_MODELS, else the default
// registry model from the store, pulled on first use unless --offline; and which execution
// providers it runs on (--provider).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "sam3/execution_provider.h"
#include "sam3/model.h"

namespace sam3::cli {

struct ModelSelection {
  std::string dir;
  bool offline = false;
  std::vector<std::string> providers;  // --provider, as given (each checked when parsed)
  std::string precision = "exact";     // --precision
  bool registry_default = true;        // false: no --models and no $SAM3_MODELS is an error, not a download
};

void add_model_options(CLI::App& cmd, ModelSelection& selection);
// --precision exact|fast into `value` (add_model_options adds it too).
void add_precision_option(CLI::App& cmd, std::string& value);
Precision precision_of(const std::string& value);
// The --provider list in order (empty: the CPU). Throws kInvalidArgument for a bad list.
std::vector<ExecutionProvider> execution_providers(const ModelSelection& selection);
// Throws kModelNotFound / kNetwork with what to do when no model is available.
std::filesystem::path resolve_model_dir(const ModelSelection& selection);

}  // namespace sam3::cli
