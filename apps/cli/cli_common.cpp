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
  // No command, or one sam3 does not have ("sam3 label-map x.tif"): name the commands there are.
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what == "A subcommand is required") {
    const CLI::App* at = app;  // the deepest command given (sam3 models ...: models' own commands)
    while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
    std::string names;
    for (const auto* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    const auto extra = app->remaining(true);  // CLI11 keeps a command it does not know among the main app's extras
    const std::string command = at == app ? "sam3" : "sam3 " + at->get_name();
    return (extra.empty() ? "no command given" : "'" + extra.front() + "' is not a command of " + command) + ": give one of " + names +
           "\nRun " + command + " --help for more information.\n";
  }
  return CLI::FailureMessage::simple(app, e);
}

}  // namespace sam3::cli
