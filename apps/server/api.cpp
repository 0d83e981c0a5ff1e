#include "api.h"

#include <openssl/evp.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "api_error.h"
#include "assets.h"
#include "sam3/base64.h"
#include "sam3/answer_json.h"
#include "sam3/export.h"
#include "sam3/instance_merge.h"
#include "sam3/log.h"
#include "sam3/prompt_check.h"
#include "sam3/version.h"
#include "http/multipart.h"
#include "segment_request.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;

std::string image_id_of(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  static const char* digits = "0123456789abcdef";
  std::string id;
  for (unsigned i = 0; i < 16; ++i) id += {digits[md[i] >> 4], digits[md[i] & 15]};
  return id;  // 128 bits of the content hash
}

HttpResponse error_response(const ApiError& e) {
  HttpResponse r;
  r.status = e.status;
  r.body = error_body(e.code, e.what());
  if (e.status == 503 || e.status == 429) r.headers.emplace_back("Retry-After", "1");
  if (e.status == 405) r.headers.emplace_back("Allow", e.allow);
  return r;
}

// Library errors as API errors; what a client cannot act on (paths, ONNX Runtime's
// internals) goes to the log, not into the answer.
ApiError api_error_of(const Error& e) {
  ApiError a = api_error_from(e);
  if (a.status >= 500) {
    log(LogLevel::kError, std::string("request failed: ") + e.what());
    return ApiError(a.status, a.code,
                    a.status == 503 ? "the model is not available; see the server's log" : "inference failed; see the server's log");
  }
  return a;
}

}  // namespace

std::vector<std::vector<Instance>> segment_labels(const ImageSegmenter& segmenter, const ImageEmbedding& embedding,
                                                  const std::vector<std::vector<Prompt>>& labels, const SegmentOptions& options,
                                                  const JobStop& stop) {
  // Every label's synonyms are prompts of this one image: the family's rule runs across all of them.
  std::vector<Prompt> all;
  for (const auto& prompts : labels) all.insert(all.end(), prompts.begin(), prompts.end());
  stop.check();
  auto results = segmenter.segment_all(embedding, all, stop.stopping(options));
  std::vector<std::vector<Instance>> out;
  size_t next = 0;
  for (const auto& prompts : labels) {
    std::vector<Instance> found;
    for (size_t k = 0; k < prompts.size(); ++k) {
      auto& r = results[next++];
      std::move(r.instances.begin(), r.instances.end(), std::back_inserter(found));
    }
    out.push_back(merge_instances(std::move(found)));
  }
  return out;
}

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

Api::Api(const ServerOptions& options)
    : options_(options), cache_(options.cache_mb * 1024 * 1024), queue_(options.workers, options.queue_capacity) {
  const std::vector<std::string> images_types = {"", "multipart/form-data", "application/octet-stream", "application/x-www-form-urlencoded",
                                                 "image/*"};
  for (const auto& asset : assets()) {
    const bool page = asset.path == std::string_view("/");
    routes_.push_back({"GET",
                       asset.path,
                       true,
                       false,
                       {},
                       [this, &asset, page](const HttpRequest& r) {
                         // "/" is also Label Studio's health check: a browser asks for HTML.
                         if (page && r.header("accept").find("text/html") == std::string::npos) return handle_health();
                         HttpResponse res;
                         res.content_type = asset.content_type;
                         res.body = std::string(asset.data);
                         return res;
                       },
                       {}});
  }
  routes_.push_back({"GET", "/health", true, false, {}, [this](const HttpRequest&) { return handle_health(); }, {}});
  routes_.push_back({"GET", "/v1/info", true, true, {}, [this](const HttpRequest&) { return handle_info(); }, {}});
  routes_.push_back({"POST", "/v1/images", false, true, images_types, [this](const HttpRequest& r) { return handle_images(r); }, {}});
  routes_.push_back(
      {"POST", "/v1/segment", false, true, {"", "application/json"}, [this](const HttpRequest& r) { return handle_segment(r); }, {}});
}

const Api::Route* Api::find_route(const HttpRequest& request, bool* other_method) const {
  *other_method = false;
  for (const auto& route : routes_) {
    if (route.prefix ? !request.path.starts_with(route.path) : route.path != request.path) continue;
    if (route.method == request.method) return &route;
    *other_method = true;
  }
  return nullptr;
}

// Bound to this machine only, the server answers only to names of this machine: a web page
// elsewhere cannot reach it through DNS rebinding.
bool Api::host_allowed(const std::string& host_header) const {
  std::string host = to_lower(host_header);
  if (host.starts_with("["))
    host = host.substr(0, host.find(']') + 1);
  else
    host = host.substr(0, host.rfind(':') == std::string::npos ? host.size() : host.rfind(':'));
  for (const auto& h : options_.allowed_hosts) {
    if (h == "*" || to_lower(h) == host) return true;
  }
  if (!is_loopback_host(options_.host)) return options_.allowed_hosts.empty();
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == to_lower(options_.host);
}

std::string Api::allowed_origin(const HttpRequest& request) const {
  const std::string origin = request.header("origin");
  if (origin.empty() || origin == "http://" + request.header("host")) return "";
  for (const auto& o : options_.allowed_origins) {
    if (o == "*" || o == origin) return origin;
  }
  return "";
}

bool Api::origin_allowed(const HttpRequest& request) const {
  const std::string origin = request.header("origin");
  return origin.empty() || origin == "http://" + request.header("host") || !allowed_origin(request).empty();
}

// The key in any of the forms the clients send: "Authorization: Bearer KEY", "X-API-Key: KEY",
// HTTP Basic with the key as password (Label Studio) and "Token: KEY" (X-AnyLabeling).
bool Api::authorized(const HttpRequest& req) const {
  if (options_.api_key.empty()) return true;
  const std::string authorization = req.header("authorization");
  if (authorization == "Bearer " + options_.api_key || req.header("x-api-key") == options_.api_key ||
      req.header("token") == options_.api_key) {
    return true;
  }
  if (to_lower(authorization.substr(0, 6)) != "basic ") return false;
  const auto credentials = base64_decode(trim(std::string_view(authorization).substr(6)));
  if (!credentials || credentials->find(':') == std::string::npos) return false;
  return credentials->substr(credentials->find(':') + 1) == options_.api_key;
}

Dispatch Api::screen(const HttpRequest& head) const {
  const auto reject = [&](ApiError e) {
    HttpResponse r = error_response(e);
    if (const auto o = allowed_origin(head); !o.empty()) r.headers.emplace_back("Access-Control-Allow-Origin", o);
    return Dispatch{std::move(r), true};
  };
  // HTTP/1.0 may leave Host out (HTTP/1.1 may not): such a request is answered when it comes
  // from this machine to a server bound to it (no browser leaves Host out, so no page elsewhere
  // reaches the server through DNS rebinding this way).
  const bool no_host_on_loopback =
      !head.find_header("host") && head.version == 10 && is_loopback_host(options_.host) && is_loopback_host(head.peer);
  if (!head.find_header("host") && head.version != 10) {
    return reject(ApiError(400, "bad_request", "HTTP/1.1 requests must send a Host header"));
  }
  if (!no_host_on_loopback && !host_allowed(head.header("host"))) {
    return reject(ApiError(403, "forbidden_host",
                           "this server answers only to its own host names; add the name "
                           "with --allowed-host if it is yours"));
  }
  if (!origin_allowed(head)) {
    return reject(ApiError(403, "forbidden_origin",
                           "requests from web pages of other origins are refused; allow the "
                           "origin with --allowed-origin"));
  }
  bool other_method = false;
  const Route* route = find_route(head, &other_method);
  if (head.method == "OPTIONS" && (route || other_method)) {  // CORS preflight
    HttpResponse r;
    r.status = 204;
    r.content_type.clear();
    if (const auto o = allowed_origin(head); !o.empty()) {
      r.headers = {{"Access-Control-Allow-Origin", o},
                   {"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                   {"Access-Control-Allow-Headers", "Authorization, Content-Type, X-API-Key"},
                   {"Access-Control-Max-Age", "600"},
                   {"Vary", "Origin"}};
    }
    return {std::move(r), true};
  }
  if (!route) {
    if (!other_method) return reject(ApiError(404, "not_found", "no such route; see /openapi.json"));
    std::string allow;
    for (const auto& r : routes_) {
      if (r.prefix ? head.path.starts_with(r.path) : r.path == head.path) allow += (allow.empty() ? "" : ", ") + r.method;
    }
    ApiError e(405, "method_not_allowed", head.method + " is not allowed on " + head.path + "; use " + allow);
    e.allow = allow;
    return reject(std::move(e));
  }
  if (route->needs_key && !authorized(head)) {
    if (route->unauthorized) return {route->unauthorized(), true};
    return reject(ApiError(401, "unauthorized", "send the API key as \"Authorization: Bearer KEY\" or \"X-API-Key: KEY\""));
  }
  if (!route->media_types.empty()) {
    const std::string type = head.media_type();
    bool ok = false;
    for (const auto& t : route->media_types) {
      ok = ok || t == type || (t.ends_with("/*") && type.starts_with(t.substr(0, t.size() - 1)));
    }
    if (!ok) {
      return reject(ApiError(415, "unsupported_media_type",
                             route->path == "/v1/segment"
                                 ? "POST /v1/segment takes application/json"
                                 : "send the image as raw bytes (Content-Type image/* or application/octet-stream) or "
                                   "multipart field \"image\""));
    }
  }
  return {std::nullopt, route->quick};
}

HttpResponse Api::handle(const HttpRequest& request) {
  bool other_method = false;
  const Route* route = find_route(request, &other_method);
  HttpResponse r;
  try {
    if (!route) throw ApiError(404, "not_found", "no such route; see /openapi.json");
    r = route->answer(request);
  } catch (const ApiError& e) {
    r = error_response(e);
  } catch (const Error& e) {
    r = error_response(api_error_of(e));
  } catch (const std::bad_alloc&) {
    r = error_response(ApiError(503, "out_of_memory", "the server ran out of memory for this request; retry shortly"));
  } catch (const std::exception& e) {
    log(LogLevel::kError, std::string("request failed: ") + e.what());
    r = error_response(ApiError(500, "internal", "the server failed to answer; see its log"));
  }
  if (const auto o = allowed_origin(request); !o.empty()) {
    r.headers.emplace_back("Access-Control-Allow-Origin", o);
    r.headers.emplace_back("Vary", "Origin");
  }
  return r;
}

bool Api::load_model() {
  try {
    ModelOptions mo;
    mo.providers = options_.providers;
    mo.precision = options_.precision;
    mo.intra_op_threads = options_.threads;
    mo.fallback_vocabulary = options_.fallback_vocabulary;
    std::shared_ptr<const Model> model = Model::load(options_.model_dir, mo);
    std::shared_ptr<const Model> interactive;
    if (!options_.interactive_model_dir.empty()) {
      interactive = Model::load(options_.interactive_model_dir, mo);
      if (interactive->kind() != ModelKind::kInteractive) {
        throw Error(ErrorCode::kModelMismatch, options_.interactive_model_dir.string() + " holds a text-prompted " +
                                                   layout_name(interactive->layout()) +
                                                   " model, not SAM3's interactive "
                                                   "one (vision_encoder.onnx, prompt_encoder_mask_decoder.onnx)");
      }
    }
    std::lock_guard lock(model_mutex_);
    model_ = std::move(model);
    interactive_model_ = std::move(interactive);
    log(LogLevel::kInfo, "model ready");
    return true;
  } catch (const std::exception&) {  // the server stops and sam3 serve reports it (server.cpp)
    std::lock_guard lock(model_mutex_);
    load_failed_ = true;
    load_error_ = std::current_exception();
    return false;
  }
}

std::exception_ptr Api::load_error() {
  std::lock_guard lock(model_mutex_);
  return load_error_;
}

void Api::check_alive(const HttpRequest& req) const {
  if (req.client_gone()) throw ApiError(499, "client_closed", "the client closed the connection");
  if (std::chrono::steady_clock::now() > deadline(req)) {
    throw ApiError(503, "timeout",
                   "the request took longer than " + std::to_string(options_.request_timeout_s) + " s (sam3 serve --timeout)");
  }
}

void Api::check_objects(size_t objects, const std::string& what) const {
  if (objects > options_.max_prompts) {
    throw ApiError(413, "too_many_prompts",
                   "too many objects: " + what + " make " + std::to_string(objects) + " objects; this server takes at most " +
                       std::to_string(options_.max_prompts) + " per request (sam3 serve --max-prompts)");
  }
}

void Api::check_prompts(const std::vector<Prompt>& prompts, const std::string& what) const {
  const size_t cap = options_.max_prompts;
  if (prompts.size() > cap) {
    throw ApiError(413, "too_many_prompts",
                   "too many prompts: " + what + " make " + std::to_string(prompts.size()) + " prompts; this server takes at most " +
                       std::to_string(cap) + " per request (sam3 serve --max-prompts)");
  }
  for (const auto& p : prompts) {
    if (p.boxes.size() > cap) {
      throw ApiError(413, "too_many_prompts",
                     "too many boxes: " + what + " give one prompt " + std::to_string(p.boxes.size()) +
                         " boxes; this server takes at most " + std::to_string(cap) + " per prompt (sam3 serve --max-prompts)");
    }
  }
}

std::string Api::model_version() const {
  return std::string("sam3cpp-") + SAM3_VERSION_STRING + "-" + options_.model_dir.filename().string();
}

std::shared_ptr<const Model> Api::ready_model() {
  std::lock_guard lock(model_mutex_);
  if (model_) return model_;
  if (load_failed_) throw ApiError(503, "model_unavailable", "the model cannot be loaded; see the server's log");
  throw ApiError(503, "loading", "the model is still loading; retry shortly");
}

ImageSegmenter Api::text_segmenter() {
  auto model = ready_model();
  if (model->kind() == ModelKind::kText) return ImageSegmenter(std::move(model));
  throw ApiError(400, "invalid_argument",
                 "this server's model is SAM3's interactive (tracker) model: it takes points and boxes, not text "
                 "prompts; give {\"points\": ...} or {\"box\": ...}, or start the server with a text-prompted SAM3 "
                 "model (--models) and this one as --interactive-models");
}

InteractiveSegmenter Api::click_segmenter() {
  auto model = ready_model();
  std::lock_guard lock(model_mutex_);
  if (interactive_model_) return InteractiveSegmenter(interactive_model_);
  if (model->kind() == ModelKind::kInteractive) return InteractiveSegmenter(std::move(model));
  throw ApiError(400, "no_interactive_model",
                 "points, boxes of one object and \"everything\" need SAM3's interactive model; start the server with "
                 "--interactive-models DIR (onnx-community/sam3-tracker-ONNX) beside the text model");
}

bool Api::has_click_model() {
  try {
    click_segmenter();
    return true;
  } catch (const ApiError&) {
    return false;
  }
}

std::shared_ptr<const CachedImage> Api::encode_bytes(const HttpRequest& req, std::string_view bytes, bool* cached) {
  return encode_bytes(req, ready_model(), bytes, cached);
}

std::shared_ptr<const CachedImage> Api::encode_bytes(const HttpRequest& req, const std::shared_ptr<const Model>& model,
                                                     std::string_view bytes, bool* cached) {
  return embedding_for(req, model, image_id_of(bytes), &bytes, cached);
}

std::shared_ptr<const CachedImage> Api::embedding_for(const HttpRequest& req, const std::shared_ptr<const Model>& model,
                                                      const std::string& id, const std::string_view* bytes, bool* cached) {
  bool two_models = false, primary = true;
  {
    std::lock_guard lock(model_mutex_);
    two_models = interactive_model_ != nullptr;
    primary = model == model_;
  }
  // Each model's embedding of an image is its own cache entry.
  const auto key_of = [&](bool first) { return first ? id : id + "#interactive"; };
  if (auto hit = cache_.find(key_of(primary))) {
    *cached = true;
    return hit;
  }
  std::shared_ptr<const Image> image;
  if (bytes) {
    // Decode here (request thread: bad input fails fast), encode on a worker.
    ImageLoadOptions load;
    load.max_pixels = options_.max_pixels;
    image = std::make_shared<const Image>(
        decode_image({reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}, "uploaded image", load));
  } else if (const auto other = two_models ? cache_.find(key_of(!primary)) : nullptr; other && other->image) {
    image = other->image;  // encoded by the other model so far: the pixels were kept for this
  } else {
    throw ApiError(404, "unknown_image", "no image with id " + id + " (evicted or never uploaded); POST it to /v1/images again");
  }
  // The job owns everything it touches: after a timeout it may outlive this request. With two
  // models the pixels stay with the entry, for the other model's first prompt.
  const std::string key = key_of(primary);
  auto [entry, was_cached] = run_on_worker(req, [this, model, image, key, two_models](const JobStop& stop) {
    bool hit = false;
    auto e = cache_.get_or_encode(
        key, [&] { return model->encode(*image, {stop.token()}); }, &hit, two_models ? image : nullptr);
    return std::pair{e, hit};
  });
  *cached = was_cached;
  return entry;
}

HttpResponse Api::handle_images(const HttpRequest& req) {
  std::string_view bytes = req.body;
  if (req.media_type() == "multipart/form-data") {
    const auto parts = parse_multipart(req.body, req.header_param("content-type", "boundary"));
    if (!parts) throw ApiError(400, "invalid_request", "the multipart body is malformed");
    const MultipartPart* chosen = nullptr;
    for (const auto& p : *parts) {
      if (p.name == "image") chosen = &p;
    }
    for (const auto& p : *parts) {
      if (!chosen && !p.filename.empty()) chosen = &p;  // any uploaded file
    }
    if (!chosen) throw ApiError(400, "invalid_request", "the multipart body has no file; send it as field \"image\"");
    bytes = chosen->content;
  }
  if (bytes.empty()) throw ApiError(400, "invalid_request", "the image is empty");
  bool cached = false;
  const auto t0 = std::chrono::steady_clock::now();
  auto entry = encode_bytes(req, bytes, &cached);
  json answer = {
      {"image_id", entry->id},
      {"width", entry->embedding.width()},
      {"height", entry->embedding.height()},
      {"cached", cached},
      {"encode_ms", cached ? 0.0 : rounded_ms(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count())}};
  // ?preview=png: the image as the server decoded it, as a PNG, for a page whose browser cannot
  // draw the format (Chromium draws no TIFF): the overlays then sit on the image, not on white.
  if (req.query == "preview=png") {
    ImageLoadOptions load;
    load.max_pixels = options_.max_pixels;
    const Image image = decode_image({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "uploaded image", load);
    answer["preview_png"] = base64_encode(encode_rgb_png(image));
  }
  return json_response(200, answer);
}

HttpResponse Api::handle_segment(const HttpRequest& req) {
  const auto shared_request = std::make_shared<const SegmentRequest>(parse_segment_request(req.body));
  check_prompts(shared_request->prompts, "\"prompts\"");
  const SegmentRequest& request = *shared_request;
  if (request.order.size() > options_.max_prompts) {  // clicked objects and "everything" count too
    throw ApiError(413, "too_many_prompts",
                   "too many prompts: \"prompts\" make " + std::to_string(request.order.size()) + " prompts; this server takes at most " +
                       std::to_string(options_.max_prompts) + " per request (sam3 serve --max-prompts)");
  }
  const bool clicks = request.order.size() > request.prompts.size();  // objects or "everything"
  // Each model encodes the image only when one of the prompts needs it.
  const std::optional<ImageSegmenter> text = request.prompts.empty() ? std::nullopt : std::optional(text_segmenter());
  const std::optional<InteractiveSegmenter> click = clicks ? std::optional(click_segmenter()) : std::nullopt;
  const std::string id = request.image_id.empty() ? image_id_of(request.inline_image) : request.image_id;
  const std::string_view inline_bytes = request.inline_image;
  const std::string_view* bytes = request.image_id.empty() ? &inline_bytes : nullptr;
  bool text_cached = true, click_cached = true;
  std::shared_ptr<const CachedImage> text_entry, click_entry;
  if (text) text_entry = embedding_for(req, text->shared_model(), id, bytes, &text_cached);
  if (click) click_entry = embedding_for(req, click->shared_model(), id, bytes, &click_cached);
  // The library's rules for prompts in pixels, naming each as the body does (prompts[2].points[0]),
  // before the models count them their own way ("object 1, point 1").
  for (size_t i = 0; i < request.order.size(); ++i) {
    const PromptItem& item = request.order[i];
    const std::string where = "prompts[" + std::to_string(i) + "]";
    if (item.kind == PromptItem::kConcept) {
      check_concept_boxes(request.prompts[item.index], where, text_entry->embedding.width(), text_entry->embedding.height());
    } else if (item.kind == PromptItem::kObject) {
      check_interactive_prompt(request.objects[item.index], json_prompt_names(where), click_entry->embedding.width(),
                               click_entry->embedding.height());
    }
  }

  struct Answers {
    std::vector<PromptResult> concepts, everything;
    std::vector<ObjectResult> objects;
  };
  auto answers = run_on_worker(req, [text, click, text_entry, click_entry, shared_request](const JobStop& stop) {
    const SegmentRequest& r = *shared_request;
    const SegmentOptions options = stop.stopping(r.options);
    Answers a;
    stop.check();
    if (text) a.concepts = text->segment_all(text_entry->embedding, r.prompts, options);  // with the family's rule
    stop.check();
    if (!r.objects.empty()) a.objects = click->segment_objects(click_entry->embedding, r.objects, {r.multimask, stop.token()});
    for (const auto& item : r.order) {
      if (item.kind != PromptItem::kEverything) continue;
      stop.check();
      EverythingOptions everything;
      everything.points_per_side = item.points_per_side;
      everything.min_area = r.options.min_area;
      a.everything.push_back(click->segment_everything(click_entry->embedding, stop.stopping(everything)));
    }
    return a;
  });
  Answer answer;
  AnswerTimings& timings = answer.timings_ms;
  for (const auto& [entry, cached] : {std::pair{text_entry.get(), text_cached}, std::pair{click_entry.get(), click_cached}}) {
    if (!entry || cached) continue;
    timings.preprocess += entry->embedding.preprocess_ms();
    timings.encode_image += entry->embedding.encode_ms();
  }
  timings.image_cached = text_cached && click_cached;
  const auto& any = text_entry ? text_entry : click_entry;
  AnswerImage image{"", id, any->embedding.width(), any->embedding.height(), {}};
  size_t everything_index = 0;
  for (const auto& item : request.order) {
    if (item.kind == PromptItem::kConcept) {
      const auto& r = answers.concepts[item.index];
      image.prompts.push_back(prompt_result_json(r, request.masks));
      timings.encode_text += r.timings.encode_text_ms;
      timings.decode += r.timings.decode_ms;
      timings.postprocess += r.timings.postprocess_ms;
    } else if (item.kind == PromptItem::kObject) {
      image.prompts.push_back(object_result_json(answers.objects[item.index], request.masks));
    } else {
      const auto& r = answers.everything[everything_index++];
      image.prompts.push_back(everything_result_json(r.instances, request.masks));
      timings.decode += r.timings.decode_ms;
      timings.postprocess += r.timings.postprocess_ms;
    }
  }
  if (!answers.objects.empty()) {  // the objects were decoded together: their timings are the call's
    timings.decode += answers.objects.front().timings.decode_ms;
    timings.postprocess += answers.objects.front().timings.postprocess_ms;
  }
  const Model& main = text ? text->model() : click->model();
  answer.model = answer_model(main);
  timings.load = main.load_ms();
  if (text && click) {  // two facades are always two models (one model is of one kind)
    answer.interactive_model = answer_model(click->model());
  }
  answer.images.push_back(std::move(image));
  HttpResponse response;
  response.body = answer_json(answer);
  return response;
}

HttpResponse Api::handle_info() {
  json model = {{"name", options_.model_dir.filename().string()}, {"loaded", false}};
  {
    std::lock_guard lock(model_mutex_);
    if (model_) {
      const auto s = model_->stats();
      model = {{"name", model_->directory().filename().string()},
               {"loaded", true},
               {"layout", layout_name(model_->layout())},
               {"generation", model_->generation()},
               {"interactive", model_->kind() == ModelKind::kInteractive},
               {"input_size", model_->input_size()},
               {"input_width", model_->input_width()},
               {"input_height", model_->input_height()},
               {"load_ms", rounded_ms(model_->load_ms())},
               {"image_encodes", s.image_encodes},
               {"text_encodes", s.text_encodes},
               {"decodes", s.decodes},
               {"text_cache_hits", s.text_cache_hits},
               {"stopped", s.stopped},
               {"providers", model_->providers()}};
      // What each network runs on (execution providers, first choice first; the CPU takes the rest).
      json sessions = json::array();
      for (const auto& f : model_->files()) sessions.push_back({{"file", f.file.filename().string()}, {"providers", f.providers}});
      model["sessions"] = std::move(sessions);
    } else if (load_failed_) {
      model["error"] = "the model cannot be loaded; see the server's log";
    }
  }
  json interactive = nullptr;
  {
    std::lock_guard lock(model_mutex_);
    if (interactive_model_) {
      const auto s = interactive_model_->stats();
      interactive = {{"name", interactive_model_->directory().filename().string()},
                     {"loaded", true},
                     {"layout", layout_name(interactive_model_->layout())},
                     {"generation", interactive_model_->generation()},
                     {"image_encodes", s.image_encodes},
                     {"decodes", s.decodes},
                     {"stopped", s.stopped}};
    }
  }
  const auto c = cache_.stats();
  return json_response(200, {{"model", model},
                             {"interactive_model", interactive},
                             {"versions",
                              {{"sam3cpp", SAM3_VERSION_STRING},
                               {"onnxruntime", onnxruntime_version()},
                               {"onnxruntime_providers", available_execution_providers()}}},
                             {"cache",
                              {{"entries", c.entries},
                               {"bytes", c.bytes},
                               {"capacity_bytes", c.capacity_bytes},
                               {"hits", c.hits},
                               {"misses", c.misses},
                               {"evictions", c.evictions}}},
                             {"queue", {{"workers", queue_.workers()}, {"queued", queue_.queued()}, {"capacity", queue_.capacity()}}},
                             {"limits",
                              {{"max_request_bytes", options_.max_request_mb * 1024 * 1024},
                               {"max_pixels", options_.max_pixels},
                               {"request_timeout_s", options_.request_timeout_s}}}});
}

HttpResponse Api::handle_health() {
  std::lock_guard lock(model_mutex_);
  // Label Studio's shape ("UP"), which it polls with a 1 s timeout: never behind inference.
  if (model_) return json_response(200, {{"status", "UP"}, {"model_class", "SAM3"}, {"model_version", model_version()}});
  if (load_failed_) return json_response(503, {{"status", "error"}, {"message", "the model cannot be loaded; see the server's log"}});
  return json_response(503, {{"status", "loading"}});
}

}  // namespace sam3::server
