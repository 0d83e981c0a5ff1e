// A list written in one string ("1,2,3", "gpkg,fgb"), as command lines and options give them.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sam3::core {

// The items between `sep`s, empty ones dropped ("1,,2," gives "1", "2"); no trimming.
inline std::vector<std::string> split_list(std::string_view s, char sep = ',') {
  std::vector<std::string> out;
  for (size_t start = 0; start <= s.size();) {
    const size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace sam3::core
