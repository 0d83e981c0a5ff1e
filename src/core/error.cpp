#include "sam3/error.h"

namespace sam3 {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInvalidText: return "invalid_text";
    case ErrorCode::kImageUnreadable: return "image_unreadable";
    case ErrorCode::kImageUnsupported: return "image_unsupported";
    case ErrorCode::kImageCorrupt: return "image_corrupt";
    case ErrorCode::kImageTooLarge: return "image_too_large";
    case ErrorCode::kModelNotFound: return "model_not_found";
    case ErrorCode::kModelMismatch: return "model_mismatch";
    case ErrorCode::kTokenizer: return "tokenizer";
    case ErrorCode::kRuntime: return "runtime";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kNetwork: return "network";
    case ErrorCode::kCancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace sam3
