#include "cli_common.h"

#include <cstdio>
#include <cstdlib>

namespace sam3::cli {

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidText:
    case ErrorCode::kImageUnreadable:
    case ErrorCode::kImageUnsupported:
    case ErrorCode::kImageCorrupt:
    case ErrorCode::kImageTooLarge: return kBadInput;
    case ErrorCode::kModelNotFound:
    case ErrorCode::kModelMismatch:
    case ErrorCode::kTokenizer: return kModelProblem;
    case ErrorCode::kRuntime: return kRuntimeError;
    case ErrorCode::kIo: return kIoError;
    case ErrorCode::kNetwork: return kNetworkError;
    case ErrorCode::kCancelled: return kInterrupted;
  }
  return kFailure;
}

void print_error(const std::string& message) { std::fprintf(stderr, "sam3: error: %s\n", message.c_str()); }

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("SAM3_DATA_DIR"); env && *env) return env;
  return SAM3_DEFAULT_DATA_DIR;
}

}  // namespace sam3::cli
