// `sam3 web export DIR`: the /app/ page as static files for any static host: the page, the
// WebAssembly module and its wrapper, onnxruntime-web's files, the fallback vocabulary, a
// config.json, and the cross-origin isolation headers as a _headers file and an nginx snippet.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "web_app.h"

namespace sam3::server {

struct WebExportOptions {
  std::filesystem::path out;
  std::string models_url;            // config.json "models" (empty: the user picks a folder)
  std::filesystem::path vocabulary;  // copied to vocabulary/ (empty: none)
  WebAppFiles files = default_web_app_files();
};

// Writes the files (each atomically) and lists them in DIR/.sam3-web-export.json; refuses with
// sam3::Error kIo, before writing anything, a file there that an earlier export did not write.
// Returns the paths written, relative to DIR.
std::vector<std::string> export_web_app(const WebExportOptions& options);

}  // namespace sam3::server
