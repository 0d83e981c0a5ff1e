// Archives and folders that try to exhaust the disk or pass for a model: a zip bomb, a header
// that lies about the unpacked size, a size no disk has, a web page saved as a model file, and
// FIFOs or looping links in a folder. Each fails with a clear error and leaves no file behind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "sam3/error.h"
#include "sam3/hub.h"
#include "support/fake_hub.h"
#include "support/files.h"
#include "support/zip_writer.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::make_zip;
using sam3::test::ZipEntry;

constexpr std::int64_t kMiB = 1 << 20;

class HostileArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sam3::test::fresh_test_dir("sam3_hostile_archive");
    onnx_ = std::string("\x08\x07", 2) + std::string(1000, 'w');  // starts like an ONNX model
  }
  void TearDown() override { fs::remove_all(root_); }

  sam3::ModelStore store(std::int64_t max_unpacked = 0) const {
    sam3::HubOptions o;
    o.endpoint = hub_.endpoint();
    o.cache_dir = root_ / "store";
    o.first_retry_delay_s = 0.01;
    o.max_unpacked_bytes = max_unpacked;
    return sam3::ModelStore(o);
  }
  fs::path write_zip(const std::vector<ZipEntry>& entries) const {
    const fs::path p = root_ / "model.zip";
    std::ofstream(p, std::ios::binary) << make_zip(entries);
    return p;
  }
  // The model's three files, vision-encoder.onnx as given.
  std::vector<ZipEntry> model_with(ZipEntry vision) const {
    return {std::move(vision), {"decoder.onnx", onnx_}, {"tokenizer.json", json_}};
  }
  // What an import or pull that must fail threw.
  template <typename F>
  std::string failure(F&& f) {
    try {
      f();
    } catch (const sam3::Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "it did not fail";
    return "";
  }
  // No model file and no .part anywhere in the store.
  void expect_nothing_written() const {
    if (!fs::exists(root_ / "store")) return;
    for (const auto& e : fs::recursive_directory_iterator(root_ / "store")) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(e.is_directory() || name.ends_with(".lock") || name == ".sam3-manifest.json") << "left behind: " << e.path();
    }
  }

  sam3::test::FakeHub hub_;
  fs::path root_;
  std::string onnx_, json_ = R"({"model": {"vocab": {}, "merges": []}})";
  const sam3::RegistryEntry entry_{
      "test-model", "acme/sam3-test", "main", sam3::Layout::kUsls, {"vision-encoder.onnx", "decoder.onnx", "tokenizer.json"}, 3'000'000,
      "test"};
};

TEST_F(HostileArchiveTest, AZipBombIsRefusedFromItsDeclaredSizeBeforeAnythingIsWritten) {
  // 16 MiB of zeros deflate to about 16 KB; the limit is 4 MiB.
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", "\x08" + std::string(16 * kMiB, '\0')}));
  ASSERT_LT(fs::file_size(zip), 200'000u);
  const std::string message = failure([&] { store(4 * kMiB).import(zip, &entry_); });
  EXPECT_NE(message.find("vision-encoder.onnx is 16777217 bytes unpacked, more than the 4194304 allowed"), std::string::npos) << message;
  EXPECT_NE(message.find("SAM3_MAX_UNPACKED_BYTES"), std::string::npos) << message;
  expect_nothing_written();
}

TEST_F(HostileArchiveTest, AHeaderThatUnderstatesTheSizeStopsAtTheDeclaredSizeAndLeavesNoPart) {
  // Declares 2 MB (under every bound), inflates to 16 MiB.
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", "\x08" + std::string(16 * kMiB, '\0'), 2'000'000}));
  const std::string message = failure([&] { store().import(zip, &entry_); });
  EXPECT_NE(message.find("unpacks to more than the 2000000 bytes its header declares"), std::string::npos) << message;
  expect_nothing_written();
}

TEST_F(HostileArchiveTest, AHeaderThatOverstatesTheSizeIsDamaged) {
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", onnx_, 5000}));
  const std::string message = failure([&] { store().import(zip, &entry_); });
  EXPECT_NE(message.find("unpacks to 1002 bytes, not the 5000 its header declares"), std::string::npos) << message;
  expect_nothing_written();
}

TEST_F(HostileArchiveTest, ASizeNoDiskHasIsRefusedBeforeWriting) {
  // 1 PB declared, allowed by the bound: only the free space stops it.
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", onnx_, 1'000'000'000'000'000}));
  const std::string message = failure([&] { store(std::int64_t{1} << 60).import(zip, &entry_); });
  EXPECT_NE(message.find("the model needs 10000000000010"), std::string::npos) << message;  // + decoder and tokenizer
  EXPECT_NE(message.find("free; free some space"), std::string::npos) << message;
  expect_nothing_written();
}

TEST_F(HostileArchiveTest, TheDefaultBoundIsTwiceTheModelsPublishedSize) {
  sam3::RegistryEntry small = entry_;
  small.approx_bytes = 1;  // bound: 256 MiB
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", onnx_, 300 * kMiB}));
  const std::string message = failure([&] { store().import(zip, &small); });
  EXPECT_NE(message.find("more than the 268435456 allowed"), std::string::npos) << message;
  expect_nothing_written();
}

TEST_F(HostileArchiveTest, AZipBombInAPulledArchiveLeavesNeitherPartNorArchiveContents) {
  sam3::RegistryEntry zipped = entry_;
  zipped.name = "zipped";
  zipped.repo = "acme/zipped";
  zipped.archive = "model.zip";
  hub_.add(zipped.repo, "model.zip", make_zip(model_with({"vision-encoder.onnx", "\x08" + std::string(16 * kMiB, '\0'), 1000})));
  const std::string message = failure([&] { store().pull(zipped); });
  EXPECT_NE(message.find("its header declares: a damaged archive or a zip bomb"), std::string::npos) << message;
  for (const char* f : {"vision-encoder.onnx", "vision-encoder.onnx.part", "decoder.onnx", "decoder.onnx.part"}) {
    EXPECT_FALSE(fs::exists(root_ / "store" / "zipped" / f)) << f;
  }
}

TEST_F(HostileArchiveTest, ImportChecksContentAsAPullDoes) {
  const fs::path zip = write_zip(model_with({"vision-encoder.onnx", "<!DOCTYPE html><html>Sign in</html>"}));
  std::string message = failure([&] { store().import(zip, &entry_); });
  EXPECT_NE(message.find("vision-encoder.onnx: it is a web page"), std::string::npos) << message;
  expect_nothing_written();

  const fs::path folder = root_ / "by-hand";
  fs::create_directories(folder);
  std::ofstream(folder / "vision-encoder.onnx", std::ios::binary) << onnx_;
  std::ofstream(folder / "decoder.onnx", std::ios::binary) << "";  // an interrupted browser download
  std::ofstream(folder / "tokenizer.json", std::ios::binary) << json_;
  message = failure([&] { store().import(folder, &entry_); });
  EXPECT_NE(message.find("decoder.onnx: the file is empty"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(root_ / "store" / entry_.name / "decoder.onnx.part"));
  EXPECT_FALSE(fs::exists(root_ / "store" / entry_.name / "decoder.onnx"));
}

TEST_F(HostileArchiveTest, FifosDevicesAndLoopingLinksInAnImportedFolderAreNamedNotRead) {
  const fs::path folder = root_ / "by-hand";
  fs::create_directories(folder / "sub");
  std::ofstream(folder / "decoder.onnx", std::ios::binary) << onnx_;
  std::ofstream(folder / "tokenizer.json", std::ios::binary) << json_;
  fs::create_directory_symlink(folder, folder / "sub" / "cycle");  // a folder that contains itself
  for (const auto& [how, expect] : std::vector<std::pair<std::string, std::string>>{
           {"fifo", "is not a regular file"}, {"zero", "is not a regular file"}, {"loop", "is not a regular file"}}) {
    SCOPED_TRACE(how);
    const fs::path vision = folder / "vision-encoder.onnx";
    fs::remove(vision);
    if (how == "fifo") ASSERT_EQ(mkfifo(vision.c_str(), 0600), 0);
    if (how == "zero") fs::create_symlink("/dev/zero", vision);
    if (how == "loop") fs::create_symlink(vision, vision);
    const std::string message = failure([&] { store().import(folder, &entry_); });
    EXPECT_NE(message.find("vision-encoder.onnx " + expect), std::string::npos) << message;
    expect_nothing_written();
  }
}

TEST(HubOptionsFromEnvironment, TheUnpackLimitIsSetByEnvironmentAndCheckedAsANumber) {
  ::setenv("SAM3_MAX_UNPACKED_BYTES", "123456", 1);
  EXPECT_EQ(sam3::hub_options_from_environment().max_unpacked_bytes, 123456);
  for (const char* bad : {"12MB", "-5", "0", "1e9"}) {
    ::setenv("SAM3_MAX_UNPACKED_BYTES", bad, 1);
    try {
      sam3::hub_options_from_environment();
      ADD_FAILURE() << bad << " was taken";
    } catch (const sam3::Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a positive number of bytes"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("SAM3_MAX_UNPACKED_BYTES");
  EXPECT_EQ(sam3::hub_options_from_environment().max_unpacked_bytes, 0);
}

}  // namespace
