// .sam3-manifest.json in a model directory: where each file came from and its checksums,
// recorded when it was pulled or imported, so `verify` can re-check it later.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace sam3::hub {

struct ManifestFile {
  std::int64_t size = 0;
  std::string sha256;
  std::string source;  // URL or imported path
};

struct Manifest {
  std::string repo, revision;
  std::map<std::string, ManifestFile> files;
};

Manifest read_manifest(const std::filesystem::path& model_dir);                         // empty when absent
void write_manifest(const std::filesystem::path& model_dir, const Manifest& manifest);  // atomic

}  // namespace sam3::hub
