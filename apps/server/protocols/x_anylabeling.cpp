#include "x_anylabeling.h"

#include <nlohmann/json.hpp>

#include "sam3/base64.h"
#include "json_splice.h"
#include "request_json.h"
#include "sam3/log.h"
#include "sam3/mask_encodings.h"
#include "x_anylabeling_marks.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;
constexpr const char* kModel = "segment_anything_3";
constexpr const char* kClickModel = "segment_anything_3_clicks";  // the interactive model, when the server holds one

HttpResponse failure(int status, const std::string& code, const std::string& message) {
  return json_response(status, {{"success", false}, {"error", {{"code", code}, {"message", message}}}});
}

json widgets_of(std::initializer_list<const char*> buttons) {
  json widgets = json::array();
  for (const char* w : buttons) widgets.push_back({{"name", w}, {"value", nullptr}});
  return widgets;
}

HttpResponse models(Api& api) {
  json widgets = widgets_of({"edit_text", "button_send", "add_pos_rect", "add_neg_rect", "button_run_rect", "button_clear"});
  widgets.push_back({{"name", "edit_conf"}, {"value", 0.5}});
  widgets.push_back({{"name", "toggle_preserve_existing_annotations"}, {"value", false}});
  json data = {{kModel,
                {{"display_name", "Segment Anything 3"},
                 {"widgets", widgets},
                 {"params", json::object()},
                 {"capabilities", json::object()},
                 {"batch_processing_mode", "text_prompt"}}}};
  if (api.has_click_model()) {
    // X-AnyLabeling shows its point and box buttons for these widgets (as for its SAM models).
    json clicks = widgets_of({"button_add_point", "button_remove_point", "button_add_rect", "button_clear", "button_finish_object"});
    clicks.push_back({{"name", "toggle_preserve_existing_annotations"}, {"value", false}});
    data[kClickModel] = {{"display_name", "Segment Anything 3 (clicks)"},
                         {"widgets", clicks},
                         {"params", json::object()},
                         {"capabilities", json::object()},
                         {"batch_processing_mode", nullptr}};
  }
  return json_response(200, {{"success", true}, {"data", data}});
}

std::vector<std::string> split_text_prompt(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text + ",") {
    if (c != ',' && c != '.') {
      current += c;
      continue;
    }
    const std::string item(trim(current));
    if (!item.empty() && std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    current.clear();
  }
  return out;
}

json shape(const std::string& label, const std::string& type, json points, float score) {
  return {{"label", label},
          {"shape_type", type},
          {"points", std::move(points)},
          {"score", score},
          {"attributes", json::object()},
          {"description", nullptr},
          {"difficult", false},
          {"direction", 0},
          {"flags", nullptr},
          {"group_id", nullptr},
          {"kie_linking", json::array()}};
}

// Each piece of the mask as a closed polygon simplified at epsilon_factor x its perimeter (as
// X-AnyLabeling's own servers), then the instance's box as a rectangle.
// The points are `answer`'s spliced text (with epsilon_factor 0 a ring keeps every boundary pixel).
void add_shapes(json& shapes, const Instance& inst, const std::string& label, double epsilon_factor, SplicedJson& answer) {
  for (const auto& poly : mask_to_polygons(inst.mask, 0)) {
    Ring ring = simplify_ring(poly.outer, epsilon_factor * ring_perimeter(poly.outer));
    if (ring.size() < 3) continue;
    json points = answer.value([ring = std::move(ring)](std::string& text) {
      text += '[';
      for (const auto& p : ring) text += json::array({p.x, p.y}).dump() + ',';
      text += json::array({ring.front().x, ring.front().y}).dump() + ']';  // closed: the first point again
    });
    shapes.push_back(shape(label, "polygon", std::move(points), inst.score));
  }
  const Box& b = inst.box;
  shapes.push_back(shape(label, "rectangle", {{b.x0, b.y0}, {b.x1, b.y0}, {b.x1, b.y1}, {b.x0, b.y1}}, inst.score));
}

double number_or(const json& params, const char* key, double fallback) {
  return params.contains(key) && params[key].is_number() ? params[key].get<double>() : fallback;
}

// A failed request in X-AnyLabeling's terms: HTTP 200 with success false, except a full queue.
HttpResponse failure_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    if (e.code == "no_interactive_model") return failure(200, "MODEL_NOT_FOUND", e.what());
    const bool request = (e.status == 413 && e.code == "too_many_prompts") || e.code == "invalid_marks";
    if (request) return failure(200, "INVALID_REQUEST", e.what());
    if (e.status == 400 || e.status == 413 || e.status == 415) return failure(200, "INVALID_IMAGE", e.what());
    return failure(e.status, e.status == 503 ? "SERVER_BUSY" : "INFERENCE_ERROR", e.what());
  } catch (const Error& e) {
    const ApiError a = api_error_from(e);
    if (a.status < 500)
      return failure(200, a.status == 400 && e.code() == ErrorCode::kInvalidArgument ? "INVALID_REQUEST" : "INVALID_IMAGE", e.what());
    log(LogLevel::kError, std::string("request failed: ") + e.what());  // internals go to the log only
    return failure(200, "INFERENCE_ERROR", "inference failed; see the server's log");
  }
}

// Point and rectangle marks on the interactive model: the clicked object's outline and box.
HttpResponse predict_clicked(Api& api, const HttpRequest& req, const std::string& image, const x_anylabeling::Marks& marks,
                             const std::vector<std::string>& texts, double epsilon_factor) {
  try {
    if (marks.points.empty() && marks.rectangles.empty()) {
      throw ApiError(400, "invalid_marks", "no point or rectangle mark: click the object or draw a rectangle around it");
    }
    api.check_objects(marks.points.empty() ? marks.rectangles.size() : 1, "the rectangle marks");
    const InteractiveSegmenter click = api.click_segmenter();
    bool cached = false;
    auto entry = api.encode_bytes(req, click.shared_model(), image, &cached);
    auto objects = std::make_shared<const std::vector<InteractivePrompt>>(
        x_anylabeling::clicked_objects(marks, entry->embedding.width(), entry->embedding.height()));
    auto found = api.run_on_worker(req, [click, entry, objects](const JobStop& stop) {
      return click.segment_objects(entry->embedding, *objects, stop.stopping(InteractiveOptions{}));
    });
    SplicedJson answer;
    json shapes = json::array();
    const std::string label = texts.empty() ? "object" : texts.front();
    for (const auto& object : found) {
      if (!object.masks.empty() && object.masks.front().area > 0) {
        add_shapes(shapes, object.masks.front(), label, epsilon_factor, answer);
      }
    }
    HttpResponse r;
    r.body = answer.dump({{"success", true}, {"data", {{"shapes", std::move(shapes)}, {"description", ""}}}});
    return r;
  } catch (...) {
    return failure_of(std::current_exception());
  }
}

HttpResponse predict(Api& api, const HttpRequest& req) {
  json body;
  try {
    body = parse_request_json<json>(req.body);
  } catch (const ApiError& e) {
    return failure(200, "INVALID_REQUEST", e.what());
  }
  if (!body.is_object()) return failure(200, "INVALID_REQUEST", "POST /v1/predict takes a JSON object");
  // Fields of the wrong JSON type are the client's error, not a 500 (json::value would throw).
  const std::string model_name = body.contains("model") && body["model"].is_string() ? body["model"].get<std::string>() : "";
  if (model_name != kModel && model_name != kClickModel) {
    return failure(200, "MODEL_NOT_FOUND",
                   "no model \"" + model_name + "\"; this server has \"" + kModel + "\"" +
                       (api.has_click_model() ? std::string(" and \"") + kClickModel + "\"" : ""));
  }
  const auto image = body.contains("image") && body["image"].is_string()
                         ? base64_decode(body["image"].get_ref<const std::string&>())  // not copied first
                         : std::nullopt;
  if (!image || image->empty()) return failure(200, "INVALID_IMAGE", "\"image\" must be a base64 image (a data: URI is fine)");
  const json params = body.contains("params") && body["params"].is_object() ? body["params"] : json::object();
  SegmentOptions options;
  options.score_threshold = static_cast<float>(number_or(params, "conf_threshold", 0.5));
  options.nms_iou = static_cast<float>(number_or(params, "iou_threshold", 0.0));  // 0: no NMS, as SAM3
  const double epsilon_factor = number_or(params, "epsilon_factor", 0.001);
  if (!(options.score_threshold >= 0 && options.score_threshold <= 1) || !(options.nms_iou >= 0 && options.nms_iou <= 1) ||
      !(epsilon_factor >= 0 && epsilon_factor < 1)) {
    return failure(200, "INVALID_REQUEST", "conf_threshold and iou_threshold must be in [0, 1], epsilon_factor in [0, 1)");
  }
  const auto texts = split_text_prompt(
      params.contains("text_prompt") && params["text_prompt"].is_string() ? params["text_prompt"].get<std::string>() : "");
  x_anylabeling::Marks marks;
  try {
    marks = x_anylabeling::read_marks(params);
  } catch (const ApiError& e) {
    return failure(200, "INVALID_REQUEST", e.what());
  }
  if (model_name == kClickModel) return predict_clicked(api, req, *image, marks, texts, epsilon_factor);
  // Rectangle marks, when present, are the prompt (label 1 positive, 0 negative); SAM3's
  // concept model takes no points.
  Prompt boxes;
  for (const auto& r : marks.rectangles) boxes.boxes.push_back(r.box);
  std::vector<std::pair<std::string, Prompt>> prompts;
  if (!boxes.boxes.empty())
    prompts.push_back({texts.empty() ? "object" : texts.front(), boxes});
  else
    for (const auto& t : texts) prompts.push_back({t, Prompt{.text = t, .boxes = {}}});
  if (prompts.empty()) {
    return failure(200, "INVALID_REQUEST",
                   marks.points.empty()
                       ? "give a text prompt or draw a rectangle"
                       : std::string("give a text prompt or draw a rectangle: \"") + kModel + "\" takes no points; clicks go to \"" +
                             kClickModel + "\" (Segment Anything 3 (clicks), listed when sam3 serve has --interactive-models)");
  }
  try {
    std::vector<Prompt> all;
    for (const auto& p : prompts) all.push_back(p.second);
    api.check_prompts(all, "the text prompt's comma-separated prompts");
    const ImageSegmenter text = api.text_segmenter();
    bool cached = false;
    auto entry = api.encode_bytes(req, text.shared_model(), *image, &cached);
    auto shared = std::make_shared<const std::vector<std::pair<std::string, Prompt>>>(std::move(prompts));
    auto results = api.run_on_worker(req, [text, entry, shared, options](const JobStop& stop) {
      std::vector<Prompt> prompts;
      for (const auto& labelled : *shared) prompts.push_back(labelled.second);
      stop.check();
      return text.segment_all(entry->embedding, prompts, stop.stopping(options));  // with the family's rule
    });
    SplicedJson answer;
    json shapes = json::array();
    for (size_t i = 0; i < results.size(); ++i) {
      for (const auto& inst : results[i].instances) add_shapes(shapes, inst, (*shared)[i].first, epsilon_factor, answer);
    }
    HttpResponse r;
    r.body = answer.dump({{"success", true}, {"data", {{"shapes", std::move(shapes)}, {"description", ""}}}});
    return r;
  } catch (...) {
    return failure_of(std::current_exception());
  }
}

}  // namespace

void add_x_anylabeling_routes(Api& api) {
  const auto unauthorized = [] {
    return failure(401, "UNAUTHORIZED",
                   "send the key of sam3 serve --api-key as the header \"Token: KEY\" (X-AnyLabeling's "
                   "remote server settings: api_key)");
  };
  api.add_route({"GET", "/v1/models", true, true, {}, [&api](const HttpRequest&) { return models(api); }, unauthorized});
  api.add_route({"POST",
                 "/v1/predict",
                 false,
                 true,
                 {"", "application/json"},
                 [&api](const HttpRequest& r) { return predict(api, r); },
                 unauthorized});
}

}  // namespace sam3::server
