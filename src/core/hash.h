// A fast non-cryptographic hash for cache keys, record names and shard assignment (stable
// across machines and runs; content checksums use sha256 in hub/checksum.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sam3::core {

inline std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

inline std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace sam3::core
