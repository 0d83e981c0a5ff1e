// Scratch files of a fuzz target: one private folder per process, removed at exit (libFuzzer
// skips atexit handlers only when it stops on a finding; scripts/fuzz.sh removes TMPDIR then).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace sam3::fuzz {

inline const std::filesystem::path& work_dir(const char* prefix) {
  static const std::filesystem::path dir = [prefix] {
    const auto d = std::filesystem::temp_directory_path() / (std::string(prefix) + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] { std::filesystem::remove_all(work_dir("")); });
    return d;
  }();
  return dir;
}

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace sam3::fuzz
