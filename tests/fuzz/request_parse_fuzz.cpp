// libFuzzer target: arbitrary bytes as the body of POST /v1/segment (JSON with prompts, boxes,
// options and a base64 image), as base64 text, and as a multipart/form-data upload. Bad input
// must be an ApiError with a 4xx status or a refused body; never a crash, hang or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api_error.h"
#include "sam3/base64.h"
#include "http/multipart.h"
#include "segment_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    const auto request = sam3::server::parse_segment_request(body);
    if (request.image_id.empty() && request.inline_image.empty()) std::abort();  // one of them is required
  } catch (const sam3::server::ApiError& e) {
    if (e.status < 400 || e.status >= 500) std::abort();
  }
  if (const auto bytes = sam3::base64_decode(body)) {
    if (bytes->size() > body.size()) std::abort();  // base64 never decodes to more bytes than it has
  }
  // Multipart with the boundary the body's first line names (as a client would have sent it).
  const std::string_view view(body);
  const size_t eol = view.find("\r\n");
  const std::string_view boundary = view.substr(0, eol).substr(view.starts_with("--") ? 2 : 0);
  if (const auto parts = sam3::server::parse_multipart(view, boundary)) {
    for (const auto& p : *parts) {
      if (p.content.data() < view.data() || p.content.data() + p.content.size() > view.data() + view.size()) std::abort();
    }
  }
  return 0;
}
