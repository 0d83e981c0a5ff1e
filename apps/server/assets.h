// Files embedded in the binary at build time (web page, OpenAPI description).
#pragma once

#include <string_view>
#include <vector>

namespace sam3::server {

struct Asset {
  const char* path;  // URL path, "/" for index.html
  const char* content_type;
  std::string_view data;
};

const std::vector<Asset>& assets();

}  // namespace sam3::server
