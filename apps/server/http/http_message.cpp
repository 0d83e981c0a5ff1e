#include "http/http_message.h"

namespace sam3::server {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

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

std::string HttpRequest::header_param(std::string_view name, std::string_view param) const {
  const std::string v = header(name);
  std::string_view rest(v);
  while (true) {
    const size_t semi = rest.find(';');
    if (semi == std::string_view::npos) return "";
    rest.remove_prefix(semi + 1);
    const std::string_view item = trim(rest.substr(0, rest.find(';')));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || to_lower(trim(item.substr(0, eq))) != param) continue;
    std::string_view value = trim(item.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return std::string(value);
  }
}

}  // namespace sam3::server
