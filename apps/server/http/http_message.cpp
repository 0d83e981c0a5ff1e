#include "http/http_message.h"

namespace sam3::server {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::string* HttpRequest::find_header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string HttpRequest::header(std::string_view name) const {
  const auto* v = find_header(name);
  return v ? *v : std::string();
}

std::string HttpRequest::media_type() const {
  const std::string v = header("content-type");
  return to_lower(trim(std::string_view(v).substr(0, v.find(';'))));
}

std::string HttpRequest::header_param(std::string_view name, std::string_view param) const { return header_parameter(header(name), param); }

std::string header_parameter(std::string_view header, std::string_view key) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    ++at;
    std::string_view item = header.substr(at);
    item = trim(item.substr(0, item.find(';')));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || to_lower(trim(item.substr(0, eq))) != key) continue;
    const std::string_view v = trim(item.substr(eq + 1));
    if (!v.empty() && v.front() == '"') {
      // A quoted value may hold ';': take it up to its closing quote in the whole header.
      const size_t open = header.find('"', at);
      const size_t close = header.find('"', open + 1);
      if (close == std::string_view::npos) return "";
      return std::string(header.substr(open + 1, close - open - 1));
    }
    return std::string(v);
  }
  return "";
}

}  // namespace sam3::server
