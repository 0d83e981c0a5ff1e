#include "api.h"

#include <openssl/evp.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "api_error.h"
#include "assets.h"
#include "base64.h"
#include "sam3/export.h"
#include "sam3/log.h"
#include "sam3/polygons.h"
#include "sam3/result_json.h"
#include "segment_request.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;

std::string image_id_of(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  static const char* digits = "0123456789abcdef";
  std::string id;
  for (unsigned i = 0; i < 16; ++i) id += {digits[md[i] >> 4], digits[md[i] & 15]};
  return id;  // 128 bits of the content hash
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

// Wraps a handler so every failure becomes the API's error shape.
template <typename F>
httplib::Server::Handler guarded(F&& handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      res.status = e.status;
      if (e.status == 503 || e.status == 429) res.set_header("Retry-After", "1");
      res.set_content(error_body(e.code, e.what()), "application/json");
    } catch (const Error& e) {
      const ApiError a = api_error_from(e);
      res.status = a.status;
      res.set_content(error_body(a.code, a.what()), "application/json");
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("request failed: ") + e.what());
      res.status = 500;
      res.set_content(error_body("internal", e.what()), "application/json");
    }
  };
}

json mask_json(const Instance& inst, const SegmentRequest& request) {
  json mask = {{"size", {inst.mask.height, inst.mask.width}}};
  switch (request.mask_format) {
    case MaskFormat::kRle: mask["counts"] = rle_encode(inst.mask); break;
    case MaskFormat::kPng: mask["png"] = base64_encode(encode_mask_png(inst.mask)); break;
    case MaskFormat::kPolygon: {
      json outer = json::array(), holes = json::array();
      auto flat = [](const Ring& ring) {
        json a = json::array();
        for (const auto& p : ring) a.push_back(p.x), a.push_back(p.y);
        return a;
      };
      for (const auto& poly : mask_to_polygons(inst.mask, request.polygon_tolerance)) {
        outer.push_back(flat(poly.outer));
        for (const auto& h : poly.holes) holes.push_back(flat(h));
      }
      mask["polygons"] = outer;
      mask["holes"] = holes;
      break;
    }
  }
  return mask;
}

}  // namespace

Api::Api(const ServerOptions& options)
    : options_(options), cache_(options.cache_mb * 1024 * 1024), queue_(options.workers, options.queue_capacity) {}

void Api::load_model() {
  try {
    ModelOptions mo;
    mo.intra_op_threads = options_.threads;
    mo.fallback_vocabulary = options_.fallback_vocabulary;
    auto model = Model::load(options_.model_dir, mo);
    std::lock_guard lock(model_mutex_);
    model_ = std::move(model);
    log(LogLevel::kInfo, "model ready");
  } catch (const std::exception& e) {
    std::lock_guard lock(model_mutex_);
    load_error_ = e.what();
    log(LogLevel::kError, std::string("cannot load the model: ") + e.what());
  }
}

std::shared_ptr<Model> Api::ready_model() {
  std::lock_guard lock(model_mutex_);
  if (model_) return model_;
  if (!load_error_.empty()) throw ApiError(503, "model_unavailable", load_error_);
  throw ApiError(503, "loading", "the model is still loading; retry shortly");
}

void Api::authorize(const httplib::Request& req) const {
  if (options_.api_key.empty()) return;
  if (req.get_header_value("Authorization") == "Bearer " + options_.api_key ||
      req.get_header_value("X-API-Key") == options_.api_key) {
    return;
  }
  throw ApiError(401, "unauthorized", "send the API key as \"Authorization: Bearer KEY\" or \"X-API-Key: KEY\"");
}

template <typename F>
auto Api::run_on_worker(F&& job) {
  auto future = queue_.submit(std::forward<F>(job));
  if (!future) throw ApiError(503, "busy", "all workers are busy and the queue is full; retry shortly");
  if (future->wait_for(std::chrono::seconds(options_.request_timeout_s)) != std::future_status::ready) {
    throw ApiError(503, "timeout", "the request took longer than " + std::to_string(options_.request_timeout_s) + " s");
  }
  return future->get();
}

std::shared_ptr<const CachedImage> Api::encode_bytes(const std::string& bytes, bool* cached) {
  auto model = ready_model();
  const std::string id = image_id_of(bytes);
  if (auto hit = cache_.find(id)) {
    *cached = true;
    return hit;
  }
  // Decode here (request thread: bad input fails fast), encode on a worker.
  const ImageLoadOptions load{options_.max_pixels};
  auto image = std::make_shared<Image>(
      decode_image({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "uploaded image", load));
  // The job owns everything it touches: after a timeout it may outlive this request.
  auto [entry, was_cached] = run_on_worker([this, model, image, id] {
    bool hit = false;
    auto e = cache_.get_or_encode(id, [&] { return model->encode(*image); }, &hit);
    return std::pair{e, hit};
  });
  *cached = was_cached;
  return entry;
}

void Api::handle_images(const httplib::Request& req, httplib::Response& res) {
  authorize(req);
  const std::string* bytes = &req.body;
  if (req.is_multipart_form_data()) {
    bytes = nullptr;
    if (req.has_file("image")) bytes = &req.files.find("image")->second.content;
    for (const auto& [name, part] : req.files) {
      if (!bytes && !part.filename.empty()) bytes = &part.content;  // any uploaded file
    }
    if (!bytes) throw ApiError(400, "invalid_request", "the multipart body has no file; send it as field \"image\"");
  } else {
    const std::string type = req.get_header_value("Content-Type");
    // curl --data-binary sends application/x-www-form-urlencoded: take its body as the image too.
    if (!type.empty() && !type.starts_with("image/") && !type.starts_with("application/octet-stream") &&
        !type.starts_with("application/x-www-form-urlencoded")) {
      throw ApiError(415, "unsupported_media_type",
                     "send the image as raw bytes (Content-Type image/* or application/octet-stream) or multipart field \"image\"");
    }
  }
  if (bytes->empty()) throw ApiError(400, "invalid_request", "the image is empty");
  bool cached = false;
  const auto t0 = std::chrono::steady_clock::now();
  auto entry = encode_bytes(*bytes, &cached);
  send_json(res, 200, {{"image_id", entry->id},
                       {"width", entry->embedding.width()},
                       {"height", entry->embedding.height()},
                       {"cached", cached},
                       {"encode_ms", cached ? 0.0 : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()}});
}

void Api::handle_segment(const httplib::Request& req, httplib::Response& res) {
  authorize(req);
  const std::string type = req.get_header_value("Content-Type");
  if (!type.empty() && !type.starts_with("application/json")) {
    throw ApiError(415, "unsupported_media_type", "POST /v1/segment takes application/json");
  }
  const auto shared_request = std::make_shared<const SegmentRequest>(parse_segment_request(req.body));
  const SegmentRequest& request = *shared_request;
  auto model = ready_model();
  bool cached = false;
  std::shared_ptr<const CachedImage> entry;
  if (!request.image_id.empty()) {
    entry = cache_.find(request.image_id);
    if (!entry) {
      throw ApiError(404, "unknown_image", "no image with id " + request.image_id +
                                               " (evicted or never uploaded); POST it to /v1/images again");
    }
    cached = true;
  } else {
    entry = encode_bytes(request.inline_image, &cached);
  }
  auto results = run_on_worker([model, entry, shared_request] {
    std::vector<PromptResult> out;
    for (const auto& prompt : shared_request->prompts) {
      out.push_back(model->segment(entry->embedding, prompt, shared_request->options));
    }
    return out;
  });
  json timings = {{"encode_image", cached ? 0.0 : entry->embedding.encode_ms()},
                  {"encode_text", 0.0}, {"decode", 0.0}, {"postprocess", 0.0}, {"image_cached", cached}};
  json image = {{"image_id", entry->id}, {"width", entry->embedding.width()}, {"height", entry->embedding.height()},
                {"prompts", json::array()}};
  for (const auto& r : results) {
    json p = prompt_result_json(r);
    if (request.mask_format != MaskFormat::kRle) {
      for (size_t i = 0; i < r.instances.size(); ++i) p["instances"][i]["mask"] = mask_json(r.instances[i], request);
    }
    image["prompts"].push_back(std::move(p));
    timings["encode_text"] = timings["encode_text"].get<double>() + r.timings.encode_text_ms;
    timings["decode"] = timings["decode"].get<double>() + r.timings.decode_ms;
    timings["postprocess"] = timings["postprocess"].get<double>() + r.timings.postprocess_ms;
  }
  send_json(res, 200, {{"model", {{"layout", layout_name(model->layout())}, {"dir", model->directory().string()}}},
                       {"images", json::array({image})},
                       {"timings_ms", timings}});
}

void Api::handle_info(httplib::Response& res) {
  json model = {{"dir", options_.model_dir.string()}, {"loaded", false}};
  {
    std::lock_guard lock(model_mutex_);
    if (model_) {
      const auto s = model_->stats();
      model = {{"dir", model_->directory().string()}, {"loaded", true}, {"layout", layout_name(model_->layout())},
               {"input_size", model_->input_size()}, {"load_ms", model_->load_ms()},
               {"image_encodes", s.image_encodes}, {"text_encodes", s.text_encodes}, {"decodes", s.decodes},
               {"text_cache_hits", s.text_cache_hits}};
    } else if (!load_error_.empty()) {
      model["error"] = load_error_;
    }
  }
  const auto c = cache_.stats();
  send_json(res, 200, {{"model", model},
                       {"versions", {{"sam3cpp", SAM3_VERSION}, {"onnxruntime", onnxruntime_version()}}},
                       {"cache", {{"entries", c.entries}, {"bytes", c.bytes}, {"capacity_bytes", c.capacity_bytes},
                                  {"hits", c.hits}, {"misses", c.misses}, {"evictions", c.evictions}}},
                       {"queue", {{"workers", queue_.workers()}, {"queued", queue_.queued()}, {"capacity", queue_.capacity()}}},
                       {"limits", {{"max_request_bytes", options_.max_request_mb * 1024 * 1024},
                                   {"max_pixels", options_.max_pixels}, {"request_timeout_s", options_.request_timeout_s}}}});
}

void Api::handle_health(httplib::Response& res) {
  std::lock_guard lock(model_mutex_);
  if (model_) return send_json(res, 200, {{"status", "ok"}});
  if (!load_error_.empty()) return send_json(res, 503, {{"status", "error"}, {"message", load_error_}});
  send_json(res, 503, {{"status", "loading"}});
}

void Api::register_routes(httplib::Server& server) {
  for (const auto& asset : assets()) {
    server.Get(asset.path, [&asset](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(asset.data), asset.content_type);
    });
  }
  server.Get("/health", guarded([this](const httplib::Request&, httplib::Response& res) { handle_health(res); }));
  server.Get("/v1/info", guarded([this](const httplib::Request& req, httplib::Response& res) {
    authorize(req);
    handle_info(res);
  }));
  server.Post("/v1/images", guarded([this](const httplib::Request& req, httplib::Response& res) { handle_images(req, res); }));
  server.Post("/v1/segment", guarded([this](const httplib::Request& req, httplib::Response& res) { handle_segment(req, res); }));
  // Statuses httplib sets by itself (404 route, 413 payload, 400 parse) get the same shape.
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string code = res.status == 404 ? "not_found" : res.status == 413 ? "payload_too_large" : "bad_request";
    const std::string message = res.status == 404   ? "no such route; see /openapi.json"
                                : res.status == 413 ? "the request body is larger than the server's limit (--max-request-mb)"
                                                    : "malformed HTTP request";
    res.set_content(error_body(code, message), "application/json");
  });
}

}  // namespace sam3::server
