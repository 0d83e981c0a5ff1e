// A request body's JSON, parsed with bounds on what it may build. nlohmann builds every value
// a body holds: 32 MB of "[[[[...]]]]" made the server 1.4 GB larger (about 40 bytes for each
// byte), so a handful of bodies within --max-request-mb could take the machine's memory. Past
// either bound the parse stops at once, before building more.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api_error.h"

namespace sam3::server {

inline constexpr int kMaxJsonDepth = 64;                  // every route's bodies nest about 10 deep
inline constexpr std::size_t kMaxJsonValues = 4'000'000;  // values, arrays and objects

// A discarded value for text that is not JSON; ApiError 413 "json_too_complex" past a bound.
template <typename Json>
Json parse_request_json(std::string_view text) {
  std::size_t values = 0;
  const typename Json::parser_callback_t bounded = [&values](int depth, typename Json::parse_event_t event, Json&) {
    using Event = typename Json::parse_event_t;
    if (depth > kMaxJsonDepth) {
      throw ApiError(413, "json_too_complex", "the JSON body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if ((event == Event::value || event == Event::object_start || event == Event::array_start) && ++values > kMaxJsonValues) {
      throw ApiError(413, "json_too_complex", "the JSON body holds more than " + std::to_string(kMaxJsonValues) + " values");
    }
    return true;
  };
  return Json::parse(text, bounded, /*allow_exceptions=*/false);
}

}  // namespace sam3::server
