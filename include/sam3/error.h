// Typed errors of the sam3cpp library: a code for programs, a message for people.
//
//   try { segmenter.segment(embedding, {.text = "car"}); }
//   catch (const sam3::Error& e) { e.code(); e.what(); error_traits(e.code()).http_status; }
//
// Every code has one row in SAM3_ERROR_CODES: its stable name and how each front reports it
// (the CLI's exit code, the server's HTTP status, the Python exception class). The enum is
// made from that table, so a code cannot exist without its row.
// Thread-safety: everything here is immutable.
#pragma once

#include <stdexcept>
#include <string>

namespace sam3 {

// X(enumerator, name, exit code, HTTP status, Python exception)
#define SAM3_ERROR_CODES(X)                                                              \
  /* a caller-supplied value is out of range or malformed */                             \
  X(kInvalidArgument, "invalid_argument", 3, 400, "InvalidArgumentError")                \
  /* a prompt is not valid UTF-8 */                                                      \
  X(kInvalidText, "invalid_text", 3, 400, "InvalidTextError")                            \
  /* the image file cannot be opened or is empty */                                      \
  X(kImageUnreadable, "image_unreadable", 3, 400, "ImageUnreadableError")                \
  /* not JPEG, PNG, WebP, BMP or TIFF */                                                 \
  X(kImageUnsupported, "image_unsupported", 3, 415, "ImageUnsupportedError")             \
  /* a supported format that fails to decode */                                          \
  X(kImageCorrupt, "image_corrupt", 3, 400, "ImageCorruptError")                         \
  /* more pixels than the configured limit */                                            \
  X(kImageTooLarge, "image_too_large", 3, 413, "ImageTooLargeError")                     \
  /* model directory or file missing */                                                  \
  X(kModelNotFound, "model_not_found", 4, 503, "ModelNotFoundError")                     \
  /* files present but their inputs/outputs are not what a generation needs */           \
  X(kModelMismatch, "model_mismatch", 4, 503, "ModelMismatchError")                      \
  /* vocabulary file missing or malformed */                                             \
  X(kTokenizer, "tokenizer", 4, 503, "TokenizerError")                                   \
  /* ONNX Runtime failed while running a model, or lacks a provider asked for */         \
  X(kRuntime, "runtime", 5, 500, "RuntimeFailure")                                       \
  /* writing an output failed */                                                         \
  X(kIo, "io", 6, 500, "OutputError")                                                    \
  /* a download failed */                                                                \
  X(kNetwork, "network", 7, 502, "NetworkError")                                         \
  /* stopped by a StopToken (sam3/stop_token.h) before it finished; 130 as for SIGINT */ \
  X(kCancelled, "cancelled", 130, 503, "CancelledError")

enum class ErrorCode {
#define SAM3_ERROR_ENUMERATOR(id, name, exit_code, http_status, python) id,
  SAM3_ERROR_CODES(SAM3_ERROR_ENUMERATOR)
#undef SAM3_ERROR_ENUMERATOR
};

// Every error the library throws. what() is one line: what was wrong and what to do.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// How the fronts report a code (one row of SAM3_ERROR_CODES).
struct ErrorTraits {
  ErrorCode code;
  const char* name;              // stable lowercase name ("image_too_large"), for JSON and logs
  int exit_code;                 // the CLI's exit status
  int http_status;               // the server's response status
  const char* python_exception;  // the class in the sam3cpp module (a subclass of sam3cpp.Error)
};

const ErrorTraits& error_traits(ErrorCode code) noexcept;
// All rows, in enum order.
const ErrorTraits* error_traits_begin() noexcept;
const ErrorTraits* error_traits_end() noexcept;
inline const char* error_code_name(ErrorCode code) noexcept { return error_traits(code).name; }

}  // namespace sam3
