// Output folders that never lose or mix a user's files.
//
// OutputFolderUpdate replaces a set of entries (files or folders directly inside one folder)
// together: each new version is written aside first, then all are swapped in; if anything fails
// the previous versions are put back, and an update interrupted by a crash or SIGKILL is rolled
// back by the next one. Only entries that sam3 itself created there (listed in the folder's
// `.sam3-outputs.json`) are ever replaced; anything else of that name is refused, and so is a
// folder of sam3's that holds a file sam3 did not write there. One process at a time updates a
// folder (`.sam3-lock`); a user's file under either name of sam3's is refused, never replaced,
// and a refused run leaves an existing folder as it was.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sam3 {

// A file or folder name made from free text (an image stem, a prompt): separators, control
// characters and a leading dot become '_', "", "." and ".." become `fallback`, and the result
// is at most 120 bytes (whole UTF-8 characters).
std::string safe_file_name(std::string_view text, std::string_view fallback);

// `base`, or `base-2`, `base-3`, ... : the first not in `used` (compared without case, so the
// names stay distinct on case-insensitive file systems too); the result is added to `used`.
std::string unique_file_name(const std::string& base, std::set<std::string>& used);

namespace core {
class FileLock;  // the folder's lock (internal)
}  // namespace core

class OutputFolderUpdate {
 public:
  // Creates `root` if needed and locks it; throws kIo naming the holder if another process
  // is updating it. Rolls back updates that a crashed process left unfinished.
  explicit OutputFolderUpdate(std::filesystem::path root);
  ~OutputFolderUpdate();  // an update not committed leaves the folder as it was
  OutputFolderUpdate(const OutputFolderUpdate&) = delete;
  OutputFolderUpdate& operator=(const OutputFolderUpdate&) = delete;

  // Where to write the new version of `entry` (a plain name, see safe_file_name). Throws kIo
  // if `root/entry` exists and was not created by sam3, or is sam3's folder but holds a path
  // sam3 did not write there (commit() checks that again).
  std::filesystem::path stage(const std::string& entry);
  // What stage() refuses, checked without writing anything: a front checks every entry it will
  // write before it claims or clears anything (a clash must not cost a partial run).
  void check(const std::string& entry) const;
  // Claims `entry` for what sam3 writes in place, file by file (records, a resumable log):
  // throws kIo as stage() does if it exists and is not sam3's, else records it as sam3's.
  std::filesystem::path claim(const std::string& entry);
  // Removes sam3's own `entry` with the next commit(), all or nothing with the staged entries
  // (an output an earlier run wrote and this one does not: it would mix two runs). Not sam3's
  // entry, or sam3's folder holding a user's file (a warning): left as it is.
  void retire(const std::string& entry);
  // retire() for every entry of sam3's this update has not staged: for a front that stages all
  // it writes (sam3 segment --out), so that the folder holds this run's outputs alone (a rerun on
  // fewer images left the others beside a result.json that no longer listed them). Not for a
  // front that claims entries (claimed entries are not staged).
  void retire_unstaged();
  // Gives up a claimed entry its caller has removed (a run that wrote nothing): no longer
  // recorded as sam3's, and the record itself goes when it lists nothing.
  void release(const std::string& entry);
  // Swaps every staged entry in; on failure restores the previous state and throws kIo.
  // `after_entry(i)` runs after the i-th entry is in place (progress; tests stop there).
  // The update can then stage and commit again.
  void commit(const std::function<void(size_t)>& after_entry = {});

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_, staging_;
  std::unique_ptr<core::FileLock> lock_;
  std::set<std::string> owned_;                            // entries sam3 created in root_
  std::map<std::string, std::set<std::string>> contents_;  // what sam3 wrote inside its folders
  std::vector<std::string> staged_, retired_;
  bool committed_ = false, created_root_ = false, created_lock_ = false, recorded_ = false;

  void check_owned(const std::string& entry) const;
  void ensure_staging();
  void check_replaceable(const std::string& entry) const;
  void add_owned(const std::set<std::string>& entries, const std::map<std::string, std::set<std::string>>& contents);
};

}  // namespace sam3
