#include <chrono>
#include <map>
#include <algorithm>
#include <cstdlib>

#include "hub/checksum.h"
#include "core/file_lock.h"
#include "hub/content_check.h"
#include "hub/http_download.h"
#include "hub/manifest.h"
#include "hub/zip_reader.h"
#include "sam3/error.h"
#include "sam3/hub.h"
#include "sam3/log.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

HubOptions hub_options_from_environment() {
  HubOptions o;
  o.endpoint = env_or("HF_ENDPOINT", o.endpoint);
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  o.token = env_or("HF_TOKEN", "");
  if (const char* dir = std::getenv("SAM3_CACHE_DIR"); dir && *dir) {
    o.cache_dir = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    o.cache_dir = fs::path(xdg) / "sam3cpp" / "models";
  } else {
    o.cache_dir = fs::path(env_or("HOME", "/tmp")) / ".cache" / "sam3cpp" / "models";
  }
  return o;
}

ModelStore::ModelStore(HubOptions options) : options_(std::move(options)) {}

fs::path ModelStore::model_dir(const RegistryEntry& entry) const { return options_.cache_dir / entry.name; }

ModelState ModelStore::state(const RegistryEntry& entry) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  int present = 0;
  bool partial = false;
  for (const auto& f : entry.files) {
    if (fs::is_regular_file(dir / f, ec)) ++present;
    else if (fs::exists(dir / (f + ".part"), ec)) partial = true;
  }
  if (present == static_cast<int>(entry.files.size())) return ModelState::kComplete;
  if (!entry.archive.empty() && (fs::exists(dir / entry.archive, ec) || fs::exists(dir / (entry.archive + ".part"), ec))) {
    partial = true;
  }
  return present > 0 || partial ? ModelState::kPartial : ModelState::kMissing;
}

std::int64_t ModelStore::bytes_on_disk(const RegistryEntry& entry) const {
  std::int64_t total = 0;
  std::error_code ec;
  std::vector<std::string> names = entry.files;
  if (!entry.archive.empty()) names.push_back(entry.archive);
  for (const auto& f : names) {
    for (const auto& name : {f, f + ".part"}) {
      const auto size = fs::file_size(model_dir(entry) / name, ec);
      if (!ec) total += static_cast<std::int64_t>(size);
    }
  }
  return total;
}

std::string ModelStore::manual_download_help(const RegistryEntry& entry) const {
  if (!entry.archive.empty()) {
    return "download " + options_.endpoint + "/" + entry.repo + "/resolve/" + entry.revision + "/" + entry.archive +
           " by hand and run 'sam3 models import " + entry.archive + " --name " + entry.name + "'";
  }
  std::string help = "download these files by hand";
  for (const auto& f : entry.files) help += "\n  " + options_.endpoint + "/" + entry.repo + "/resolve/" + entry.revision + "/" + f;
  help += "\ninto " + model_dir(entry).string() + " (or any folder, then run 'sam3 models import FOLDER', or pass --models FOLDER)";
  return help;
}

// One file of the repository into dir/<file>: locked against other pulls, resumed, verified
// against what the hub announces and what the registry pins, recorded in the manifest.
void ModelStore::download(const RegistryEntry& entry, const std::string& file, const ProgressCallback& progress) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  const fs::path final_path = dir / file;
  if (fs::is_regular_file(final_path)) return;
  FileLock lock(dir / ".locks" / (file + ".lock"), [&] {
    log(LogLevel::kWarning, "another sam3 process is downloading " + file + "; waiting for it");
  });
  if (fs::is_regular_file(final_path)) return;  // the other process finished it

  const std::string url = options_.endpoint + "/" + entry.repo + "/resolve/" + entry.revision + "/" + file;
  const fs::path part = dir / (file + ".part");
  hub::DownloadRequest request{url, options_.token, options_.max_attempts, options_.first_retry_delay_s,
                               options_.low_speed_timeout_s};
  // A file of unannounced size may not be larger than the whole model is said to be, twice.
  if (entry.approx_bytes > 0) request.max_bytes = std::max<std::int64_t>(2 * entry.approx_bytes, 256 << 20);
  const auto t0 = std::chrono::steady_clock::now();
  auto report = [&](std::int64_t done, std::int64_t total) {
    if (!progress) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress({file, done, total, s > 0 ? done / s : 0});
  };
  for (int whole_tries = 1;; ++whole_tries) {
    const auto outcome = hub::download_to_part(request, part, report);
    switch (outcome.failure) {
      case hub::FailureKind::kNone: break;
      case hub::FailureKind::kUnauthorized:
        throw Error(ErrorCode::kNetwork,
                    url + ": " + outcome.message + ": the repository " + entry.repo +
                        " is gated or private; accept its licence on the hub and set HF_TOKEN to an access token");
      case hub::FailureKind::kNotFound:
        throw Error(ErrorCode::kNetwork, url + ": " + outcome.message + ": not on the hub (check HF_ENDPOINT and the "
                                         "revision); " + manual_download_help(entry));
      case hub::FailureKind::kTooLong:
        fs::remove(part, ec);
        throw Error(ErrorCode::kNetwork, url + ": " + outcome.message + "; the partial file was deleted. Try again later or " +
                                             manual_download_help(entry));
      case hub::FailureKind::kUnreachable:
        throw Error(ErrorCode::kNetwork, "cannot reach " + options_.endpoint + " (" + outcome.message + "); " +
                                             manual_download_help(entry));
      default:
        throw Error(ErrorCode::kNetwork, url + ": download failed after " + std::to_string(options_.max_attempts) +
                                             " attempts (" + outcome.message + "); run the command again to resume");
    }
    const auto digests = hub::digest_file(part);
    const auto& a = outcome.announced;
    std::string problem;
    if (a.size >= 0 && digests.size != a.size) {
      problem = "size " + std::to_string(digests.size) + " instead of " + std::to_string(a.size);
    } else if (!a.sha256.empty() && digests.sha256 != a.sha256) {
      problem = "sha256 " + digests.sha256 + " instead of " + a.sha256;
    } else if (a.sha256.empty() && !a.git_sha1.empty() && digests.git_sha1 != a.git_sha1) {
      problem = "git blob id " + digests.git_sha1 + " instead of " + a.git_sha1;
    } else if (a.size < 0 && a.sha256.empty() && a.git_sha1.empty()) {
      problem = "the hub announced neither its size nor a checksum, so it cannot be verified";
    } else if (auto wrong = hub::content_problem(file, part)) {
      problem = *wrong;
    }
    if (problem.empty()) {
      // The hub agrees with itself; the pin says whether it is still what was published.
      const auto pin = entry.pinned_sha256.find(file);
      if (pin != entry.pinned_sha256.end() && pin->second != digests.sha256) {
        if (!options_.accept_unpinned) {
          fs::remove(part, ec);
          throw Error(ErrorCode::kNetwork,
                      url + ": sha256 " + digests.sha256 + " is not the published one sam3 pins (" + pin->second +
                          "): the repository changed or was tampered with; the file was deleted. If you trust the "
                          "new files, pull again with --accept-unpinned");
        }
        log(LogLevel::kWarning, url + ": sha256 differs from the pinned one (" + pin->second + "); taken because of --accept-unpinned");
      }
      if (a.sha256.empty() && a.git_sha1.empty()) log(LogLevel::kWarning, url + ": the hub sent no checksum; only the size was checked");
      fs::rename(part, final_path, ec);
      if (ec) throw Error(ErrorCode::kIo, final_path.string() + ": cannot move the download into place");
      FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});  // read-modify-write
      auto manifest = hub::read_manifest(dir);
      manifest.repo = entry.repo;
      manifest.revision = entry.revision;
      manifest.files[file] = {digests.size, digests.sha256, url};
      hub::write_manifest(dir, manifest);
      return;
    }
    fs::remove(part, ec);  // never leave corrupt bytes in place
    if (whole_tries >= 2) {
      throw Error(ErrorCode::kNetwork, url + ": the downloaded file is corrupt (" + problem +
                                           ") twice in a row; it was deleted. Try again later or " +
                                           manual_download_help(entry));
    }
    log(LogLevel::kWarning, url + ": downloaded file is corrupt (" + problem + "); downloading it again");
  }
}

// The model's files out of its verified archive (by file name, wherever they are inside),
// each written beside and renamed into place; then the archive is removed.
void ModelStore::unpack(const RegistryEntry& entry) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  FileLock lock(dir / ".locks" / (entry.archive + ".lock"), {});
  hub::ZipReader reader;
  reader.open(dir / entry.archive);
  std::map<std::string, std::string> inside;  // file name -> entry in the archive
  for (const auto& name : reader.entries()) inside.emplace(fs::path(name).filename().string(), name);
  FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});
  auto manifest = hub::read_manifest(dir);
  const std::string source = manifest.files.contains(entry.archive) ? manifest.files[entry.archive].source : entry.archive;
  for (const auto& file : entry.files) {
    if (fs::is_regular_file(dir / file, ec)) continue;
    auto it = inside.find(file);
    if (it == inside.end()) {
      throw Error(ErrorCode::kModelNotFound, (dir / entry.archive).string() + ": the archive has no " + file +
                                                 "; the repository's layout changed. " + manual_download_help(entry));
    }
    const fs::path part = dir / (file + ".part");
    reader.extract(it->second, part);
    const auto digests = hub::digest_file(part);
    fs::rename(part, dir / file, ec);
    if (ec) throw Error(ErrorCode::kIo, (dir / file).string() + ": cannot move into place");
    manifest.files[file] = {digests.size, digests.sha256, source + "!" + it->second};
  }
  manifest.files.erase(entry.archive);
  hub::write_manifest(dir, manifest);
  fs::remove(dir / entry.archive, ec);
}

fs::path ModelStore::pull(const RegistryEntry& entry, const ProgressCallback& progress) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, dir.string() + ": cannot create the model folder (" + ec.message() + ")");
  if (entry.archive.empty()) {
    for (const auto& file : entry.files) download(entry, file, progress);
    return dir;
  }
  if (state(entry) == ModelState::kComplete) return dir;
  download(entry, entry.archive, progress);
  unpack(entry);
  return dir;
}

std::vector<std::string> ModelStore::verify(const RegistryEntry& entry, const ProgressCallback& progress) const {
  std::vector<std::string> problems;
  const fs::path dir = model_dir(entry);
  const auto manifest = hub::read_manifest(dir);
  for (const auto& file : entry.files) {
    const fs::path path = dir / file;
    if (!fs::is_regular_file(path)) {
      problems.push_back(file + ": missing (run 'sam3 models pull " + entry.name + "')");
      continue;
    }
    const auto total = static_cast<std::int64_t>(fs::file_size(path));
    const auto digests = hub::digest_file(path, [&](std::int64_t done) {
      if (progress) progress({file, done, total, 0});
    });
    auto it = manifest.files.find(file);
    const auto pin = entry.pinned_sha256.find(file);
    if (pin != entry.pinned_sha256.end() && pin->second != digests.sha256) {
      problems.push_back(file + ": sha256 " + digests.sha256 + " is not the published one sam3 pins (" + pin->second + ")");
    } else if (it == manifest.files.end() || it->second.sha256.empty()) {
      problems.push_back(file + ": no recorded checksum (files placed by hand: run 'sam3 models import')");
    } else if (it->second.sha256 != digests.sha256 || it->second.size != digests.size) {
      problems.push_back(file + ": checksum differs from the one recorded at download (" + digests.sha256 +
                         " vs " + it->second.sha256 + "); delete it and pull again");
    }
  }
  return problems;
}

const RegistryEntry& ModelStore::import(const fs::path& source, const RegistryEntry* into) const {
  std::error_code ec;
  const bool zip = fs::is_regular_file(source, ec) && source.extension() == ".zip";
  if (!zip && !fs::is_directory(source, ec)) {
    throw Error(ErrorCode::kInvalidArgument, source.string() + ": not a folder or a .zip file");
  }
  // name (basename) -> where it is in the source
  std::map<std::string, std::string> found;
  hub::ZipReader reader;
  if (zip) {
    reader.open(source);
    for (const auto& name : reader.entries()) found.emplace(fs::path(name).filename().string(), name);
  } else {
    for (const auto& e : fs::recursive_directory_iterator(source, ec)) {
      if (e.is_regular_file()) found.emplace(e.path().filename().string(), e.path().string());
    }
  }
  const RegistryEntry* target = into;
  if (!target) {
    for (const auto& e : model_registry()) {
      const bool all = std::all_of(e.files.begin(), e.files.end(), [&](const std::string& f) { return found.contains(f); });
      if (all) {
        target = &e;
        break;
      }
    }
  }
  if (!target) {
    std::string names;
    for (const auto& e : model_registry()) names += "\n  " + e.name + ": " + [&] {
      std::string s;
      for (const auto& f : e.files) s += (s.empty() ? "" : ", ") + f;
      return s;
    }();
    throw Error(ErrorCode::kModelNotFound, source.string() + ": does not hold the files of a known model:" + names);
  }
  const fs::path dir = model_dir(*target);
  fs::create_directories(dir, ec);
  FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});
  auto manifest = hub::read_manifest(dir);
  manifest.repo = target->repo;
  manifest.revision = target->revision;
  for (const auto& file : target->files) {
    auto it = found.find(file);
    if (it == found.end()) throw Error(ErrorCode::kModelNotFound, source.string() + ": missing " + file + " of " + target->name);
    const fs::path part = dir / (file + ".part");
    if (zip) reader.extract(it->second, part);
    else fs::copy_file(it->second, part, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(ErrorCode::kIo, part.string() + ": cannot copy (" + ec.message() + ")");
    const auto digests = hub::digest_file(part);
    fs::rename(part, dir / file, ec);
    if (ec) throw Error(ErrorCode::kIo, (dir / file).string() + ": cannot move into place");
    manifest.files[file] = {digests.size, digests.sha256, "import:" + source.string()};
  }
  hub::write_manifest(dir, manifest);
  return *target;
}

}  // namespace sam3
