#include "api_error.h"

#include <nlohmann/json.hpp>

namespace sam3::server {

ApiError api_error_from(const Error& e) {
  const std::string code = error_code_name(e.code());
  switch (e.code()) {
    case ErrorCode::kImageTooLarge: return {413, code, e.what()};
    case ErrorCode::kImageUnsupported: return {415, code, e.what()};
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidText:
    case ErrorCode::kImageUnreadable:
    case ErrorCode::kImageCorrupt: return {400, code, e.what()};
    case ErrorCode::kModelNotFound:
    case ErrorCode::kModelMismatch:
    case ErrorCode::kTokenizer:
    case ErrorCode::kCancelled: return {503, code, e.what()};
    default: return {500, code, e.what()};
  }
}

std::string error_body(const std::string& code, const std::string& message) {
  return nlohmann::ordered_json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

}  // namespace sam3::server
