// sam3 in the browser, served by `sam3 serve`: the web page at /app/ computing in the tab (the
// WebAssembly module and ONNX Runtime Web from disk), cross-origin isolated (COOP/COEP, for
// WASM threads), and the files the loaded model was read from (nothing else of its folder)
// read-only under /models/, streamed from disk.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "api.h"

namespace sam3::server {

struct WebAppFiles {
  std::filesystem::path web_dir;      // sam3.mjs, sam3.wasm, sam3-browser.mjs (the build's web/)
  std::filesystem::path ort_web_dir;  // onnxruntime-web's files (.deps/onnxruntime-web)
};

// The build's folders (or $SAM3_WEB_DIR and $SAM3_ORT_WEB_DIR when set).
WebAppFiles default_web_app_files();

// The headers that make a page cross-origin isolated.
const std::vector<std::pair<std::string, std::string>>& isolation_headers();

// The app's config.json: where its models are ("models": a URL prefix or null: pick a folder)
// and, when known, the files there ("files", so that the page probes no name).
std::string web_app_config(const std::string& models_url, const std::string& vocabulary_url, const std::vector<std::string>& files = {});

// GET and HEAD of /app/... and /models/... on `api`.
void add_web_app_routes(Api& api, const ServerOptions& options, const WebAppFiles& files);

}  // namespace sam3::server
