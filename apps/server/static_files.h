// Files from a folder over HTTP, read-only: GET and HEAD, single byte ranges (206/416),
// ETag/Last-Modified revalidation (304), and no way out of the folder (no "..", no dot
// segments, no backslashes or NULs, regular files only). What /models/ and /app/ serve.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "http/http_message.h"

namespace sam3::server {

// `relative`: the URL path under the route's prefix, still percent-encoded. `headers` are
// added to every answer (COOP/COEP for the app). 404 for anything that is not a file there,
// or (with `allowed`) whose decoded relative path it refuses. The body is read from the open
// file while it is sent (never held whole).
HttpResponse serve_file(const HttpRequest& request, const std::filesystem::path& root, const std::string& relative,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::function<bool(const std::string&)>& allowed = nullptr);

// The same for bytes the server holds (the embedded page), with its content type.
HttpResponse serve_bytes(const HttpRequest& request, std::string_view data, const std::string& content_type,
                         const std::vector<std::pair<std::string, std::string>>& headers);

// The media type of a file name's extension (.mjs, .wasm, .onnx, .json, ...).
std::string content_type_of(const std::filesystem::path& path);

}  // namespace sam3::server
