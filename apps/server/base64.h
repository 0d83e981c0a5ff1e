#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sam3::server {

std::string base64_encode(std::string_view data);
// Accepts an optional "data:...;base64," prefix; nullopt on invalid input.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace sam3::server
