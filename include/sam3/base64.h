// Base64 (RFC 4648, with padding), for masks and images carried in JSON: the "png" mask format,
// the server's inline images.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sam3 {

std::string base64_encode(std::string_view data);
// Accepts an optional "data:...;base64," prefix and line breaks; nullopt on any other character
// outside the alphabet.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace sam3
