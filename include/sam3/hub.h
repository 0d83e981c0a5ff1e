// Getting the public SAM3 ONNX models: a registry of known models, and a store that pulls
// them from a Hugging Face compatible hub (resumable, verified, locked against concurrent
// pulls), verifies, lists and imports files fetched by hand. Nothing here runs unless an
// application calls it: Model::load never downloads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/model.h"

namespace sam3 {

struct RegistryEntry {
  std::string name;      // "sam3-v2-int8"
  std::string repo;      // hub repository id, "owner/name"
  std::string revision;  // branch, tag or commit
  Layout layout;
  std::vector<std::string> files;  // the model folder's files
  std::int64_t approx_bytes = 0;
  std::string description;
  // When set, the repository holds the files in this one .zip (found by name inside it): it is
  // downloaded and verified like any file, unpacked into the model folder, then removed.
  std::string archive;
  // sha256 of the files as published (archive or files), where known: a repository that
  // changed or was tampered with is reported instead of loaded.
  std::map<std::string, std::string> pinned_sha256;
};

const std::vector<RegistryEntry>& model_registry();
const RegistryEntry& default_registry_entry();
// By registry name or hub repository id; nullptr when unknown.
const RegistryEntry* find_registry_entry(std::string_view name_or_repo);

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // $HF_ENDPOINT
  std::string token;                                // $HF_TOKEN
  std::filesystem::path cache_dir;                  // models live in cache_dir/<name>/
  int max_attempts = 5;                             // per file, on 5xx and dropped connections
  bool accept_unpinned = false;                     // take files whose sha256 differs from the pin (warned)
  double first_retry_delay_s = 1.0;                 // doubles after each failed attempt
  long low_speed_timeout_s = 60;                    // abort (and resume) a stalled transfer
  // The most one model file may be where nothing announces its size (an archive entry, a file
  // imported, a download without a length); 0: twice the model's published size, at least
  // 256 MiB. $SAM3_MAX_UNPACKED_BYTES.
  std::int64_t max_unpacked_bytes = 0;
};

// Endpoint and token from HF_ENDPOINT / HF_TOKEN, max_unpacked_bytes from
// SAM3_MAX_UNPACKED_BYTES (kInvalidArgument when it is not a positive number); cache from $SAM3_CACHE_DIR, else
// $XDG_CACHE_HOME/sam3cpp/models, else ~/.cache/sam3cpp/models.
HubOptions hub_options_from_environment();

struct DownloadProgress {
  std::string file;
  std::int64_t done = 0;   // bytes on disk for this file, resumed bytes included
  std::int64_t total = 0;  // 0 when unknown
  double bytes_per_second = 0;
};
using ProgressCallback = std::function<void(const DownloadProgress&)>;

enum class ModelState { kMissing, kPartial, kComplete };

class ModelStore {
 public:
  explicit ModelStore(HubOptions options);

  std::filesystem::path model_dir(const RegistryEntry& entry) const;
  ModelState state(const RegistryEntry& entry) const;
  std::int64_t bytes_on_disk(const RegistryEntry& entry) const;

  // Downloads the missing files; returns the model directory. Throws kNetwork with what to
  // do (token, manual download and import) when the hub refuses or cannot be reached.
  std::filesystem::path pull(const RegistryEntry& entry, const ProgressCallback& progress = {}) const;

  // Re-hashes every file against the checksums recorded when it was pulled or imported.
  // Returns one line per problem; empty when everything matches.
  std::vector<std::string> verify(const RegistryEntry& entry, const ProgressCallback& progress = {}) const;

  // Copies a layout's files from a folder or a .zip (e.g. the RectLabel download) into the
  // store. `into` picks the registry entry; nullptr picks the entry of the detected layout.
  const RegistryEntry& import(const std::filesystem::path& source, const RegistryEntry* into) const;

  // The message for users without network access: what to download, from where, to where.
  std::string manual_download_help(const RegistryEntry& entry) const;

  const HubOptions& options() const { return options_; }

 private:
  void download(const RegistryEntry& entry, const std::string& file, const ProgressCallback& progress) const;
  void unpack(const RegistryEntry& entry) const;
  HubOptions options_;
};

}  // namespace sam3
