// What every sam3 subcommand shares: exit codes, error reporting, the bundled data folder.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "sam3/error.h"

namespace sam3::cli {

// Exit codes (documented in the README); a library error's code comes from its row in
// sam3/error.h (3 bad input, 4 model, 5 runtime, 6 output, 7 download).
enum Exit : int {
  kOk = 0,
  kFailure = 1,  // some inputs failed (batch commands)
  kUsage = 2,    // bad command line
};

int exit_code_for(ErrorCode code);
// "sam3: error: <message>" on stderr.
void print_error(const std::string& message);

// CLI11's message for a command-line error, in sam3's words where CLI11's are obscure: an option
// that takes one value given twice says so ("--threads given 2 times: give it once"), not "At
// Most 1 required but received 2". For CLI::App::failure_message, set once on the main app.
std::string usage_failure_message(const CLI::App* app, const CLI::Error& e);

// A subcommand registers itself and sets `run` when it is the one selected.
using Runner = std::function<int()>;
void add_segment_command(CLI::App& app, Runner& run);
void add_tokenize_command(CLI::App& app, Runner& run);
void add_models_command(CLI::App& app, Runner& run);
void add_serve_command(CLI::App& app, Runner& run);
void add_label_command(CLI::App& app, Runner& run);
void add_web_command(CLI::App& app, Runner& run);
void add_track_command(CLI::App& app, Runner& run);

}  // namespace sam3::cli
