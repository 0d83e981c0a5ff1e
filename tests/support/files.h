// Whole-file reads and per-test folders for tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sam3::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace detail {

// Removes the folders fresh_test_dir made once their test has ended (after the fixture's
// destructor, so nothing still holds them); SAM3_KEEP_TEST_DIRS=1 keeps them for a look.
class RemoveTestDirsAtTestEnd : public ::testing::EmptyTestEventListener {
 public:
  static void add(const std::filesystem::path& dir) {
    static RemoveTestDirsAtTestEnd* self = [] {
      auto* listener = new RemoveTestDirsAtTestEnd;  // owned by gtest's listener list
      ::testing::UnitTest::GetInstance()->listeners().Append(listener);
      return listener;
    }();
    self->dirs_.push_back(dir);
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    const char* keep = std::getenv("SAM3_KEEP_TEST_DIRS");
    if (!keep || std::string(keep) != "1") {
      std::error_code ec;
      for (const auto& d : dirs_) std::filesystem::remove_all(d, ec);
    }
    dirs_.clear();
  }

 private:
  std::vector<std::filesystem::path> dirs_;
};

}  // namespace detail

// An empty folder for the running test: <tmp>/<prefix>_<test name>_<pid>, so that two checkouts
// running the same test at once on one machine never share (or remove) each other's folder.
// Removed when the test ends.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info->name();  // "Test/param" for a parameterized test: one folder, not two
  for (char& c : name) c = c == '/' ? '-' : c;
  const auto dir = std::filesystem::temp_directory_path() / (prefix + "_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  detail::RemoveTestDirsAtTestEnd::add(dir);
  return dir;
}

}  // namespace sam3::test
