#include "cvat.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "api.h"
#include "cvat_tracker.h"
#include "sam3/base64.h"
#include "json_splice.h"
#include "request_json.h"
#include "sam3/error.h"
#include "sam3/interactive.h"
#include "sam3/polygons.h"
#include "sam3/prompt_json.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;

std::vector<std::string> split_prompts(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item(trim(text.substr(start, end - start)));
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

// Nuclio's function object, as CVAT's LambdaFunction reads it (annotations are strings in
// Nuclio; spec is a JSON string of the labels; spec.description and status are required).
json function_json(const std::vector<CvatLabel>& labels, int port) {
  json spec = json::array();
  for (size_t i = 0; i < labels.size(); ++i) spec.push_back({{"id", i}, {"name", labels[i].name}, {"type", "mask"}});
  return {{"metadata",
           {{"name", kCvatDetector},
            {"namespace", "nuclio"},
            {"annotations",
             {{"name", "SAM3 text prompts (sam3cpp)"},
              {"type", "detector"},
              {"framework", "onnxruntime"},
              {"version", "1"},
              {"spec", spec.dump()},
              {"help_message", "Finds every instance of each label by its name with SAM3"}}}}},
          {"spec", {{"description", "SAM3: every instance of each label, found by its name (sam3 serve)"}, {"runtime", "sam3cpp"}}},
          {"status", {{"state", "ready"}, {"httpPort", port}}}};
}

// The inclusive bounds of a mask's pixels (CVAT's xtl, ytl, xbr, ybr); none for an empty mask.
struct PixelBounds {
  int left = 0, top = 0, right = -1, bottom = -1;
};
std::optional<PixelBounds> pixel_bounds(const Mask& m) {
  if (m.empty()) return std::nullopt;
  const TileRect b = m.bounds();
  return PixelBounds{b.x0, b.y0, b.x1 - 1, b.y1 - 1};
}

// The mask's pixels inside `b`, row by row, as 0 and 1, then `tail`: "[0,1,...]" (or, with
// `rows`, "[[0,1,...],...]"), written as text: a tree of them cost about 26 bytes a pixel.
void append_crop(std::string& out, const Mask& m, const PixelBounds& b, bool rows, const std::vector<int>& tail) {
  out += '[';
  for (int y = b.top; y <= b.bottom; ++y) {
    if (rows) out += y == b.top ? "[" : ",[";
    for (int x = b.left; x <= b.right; ++x) {
      if (x != b.left || (!rows && y != b.top)) out += ',';
      out += m.at(x, y) ? '1' : '0';
    }
    if (rows) out += ']';
  }
  for (int v : tail) out += ',' + std::to_string(v);
  out += ']';
}

// A detector item for one instance: the mask cropped to its pixels' inclusive bounds, row by
// row (0/1), then xtl, ytl, xbr, ybr; the largest piece's outline as `points` when it has one.
json detection_json(const Instance& inst, const std::string& label, SplicedJson& answer) {
  const Mask& m = inst.mask;
  const auto bounds = pixel_bounds(m);
  if (!bounds) return nullptr;  // an empty mask is no detection
  const PixelBounds b = *bounds;
  json item = {{"label", label}, {"confidence", std::to_string(inst.score)}, {"type", "mask"}, {"attributes", json::array()}};
  item["mask"] = answer.value([&m, b](std::string& out) { append_crop(out, m, b, false, {b.left, b.top, b.right, b.bottom}); });
  const auto polygons = mask_to_polygons(m, 1.0);
  const auto largest = std::max_element(polygons.begin(), polygons.end(),
                                        [](const Polygon& a, const Polygon& b) { return ring_area(a.outer) < ring_area(b.outer); });
  if (largest != polygons.end() && largest->outer.size() >= 3) {
    json points = json::array();
    for (const auto& p : largest->outer) points.push_back(p.x), points.push_back(p.y);
    item["points"] = std::move(points);
  }
  return item;
}

using Labels = std::shared_ptr<const std::vector<CvatLabel>>;

HttpResponse detect(Api& api, const Labels& shared, const HttpRequest& req) {
  const std::vector<CvatLabel>& labels = *shared;
  const json body = parse_request_json<json>(req.body);
  if (!body.is_object()) throw ApiError(400, "invalid_request", "the invocation body must be a JSON object");
  const auto image = body.contains("image") && body["image"].is_string()
                         ? base64_decode(body["image"].get_ref<const std::string&>())  // not copied first
                         : std::nullopt;
  if (!image || image->empty()) throw ApiError(400, "invalid_image", "\"image\" must be the frame's bytes in base64");
  // Nuclio's "threshold" (null: the default) through sam3's one options codec and its bounds.
  SegmentOptions options;
  if (body.contains("threshold") && !body["threshold"].is_null()) {
    try {
      options = parse_segment_options_json(json{{"threshold", body["threshold"]}}.dump());
    } catch (const Error& e) {
      throw ApiError(400, "invalid_request", e.what());
    }
  }
  std::vector<Prompt> all;
  for (const auto& l : labels) {
    for (const auto& p : l.prompts) all.push_back({.text = p, .boxes = {}});
  }
  api.check_prompts(all, "the detector's labels");
  const ImageSegmenter text = api.text_segmenter();
  bool cached = false;
  auto entry = api.encode_bytes(req, text.shared_model(), *image, &cached);
  auto found = api.run_on_worker(req, [text, entry, shared, options](const JobStop& stop) {
    std::vector<std::vector<Prompt>> labels;
    for (const auto& label : *shared) {
      labels.emplace_back();
      for (const auto& text : label.prompts) labels.back().push_back({.text = text, .boxes = {}});
    }
    return segment_labels(text, entry->embedding, labels, options, stop);
  });
  SplicedJson answer;
  json items = json::array();
  for (size_t i = 0; i < labels.size(); ++i) {
    for (const auto& inst : found[i]) {
      if (json item = detection_json(inst, labels[i].name, answer); !item.is_null()) items.push_back(std::move(item));
    }
  }
  HttpResponse r;
  r.body = answer.dump(items);
  return r;
}

json interactor_json(int port) {
  return {{"metadata",
           {{"name", kCvatInteractor},
            {"namespace", "nuclio"},
            {"annotations",
             {{"name", "SAM3 clicks (sam3cpp)"},
              {"type", "interactor"},
              {"framework", "onnxruntime"},
              {"version", "1"},
              {"min_pos_points", "1"},
              {"min_neg_points", "0"},
              {"startswith_box_optional", true},
              {"help_message", "Click on the object (Shift-click: not this); a box works too"}}}}},
          {"spec", {{"description", "SAM3's interactive model: the object under the clicks (sam3 serve)"}, {"runtime", "sam3cpp"}}},
          {"status", {{"state", "ready"}, {"httpPort", port}}}};
}

std::vector<PointPrompt> points_of(const json& body, const char* key, bool positive) {
  std::vector<PointPrompt> out;
  if (!body.contains(key) || body[key].is_null()) return out;
  const json& list = body[key];
  if (!list.is_array()) throw ApiError(400, "invalid_request", std::string("\"") + key + "\" must be a list of [x, y]");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& p = list[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
      throw ApiError(400, "invalid_request", std::string(key) + "[" + std::to_string(i) + "] must be [x, y] in pixels");
    }
    out.push_back({p[0].get<float>(), p[1].get<float>(), positive});
  }
  return out;
}

// CVAT's interactor payload -> {"mask": rows of 0/1 inside "bounds" [left, top, right, bottom]}.
HttpResponse interact(Api& api, const HttpRequest& req) {
  const json body = parse_request_json<json>(req.body);
  if (!body.is_object()) throw ApiError(400, "invalid_request", "the invocation body must be a JSON object");
  const auto image = body.contains("image") && body["image"].is_string()
                         ? base64_decode(body["image"].get_ref<const std::string&>())  // not copied first
                         : std::nullopt;
  if (!image || image->empty()) throw ApiError(400, "invalid_image", "\"image\" must be the frame's bytes in base64");
  InteractivePrompt prompt;
  prompt.points = points_of(body, "pos_points", true);
  for (auto& p : points_of(body, "neg_points", false)) prompt.points.push_back(p);
  if (body.contains("obj_bbox") && !body["obj_bbox"].is_null()) {
    const auto corners = points_of(body, "obj_bbox", true);
    if (corners.size() != 2) throw ApiError(400, "invalid_request", "\"obj_bbox\" must be [[x1, y1], [x2, y2]]");
    prompt.box = Box{std::min(corners[0].x, corners[1].x), std::min(corners[0].y, corners[1].y), std::max(corners[0].x, corners[1].x),
                     std::max(corners[0].y, corners[1].y)};
  }
  // The library refuses more than kMaxPointsPerObject clicks, or one outside the image, by name.
  const InteractiveSegmenter click = api.click_segmenter();
  bool cached = false;
  auto entry = api.encode_bytes(req, click.shared_model(), *image, &cached);
  const ObjectResult found = api.run_on_worker(req, [click, entry, prompt](const JobStop& stop) {
    return click.segment(entry->embedding, prompt, stop.stopping(InteractiveOptions{}));
  });
  if (found.masks.empty()) return json_response(200, {{"mask", json::array()}});
  const Mask& m = found.masks.front().mask;
  const auto bounds = pixel_bounds(m);
  if (!bounds) return json_response(200, {{"mask", json::array()}});
  const PixelBounds b = *bounds;
  SplicedJson answer;
  const json found_json = {{"mask", answer.value([&m, b](std::string& out) { append_crop(out, m, b, true, {}); })},
                           {"bounds", {b.left, b.top, b.right, b.bottom}},
                           {"score", found.masks.front().score},
                           {"object_score", found.object_score}};
  HttpResponse r;
  r.body = answer.dump(found_json);
  return r;
}

// Nuclio's dashboard answers its own errors as {"error": "..."}; CVAT relays only the status.
HttpResponse nuclio_error(int status, const std::string& message) { return json_response(status, {{"error", message}}); }

}  // namespace

CvatLabel parse_cvat_label(const std::string& text) {
  const size_t eq = text.find('=');
  CvatLabel label;
  label.name = std::string(trim(std::string_view(text).substr(0, eq)));
  label.prompts = eq == std::string::npos ? std::vector<std::string>{label.name} : split_prompts(std::string_view(text).substr(eq + 1));
  if (label.name.empty() || label.prompts.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "the CVAT label \"" + text +
                                                 "\" is not NAME or NAME=PROMPT,PROMPT (e.g. "
                                                 "car=car,automobile)");
  }
  return label;
}

std::vector<CvatLabel> read_cvat_labels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kInvalidArgument, "cannot read the CVAT labels file " + path);
  std::vector<CvatLabel> labels;
  int line_number = 0;
  for (std::string line; std::getline(in, line) && line_number < 100000;) {
    ++line_number;
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    try {
      labels.push_back(parse_cvat_label(std::string(t)));
    } catch (const Error& e) {
      throw Error(ErrorCode::kInvalidArgument, path + ":" + std::to_string(line_number) + ": " + e.what());
    }
  }
  return labels;
}

void add_cvat_routes(Api& api, const std::vector<CvatLabel>& labels, TrackerBudget tracker_budget) {
  std::vector<CvatLabel> unique;
  for (const auto& l : labels) {
    if (std::none_of(unique.begin(), unique.end(), [&](const CvatLabel& u) { return u.name == l.name; })) unique.push_back(l);
  }
  const auto shared = std::make_shared<const std::vector<CvatLabel>>(std::move(unique));
  const auto tracker = std::make_shared<CvatTracker>(tracker_budget);
  const auto port_of = [](const HttpRequest& req) {
    const std::string host = req.header("host");
    const size_t colon = host.rfind(':');
    return colon == std::string::npos || host.ends_with("]") ? 80 : std::atoi(host.c_str() + colon + 1);
  };
  // CVAT sends no credentials of its own; with --api-key, give it the key as the password of
  // CVAT_NUCLIO_HOST=cvat:KEY@host (python-requests sends it as HTTP Basic).
  const auto unauthorized = [] {
    return nuclio_error(401, "sam3 serve needs its --api-key: set CVAT_NUCLIO_HOST=cvat:KEY@HOST in CVAT's environment");
  };
  api.add_route({"GET",
                 "/api/functions",
                 true,
                 true,
                 {},
                 [&api, shared, port_of](const HttpRequest& req) {
                   json all = json::object();
                   if (!shared->empty()) all[kCvatDetector] = function_json(*shared, port_of(req));
                   if (api.has_click_model()) all[kCvatInteractor] = interactor_json(port_of(req));
                   if (CvatTracker::available(api)) all[kCvatTracker] = CvatTracker::function_json(port_of(req));
                   return json_response(200, all);
                 },
                 unauthorized});
  api.add_route({"GET",
                 std::string("/api/functions/") + kCvatTracker,
                 true,
                 true,
                 {},
                 [&api, port_of](const HttpRequest& req) {
                   if (!CvatTracker::available(api)) return nuclio_error(404, "no video model (sam3 serve --models with SAM 3.1's bundle)");
                   return json_response(200, CvatTracker::function_json(port_of(req)));
                 },
                 unauthorized});
  api.add_route({"GET",
                 std::string("/api/functions/") + kCvatInteractor,
                 true,
                 true,
                 {},
                 [&api, port_of](const HttpRequest& req) {
                   if (!api.has_click_model()) return nuclio_error(404, "no interactive model (sam3 serve --interactive-models)");
                   return json_response(200, interactor_json(port_of(req)));
                 },
                 unauthorized});
  api.add_route({"GET",
                 std::string("/api/functions/") + kCvatDetector,
                 true,
                 true,
                 {},
                 [shared, port_of](const HttpRequest& req) {
                   if (shared->empty()) return nuclio_error(404, "no labels were given to sam3 serve (--cvat-label)");
                   return json_response(200, function_json(*shared, port_of(req)));
                 },
                 unauthorized});
  api.add_route({"POST",
                 "/api/function_invocations",
                 false,
                 true,
                 {"", "application/json"},
                 [&api, shared, tracker](const HttpRequest& req) {
                   const std::string name = req.header("x-nuclio-function-name");
                   if (name.empty()) return nuclio_error(400, "Function name must be provided");
                   if (name == kCvatInteractor) {
                     // Not deployed here (nor listed): Nuclio answers 404 for a function it does not have.
                     if (!api.has_click_model()) {
                       return nuclio_error(404,
                                           "no function sam3-interactor on this server: it needs an interactive model "
                                           "(sam3 serve --interactive-models DIR)");
                     }
                     return interact(api, req);
                   }
                   if (name == kCvatTracker) return tracker->invoke(api, req);
                   if (name != kCvatDetector || shared->empty()) {
                     return nuclio_error(404, "no function \"" + name + "\" here; GET /api/functions lists them");
                   }
                   return detect(api, shared, req);
                 },
                 unauthorized});
}

}  // namespace sam3::server
