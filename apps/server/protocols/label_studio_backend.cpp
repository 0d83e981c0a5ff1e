#include "label_studio_backend.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "label_studio_config.h"
#include "label_studio_context.h"
#include "label_studio_regions.h"
#include "label_studio_video.h"
#include "json_splice.h"
#include "request_json.h"

namespace sam3::server {
namespace {

using json = nlohmann::ordered_json;
using namespace label_studio;

json parse_body(const HttpRequest& req) {
  json body = parse_request_json<json>(req.body);
  if (!body.is_object()) throw ApiError(400, "invalid_request", req.path + " takes a JSON object");
  return body;
}

std::string string_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool equal_ci(const std::string& a, const std::string& b) { return to_lower(a) == to_lower(b); }

// Label Studio names the project as "ID.TIMESTAMP" in /setup and /predict.
std::string project_of(const json& body) {
  if (!body.contains("project")) return "";
  const json& p = body["project"];
  return p.is_string() ? p.get<std::string>() : p.is_number_integer() ? std::to_string(p.get<std::int64_t>()) : "";
}

// One thing to find in a task's image and the label its instances get.
struct Job {
  std::string label;
  std::vector<Prompt> prompts;  // a label's synonyms, or the annotator's one prompt
  std::vector<const RegionControl*> controls;
};

std::vector<Prompt> prompts_of(const std::vector<Job>& jobs) {
  std::vector<Prompt> all;
  for (const auto& job : jobs) all.insert(all.end(), job.prompts.begin(), job.prompts.end());
  return all;
}

bool has_label(const RegionControl& c, const std::string& label) {
  return std::any_of(c.labels.begin(), c.labels.end(), [&](const LabelValue& v) { return v.value == label; });
}

std::vector<const RegionControl*> controls_with(const LabelConfig& config, const std::string& label, bool masks_only) {
  std::vector<const RegionControl*> out;
  for (const auto& c : config.controls) {
    if (has_label(c, label) && (!masks_only || c.kind != RegionKind::kRectangle)) out.push_back(&c);
  }
  return out;
}

// Ordinary pre-annotation: every label, its predicted_values (or its value) the prompts.
std::vector<Job> label_jobs(const LabelConfig& config) {
  std::vector<Job> jobs;
  for (const auto& control : config.controls) {
    for (const auto& label : control.labels) {
      if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.label == label.value; })) continue;
      Job job{label.value, {}, controls_with(config, label.value, false)};
      for (const auto& p : label.prompts) job.prompts.push_back({.text = p, .boxes = {}});
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

// The label an interactive answer gets: the one the text names (its value or one of its
// predicted_values), else the label of the drawn marks, else the first brush or polygon label;
// and the controls it goes to (its mask controls; its rectangle only if it has none).
Job labelled_job(const LabelConfig& config, const std::string& text, const std::string& named) {
  std::string label;
  for (const auto& c : config.controls) {
    for (const auto& v : c.labels) {
      const bool names = equal_ci(v.value, text) ||
                         std::any_of(v.prompts.begin(), v.prompts.end(), [&](const std::string& p) { return equal_ci(p, text); });
      if (label.empty() && !text.empty() && names) label = v.value;
    }
  }
  if (label.empty()) {
    for (const auto& c : config.controls) label = label.empty() && has_label(c, named) ? named : label;
  }
  for (const auto& c : config.controls) {
    if (label.empty() && c.kind != RegionKind::kRectangle) label = c.labels.front().value;
  }
  if (label.empty()) label = config.controls.front().labels.front().value;
  auto controls = controls_with(config, label, true);
  if (controls.empty()) controls = controls_with(config, label, false);
  return {label, {}, controls};
}

// Interactive pre-annotation with a text: the text and the drawn rectangles (exemplar boxes)
// are one concept prompt for the text model. So are rectangles alone on a server without the
// interactive model.
Job concept_job(const LabelConfig& config, const InteractiveContext& context, int width, int height) {
  Prompt prompt;
  prompt.text = context.text;
  for (const auto& r : context.rectangles) prompt.boxes.push_back({r.box, r.positive});
  for (const auto& k : context.keypoints) {
    // Beside a text, a keypoint is a small exemplar box around the point.
    const double half = std::max(4.0, 0.01 * std::min(width, height));
    const double x = k.box.x0, y = k.box.y0;
    prompt.boxes.push_back({{float(std::max(0.0, x - half)), float(std::max(0.0, y - half)), float(std::min<double>(width, x + half)),
                             float(std::min<double>(height, y + half))},
                            k.positive});
  }
  Job job = labelled_job(config, context.text, context.named_label);
  job.prompts = {prompt};
  return job;
}

// A task's video in a folder of its own under the temporary directory, removed with it:
// FFmpeg reads files, and the bytes came from Label Studio (fetched under the image guards).
class TemporaryVideo {
 public:
  explicit TemporaryVideo(const std::string& bytes) {
    std::string pattern = (std::filesystem::temp_directory_path() / "sam3-ls-video-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw ApiError(500, "internal", "cannot make a temporary folder for the task's video");
    dir_ = pattern;
    std::ofstream out(path(), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw ApiError(500, "internal", "cannot write the task's video to " + dir_.string());
  }
  ~TemporaryVideo() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TemporaryVideo(const TemporaryVideo&) = delete;
  TemporaryVideo& operator=(const TemporaryVideo&) = delete;
  std::string path() const { return (dir_ / "video").string(); }

  // `message` with this copy's paths replaced by `name`: a client is told of its task's video,
  // never of the server's private files.
  std::string named(std::string message, const std::string& name) const {
    for (const std::string& own : {path(), dir_.string()}) {
      for (size_t at = message.find(own); at != std::string::npos; at = message.find(own, at + name.size()))
        message.replace(at, own.size(), name);
    }
    return message;
  }

 private:
  std::filesystem::path dir_;
};

class LabelStudioBackend {
 public:
  LabelStudioBackend(Api& api, const LabelStudioOptions& options) : api_(api), images_(options), video_frames_(options.video_frames) {}

  HttpResponse setup(const HttpRequest& req) {
    const json body = parse_body(req);
    const std::string schema = string_of(body, "schema");
    // A config sam3 cannot serve is said at once (a video project's, or an image project's).
    if (!schema.empty() && !parse_video_label_config(schema)) parse_label_config(schema);
    images_.remember_setup(project_of(body), string_of(body, "hostname"), string_of(body, "access_token"));
    return json_response(200, {{"model_version", api_.model_version()}});
  }

  HttpResponse predict(const HttpRequest& req) {
    const json body = parse_body(req);
    if (!body.contains("tasks") || !body["tasks"].is_array()) {
      throw ApiError(400, "invalid_request", "POST /predict takes {\"tasks\": [...], \"label_config\": \"<View>...\"}");
    }
    const json context =
        body.contains("params") && body["params"].is_object() && body["params"].contains("context") ? body["params"]["context"] : json();
    if (auto video = parse_video_label_config(string_of(body, "label_config"))) return predict_video(req, body, *video, context);
    const LabelConfig config = parse_label_config(string_of(body, "label_config"));
    const bool interactive =
        context.is_object() && context.contains("result") && context["result"].is_array() && !context["result"].empty();
    api_.ready_model();  // 503 while loading, before anything else is read
    // The marks are checked before any image is fetched (their pixels depend on each image's
    // size, their validity does not). Without a text, keypoints (and rectangles, when the
    // server holds the interactive model) are one clicked object each image.
    const InteractiveContext marks = interactive ? read_interactive_context(context, 100, 100) : InteractiveContext{};
    const bool clicks = interactive && marks.text.empty() && (!marks.keypoints.empty() || api_.has_click_model());
    if (clicks) api_.check_objects(clicked_objects(marks).size(), "the interactive context's rectangles");
    // A 400 naming --interactive-models when there is none, or the text model when --models is the interactive one.
    const std::optional<InteractiveSegmenter> click = clicks ? std::optional(api_.click_segmenter()) : std::nullopt;
    const std::optional<ImageSegmenter> text = clicks ? std::nullopt : std::optional(api_.text_segmenter());
    const std::string project = project_of(body);
    const FetchBudget budget{api_.deadline(req), req.client_gone};
    // The same jobs for every task (the interactive job depends on the image size only through
    // its marks, checked per task below).
    const std::vector<Job> config_jobs = interactive ? std::vector<Job>{} : label_jobs(config);
    if (!interactive) api_.check_prompts(prompts_of(config_jobs), "the label config's labels and predicted_values");
    SplicedJson answer;  // the regions' masks and outlines, written as text
    json results = json::array();
    for (const auto& task : body["tasks"]) {
      api_.check_alive(req);  // a batch stops between tasks once its client has left or its time is up
      const std::int64_t id =
          task.is_object() && task.contains("id") && task["id"].is_number_integer() ? task["id"].get<std::int64_t>() : 0;
      const std::string task_name = "task " + std::to_string(id);
      const json& data = task.is_object() && task.contains("data") ? task["data"] : json();
      if (!data.is_object() || !data.contains(config.data_key) || !data[config.data_key].is_string()) {
        std::string keys;
        if (data.is_object()) {
          for (const auto& [k, v] : data.items()) keys += (keys.empty() ? "" : ", ") + k;
        }
        throw ApiError(400, "unknown_data_key",
                       task_name + " has no \"" + config.data_key + "\" in its data (it has: " + (keys.empty() ? "nothing" : keys) +
                           "); the label config's <Image name=\"" + config.image_name + "\" value=\"$" + config.data_key +
                           "\"> must name the task's image key");
      }
      const std::string bytes = images_.fetch(data[config.data_key].get_ref<const std::string&>(), id, project, budget);
      results.push_back(clicks ? predict_clicked(req, config, context, *click, bytes, answer)
                               : predict_concepts(req, config, interactive ? &context : nullptr, *text, config_jobs, bytes, answer));
    }
    HttpResponse r;
    r.body = answer.dump({{"results", std::move(results)}});
    return r;
  }

 private:
  // A <Video> + <VideoRectangle> project: each task's video tracked on the SAM 3.1 bundle, from
  // the context's keyframe boxes (or the labels / the annotator's text as prompts).
  HttpResponse predict_video(const HttpRequest& req, const json& body, const VideoLabelConfig& config, const json& context) {
    const auto model = api_.ready_model();
    if (!model->tracks_video()) {
      throw ApiError(400, "no_video_model",
                     "a Label Studio video project needs SAM 3.1's video bundle (ailia-models) as sam3 serve "
                     "--models; this server holds " +
                         std::string(model->layout().id()));
    }
    const VideoJob job = read_video_job(config, context, video_frames_);
    api_.check_objects(job.boxed.size(), "the interactive context's videorectangle regions");
    if (!job.texts.empty()) {
      std::vector<Prompt> prompts;
      for (const auto& t : job.texts) prompts.push_back({.text = t, .boxes = {}});
      api_.check_prompts(prompts, "the label config's labels and predicted_values");
    }
    const std::string project = project_of(body);
    const FetchBudget budget{api_.deadline(req), req.client_gone};
    json results = json::array();
    for (const auto& task : body["tasks"]) {
      api_.check_alive(req);
      const std::int64_t id =
          task.is_object() && task.contains("id") && task["id"].is_number_integer() ? task["id"].get<std::int64_t>() : 0;
      const json& data = task.is_object() && task.contains("data") ? task["data"] : json();
      if (!data.is_object() || !data.contains(config.data_key) || !data[config.data_key].is_string()) {
        throw ApiError(400, "unknown_data_key",
                       "task " + std::to_string(id) + " has no \"" + config.data_key + "\" in its data; the label config's <Video name=\"" +
                           config.video_name + "\" value=\"$" + config.data_key + "\"> must name the task's video key");
      }
      const std::string& ref = data[config.data_key].get_ref<const std::string&>();
      auto video = std::make_shared<TemporaryVideo>(images_.fetch(ref, id, project, budget));
      // The task's video as the task names it (a data: URI by its kind only).
      std::string name = "task " + std::to_string(id) + "'s video ";
      if (ref.starts_with("data:"))
        name += "(its data: URI)";
      else
        name.append("\"").append(ref, 0, 200).append("\"");
      const double framerate = label_studio_framerate(config, data);
      auto regions = api_.run_on_worker(req, [model, config, job, video, name, framerate](const JobStop& stop) {
        try {
          return track_video_task(model, config, job, video->path(), framerate, stop.stopping(VideoTrackerOptions{}));
        } catch (const Error& e) {
          if (e.code() == ErrorCode::kCancelled) throw;
          // The video itself is bad (not a video FFmpeg reads, a box off its frame): the task's fault.
          throw ApiError(400, "invalid_video", video->named(e.what(), name));
        }
      });
      results.push_back({{"model_version", api_.model_version()}, {"score", 0.0}, {"result", std::move(regions)}});
    }
    return json_response(200, {{"results", std::move(results)}});
  }

  json result_of(json regions, double score_sum, int count) const {
    return {{"model_version", api_.model_version()}, {"score", count ? score_sum / count : 0.0}, {"result", std::move(regions)}};
  }

  // Labels, or the annotator's text (and exemplar marks), on the text model.
  json predict_concepts(const HttpRequest& req, const LabelConfig& config, const json* context, const ImageSegmenter& text,
                        const std::vector<Job>& config_jobs, const std::string& bytes, SplicedJson& answer) {
    bool cached = false;
    auto entry = api_.encode_bytes(req, text.shared_model(), bytes, &cached);  // one encode serves every label
    const int width = entry->embedding.width(), height = entry->embedding.height();
    auto jobs = std::make_shared<const std::vector<Job>>(
        context ? std::vector<Job>{concept_job(config, read_interactive_context(*context, width, height), width, height)} : config_jobs);
    if (context) api_.check_prompts(prompts_of(*jobs), "the interactive context's marks");
    auto found = api_.run_on_worker(req, [text, entry, jobs](const JobStop& stop) {
      std::vector<std::vector<Prompt>> labels;
      for (const auto& job : *jobs) labels.push_back(job.prompts);
      return segment_labels(text, entry->embedding, labels, {}, stop);
    });
    json regions = json::array();
    double score_sum = 0;
    int count = 0;
    for (size_t j = 0; j < jobs->size(); ++j) {
      for (const auto& inst : found[j]) {
        for (const auto* control : (*jobs)[j].controls) {
          for (auto& r : regions_of(inst, *control, (*jobs)[j].label, answer)) regions.push_back(std::move(r));
        }
        score_sum += inst.score;
        ++count;
      }
    }
    return result_of(std::move(regions), score_sum, count);
  }

  // Keypoints and a rectangle, without a text: the clicked object on the interactive model, as
  // Label Studio's own SAM backends answer them (one region per mask control of its label).
  json predict_clicked(const HttpRequest& req, const LabelConfig& config, const json& context, const InteractiveSegmenter& click,
                       const std::string& bytes, SplicedJson& answer) {
    bool cached = false;
    auto entry = api_.encode_bytes(req, click.shared_model(), bytes, &cached);
    const InteractiveContext marks = read_interactive_context(context, entry->embedding.width(), entry->embedding.height());
    auto objects = std::make_shared<const std::vector<InteractivePrompt>>(clicked_objects(marks));
    auto found = api_.run_on_worker(req, [click, entry, objects](const JobStop& stop) {
      return click.segment_objects(entry->embedding, *objects, stop.stopping(InteractiveOptions{}));
    });
    const Job job = labelled_job(config, "", marks.named_label);
    json regions = json::array();
    double score_sum = 0;
    int count = 0;
    for (const auto& object : found) {
      if (object.masks.empty()) continue;
      const Instance& best = object.masks.front();
      for (const auto* control : job.controls) {
        for (auto& r : regions_of(best, *control, job.label, answer)) regions.push_back(std::move(r));
      }
      score_sum += best.score;
      ++count;
    }
    return result_of(std::move(regions), score_sum, count);
  }

  Api& api_;
  TaskImages images_;
  std::int64_t video_frames_;
};

}  // namespace

void add_label_studio_routes(Api& api, const LabelStudioOptions& options) {
  auto backend = std::make_shared<LabelStudioBackend>(api, options);
  const auto basic_challenge = [] {
    HttpResponse r;
    r.status = 401;
    r.body = error_body("unauthorized",
                        "this backend needs the key of sam3 serve --api-key: in Label Studio's model "
                        "settings turn on \"Use basic auth\" and enter it as the password");
    r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"sam3\"");
    return r;
  };
  const std::vector<std::string> json_types = {"", "application/json"};
  api.add_route(
      {"POST", "/setup", false, true, json_types, [backend](const HttpRequest& r) { return backend->setup(r); }, basic_challenge});
  api.add_route(
      {"POST", "/predict", false, true, json_types, [backend](const HttpRequest& r) { return backend->predict(r); }, basic_challenge});
  api.add_route({"POST",
                 "/webhook",
                 true,
                 true,
                 {},
                 [](const HttpRequest&) {
                   return json_response(200, {{"status", "Unknown event"}});
                 },
                 basic_challenge});
  api.add_route(
      {"GET", "/metrics", true, true, {}, [](const HttpRequest&) { return json_response(200, json::object()); }, basic_challenge});
  api.add_route({"GET",
                 "/versions",
                 true,
                 true,
                 {},
                 [&api](const HttpRequest&) {
                   return json_response(200, {{"versions", {api.model_version()}}});
                 },
                 basic_challenge});
}

}  // namespace sam3::server
