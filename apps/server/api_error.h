// The one error shape of the API: {"error": {"code", "message"}} with a matching status.
#pragma once

#include <stdexcept>
#include <string>

#include "sam3/error.h"

namespace sam3::server {

struct ApiError : std::runtime_error {
  ApiError(int status, std::string code, const std::string& message) : std::runtime_error(message), status(status), code(std::move(code)) {}
  int status;
  std::string code;
  std::string allow;  // the Allow header of a 405
};

// Library errors as API errors: bad input is 4xx, never 500.
ApiError api_error_from(const Error& e);
std::string error_body(const std::string& code, const std::string& message);

}  // namespace sam3::server
