// libFuzzer target: arbitrary bytes as a Label Studio label config (the XML of /setup's
// "schema" and /predict's "label_config"). A config sam3 cannot serve must be an ApiError 400;
// a config it takes must name an image key and have labels on every control it keeps. Never
// a crash, hang or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api_error.h"
#include "protocols/label_studio_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  try {
    const auto config = sam3::server::label_studio::parse_label_config(xml);
    if (config.data_key.empty() || config.controls.empty()) std::abort();
    for (const auto& c : config.controls) {
      if (c.labels.empty()) std::abort();  // the backend takes the first label of a control
      for (const auto& l : c.labels) {
        if (l.prompts.empty()) std::abort();  // every label is searched for with at least one prompt
      }
    }
  } catch (const sam3::server::ApiError& e) {
    if (e.status != 400) std::abort();
  }
  return 0;
}
