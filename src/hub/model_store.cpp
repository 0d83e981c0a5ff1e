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

// A registry file's name without its folder in the repository ("onnx/vision_encoder.onnx" ->
// "vision_encoder.onnx"): how an imported folder or zip is searched for it.
std::string base_name(const std::string& file) { return fs::path(file).filename().string(); }

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// The most one file of `entry` may be when nothing announces its size (a download without a
// length, an archive entry): the option, else twice what the whole model is said to be and at
// least 256 MiB.
std::int64_t size_bound(const HubOptions& options, const RegistryEntry& entry) {
  if (options.max_unpacked_bytes > 0) return options.max_unpacked_bytes;
  return std::max<std::int64_t>(2 * entry.approx_bytes, std::int64_t{256} << 20);
}

// Refuses before anything is written when the files to unpack or copy (`names`, of `sizes`
// bytes as their source declares) are over the bound or more than the disk has free.
void check_room(const fs::path& source, const std::vector<std::string>& names, const std::vector<std::int64_t>& sizes, const fs::path& dir,
                std::int64_t bound) {
  std::int64_t total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (sizes[i] > bound) {
      throw Error(ErrorCode::kInvalidArgument, source.string() + ": " + names[i] + " is " + std::to_string(sizes[i]) +
                                                   " bytes unpacked, more than the " + std::to_string(bound) +
                                                   " allowed for one model file (SAM3_MAX_UNPACKED_BYTES raises the "
                                                   "limit); nothing was written");
    }
    total += sizes[i];
  }
  std::error_code ec;
  const auto space = fs::space(dir, ec);
  if (!ec && static_cast<std::uintmax_t>(total) > space.available) {
    throw Error(ErrorCode::kIo, source.string() + ": the model needs " + std::to_string(total) + " bytes but " + dir.string() + " has " +
                                    std::to_string(space.available) +
                                    " free; free some space (or set SAM3_CACHE_DIR to a larger disk); nothing was written");
  }
}

// Removes a .part file unless it was moved into place: no failure leaves half a file.
struct PartFile {
  fs::path path;  // cleared once moved into place
  ~PartFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

}  // namespace

HubOptions hub_options_from_environment() {
  HubOptions o;
  o.endpoint = env_or("HF_ENDPOINT", o.endpoint);
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  o.token = env_or("HF_TOKEN", "");
  if (const std::string limit = env_or("SAM3_MAX_UNPACKED_BYTES", ""); !limit.empty()) {
    size_t used = 0;
    try {
      o.max_unpacked_bytes = std::stoll(limit, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != limit.size() || o.max_unpacked_bytes <= 0) {
      throw Error(ErrorCode::kInvalidArgument, "SAM3_MAX_UNPACKED_BYTES=" + limit + " is not a positive number of bytes");
    }
  }
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
    if (fs::is_regular_file(dir / f, ec))
      ++present;
    else if (fs::exists(dir / (f + ".part"), ec))
      partial = true;
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
  help += "\ninto " + model_dir(entry).string() +
          " (or into any folder, then run 'sam3 models import FOLDER', or load the model from that folder: --models "
          "FOLDER, sam3cpp.Model(FOLDER))";
  return help;
}

// One file of the repository into dir/<file>: locked against other pulls, resumed, verified
// against what the hub announces and what the registry pins, recorded in the manifest.
void ModelStore::download(const RegistryEntry& entry, const std::string& file, const ProgressCallback& progress) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  const fs::path final_path = dir / file;
  if (fs::is_regular_file(final_path)) return;
  core::FileLock lock(dir / ".locks" / (file + ".lock"),
                      [&] { log(LogLevel::kWarning, "another sam3 process is downloading " + file + "; waiting for it"); });
  if (fs::is_regular_file(final_path)) return;  // the other process finished it

  const std::string url = options_.endpoint + "/" + entry.repo + "/resolve/" + entry.revision + "/" + file;
  const fs::path part = dir / (file + ".part");
  fs::create_directories(part.parent_path(), ec);  // files under a folder of the repository (onnx/...)
  hub::DownloadRequest request{url, options_.token, options_.max_attempts, options_.first_retry_delay_s, options_.low_speed_timeout_s};
  // A file of unannounced size may not be larger than the whole model is said to be, twice.
  if (entry.approx_bytes > 0 || options_.max_unpacked_bytes > 0) request.max_bytes = size_bound(options_, entry);
  const auto t0 = std::chrono::steady_clock::now();
  auto report = [&](std::int64_t done, std::int64_t total) {
    if (!progress) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress({file, done, total, s > 0 ? done / s : 0});
  };
  for (int whole_tries = 1;; ++whole_tries) {
    const auto outcome = hub::download_to_part(request, part, report);
    switch (outcome.failure) {
      case hub::FailureKind::kNone:
        break;
      case hub::FailureKind::kUnauthorized:
        throw Error(ErrorCode::kNetwork, url + ": " + outcome.message + ": the repository " + entry.repo +
                                             " is gated or private; accept its licence on the hub and set HF_TOKEN to an access token");
      case hub::FailureKind::kNotFound:
        throw Error(ErrorCode::kNetwork, url + ": " + outcome.message +
                                             ": not on the hub (check HF_ENDPOINT and the "
                                             "revision); " +
                                             manual_download_help(entry));
      case hub::FailureKind::kTooLong:
        fs::remove(part, ec);
        throw Error(ErrorCode::kNetwork,
                    url + ": " + outcome.message + "; the partial file was deleted. Try again later or " + manual_download_help(entry));
      case hub::FailureKind::kUnreachable:
        throw Error(ErrorCode::kNetwork,
                    "cannot reach " + options_.endpoint + " (" + outcome.message + "); " + manual_download_help(entry));
      default:
        throw Error(ErrorCode::kNetwork, url + ": download failed after " + std::to_string(options_.max_attempts) + " attempts (" +
                                             outcome.message + "); run the command again to resume");
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
          throw Error(ErrorCode::kNetwork, url + ": sha256 " + digests.sha256 + " is not the published one sam3 pins (" + pin->second +
                                               "): the repository changed or was tampered with; the file was deleted. If you trust the "
                                               "new files, pull again with --accept-unpinned");
        }
        log(LogLevel::kWarning, url + ": sha256 differs from the pinned one (" + pin->second + "); taken because of --accept-unpinned");
      }
      if (a.sha256.empty() && a.git_sha1.empty()) log(LogLevel::kWarning, url + ": the hub sent no checksum; only the size was checked");
      fs::rename(part, final_path, ec);
      if (ec) throw Error(ErrorCode::kIo, final_path.string() + ": cannot move the download into place");
      core::FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});  // read-modify-write
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
                                           ") twice in a row; it was deleted. Try again later or " + manual_download_help(entry));
    }
    log(LogLevel::kWarning, url + ": downloaded file is corrupt (" + problem + "); downloading it again");
  }
}

// The model's files out of its verified archive (by file name, wherever they are inside),
// each written beside and renamed into place; then the archive is removed.
void ModelStore::unpack(const RegistryEntry& entry) const {
  const fs::path dir = model_dir(entry);
  std::error_code ec;
  core::FileLock lock(dir / ".locks" / (entry.archive + ".lock"), {});
  hub::ZipReader reader;
  reader.open(dir / entry.archive);
  std::map<std::string, std::string> inside;  // file name -> entry in the archive
  for (const auto& name : reader.entries()) inside.emplace(fs::path(name).filename().string(), name);
  core::FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});
  auto manifest = hub::read_manifest(dir);
  const std::string source = manifest.files.contains(entry.archive) ? manifest.files[entry.archive].source : entry.archive;
  std::vector<std::string> wanted;  // entries in the archive, in the order of entry.files
  for (const auto& file : entry.files) {
    if (fs::is_regular_file(dir / file, ec)) continue;
    auto it = inside.find(file);
    if (it == inside.end()) {
      throw Error(ErrorCode::kModelNotFound, (dir / entry.archive).string() + ": the archive has no " + file +
                                                 "; the repository's layout changed. " + manual_download_help(entry));
    }
    wanted.push_back(it->second);
  }
  const std::int64_t bound = size_bound(options_, entry);
  std::vector<std::int64_t> sizes;
  for (const auto& name : wanted) sizes.push_back(reader.declared_size(name));
  check_room(dir / entry.archive, wanted, sizes, dir, bound);
  for (const auto& name : wanted) {
    const std::string file = fs::path(name).filename().string();
    PartFile part{dir / (file + ".part")};
    reader.extract(name, part.path, bound);
    if (auto wrong = hub::content_problem(file, part.path)) {
      throw Error(ErrorCode::kModelMismatch, (dir / entry.archive).string() + ": " + name + ": " + *wrong + "; nothing was kept");
    }
    const auto digests = hub::digest_file(part.path);
    fs::rename(part.path, dir / file, ec);
    if (ec) throw Error(ErrorCode::kIo, (dir / file).string() + ": cannot move into place");
    part.path.clear();
    manifest.files[file] = {digests.size, digests.sha256, source + "!" + name};
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
      problems.push_back(file + ": checksum differs from the one recorded at download (" + digests.sha256 + " vs " + it->second.sha256 +
                         "); delete it and pull again");
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
  std::map<std::string, std::string> found, not_files;
  hub::ZipReader reader;
  if (zip) {
    reader.open(source);
    for (const auto& name : reader.entries()) found.emplace(fs::path(name).filename().string(), name);
  } else {
    // Links to folders are not followed (no cycle can hold the walk); a FIFO, a device or a
    // link that loops or dangles is no model file, and is named if it was one the model needs.
    try {
      for (const auto& e : fs::recursive_directory_iterator(source)) {
        std::error_code kind;
        if (e.is_regular_file(kind))
          found.emplace(e.path().filename().string(), e.path().string());
        else if (!e.is_directory(kind))
          not_files.emplace(e.path().filename().string(), e.path().string());
      }
    } catch (const fs::filesystem_error& e) {
      throw Error(ErrorCode::kIo, source.string() + ": cannot read the folder (" + e.code().message() + " at " + e.path1().string() + ")");
    }
  }
  const RegistryEntry* target = into;
  if (!target) {
    for (const auto& e : model_registry()) {
      const bool all = std::all_of(e.files.begin(), e.files.end(),
                                   [&](const std::string& f) { return found.contains(base_name(f)) || not_files.contains(base_name(f)); });
      if (all) {
        target = &e;
        break;
      }
    }
  }
  if (!target) {
    std::string names;
    for (const auto& e : model_registry())
      names += "\n  " + e.name + ": " + [&] {
        std::string s;
        for (const auto& f : e.files) s += (s.empty() ? "" : ", ") + f;
        return s;
      }();
    throw Error(ErrorCode::kModelNotFound, source.string() + ": does not hold the files of a known model:" + names);
  }
  const fs::path dir = model_dir(*target);
  fs::create_directories(dir, ec);
  core::FileLock manifest_lock(dir / ".locks" / "manifest.lock", {});
  auto manifest = hub::read_manifest(dir);
  manifest.repo = target->repo;
  manifest.revision = target->revision;
  std::vector<std::string> wanted;  // where each of target->files is in the source
  for (const auto& file : target->files) {
    auto it = found.find(base_name(file));
    if (it == found.end() && not_files.contains(base_name(file))) {
      throw Error(ErrorCode::kInvalidArgument, not_files[base_name(file)] +
                                                   " is not a regular file (a FIFO, a device, or a link that "
                                                   "loops or points nowhere); put the model file itself there");
    }
    if (it == found.end()) throw Error(ErrorCode::kModelNotFound, source.string() + ": missing " + file + " of " + target->name);
    wanted.push_back(it->second);
  }
  const std::int64_t bound = size_bound(options_, *target);
  std::vector<std::int64_t> sizes;
  for (const auto& name : wanted) {
    if (zip) {
      sizes.push_back(reader.declared_size(name));
      continue;
    }
    const auto size = fs::file_size(name, ec);
    if (ec) throw Error(ErrorCode::kIo, name + ": cannot read its size (" + ec.message() + ")");
    sizes.push_back(static_cast<std::int64_t>(size));
  }
  check_room(source, wanted, sizes, dir, bound);
  for (size_t i = 0; i < wanted.size(); ++i) {
    const std::string& file = target->files[i];
    PartFile part{dir / (file + ".part")};
    fs::create_directories(part.path.parent_path(), ec);
    if (zip) {
      reader.extract(wanted[i], part.path, bound);
    } else {
      fs::copy_file(wanted[i], part.path, fs::copy_options::overwrite_existing, ec);
      if (ec) throw Error(ErrorCode::kIo, part.path.string() + ": cannot copy " + wanted[i] + " (" + ec.message() + ")");
    }
    // The same check as a pull: a saved login page or a truncated file is not taken for the model.
    if (auto wrong = hub::content_problem(file, part.path)) {
      throw Error(ErrorCode::kModelMismatch, source.string() + ": " + file + ": " + *wrong + "; nothing was imported for it");
    }
    const auto digests = hub::digest_file(part.path);
    fs::rename(part.path, dir / file, ec);
    if (ec) throw Error(ErrorCode::kIo, (dir / file).string() + ": cannot move into place");
    part.path.clear();
    manifest.files[file] = {digests.size, digests.sha256, "import:" + source.string()};
    hub::write_manifest(dir, manifest);  // each file recorded once it is in place
  }
  hub::write_manifest(dir, manifest);
  return *target;
}

}  // namespace sam3
