// multipart/form-data bodies (RFC 7578): the parts with their field name, file name and type.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sam3::server {

struct MultipartPart {
  std::string name, filename, content_type;
  std::string_view content;  // into the body
};

// nullopt for a body that is not well-formed multipart with this boundary (or has more than
// `max_parts` parts).
std::optional<std::vector<MultipartPart>> parse_multipart(std::string_view body, std::string_view boundary, std::size_t max_parts = 64);

}  // namespace sam3::server
