// The HTTP routes of sam3 serve and the state they share: the model (loaded in the
// background; /health says 503 until it is ready), the embedding cache and the workers.
// screen() judges a request from its headers (host, origin, route, method, key, media type)
// before its body is read; handle() answers it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "embedding_cache.h"
#include "http/http_server.h"
#include "server.h"
#include "work_queue.h"

namespace sam3::server {

class Api {
 public:
  explicit Api(const ServerOptions& options);
  void set_port(int port) { port_ = port; }  // for the Host and Origin checks
  Dispatch screen(const HttpRequest& head) const;
  HttpResponse handle(const HttpRequest& request);
  void load_model();  // run on a background thread
  void stop_workers() { queue_.stop(); }

 private:
  struct Route {
    std::string method, path;
    bool quick = false, needs_key = false;
    std::vector<std::string> media_types;  // accepted Content-Types of the body ("" = none sent)
    std::function<HttpResponse(const HttpRequest&)> answer;
  };
  const Route* find_route(const HttpRequest& request, bool* other_method) const;
  bool host_allowed(const std::string& host) const;
  std::string allowed_origin(const HttpRequest& request) const;  // "" if none or same-origin
  bool origin_allowed(const HttpRequest& request) const;

  std::shared_ptr<Model> ready_model();  // throws ApiError(503) while loading
  bool authorized(const HttpRequest& req) const;
  template <typename F>
  auto run_on_worker(const HttpRequest& req, F&& job);
  std::shared_ptr<const CachedImage> encode_bytes(const HttpRequest& req, std::string_view bytes, bool* cached);

  HttpResponse handle_images(const HttpRequest& req);
  HttpResponse handle_segment(const HttpRequest& req);
  HttpResponse handle_info();
  HttpResponse handle_health();

  ServerOptions options_;
  int port_ = 0;
  std::vector<Route> routes_;
  EmbeddingCache cache_;
  WorkQueue queue_;
  std::mutex model_mutex_;
  std::shared_ptr<Model> model_;
  bool load_failed_ = false;
};

}  // namespace sam3::server
