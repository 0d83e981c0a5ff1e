#include "api_error.h"

#include <nlohmann/json.hpp>

namespace sam3::server {

ApiError api_error_from(const Error& e) {
  const ErrorTraits& t = error_traits(e.code());
  return {t.http_status, t.name, e.what()};
}

std::string error_body(const std::string& code, const std::string& message) {
  return nlohmann::ordered_json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

}  // namespace sam3::server
