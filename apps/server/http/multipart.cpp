#include "http/multipart.h"

#include "http/http_message.h"

namespace sam3::server {

std::optional<std::vector<MultipartPart>> parse_multipart(std::string_view body, std::string_view boundary, std::size_t max_parts) {
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
        part.name = header_parameter(value, "name");
        part.filename = header_parameter(value, "filename");
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
