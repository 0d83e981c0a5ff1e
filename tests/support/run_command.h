// Runs a shell command and captures its exit code, stdout and stderr (for CLI tests).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sam3::test {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline CommandResult run_command(const std::string& command) {
  const auto err_file = std::filesystem::temp_directory_path() / ("sam3_cmd_err_" + std::to_string(::getpid()));
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>" + err_file.string()).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace sam3::test
