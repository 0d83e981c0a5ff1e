#include "cli_common.h"

#include <cstdio>
#include <cstdlib>
#include <regex>

namespace sam3::cli {

int exit_code_for(ErrorCode code) { return error_traits(code).exit_code; }

void print_error(const std::string& message) { std::fprintf(stderr, "sam3: error: %s\n", message.c_str()); }

std::string usage_failure_message(const CLI::App* app, const CLI::Error& e) {
  // CLI11 2.x words a repeat of a one-value option as ArgumentMismatch::AtMost(name, 1, n).
  static const std::regex kRepeated("(.+): At Most 1 required but received ([0-9]+)");
  std::smatch m;
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && std::regex_match(what, m, kRepeated)) {
    const std::string times = m[2] == "2" ? "twice" : m[2].str() + " times";
    return m[1].str() + " given " + times + ": it takes one value, give it once\nRun with --help for more information.\n";
  }
  return CLI::FailureMessage::simple(app, e);
}

}  // namespace sam3::cli
