#include "http/multipart.h"

#include "http/http_message.h"

namespace sam3::server {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// name="value" or name=value in a header such as Content-Disposition.
std::string param(std::string_view header, std::string_view key) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    ++at;
    std::string_view item = header.substr(at);
    item = trim(item.substr(0, item.find(';')));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || to_lower(trim(item.substr(0, eq))) != key) continue;
    std::string_view v = trim(item.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"') {
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

}  // namespace

std::optional<std::vector<MultipartPart>> parse_multipart(std::string_view body, std::string_view boundary,
                                                          std::size_t max_parts) {
  if (boundary.empty() || boundary.size() > 200) return std::nullopt;
  const std::string delimiter = "--" + std::string(boundary);
  size_t pos = body.find(delimiter);
  if (pos == std::string_view::npos) return std::nullopt;
  std::vector<MultipartPart> parts;
  for (;;) {
    pos += delimiter.size();
    if (body.substr(pos, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(pos, 2) != "\r\n") return std::nullopt;
    pos += 2;
    const size_t headers_end = body.find("\r\n\r\n", pos);
    if (headers_end == std::string_view::npos) return std::nullopt;
    MultipartPart part;
    for (std::string_view headers = body.substr(pos, headers_end - pos); !headers.empty();) {
      const size_t eol = headers.find("\r\n");
      const std::string_view line = headers.substr(0, eol);
      headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) return std::nullopt;
      const std::string name = to_lower(trim(line.substr(0, colon)));
      const std::string_view value = trim(line.substr(colon + 1));
      if (name == "content-disposition") {
        part.name = param(value, "name");
        part.filename = param(value, "filename");
      } else if (name == "content-type") {
        part.content_type = to_lower(trim(value.substr(0, value.find(';'))));
      }
    }
    const size_t start = headers_end + 4;
    const size_t end = body.find("\r\n" + delimiter, start);
    if (end == std::string_view::npos) return std::nullopt;
    part.content = body.substr(start, end - start);
    if (parts.size() >= max_parts) return std::nullopt;
    parts.push_back(std::move(part));
    pos = end + 2;
  }
}

}  // namespace sam3::server
