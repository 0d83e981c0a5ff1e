#include "hub/content_check.h"

#include <algorithm>
#include <cstring>
#include <fstream>

namespace sam3::hub {

std::optional<std::string> content_problem(const std::string& name, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.empty()) return "the file is empty";
  const size_t text = head.find_first_not_of(" \t\r\n");
  std::string start = text == std::string::npos ? "" : head.substr(text, 15);
  std::transform(start.begin(), start.end(), start.begin(), [](unsigned char c) { return std::tolower(c); });
  if (start.starts_with("<!doctype") || start.starts_with("<html") || start.starts_with("<?xml") || start.starts_with("<head") ||
      start.starts_with("<body")) {
    return "it is a web page (HTML), not the file; the hub or a proxy answered with a page";
  }
  const auto ends = [&](const char* ext) { return name.size() >= std::strlen(ext) && name.ends_with(ext); };
  // Protobuf writes fields in number order, and every ONNX model sets field 1 (ir_version) first.
  if (ends(".onnx") && static_cast<unsigned char>(head[0]) != 0x08) return "it does not start like an ONNX model";
  if (ends(".json") && (text == std::string::npos || (head[text] != '{' && head[text] != '['))) return "it is not JSON";
  if (ends(".zip") && !head.starts_with("PK\x03\x04")) return "it is not a zip archive";
  if (ends(".gz") && !head.starts_with("\x1f\x8b")) return "it is not gzip data";
  return std::nullopt;
}

}  // namespace sam3::hub
