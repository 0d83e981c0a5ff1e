// What every sam3 subcommand shares: exit codes, error reporting, the bundled data folder.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "sam3/error.h"

namespace sam3::cli {

// Exit codes (documented in the README).
enum Exit : int {
  kOk = 0,
  kFailure = 1,       // some inputs failed (batch commands)
  kUsage = 2,         // bad command line
  kBadInput = 3,      // image, prompt or box problem
  kModelProblem = 4,  // model missing or not a SAM3 model
  kRuntimeError = 5,  // ONNX Runtime failure
  kIoError = 6,       // cannot write outputs
  kNetworkError = 7,  // download failed
  kInterrupted = 130,  // stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it)
};

int exit_code_for(ErrorCode code);
// "sam3: error: <message>" on stderr.
void print_error(const std::string& message);
// Folder with clip/bpe_simple_vocab_16e6.txt.gz ($SAM3_DATA_DIR overrides the built-in path).
std::filesystem::path data_dir();

// A subcommand registers itself and sets `run` when it is the one selected.
using Runner = std::function<int()>;
void add_segment_command(CLI::App& app, Runner& run);
void add_tokenize_command(CLI::App& app, Runner& run);
void add_models_command(CLI::App& app, Runner& run);
void add_serve_command(CLI::App& app, Runner& run);
void add_label_command(CLI::App& app, Runner& run);

}  // namespace sam3::cli
