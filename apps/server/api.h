// The HTTP routes of sam3 serve and the state they share: the model (loaded in the
// background; /health says 503 until it is ready), the embedding cache and the workers.
// screen() judges a request from its headers (host, origin, route, method, key, media type)
// before its body is read; handle() answers it. Protocol adapters (protocols/) add their
// routes and run on the same model, cache, workers and limits.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api_error.h"
#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"
#include "embedding_cache.h"
#include "http/http_server.h"
#include "server.h"
#include "work_queue.h"

namespace sam3::server {

// A JSON answer with this status (the routes' and the protocol adapters' one way to answer).
HttpResponse json_response(int status, const nlohmann::ordered_json& body);

// What a job on the worker queue is given: stopped once the request it runs for is given up
// (the client left, its time ran out), so a job stops instead of holding the worker for work
// nobody waits for: between prompts (check()) and inside a running encode or decode (token(),
// passed in the model call's options).
class JobStop {
 public:
  explicit JobStop(StopToken given_up) : given_up_(std::move(given_up)) {}
  void check() const {
    if (given_up_.stop_requested()) throw ApiError(503, "cancelled", "the request was given up before its work was done");
  }
  const StopToken& token() const { return given_up_; }
  // A model call's options that stop with the job (inside a running encode or decode).
  template <typename Options>
  Options stopping(Options options) const {
    options.stop = given_up_;
    return options;
  }

 private:
  StopToken given_up_;
};

// Each label's prompts (its synonyms) segmented on one embedding and merged into one list of
// instances per label, stopping with the job: what Label Studio's and CVAT's labels ask for.
std::vector<std::vector<Instance>> segment_labels(const ImageSegmenter& segmenter, const ImageEmbedding& embedding,
                                                  const std::vector<std::vector<Prompt>>& labels, const SegmentOptions& options,
                                                  const JobStop& stop);

class Api {
 public:
  explicit Api(const ServerOptions& options);
  void set_port(int port) { port_ = port; }  // for the Host and Origin checks
  const ServerOptions& options() const { return options_; }
  Dispatch screen(const HttpRequest& head) const;
  HttpResponse handle(const HttpRequest& request);
  // Run on a background thread; false when a model cannot be loaded (load_error() says why).
  bool load_model();
  std::exception_ptr load_error();
  void stop_workers() { queue_.stop(); }

  // What protocol adapters build on.
  struct Route {
    std::string method, path;
    bool quick = false, needs_key = false;
    std::vector<std::string> media_types;  // accepted Content-Types of the body ("" = none sent)
    std::function<HttpResponse(const HttpRequest&)> answer;
    // The answer to a request without the key (default: the API's 401 error).
    std::function<HttpResponse()> unauthorized;
    bool prefix = false;  // path is a prefix ("/models/"): every path under it
  };
  void add_route(Route route) { routes_.push_back(std::move(route)); }
  std::shared_ptr<const Model> ready_model();  // --models; throws ApiError(503) while loading
  // Text and exemplar boxes: --models when it is a text-prompted model. Throws ApiError 400
  // when it is the interactive one, 503 while loading.
  ImageSegmenter text_segmenter();
  // Clicks and "everything": --interactive-models, or --models when that is the interactive
  // model. Throws ApiError 400 when the server has none, 503 while loading.
  InteractiveSegmenter click_segmenter();
  bool has_click_model();  // whether click_segmenter() answers (false while loading too)
  // "sam3cpp VERSION MODEL", what Label Studio keeps as the predictions' model version.
  std::string model_version() const;
  // The image's embedding from the cache, or decoded here and encoded on a worker.
  std::shared_ptr<const CachedImage> encode_bytes(const HttpRequest& req, std::string_view bytes, bool* cached);
  // The same by `model` (the interactive one, say).
  std::shared_ptr<const CachedImage> encode_bytes(const HttpRequest& req, const std::shared_ptr<const Model>& model, std::string_view bytes,
                                                  bool* cached);
  // Image `id`'s embedding by `model`: from the cache, or encoded on a worker from `bytes`, or
  // (bytes null) from the pixels kept with the other model's entry; ApiError 404 when neither.
  std::shared_ptr<const CachedImage> embedding_for(const HttpRequest& req, const std::shared_ptr<const Model>& model, const std::string& id,
                                                   const std::string_view* bytes, bool* cached);
  // Runs `job(const JobStop&)` on the worker queue while the client is still there and the
  // request's time lasts; a job given up on before a worker takes it is skipped, one given up
  // while it runs stops at its next JobStop::check(). Throws ApiError 503 (queue full,
  // timeout) or 499.
  template <typename F>
  auto run_on_worker(const HttpRequest& req, F&& job);
  // When the request's time (--timeout, counted from its arrival, across every fetch, encode
  // and prompt it needs) runs out.
  std::chrono::steady_clock::time_point deadline(const HttpRequest& req) const {
    return req.received + std::chrono::seconds(options_.request_timeout_s);
  }
  // Throws ApiError 499 once the client has gone, 503 once the request's time has passed.
  void check_alive(const HttpRequest& req) const;
  // The one cap on prompts per request (--max-prompts) and exemplar boxes per prompt, for every
  // route: throws ApiError 413 naming `what` (e.g. "the label config's labels").
  void check_prompts(const std::vector<Prompt>& prompts, const std::string& what) const;
  // The same cap on clicked objects (each is one prompt): ApiError 413 naming `what`.
  void check_objects(size_t objects, const std::string& what) const;

 private:
  const Route* find_route(const HttpRequest& request, bool* other_method) const;
  bool host_allowed(const std::string& host) const;
  std::string allowed_origin(const HttpRequest& request) const;  // "" if none or same-origin
  bool origin_allowed(const HttpRequest& request) const;
  bool authorized(const HttpRequest& req) const;

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
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const Model> interactive_model_;  // a second model, for clicks
  bool load_failed_ = false;
  std::exception_ptr load_error_;
};

template <typename F>
auto Api::run_on_worker(const HttpRequest& req, F&& job) {
  check_alive(req);
  const StopSource given_up;
  auto future = queue_.submit([token = given_up.token(), job = std::forward<F>(job)]() mutable {
    const JobStop stop(token);
    stop.check();
    return job(stop);
  });
  if (!future) throw ApiError(503, "busy", "all workers are busy and the queue is full; retry shortly");
  while (future->wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    try {
      check_alive(req);
    } catch (const ApiError&) {
      given_up.request_stop();  // the job's running encode or decode ends at its next node
      throw;
    }
  }
  return future->get();
}

}  // namespace sam3::server
