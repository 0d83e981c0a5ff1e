// Typed errors of the sam3cpp library: a code for programs, a message for people.
#pragma once

#include <stdexcept>
#include <string>

namespace sam3 {

enum class ErrorCode {
  kInvalidArgument,    // a caller-supplied value is out of range or malformed
  kInvalidText,        // a prompt is not valid UTF-8
  kImageUnreadable,    // the image file cannot be opened or is empty
  kImageUnsupported,   // not JPEG, PNG, WebP, BMP or TIFF
  kImageCorrupt,       // a supported format that fails to decode
  kImageTooLarge,      // more pixels than the configured limit
  kModelNotFound,      // model directory or file missing
  kModelMismatch,      // files present but their inputs/outputs are not what a layout needs
  kTokenizer,          // vocabulary file missing or malformed
  kRuntime,            // ONNX Runtime failed while running a model
  kIo,                 // writing an output failed
  kNetwork,            // a download failed
  kCancelled,          // stopped by a StopToken (sam3/stop_token.h) before it finished
};

// Every error the library throws. what() is one line: what was wrong and what to do.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// Stable lowercase name of a code ("image_too_large"), for JSON and logs.
const char* error_code_name(ErrorCode code) noexcept;

}  // namespace sam3
