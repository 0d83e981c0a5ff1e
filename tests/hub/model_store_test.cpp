// The model store against a local server that behaves like the hub.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "sam3/error.h"
#include "sam3/hub.h"
#include "support/files.h"
#include "support/fake_hub.h"

namespace {

namespace fs = std::filesystem;
using sam3::test::FakeHub;

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

using sam3::test::read_file;

// What a pull that must fail threw (failed is false if it succeeded).
struct PullFailure {
  bool failed = false;
  sam3::ErrorCode code = sam3::ErrorCode::kIo;
  std::string message;
};

PullFailure pull_failure(const sam3::ModelStore& store, const sam3::RegistryEntry& entry) {
  try {
    store.pull(entry);
  } catch (const sam3::Error& e) {
    return {true, e.code(), e.what()};
  }
  return {};
}

class ModelStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = sam3::test::fresh_test_dir("sam3_store");
    big_ = random_bytes(3'000'000, 1);
    small_ = random_bytes(200'000, 2);
    big_[0] = small_[0] = '\x08';  // ONNX files start with field 1 (ir_version)
    json_ = R"({"model": {"vocab": {}, "merges": []}})";
    hub_.add(entry_.repo, "vision-encoder.onnx", big_);
    hub_.add(entry_.repo, "decoder.onnx", small_);
    hub_.add(entry_.repo, "tokenizer.json", json_);
  }
  sam3::ModelStore store() const {
    sam3::HubOptions o;
    o.endpoint = hub_.endpoint();
    o.cache_dir = cache_;
    o.first_retry_delay_s = 0.01;
    o.max_attempts = 4;
    return sam3::ModelStore(o);
  }
  fs::path dir() const { return cache_ / entry_.name; }
  void expect_complete() {
    EXPECT_EQ(read_file(dir() / "vision-encoder.onnx"), big_);
    EXPECT_EQ(read_file(dir() / "decoder.onnx"), small_);
    EXPECT_EQ(read_file(dir() / "tokenizer.json"), json_);
    for (const auto& e : fs::directory_iterator(dir())) EXPECT_NE(e.path().extension(), ".part") << e.path();
  }

  FakeHub hub_;
  sam3::RegistryEntry entry_{
      "test-model", "acme/sam3-test", "main", sam3::Layout::kUsls, {"vision-encoder.onnx", "decoder.onnx", "tokenizer.json"}, 3'200'000,
      "test"};
  fs::path cache_;
  std::string big_, small_, json_;
};

TEST_F(ModelStoreTest, PullFollowsRedirectsVerifiesAndRecords) {
  auto s = store();
  EXPECT_EQ(s.state(entry_), sam3::ModelState::kMissing);
  std::int64_t last_done = 0;
  EXPECT_EQ(s.pull(entry_, [&](const sam3::DownloadProgress& p) { last_done = p.done; }), dir());
  expect_complete();
  EXPECT_GT(last_done, 0);
  EXPECT_EQ(s.state(entry_), sam3::ModelState::kComplete);
  EXPECT_TRUE(s.verify(entry_).empty());
  // A second pull downloads nothing.
  const auto before = hub_.requests().size();
  s.pull(entry_);
  EXPECT_EQ(hub_.requests().size(), before);
}

TEST_F(ModelStoreTest, DroppedTransferResumesWithRange) {
  hub_.drop_after_bytes = 1'000'000;
  store().pull(entry_);
  expect_complete();
  bool resumed = false;
  for (const auto& r : hub_.requests()) resumed |= r.range == "bytes=1000000-";
  EXPECT_TRUE(resumed) << "the second attempt must ask only for the missing bytes";
}

TEST_F(ModelStoreTest, PartFileFromAnEarlierRunIsResumed) {
  fs::create_directories(dir());
  std::ofstream(dir() / "vision-encoder.onnx.part", std::ios::binary) << big_.substr(0, 123456);
  EXPECT_EQ(store().state(entry_), sam3::ModelState::kPartial);
  store().pull(entry_);
  expect_complete();
  bool resumed = false;
  for (const auto& r : hub_.requests()) resumed |= r.range == "bytes=123456-";
  EXPECT_TRUE(resumed);
}

TEST_F(ModelStoreTest, CorruptDownloadIsRejectedAndRetriedOnce) {
  hub_.corrupt_responses = 1;
  store().pull(entry_);
  expect_complete();
  EXPECT_EQ(hub_.cdn_hits(big_), 2);
}

TEST_F(ModelStoreTest, PersistentCorruptionFailsAndLeavesNothing) {
  hub_.corrupt_responses = 100;
  const auto f = pull_failure(store(), entry_);
  ASSERT_TRUE(f.failed);
  EXPECT_EQ(f.code, sam3::ErrorCode::kNetwork);
  EXPECT_NE(f.message.find("corrupt"), std::string::npos) << f.message;
  EXPECT_FALSE(fs::exists(dir() / "vision-encoder.onnx"));
  EXPECT_FALSE(fs::exists(dir() / "vision-encoder.onnx.part"));
}

TEST_F(ModelStoreTest, AnHtmlPageInsteadOfTheFileIsNeverTakenForTheModel) {
  hub_.html_pages = 100;
  auto s = store();
  const auto f = pull_failure(s, entry_);
  ASSERT_TRUE(f.failed) << "a web page was accepted as the model";
  EXPECT_EQ(f.code, sam3::ErrorCode::kNetwork);
  EXPECT_NE(f.message.find("web page"), std::string::npos) << f.message;
  EXPECT_NE(s.state(entry_), sam3::ModelState::kComplete);
  for (const auto& f : entry_.files) EXPECT_FALSE(fs::exists(dir() / f)) << f << " marked present";
  for (const auto& f : entry_.files) EXPECT_FALSE(fs::exists(dir() / (f + ".part"))) << f << ".part left";
}

TEST_F(ModelStoreTest, AnEndlessBodyStopsAtTheAnnouncedSizeAndIsRemoved) {
  hub_.endless_bodies = 1;
  auto s = store();
  const auto f = pull_failure(s, entry_);
  ASSERT_TRUE(f.failed) << "an endless body was accepted";
  EXPECT_NE(f.message.find("more than the"), std::string::npos) << f.message;
  std::error_code ec;
  EXPECT_FALSE(fs::exists(dir() / "vision-encoder.onnx.part", ec)) << "the partial file is removed";
  hub_.endless_bodies = 0;
  s.pull(entry_);  // and a healthy hub then gives the model
  expect_complete();
}

TEST_F(ModelStoreTest, ServerErrorsAreRetriedWithBackoff) {
  hub_.fail_with_503 = 2;
  store().pull(entry_);
  expect_complete();
}

TEST_F(ModelStoreTest, GatedRepositoryNeedsAToken) {
  hub_.token = "hf_secret";
  const auto f = pull_failure(store(), entry_);
  ASSERT_TRUE(f.failed);
  EXPECT_NE(f.message.find("HF_TOKEN"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("GatedRepo"), std::string::npos) << f.message;
  sam3::HubOptions o = store().options();
  o.token = "hf_secret";
  sam3::ModelStore(o).pull(entry_);
  expect_complete();
  for (const auto& r : hub_.requests()) {
    if (r.path.starts_with("/cdn/")) EXPECT_EQ(r.authorization, "") << "token must not leak to the CDN";
  }
}

TEST_F(ModelStoreTest, MissingFileIsANotFoundError) {
  auto entry = entry_;
  entry.files.push_back("nope.onnx");
  const auto f = pull_failure(store(), entry);
  ASSERT_TRUE(f.failed);
  EXPECT_NE(f.message.find("EntryNotFound"), std::string::npos) << f.message;
}

TEST_F(ModelStoreTest, UnreachableHubSaysWhatToDownloadByHand) {
  sam3::HubOptions o = store().options();
  o.endpoint = "http://127.0.0.1:9";
  const auto f = pull_failure(sam3::ModelStore(o), entry_);
  ASSERT_TRUE(f.failed);
  const std::string& m = f.message;
  EXPECT_NE(m.find("cannot reach http://127.0.0.1:9"), std::string::npos) << m;
  EXPECT_NE(m.find("acme/sam3-test/resolve/main/vision-encoder.onnx"), std::string::npos) << m;
  EXPECT_NE(m.find("sam3 models import"), std::string::npos) << m;
}

TEST_F(ModelStoreTest, ConcurrentPullsDownloadEachFileOnce) {
  hub_.slow_ms = 300;
  std::thread a([&] { store().pull(entry_); });
  std::thread b([&] { store().pull(entry_); });
  a.join();
  b.join();
  expect_complete();
  EXPECT_EQ(hub_.cdn_hits(big_), 1);
  EXPECT_EQ(hub_.cdn_hits(small_), 1);
}

TEST_F(ModelStoreTest, VerifyFindsDamagedFiles) {
  store().pull(entry_);
  {
    std::fstream f(dir() / "decoder.onnx", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('X');
  }
  const auto problems = store().verify(entry_);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("decoder.onnx"), std::string::npos);
}

TEST_F(ModelStoreTest, ImportFromFolderAndZip) {
  const fs::path outside = sam3::test::fresh_test_dir("sam3_import");
  const fs::path src = outside / "src";
  fs::create_directories(src / "nested");
  std::ofstream(src / "nested" / "vision-encoder.onnx", std::ios::binary) << big_;
  std::ofstream(src / "decoder.onnx", std::ios::binary) << small_;
  std::ofstream(src / "tokenizer.json", std::ios::binary) << json_;
  auto s = store();
  EXPECT_EQ(&s.import(src, &entry_), &entry_);
  expect_complete();
  EXPECT_TRUE(s.verify(entry_).empty());

  fs::remove_all(dir());
  const fs::path zip = outside / "models.zip";
  ASSERT_EQ(std::system(("cd " + src.string() + " && zip -qr " + zip.string() + " .").c_str()), 0);
  s.import(zip, &entry_);
  expect_complete();
  EXPECT_THROW(s.import(src / "decoder.onnx", &entry_), sam3::Error) << "neither a folder nor a zip";
}

}  // namespace

namespace {

// An archive entry resumes a dropped transfer like any file, then unpacks and removes it.
TEST_F(ModelStoreTest, AnArchiveEntryResumesVerifiesAndUnpacks) {
  const auto staging = cache_ / "staging" / "inner";
  fs::create_directories(staging);
  std::ofstream(staging / "vision-encoder.onnx", std::ios::binary) << big_;
  std::ofstream(staging / "decoder.onnx", std::ios::binary) << small_;
  std::ofstream(staging / "tokenizer.json", std::ios::binary) << json_;
  // Stored, not deflated: random bytes do not compress, and the archive must be big enough to drop mid-way.
  ASSERT_EQ(std::system(("cd '" + (cache_ / "staging").string() + "' && zip -q -0 -r model.zip inner").c_str()), 0)
      << "needs the zip command";
  const std::string archive = read_file(cache_ / "staging" / "model.zip");
  sam3::RegistryEntry zipped = entry_;
  zipped.name = "zipped";
  zipped.repo = "acme/zipped";
  zipped.archive = "model.zip";
  hub_.add(zipped.repo, "model.zip", archive);
  hub_.drop_after_bytes = 1'000'000;
  auto s = store();
  s.pull(zipped);
  const auto d = cache_ / "zipped";
  EXPECT_EQ(read_file(d / "vision-encoder.onnx"), big_);
  EXPECT_EQ(read_file(d / "decoder.onnx"), small_);
  EXPECT_FALSE(fs::exists(d / "model.zip"));
  bool resumed = false;
  for (const auto& r : hub_.requests()) resumed |= r.range == "bytes=1000000-";
  EXPECT_TRUE(resumed) << "the archive's transfer resumed with Range";
  EXPECT_EQ(s.state(zipped), sam3::ModelState::kComplete);
  EXPECT_TRUE(s.verify(zipped).empty());
}

TEST_F(ModelStoreTest, APinnedFileWhoseBytesChangedIsDeletedAndReported) {
  sam3::RegistryEntry pinned = entry_;
  pinned.pinned_sha256 = {{"decoder.onnx", std::string(64, 'a')}};
  const auto f = pull_failure(store(), pinned);
  ASSERT_TRUE(f.failed) << "a file that is not the pinned one was taken";
  EXPECT_NE(f.message.find("changed or was tampered with"), std::string::npos) << f.message;
  EXPECT_FALSE(fs::exists(dir() / "decoder.onnx"));
  EXPECT_FALSE(fs::exists(dir() / "decoder.onnx.part"));
}

}  // namespace
