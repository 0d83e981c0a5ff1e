// libFuzzer target: arbitrary bytes as the JSON body of the labeling tools' routes, through the
// server's own dispatch: X-AnyLabeling's POST /v1/predict and Label Studio's POST /setup and
// /predict (the first byte picks the route). No model is loaded, so a request that parses all
// the way is answered 503 "loading"; everything before that (JSON, label configs, prompts,
// marks, base64 images, options) runs as in a real server. Every answer must be an HTTP status
// with a JSON body and no 500; never a crash, hang, sanitizer report or an exception out of handle().
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "api.h"
#include "protocols/label_studio_backend.h"
#include "protocols/x_anylabeling.h"

namespace {

sam3::server::Api& api() {
  static sam3::server::Api* api = [] {
    sam3::server::ServerOptions options;
    options.workers = 1;
    auto* a = new sam3::server::Api(options);  // lives as long as the process; no model is ever loaded
    sam3::server::LabelStudioOptions label_studio;
    label_studio.url = "http://127.0.0.1:9";  // never reached: nothing is fetched before a model is ready
    sam3::server::add_label_studio_routes(*a, label_studio);
    sam3::server::add_x_anylabeling_routes(*a);
    return a;
  }();
  return *api;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kPaths[] = {"/v1/predict", "/setup", "/predict"};
  sam3::server::HttpRequest req;
  req.method = "POST";
  req.path = req.target = kPaths[data[0] % 3];
  req.headers = {{"host", "127.0.0.1"}, {"content-type", "application/json"}};
  req.body.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto response = api().handle(req);
  // Bad input is the client's error (4xx, or X-AnyLabeling's 200 with success false); 503 is the
  // model not loaded. A 500 is an exception the route did not expect: a finding.
  if (response.status < 200 || (response.status >= 500 && response.status != 503)) std::abort();
  if (!nlohmann::json::accept(response.body)) std::abort();
  return 0;
}
