// Output folders: only sam3's own entries are replaced, all together or not at all, and an
// update cut short (by an error or a killed process) leaves the previous state.
#include "sam3/output_folder.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "sam3/error.h"
#include "sam3/export.h"
#include "support/files.h"

namespace {

namespace fs = std::filesystem;
using sam3::OutputFolderUpdate;
using sam3::test::read_file;

// Every file under `root` (relative path -> contents), to compare whole states.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = read_file(e.path());
  }
  return files;
}

void write_version(OutputFolderUpdate& update, const std::string& tag) {
  sam3::write_file_atomic(update.stage("img") / "mask.png", "mask " + tag);
  sam3::write_file_atomic(update.stage("img2") / "mask.png", "mask2 " + tag);
  sam3::write_file_atomic(update.stage("result.json"), "result " + tag);
}

// One whole update of `root` to version `tag`, committed.
void commit_version(const fs::path& root, const std::string& tag) {
  OutputFolderUpdate u(root);
  write_version(u, tag);
  u.commit();
}

TEST(SafeFileName, DotsSeparatorsAndControlCharactersNeverEscapeTheFolder) {
  EXPECT_EQ(sam3::safe_file_name(".", "image"), "image");
  EXPECT_EQ(sam3::safe_file_name("..", "image"), "image");
  EXPECT_EQ(sam3::safe_file_name("", "image"), "image");
  EXPECT_EQ(sam3::safe_file_name("../../etc", "image"), "_._.._etc");
  EXPECT_EQ(sam3::safe_file_name(".hidden", "image"), "_hidden");
  EXPECT_EQ(sam3::safe_file_name("a\nb\\c", "image"), "a_b_c");
  EXPECT_EQ(sam3::safe_file_name("straße", "image"), "straße");
  std::string long_name;
  for (int i = 0; i < 100; ++i) long_name += "é";  // 200 bytes
  const auto cut = sam3::safe_file_name(long_name, "image");
  EXPECT_LE(cut.size(), 120u);
  EXPECT_EQ(cut.size() % 2, 0u) << "a UTF-8 character was cut in half";
}

TEST(UniqueFileName, DistinctWithoutRegardToCase) {
  std::set<std::string> used = {"result.json"};
  EXPECT_EQ(sam3::unique_file_name("result.json", used), "result.json-2");
  EXPECT_EQ(sam3::unique_file_name("Photo", used), "Photo");
  EXPECT_EQ(sam3::unique_file_name("photo", used), "photo-2");
  EXPECT_EQ(sam3::unique_file_name("photo-2", used), "photo-2-2");
}

TEST(OutputFolderUpdate, ReplacesItsOwnEntriesAndNeverTouchesOthers) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  sam3::write_file_atomic(root / "notes.txt", "mine");
  sam3::write_file_atomic(root / "photos" / "a.jpg", "user photo");
  commit_version(root, "v1");
  commit_version(root, "v2");
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v2");
  EXPECT_EQ(read_file(root / "result.json"), "result v2");
  EXPECT_EQ(read_file(root / "notes.txt"), "mine");
  EXPECT_EQ(read_file(root / "photos" / "a.jpg"), "user photo");
  for (const auto& e : fs::directory_iterator(root)) {
    EXPECT_EQ(e.path().filename().string().find(".sam3-update"), std::string::npos) << "left " << e.path();
  }
}

TEST(OutputFolderUpdate, RefusesAnEntryThatSam3DidNotCreate) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  sam3::write_file_atomic(root / "img" / "holiday.jpg", "user photo");
  const auto before = snapshot(root);
  OutputFolderUpdate u(root);
  try {
    u.stage("img");
    FAIL() << "a folder of the user's was accepted as an output";
  } catch (const sam3::Error& e) {
    EXPECT_EQ(e.code(), sam3::ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("not written by sam3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(snapshot(root).count("img/holiday.jpg"), 1u);
  EXPECT_EQ(read_file(root / "img" / "holiday.jpg"), before.at("img/holiday.jpg"));
}

// A user's file put inside a folder sam3 wrote would go with the folder sam3 replaces: refused
// before the work (stage) and again at the swap (commit), the folder left as it was.
TEST(OutputFolderUpdate, AUsersFileInsideSam3sOwnFolderIsNeverReplaced) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  commit_version(root, "v1");
  sam3::write_file_atomic(root / "img" / "my_note.txt", "mine");
  const auto before = snapshot(root);
  {
    OutputFolderUpdate u(root);
    try {
      u.stage("img");
      FAIL() << "sam3's folder holding a user's file was accepted for replacement";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kIo);
      EXPECT_NE(std::string(e.what()).find((root / "img" / "my_note.txt").string() + " was not written by sam3"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(snapshot(root), before);

  fs::remove(root / "img" / "my_note.txt");
  {
    OutputFolderUpdate u(root);
    write_version(u, "v2");
    sam3::write_file_atomic(root / "img" / "late.txt", "put there during the run");
    EXPECT_THROW(u.commit(), sam3::Error) << "a file added while the run was under way";
  }
  EXPECT_EQ(read_file(root / "img" / "late.txt"), "put there during the run");
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v1");

  fs::remove(root / "img" / "late.txt");
  commit_version(root, "v3");
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v3") << "once the user's file is out, the folder is sam3's to replace";
}

// An output an earlier run wrote and this one does not (fewer formats) goes with the swap, all
// or nothing; what is not sam3's is never retired.
TEST(OutputFolderUpdate, RetiredEntriesGoWithTheSwapAndComeBackIfItFails) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  sam3::write_file_atomic(root / "notes.txt", "mine");
  commit_version(root, "v1");
  const auto before = snapshot(root);
  {
    OutputFolderUpdate u(root);
    sam3::write_file_atomic(u.stage("result.json"), "result v2");
    u.retire("img2");
    u.retire("notes.txt");  // the user's: never
    EXPECT_THROW(u.commit([](size_t) { throw sam3::Error(sam3::ErrorCode::kIo, "disk gone"); }), sam3::Error);
  }
  EXPECT_EQ(snapshot(root), before) << "a failed swap brings the retired entry back";
  {
    OutputFolderUpdate u(root);
    sam3::write_file_atomic(u.stage("result.json"), "result v2");
    u.retire("img2");
    u.retire("notes.txt");
    u.commit();
  }
  EXPECT_FALSE(fs::exists(root / "img2")) << "retired with the swap";
  EXPECT_EQ(read_file(root / "notes.txt"), "mine");
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v1") << "neither staged nor retired: kept";
  EXPECT_EQ(read_file(root / "result.json"), "result v2");
  EXPECT_EQ(read_file(root / ".sam3-outputs.json").find("img2"), std::string::npos) << "no longer recorded as sam3's";
}

TEST(OutputFolderUpdate, AFailureDuringTheSwapRestoresThePreviousState) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  commit_version(root, "v1");
  const auto before = snapshot(root);
  {
    OutputFolderUpdate u(root);
    write_version(u, "v2");
    EXPECT_THROW(u.commit([](size_t i) {
      if (i == 1) throw sam3::Error(sam3::ErrorCode::kIo, "disk gone");
    }),
                 sam3::Error);
  }
  EXPECT_EQ(snapshot(root), before);
}

TEST(OutputFolderUpdate, AnUpdateKilledMidwayIsRolledBackByTheNextOne) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  commit_version(root, "v1");
  const auto before = snapshot(root);
  const pid_t child = ::fork();
  if (child == 0) {
    OutputFolderUpdate u(root);
    sam3::write_file_atomic(u.stage("img") / "mask.png", "mask v2");
    sam3::write_file_atomic(u.stage("result.json"), "result v2");
    u.retire("img2");  // moved aside before the swaps: the recovery must bring it back
    u.commit([](size_t i) {
      if (i == 1) ::_exit(9);  // as if killed: no destructor, no cleanup
    });
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 9);
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v2") << "the child did not get as far as the swap";
  EXPECT_FALSE(fs::exists(root / "img2")) << "the child had moved the retired entry aside";
  { OutputFolderUpdate recover(root); }
  EXPECT_EQ(snapshot(root), before);
  for (const auto& e : fs::directory_iterator(root)) {
    EXPECT_EQ(e.path().filename().string().find(".sam3-update"), std::string::npos) << "left " << e.path();
  }
  commit_version(root, "v3");
  EXPECT_EQ(read_file(root / "img" / "mask.png"), "mask v3") << "nothing of the killed update counts as a user's file";
}

TEST(OutputFolderUpdate, ADamagedJournalNeverRollsBackAUsersFile) {
  // A crashed update's journal lists what to put back; one naming a user's file (damaged, or
  // written by hand) made the recovery delete that file, since no new version of it was staged.
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  commit_version(root, "v1");
  sam3::write_file_atomic(root / "notes.txt", "the user's");
  fs::create_directories(root / ".sam3-update-1-2" / "new");
  sam3::write_file_atomic(root / ".sam3-update-1-2" / "journal.json", R"({"entries":["notes.txt"],"retired":[]})");
  { OutputFolderUpdate recover(root); }
  EXPECT_EQ(read_file(root / "notes.txt"), "the user's") << "the recovery removed a file sam3 did not write";
  EXPECT_FALSE(fs::exists(root / ".sam3-update-1-2"));
}

TEST(OutputFolderUpdate, OneWriterAtATime) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  OutputFolderUpdate first(root);
  try {
    OutputFolderUpdate second(root);
    FAIL() << "two updates of one folder at once";
  } catch (const sam3::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is writing to this folder"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos) << e.what();
  }
}

// A new user's finding (session 16): a user's .sam3-lock or .sam3-outputs.json was overwritten.
TEST(OutputFolderUpdate, AUsersFileUnderTheNameOfSam3sLockOrRecordIsRefusedNotReplaced) {
  for (const auto& [name, text] : {std::pair{".sam3-lock", "my lock notes\n"}, std::pair{".sam3-outputs.json", "{\"not\": \"sam3\"}\n"}}) {
    const auto root = sam3::test::fresh_test_dir("sam3_outdir");
    sam3::write_file_atomic(root / name, text);
    const auto before = snapshot(root);
    try {
      OutputFolderUpdate u(root);
      ADD_FAILURE() << name << " of a user's was taken as sam3's";
    } catch (const sam3::Error& e) {
      EXPECT_EQ(e.code(), sam3::ErrorCode::kIo);
      EXPECT_NE(std::string(e.what()).find(std::string(name) + ": exists and was not written by sam3"), std::string::npos) << e.what();
    }
    EXPECT_EQ(snapshot(root), before) << name;
  }
  // sam3's own lock left by a killed run, and its record, are sam3's.
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  commit_version(root, "v1");
  sam3::write_file_atomic(root / ".sam3-lock", "sam3 (pid 1)\n");
  EXPECT_NO_THROW(commit_version(root, "v2"));
  EXPECT_EQ(read_file(root / "result.json"), "result v2");
}

// A refused update of a folder that existed leaves it as it was: no lock, record or staging.
TEST(OutputFolderUpdate, ARefusedUpdateLeavesAnExistingFolderAsItWas) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  sam3::write_file_atomic(root / "result.json", "the user's");
  const auto before = snapshot(root);
  {
    OutputFolderUpdate u(root);
    EXPECT_THROW(u.check("result.json"), sam3::Error);
    EXPECT_THROW(u.stage("result.json"), sam3::Error);
  }
  EXPECT_EQ(snapshot(root), before);
  EXPECT_FALSE(fs::exists(root / ".sam3-lock"));
}

TEST(OutputFolderUpdate, AFileWhereTheFolderShouldBeIsRefused) {
  const auto root = sam3::test::fresh_test_dir("sam3_outdir");
  sam3::write_file_atomic(root / "file", "x");
  EXPECT_THROW(OutputFolderUpdate(root / "file"), sam3::Error);
  EXPECT_EQ(read_file(root / "file"), "x");
}

}  // namespace
