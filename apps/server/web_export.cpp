#include "web_export.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "assets.h"
#include "sam3/error.h"
#include "sam3/export.h"

namespace sam3::server {
namespace {

constexpr const char* kManifest = ".sam3-web-export.json";

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string headers_file() {
  std::string s =
      "# Cross-origin isolation for sam3's web app (WASM threads need it); Netlify and\n"
      "# Cloudflare Pages read this file.\n/*\n";
  for (const auto& [k, v] : isolation_headers()) s += "  " + k + ": " + v + "\n";
  return s;
}

std::string nginx_snippet() {
  std::string s =
      "# sam3 web app: include in the server block that serves this folder. Cross-origin\n"
      "# isolation lets ONNX Runtime Web use WASM threads; .mjs and .wasm need their types.\n"
      "location / {\n";
  for (const auto& [k, v] : isolation_headers()) s += "    add_header " + k + " \"" + v + "\" always;\n";
  // A types block replaces the MIME map the server block inherits (.html, .css, .js would lose
  // theirs), so nginx's own map comes first and the block only adds to it.
  s += "}\ninclude mime.types;\ntypes {\n    text/javascript mjs;\n    application/wasm wasm;\n}\n";
  return s;
}

}  // namespace

std::vector<std::string> export_web_app(const WebExportOptions& o) {
  const auto& files = o.files;
  if (!std::filesystem::is_regular_file(files.web_dir / "sam3.wasm")) {
    throw Error(ErrorCode::kIo, "this sam3 was built without its WebAssembly module (" + files.web_dir.string() +
                                    " has no sam3.wasm): build it with Emscripten's emcc installed, or set SAM3_WEB_DIR");
  }
  if (!std::filesystem::is_regular_file(files.ort_web_dir / "ort.all.min.mjs")) {
    throw Error(ErrorCode::kIo,
                "onnxruntime-web is not at " + files.ort_web_dir.string() + " (scripts/setup.sh fetches it; or set SAM3_ORT_WEB_DIR)");
  }
  // What goes where: bytes held here, or a file copied.
  std::map<std::string, std::string> bytes;
  std::map<std::string, std::filesystem::path> copies;
  for (const auto& a : assets()) {
    const std::string path = a.path;
    if (path == "/")
      bytes["index.html"] = std::string(a.data);
    else if (path == "/app.js" || path == "/style.css")
      bytes[path.substr(1)] = std::string(a.data);
  }
  for (const char* f : {"sam3.mjs", "sam3.wasm", "sam3-browser.mjs", "sam3-browser.d.ts", "sam3-rewrite-worker.mjs", "sam3-int8.mjs",
                        "sam3-int8-worker.mjs"}) {
    copies[f] = files.web_dir / f;
  }
  // The tab's int8 kernel, built where clang-22 is (the module runs ONNX Runtime's kernels without it).
  for (const char* f : {"int8-relaxed.wasm", "int8-simd128.wasm"}) {
    if (std::filesystem::is_regular_file(files.web_dir / f)) copies[f] = files.web_dir / f;
  }
  for (const auto& entry : std::filesystem::directory_iterator(files.ort_web_dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file() && !name.starts_with(".")) copies["ort/" + name] = entry.path();
  }
  std::string vocabulary_url;
  if (!o.vocabulary.empty()) {
    vocabulary_url = "vocabulary/" + o.vocabulary.filename().string();
    copies[vocabulary_url] = o.vocabulary;
  }
  bytes["config.json"] = web_app_config(o.models_url, vocabulary_url);
  bytes["_headers"] = headers_file();
  bytes["nginx.conf"] = nginx_snippet();

  // Never replace what an earlier export did not write.
  std::set<std::string> ours;
  const auto manifest = o.out / kManifest;
  std::error_code ec;
  if (std::filesystem::exists(manifest, ec)) {
    try {
      const auto listed = nlohmann::json::parse(read_all(manifest));
      for (const auto& f : listed.at("files")) ours.insert(f.get<std::string>());
    } catch (const nlohmann::json::exception&) {
      throw Error(ErrorCode::kIo, manifest.string() + " is damaged; remove it (and the files it listed) to export again");
    }
  }
  std::vector<std::string> all;
  for (const auto& [k, v] : bytes) all.push_back(k);
  for (const auto& [k, v] : copies) all.push_back(k);
  for (const auto& rel : all) {
    if (std::filesystem::exists(o.out / rel, ec) && !ours.contains(rel)) {
      throw Error(ErrorCode::kIo, (o.out / rel).string() +
                                      " exists and was not written by sam3 web export; "
                                      "export into an empty folder or remove it");
    }
  }
  for (const auto& [rel, from] : copies) {
    if (!std::filesystem::is_regular_file(from, ec)) throw Error(ErrorCode::kIo, "cannot read " + from.string() + ": not a file");
  }
  std::filesystem::create_directories(o.out / "ort", ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create " + (o.out / "ort").string() + ": " + ec.message());
  if (!vocabulary_url.empty()) std::filesystem::create_directories(o.out / "vocabulary", ec);
  // The manifest first: an export stopped half-way (killed, disk full) has claimed what it was
  // writing, so running it again finishes the job instead of refusing sam3's own files.
  ours.insert(all.begin(), all.end());
  write_file_atomic(manifest, nlohmann::json{{"files", ours}}.dump(1) + "\n");
  for (const auto& [rel, data] : bytes) write_file_atomic(o.out / rel, data);
  for (const auto& [rel, from] : copies) write_file_atomic(o.out / rel, read_all(from));
  return all;
}

}  // namespace sam3::server
