#include "hub/manifest.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "sam3/export.h"

namespace sam3::hub {
namespace {
const char* const kName = ".sam3-manifest.json";
}

Manifest read_manifest(const std::filesystem::path& model_dir) {
  Manifest m;
  std::ifstream in(model_dir / kName);
  if (!in) return m;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return m;
  m.repo = j.value("repo", "");
  m.revision = j.value("revision", "");
  if (j.contains("files") && j["files"].is_object()) {
    for (const auto& [name, f] : j["files"].items()) {
      m.files[name] = {f.value("size", std::int64_t{0}), f.value("sha256", ""), f.value("source", "")};
    }
  }
  return m;
}

void write_manifest(const std::filesystem::path& model_dir, const Manifest& m) {
  nlohmann::ordered_json j = {{"repo", m.repo}, {"revision", m.revision}, {"files", nlohmann::ordered_json::object()}};
  for (const auto& [name, f] : m.files) {
    j["files"][name] = {{"size", f.size}, {"sha256", f.sha256}, {"source", f.source}};
  }
  write_file_atomic(model_dir / kName, j.dump(2) + "\n");
}

}  // namespace sam3::hub
