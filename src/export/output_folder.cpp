#include "sam3/output_folder.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/file_lock.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/log.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = ".sam3-outputs.json";
constexpr const char* kLock = ".sam3-lock";
constexpr const char* kStagingPrefix = ".sam3-update-";
constexpr const char* kJournal = "journal.json";

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool exists_no_follow(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() != fs::file_type::not_found && !ec;
}

nlohmann::json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  return nlohmann::json::parse(in, nullptr, false);
}

using Contents = std::map<std::string, std::set<std::string>>;

std::set<std::string> string_set(const nlohmann::json& j) {
  std::set<std::string> out;
  if (j.is_array()) {
    for (const auto& e : j) {
      if (e.is_string()) out.insert(e.get<std::string>());
    }
  }
  return out;
}

// The entries sam3 created, and for each folder among them the paths inside it that sam3 wrote
// (absent in manifests written before sam3 recorded them: such a folder is not checked).
std::pair<std::set<std::string>, Contents> read_manifest(const fs::path& root) {
  const auto j = read_json_file(root / kManifest);
  if (!j.is_object()) return {};
  Contents contents;
  if (j.contains("contents") && j["contents"].is_object()) {
    for (const auto& [entry, paths] : j["contents"].items()) contents[entry] = string_set(paths);
  }
  return {string_set(j.value("entries", nlohmann::json())), std::move(contents)};
}

void write_manifest(const fs::path& root, const std::set<std::string>& owned, const Contents& contents) {
  nlohmann::json j = {{"written_by", "sam3"}, {"entries", owned}, {"contents", contents}};
  write_file_atomic(root / kManifest, j.dump(1) + "\n");
}

// Every path inside folder `dir` (relative, links not followed); empty for anything else.
std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() != fs::file_type::directory) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    out.insert(it->path().lexically_relative(dir).generic_string());
  }
  return out;
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw Error(ErrorCode::kIo, to.string() + ": cannot move into place (" + ec.message() + ")");
}

bool plain_name(const std::string& entry) {
  return !entry.empty() && entry != "." && entry != ".." && entry.find('/') == std::string::npos && entry.rfind(".sam3", 0) != 0;
}

// Puts back what an interrupted commit had swapped (see commit() for the order of moves):
// replaced entries get their previous version back, retired ones come back.
void roll_back(const fs::path& root, const fs::path& staging, const std::vector<std::string>& entries,
               const std::vector<std::string>& retired) {
  std::error_code ec;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const fs::path target = root / *it, old = staging / "old" / *it, fresh = staging / "new" / *it;
    const bool moved_in = !exists_no_follow(fresh) && exists_no_follow(target);
    if (moved_in) fs::remove_all(target, ec);  // the new version sam3 had moved in
    if (exists_no_follow(old)) fs::rename(old, target, ec);
  }
  for (const auto& r : retired) {
    const fs::path target = root / r, old = staging / "old" / r;
    if (exists_no_follow(old) && !exists_no_follow(target)) fs::rename(old, target, ec);
  }
}

// The plain names of a journal's list (a damaged journal must not reach outside root).
std::vector<std::string> journal_names(const nlohmann::json& journal, const char* key) {
  std::vector<std::string> names;
  if (journal.contains(key) && journal[key].is_array()) {
    for (const auto& v : journal[key]) {
      if (v.is_string() && plain_name(v.get<std::string>())) names.push_back(v.get<std::string>());
    }
  }
  return names;
}

// `owned`: the entries the manifest lists as sam3's. A commit records its entries there before
// it writes its journal, so a journal naming anything else is damaged: that name is not touched.
void recover_stale_updates(const fs::path& root, const std::set<std::string>& owned) {
  std::error_code ec;
  const auto sam3s = [&](const nlohmann::json& journal, const char* key) {
    auto names = journal_names(journal, key);
    std::erase_if(names, [&](const std::string& n) { return !owned.contains(n); });
    return names;
  };
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kStagingPrefix, 0) != 0 || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    const auto journal = read_json_file(e.path() / kJournal);
    if (journal.is_object() && journal.contains("entries") && journal["entries"].is_array()) {
      roll_back(root, e.path(), sam3s(journal, "entries"), sam3s(journal, "retired"));
      log(LogLevel::kWarning, root.string() + ": rolled back an update that was interrupted");
    }
    fs::remove_all(e.path(), ec);
  }
}

}  // namespace

std::string safe_file_name(std::string_view text, std::string_view fallback) {
  if (text.find_first_not_of('.') == std::string_view::npos) return std::string(fallback);  // "", ".", ".."
  std::string s;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool bad = c < 0x20 || c == 0x7F || c == '/' || c == '\\' || (s.empty() && c == '.');
    s.push_back(bad ? '_' : static_cast<char>(c));
  }
  if (s.size() > 120) {
    size_t cut = 120;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
    s.resize(cut);
  }
  return s.empty() ? std::string(fallback) : s;
}

std::string unique_file_name(const std::string& base, std::set<std::string>& used) {
  std::string name = base;
  for (int k = 2; used.contains(lower(name)); ++k) name = base + "-" + std::to_string(k);
  used.insert(lower(name));
  return name;
}

// A file of a user's that bears the name of sam3's lock or record (sam3 would overwrite it):
// sam3's lock holds "sam3 (pid N)" or nothing (a process killed as it wrote it), its record is
// a JSON object written_by sam3.
void refuse_foreign_control_files(const fs::path& root) {
  const auto refuse = [&](const char* name) {
    throw Error(ErrorCode::kIo, (root / name).string() + ": exists and was not written by sam3 (sam3 keeps its " +
                                    (std::string(name) == kLock ? "lock" : "record of what it wrote") +
                                    " under that name); move it away or choose another output folder");
  };
  std::error_code ec;
  if (exists_no_follow(root / kLock)) {
    std::ifstream in(root / kLock, std::ios::binary);
    std::string head(5, '\0');
    in.read(head.data(), 5);
    head.resize(static_cast<size_t>(in.gcount()));
    if (!fs::is_regular_file(fs::symlink_status(root / kLock, ec)) || (!head.empty() && head != "sam3 ")) refuse(kLock);
  }
  if (exists_no_follow(root / kManifest)) {
    const auto j = read_json_file(root / kManifest);
    if (!j.is_object() || j.value("written_by", std::string()) != "sam3") refuse(kManifest);
  }
}

OutputFolderUpdate::OutputFolderUpdate(fs::path root) : root_(std::move(root)) {
  std::error_code ec;
  created_root_ = !exists_no_follow(root_);
  if (!created_root_ && !fs::is_directory(root_, ec)) {
    throw Error(ErrorCode::kIo, root_.string() + ": exists and is not a folder; choose a folder for the outputs");
  }
  if (!created_root_) refuse_foreign_control_files(root_);
  created_lock_ = !exists_no_follow(root_ / kLock);
  fs::create_directories(root_, ec);
  if (ec) throw Error(ErrorCode::kIo, root_.string() + ": cannot create the output folder (" + ec.message() + ")");
  std::string holder;
  auto lock = core::FileLock::try_lock(root_ / kLock, "sam3", &holder);
  if (!lock) {
    throw Error(ErrorCode::kIo,
                root_.string() + ": " + holder + " is writing to this folder; wait for it to finish or choose another output folder");
  }
  lock_ = std::make_unique<core::FileLock>(std::move(*lock));
  std::tie(owned_, contents_) = read_manifest(root_);
  recover_stale_updates(root_, owned_);
  remove_stale_temporaries(root_);  // files a killed write_file_atomic left (its pid is gone)
}

OutputFolderUpdate::~OutputFolderUpdate() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);  // only ever sam3's own staging folder
  if (created_root_ && !committed_) {                   // a failed first run leaves no folder behind
    lock_.reset();
    fs::remove(root_ / kLock, ec);
    fs::remove(root_, ec);                                  // only if empty
  } else if (created_lock_ && !committed_ && !recorded_) {  // a refused run leaves a user's folder as it was
    lock_.reset();
    fs::remove(root_ / kLock, ec);
  }
}

void OutputFolderUpdate::check_owned(const std::string& entry) const {
  if (!plain_name(entry)) {
    throw Error(ErrorCode::kInvalidArgument, "'" + entry + "' is not a plain output name");
  }
  if (exists_no_follow(root_ / entry) && !owned_.contains(entry)) {
    throw Error(ErrorCode::kIo, (root_ / entry).string() +
                                    " already exists and was not written by sam3; choose an empty or new output folder, "
                                    "or move it away");
  }
}

void OutputFolderUpdate::check_replaceable(const std::string& entry) const {
  const auto recorded = contents_.find(entry);
  if (recorded == contents_.end()) return;
  // Every such file is named at once (not one per run, each found after another run's work).
  std::vector<std::string> foreign;
  for (const auto& path : listing(root_ / entry)) {
    if (!recorded->second.contains(path)) foreign.push_back((root_ / entry / path).string());
  }
  if (foreign.empty()) return;
  std::string names = foreign[0];
  for (size_t i = 1; i < foreign.size() && i < 5; ++i) names += ", " + foreign[i];
  if (foreign.size() > 5) names += " and " + std::to_string(foreign.size() - 5) + " more";
  throw Error(ErrorCode::kIo, names + (foreign.size() == 1 ? " was" : " were") + " not written by sam3, and sam3 replaces " +
                                  (root_ / entry).string() + " as a whole: move " + (foreign.size() == 1 ? "it" : "them") +
                                  " out of that folder, then run again");
}

void OutputFolderUpdate::add_owned(const std::set<std::string>& entries, const Contents& contents) {
  std::set<std::string> owned = owned_;
  owned.insert(entries.begin(), entries.end());
  if (owned != owned_ || contents != contents_) write_manifest(root_, owned, contents);
  recorded_ = true;
  owned_ = std::move(owned);
  contents_ = contents;
}

void OutputFolderUpdate::ensure_staging() {
  if (!staging_.empty()) return;
  staging_ = root_ / (kStagingPrefix + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
  std::error_code ec;
  fs::create_directories(staging_ / "new", ec);
  if (ec) throw Error(ErrorCode::kIo, root_.string() + ": cannot write in the output folder (" + ec.message() + ")");
}

fs::path OutputFolderUpdate::stage(const std::string& entry) {
  check_owned(entry);
  ensure_staging();
  if (std::find(staged_.begin(), staged_.end(), entry) == staged_.end()) {
    check_replaceable(entry);  // once per entry, before the work (commit() checks again)
    staged_.push_back(entry);
  }
  return staging_ / "new" / entry;
}

void OutputFolderUpdate::retire(const std::string& entry) {
  if (!plain_name(entry)) throw Error(ErrorCode::kInvalidArgument, "'" + entry + "' is not a plain output name");
  if (!owned_.contains(entry) || !exists_no_follow(root_ / entry)) return;  // not sam3's, or gone
  if (std::find(staged_.begin(), staged_.end(), entry) != staged_.end()) return;
  if (std::find(retired_.begin(), retired_.end(), entry) != retired_.end()) return;  // asked before: checked then
  try {
    check_replaceable(entry);
  } catch (const Error& e) {
    log(LogLevel::kWarning, std::string(e.what()) + "; it stays (an output of an earlier run)");
    return;
  }
  ensure_staging();
  retired_.push_back(entry);
}

void OutputFolderUpdate::retire_unstaged() {
  const std::set<std::string> owned = owned_;  // retire() reads owned_
  for (const auto& entry : owned) {
    if (std::find(staged_.begin(), staged_.end(), entry) == staged_.end()) retire(entry);
  }
}

fs::path OutputFolderUpdate::claim(const std::string& entry) {
  check_owned(entry);
  add_owned({entry}, contents_);
  return root_ / entry;
}

void OutputFolderUpdate::check(const std::string& entry) const {
  check_owned(entry);
  check_replaceable(entry);
}

void OutputFolderUpdate::release(const std::string& entry) {
  if (!owned_.erase(entry)) return;
  contents_.erase(entry);
  if (!owned_.empty()) {
    write_manifest(root_, owned_, contents_);
    return;
  }
  std::error_code ec;
  fs::remove(root_ / kManifest, ec);
}

void OutputFolderUpdate::commit(const std::function<void(size_t)>& after_entry) {
  if (staging_.empty()) return;  // nothing staged
  std::vector<std::string> entries;
  for (const auto& e : staged_) {
    if (exists_no_follow(staging_ / "new" / e)) entries.push_back(e);
  }
  // A user's file put inside a folder sam3 replaces would go with it: refused before anything
  // moves; a retired folder that came to hold one stays.
  for (const auto& e : entries) check_replaceable(e);
  std::erase_if(retired_, [&](const std::string& r) {
    try {
      check_replaceable(r);
      return false;
    } catch (const Error& e) {
      log(LogLevel::kWarning, std::string(e.what()) + "; it stays (an output of an earlier run)");
      return true;
    }
  });
  // Claimed before anything moves, so a rollback after a crash knows these are sam3's; a
  // folder's recorded contents are the old and the new version's until the swap is done, so
  // that neither counts as a user's after a crash.
  Contents during = contents_, after = contents_;
  for (const auto& e : entries) {
    auto fresh = listing(staging_ / "new" / e);
    if (fresh.empty()) {  // a file (or an empty folder): nothing inside to check
      after.erase(e);
      continue;
    }
    during[e].insert(fresh.begin(), fresh.end());
    after[e] = std::move(fresh);
  }
  add_owned({entries.begin(), entries.end()}, during);
  write_file_atomic(staging_ / kJournal, nlohmann::json({{"entries", entries}, {"retired", retired_}}).dump() + "\n");
  std::error_code ec;
  fs::create_directories(staging_ / "old", ec);
  try {
    for (const auto& r : retired_) {  // first: a crash during the swaps below finds them in old/
      if (exists_no_follow(root_ / r)) rename_or_throw(root_ / r, staging_ / "old" / r);
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      const fs::path target = root_ / entries[i];
      if (exists_no_follow(target)) rename_or_throw(target, staging_ / "old" / entries[i]);
      rename_or_throw(staging_ / "new" / entries[i], target);
      if (after_entry) after_entry(i);
    }
  } catch (...) {
    roll_back(root_, staging_, entries, retired_);
    throw;
  }
  fs::remove(staging_ / kJournal, ec);  // done: nothing to roll back from here on
  for (const auto& r : retired_) {
    owned_.erase(r);
    after.erase(r);
  }
  write_manifest(root_, owned_, after);
  contents_ = std::move(after);
  retired_.clear();
  fs::remove_all(staging_, ec);  // the previous versions
  staging_.clear();
  staged_.clear();
  committed_ = true;
}

}  // namespace sam3
