#include "web_app.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "api_error.h"
#include "assets.h"
#include "static_files.h"

namespace sam3::server {
namespace {

std::filesystem::path env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::filesystem::path(v) : std::filesystem::path(fallback);
}

const Asset* embedded(std::string_view url_path) {
  for (const auto& a : assets()) {
    if (a.path == url_path) return &a;
  }
  return nullptr;
}

HttpResponse missing_build(const std::string& what) {
  HttpResponse r;
  r.status = 404;
  r.body = nlohmann::json{{"error", {{"code", "not_found"}, {"message", what}}}}.dump();
  r.headers = isolation_headers();
  return r;
}

// The files the model was read from (graphs, their external weights, its vocabulary), as paths
// relative to its folder: all that /models/ serves.
std::set<std::string> model_file_names(const Model& model) {
  const std::filesystem::path dir = model.directory().lexically_normal();
  std::set<std::string> names;
  for (const auto& file : model.source_files()) {
    const std::filesystem::path rel = file.lexically_normal().lexically_relative(dir);
    if (rel.empty() || *rel.begin() == "..") continue;  // a vocabulary from elsewhere: /app/vocabulary/ has it
    names.insert(rel.generic_string());
  }
  return names;
}

}  // namespace

WebAppFiles default_web_app_files() { return {env_or("SAM3_WEB_DIR", SAM3_WEB_DIR), env_or("SAM3_ORT_WEB_DIR", SAM3_ORT_WEB_DIR)}; }

const std::vector<std::pair<std::string, std::string>>& isolation_headers() {
  static const std::vector<std::pair<std::string, std::string>> h = {{"Cross-Origin-Opener-Policy", "same-origin"},
                                                                     {"Cross-Origin-Embedder-Policy", "require-corp"},
                                                                     {"Cross-Origin-Resource-Policy", "same-origin"},
                                                                     {"X-Content-Type-Options", "nosniff"}};
  return h;
}

std::string web_app_config(const std::string& models_url, const std::string& vocabulary_url, const std::vector<std::string>& files) {
  nlohmann::ordered_json j;
  j["models"] = models_url.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(models_url);
  j["vocabulary"] = vocabulary_url.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(vocabulary_url);
  if (!files.empty()) j["files"] = files;
  return j.dump();
}

void add_web_app_routes(Api& api, const ServerOptions& options, const WebAppFiles& files) {
  const std::filesystem::path models = options.model_dir, vocabulary = options.fallback_vocabulary;
  const std::string vocabulary_url = vocabulary.empty() ? "" : "/app/vocabulary/" + vocabulary.filename().string();
  const auto app = [&api, files, vocabulary, vocabulary_url](const HttpRequest& r) {
    const std::string rel = r.path.substr(std::string("/app/").size());
    const auto& h = isolation_headers();
    if (rel.empty() || rel == "index.html") return serve_bytes(r, embedded("/")->data, "text/html; charset=utf-8", h);
    if (rel == "app.js" || rel == "style.css") {
      const Asset* a = embedded("/" + rel);
      return serve_bytes(r, a->data, a->content_type, h);
    }
    if (rel == "config.json") {
      std::vector<std::string> names;  // none while the model loads: the page then probes
      try {
        for (const auto& name : model_file_names(*api.ready_model())) names.push_back(name);
      } catch (const ApiError&) {
      }
      return serve_bytes(r, web_app_config("/models/", vocabulary_url, names), "application/json", h);
    }
    if (rel.starts_with("vocabulary/")) {
      if (vocabulary.empty() || rel.substr(11) != vocabulary.filename().string()) return serve_file(r, {}, rel, h);
      return serve_file(r, vocabulary.parent_path(), rel.substr(11), h);
    }
    if (rel.starts_with("ort/")) {
      if (!std::filesystem::is_directory(files.ort_web_dir)) {
        return missing_build("onnxruntime-web is not installed at " + files.ort_web_dir.string() +
                             " (scripts/setup.sh fetches it; or set SAM3_ORT_WEB_DIR)");
      }
      return serve_file(r, files.ort_web_dir, rel.substr(4), h);
    }
    if (!std::filesystem::is_regular_file(files.web_dir / "sam3.wasm")) {
      return missing_build("this sam3 was built without its WebAssembly module (" + files.web_dir.string() +
                           " has no sam3.wasm): build with Emscripten's emcc installed, or set SAM3_WEB_DIR");
    }
    return serve_file(r, files.web_dir, rel, h);
  };
  // Only what the loaded model is made of, and nothing else the folder holds (notes, other
  // models, subfolders, what a link there reaches): the route needs no key (docs/browser.md).
  const auto model_files = [&api, models](const HttpRequest& r) {
    const std::set<std::string> names = model_file_names(*api.ready_model());  // 503 while it loads
    return serve_file(r, models, r.path.substr(std::string("/models/").size()), isolation_headers(),
                      [&names](const std::string& name) { return names.contains(name); });
  };
  // The page at / is the same page as /app/'s and a static export's, which asks for config.json
  // to know where it computes: null says "on this server" (it was a 404 in the console).
  const auto no_config = [](const HttpRequest& r) { return serve_bytes(r, "null", "application/json", {}); };
  for (const char* method : {"GET", "HEAD"}) {
    api.add_route({method, "/config.json", true, false, {}, no_config, {}});
    Api::Route a{method, "/app/", false, false, {}, app, {}};
    a.prefix = true;
    api.add_route(a);
    Api::Route m{method, "/models/", false, false, {}, model_files, {}};
    m.prefix = true;
    api.add_route(m);
  }
}

}  // namespace sam3::server
