// An integer field of JSON that sam3 reads back from disk (records, checkpoints, shard
// manifests), checked in its own type before it narrows: nlohmann keeps a JSON integer as
// uint64 when it is not negative and as int64 otherwise, so a value past int64 must be compared
// as unsigned, never read through get<int64_t>() (2^64 - 1 would become -1).
#pragma once

#include <cstdint>
#include <optional>

namespace sam3::core {

// The integer `v` holds when it is one in [lo, hi]; nullopt for any other value or type.
template <typename Json>
std::optional<std::int64_t> json_integer_in(const Json& v, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer() || lo > hi) return std::nullopt;
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.template get<std::uint64_t>();
    if (hi < 0 || u > static_cast<std::uint64_t>(hi)) return std::nullopt;
    const auto n = static_cast<std::int64_t>(u);
    return n < lo ? std::nullopt : std::optional(n);
  }
  const std::int64_t n = v.template get<std::int64_t>();
  return n < lo || n > hi ? std::nullopt : std::optional(n);
}

}  // namespace sam3::core
