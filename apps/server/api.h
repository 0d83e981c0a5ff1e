// The HTTP routes of sam3 serve and the state they share: the model (loaded in the
// background; /health says 503 until it is ready), the embedding cache and the workers.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "embedding_cache.h"
#include "server.h"
#include "work_queue.h"

namespace sam3::server {

class Api {
 public:
  explicit Api(const ServerOptions& options);
  void register_routes(httplib::Server& server);
  void load_model();  // run on a background thread
  void stop_workers() { queue_.stop(); }

 private:
  std::shared_ptr<Model> ready_model();  // throws ApiError(503) while loading
  void authorize(const httplib::Request& req) const;
  template <typename F>
  auto run_on_worker(F&& job);
  std::shared_ptr<const CachedImage> encode_bytes(const std::string& bytes, bool* cached);

  void handle_images(const httplib::Request& req, httplib::Response& res);
  void handle_segment(const httplib::Request& req, httplib::Response& res);
  void handle_info(httplib::Response& res);
  void handle_health(httplib::Response& res);

  ServerOptions options_;
  EmbeddingCache cache_;
  WorkQueue queue_;
  std::mutex model_mutex_;
  std::shared_ptr<Model> model_;
  std::string load_error_;
};

}  // namespace sam3::server
