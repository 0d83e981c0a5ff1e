// The model cache touches only what sam3 made, and never passes another file off as the cached one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <cstdlib>
#include <fstream>

#include "runtime/session.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;

sam3::runtime::SessionConfig cached() {
  sam3::runtime::SessionConfig c;
  c.intra_op_threads = 1;
  return c;
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// Gives `p` the times of `like` (nanoseconds included), as cp -p or rsync -t do.
void set_mtime(const fs::path& p, const struct stat& like) {
  const struct timespec times[2] = {like.st_atim, like.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
}

// The same bytes with one letter of the producer's name changed: another file of the same size.
std::string another_of_the_same_size(std::string bytes) {
  const size_t at = bytes.find("sam3cpp-test-models");
  if (at == std::string::npos) throw std::runtime_error("the test model has no producer name");
  bytes[at] = 'S';
  return bytes;
}

TEST(ModelFileCache, AFileReplacedKeepingSizeAndTimeIsNotTheCachedOne) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_cache_identity");
  const fs::path model = dir / "text-encoder.onnx";
  const std::string original = sam3::test::read_file(sam3::test::test_models_dir() / "usls" / "text-encoder.onnx");
  write(model, original);
  { const sam3::runtime::Session first(model, cached()); }
  EXPECT_TRUE(sam3::runtime::Session(model, cached()).prepared().pre_optimized) << "the second load uses the cache";
  struct stat before {};
  ASSERT_EQ(::stat(model.c_str(), &before), 0);
  // Replaced by a new file (a download tool, cp -p onto a renamed path): another inode.
  write(dir / "incoming", another_of_the_same_size(original));
  set_mtime(dir / "incoming", before);
  fs::rename(dir / "incoming", model);
  EXPECT_FALSE(sam3::runtime::Session(model, cached()).prepared().pre_optimized) << "a new file, same size and time";
  // Written in place, its time set back: the change time tells.
  ASSERT_EQ(::stat(model.c_str(), &before), 0);
  write(model, original);
  set_mtime(model, before);
  EXPECT_FALSE(sam3::runtime::Session(model, cached()).prepared().pre_optimized) << "rewritten in place, time kept";
  fs::remove_all(dir);
}

std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename()] = sam3::test::read_file(e.path());
  return files;
}

// What a user keeps in a folder that a link in the cache points to: sam3 must not change it.
std::map<std::string, std::string> users_files(const fs::path& dir) {
  write(dir / "optimized.onnx", "the user's own graph");
  write(dir / "meta.json", "{\"the user's\": 1}");
  write(dir / "prepared.onnx", "the user's other graph");
  write(dir / "notes.tmp999999999-1", "a file whose name looks like a dead process's temporary");
  return files_in(dir);
}

TEST(ModelFileCache, LinksInTheCacheAreNeverFollowed) {
  const fs::path dir = sam3::test::fresh_test_dir("sam3_cache_links");
  const fs::path models = dir / "models", elsewhere = dir / "elsewhere";
  fs::create_directories(models);
  fs::create_directories(elsewhere);
  fs::copy_file(sam3::test::test_models_dir() / "usls" / "text-encoder.onnx", models / "text-encoder.onnx");
  // Every entry of the cache made once, then each replaced by a link to the user's folder.
  { const sam3::runtime::Session first(models / "text-encoder.onnx", cached()); }
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(models / ".sam3-cache")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  const auto want = users_files(elsewhere);
  for (const auto& entry : entries) {
    fs::remove_all(entry);
    fs::create_directory_symlink(elsewhere, entry);
  }
  for (int load = 0; load < 2; ++load) {
    const sam3::runtime::Session s(models / "text-encoder.onnx", cached());
    EXPECT_FALSE(s.prepared().pre_optimized) << "the user's optimized.onnx is not a cached graph";
    EXPECT_TRUE(s.prepared().entry.empty()) << s.prepared().entry;
  }
  EXPECT_EQ(files_in(elsewhere), want) << "nothing written, overwritten or removed through the link";
  // The cache folder itself a link: the user cache is used instead.
  fs::remove_all(models / ".sam3-cache");
  fs::create_directory_symlink(elsewhere, models / ".sam3-cache");
  ::setenv("XDG_CACHE_HOME", (dir / "xdg").c_str(), 1);
  { const sam3::runtime::Session s(models / "text-encoder.onnx", cached()); }
  EXPECT_TRUE(sam3::runtime::Session(models / "text-encoder.onnx", cached()).prepared().pre_optimized) << "cached elsewhere";
  EXPECT_TRUE(fs::exists(dir / "xdg" / "sam3cpp" / "optimized"));
  EXPECT_EQ(files_in(elsewhere), want);
  ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}

}  // namespace
