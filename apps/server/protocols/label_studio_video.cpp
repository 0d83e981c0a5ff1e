#include "label_studio_video.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <pugixml.hpp>

#include "api_error.h"
#include "http/http_message.h"
#include "sam3/video_sources.h"

namespace sam3::server::label_studio {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kDocs = "see docs/label-studio.md for a video config that works";

std::string tag_of(const pugi::xml_node& node) { return to_lower(node.name()); }

// A percent in 0..100 from a sequence item, or an error naming it.
double percent(const json& item, const char* key, const std::string& where) {
  if (!item.contains(key) || !item[key].is_number() || !std::isfinite(item[key].get<double>()) || item[key].get<double>() < 0 ||
      item[key].get<double>() > 100) {
    throw ApiError(400, "invalid_context", where + "." + key + " must be a number from 0 to 100 (percent of the video frame)");
  }
  return item[key].get<double>();
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }

// Seconds to the microsecond, which is all a frame's time needs: written as the shortest decimal
// that reads back (frame 3 at 10 fps is 0.3, where the stream's 3 x 0.1 was 0.30000000000000004).
double microseconds(double s) { return std::round(s * 1e6) / 1e6; }

// A box in percent of the frame, as Label Studio's sequence items hold it; its time is the frame
// (from 1) over the editor's frame rate, as Label Studio's editor writes it (VideoRegion serialize).
json sequence_item(std::int64_t index, double framerate, const Box& box, int width, int height, bool enabled) {
  return {{"frame", index + 1},
          {"x", round2(100.0 * box.x0 / width)},
          {"y", round2(100.0 * box.y0 / height)},
          {"width", round2(100.0 * (box.x1 - box.x0) / width)},
          {"height", round2(100.0 * (box.y1 - box.y0) / height)},
          {"enabled", enabled},
          {"rotation", 0},
          {"time", microseconds(static_cast<double>(index + 1) / framerate)}};
}

// An attribute by name, whatever its case (Label Studio reads frameRate as framerate).
std::string attribute_ci(const pugi::xml_node& node, const char* name) {
  for (const auto& a : node.attributes())
    if (to_lower(a.name()) == name) return a.value();
  return "";
}

// "the video has no frame 41 (it has 40)", naming the keyframe that asked for it.
ApiError no_such_frame(const std::string& where, std::int64_t frame, std::int64_t frames) {
  return ApiError(400, "invalid_context",
                  where + " is a keyframe on frame " + std::to_string(frame) + ", but the video has no frame " + std::to_string(frame) +
                      " (it has " + std::to_string(frames) +
                      "): Label Studio's frames must be the video's own; check the <Video> "
                      "tag's framerate against the video's");
}

// The frames in the video at `path`: its container's count (or estimate), else (or when that
// proved wrong) counted by decoding: only when a keyframe past the end needs the number said.
std::int64_t count_frames(const std::string& path, bool trust_container) {
  auto source = open_video_file(path);
  if (trust_container && source->info().frame_count > 0) return source->info().frame_count;
  std::int64_t n = 0;
  while (source->next()) ++n;
  return n;
}

}  // namespace

std::optional<VideoLabelConfig> parse_video_label_config(const std::string& xml) {
  pugi::xml_document doc;
  if (xml.empty() || !doc.load_buffer(xml.data(), xml.size())) return std::nullopt;  // the image parser says what is wrong
  std::vector<pugi::xml_node> videos, boxes, labels, text_areas;
  bool images = false;
  for (const pugi::xpath_node& found : doc.select_nodes("//*")) {
    const pugi::xml_node node = found.node();
    const std::string tag = tag_of(node);
    if (tag == "video")
      videos.push_back(node);
    else if (tag == "videorectangle")
      boxes.push_back(node);
    else if (tag == "labels")
      labels.push_back(node);
    else if (tag == "textarea")
      text_areas.push_back(node);
    else if (tag == "image")
      images = true;
  }
  if (boxes.empty()) {
    // A video project sam3 could answer but for its boxes (an image config goes to the image parser).
    for (const auto& video : videos) {
      const std::string name = video.attribute("name").as_string(), value = video.attribute("value").as_string();
      if (images || name.empty() || !value.starts_with("$")) continue;
      throw ApiError(400, "unsupported_label_config",
                     "the label config's <Video name=\"" + name +
                         "\"> has no <VideoRectangle> on it: sam3 answers a video project "
                         "with boxes tracked through the frames; add <VideoRectangle name=\"box\" toName=\"" +
                         name + "\"/> (and <Labels name=\"videoLabels\" toName=\"" + name +
                         "\"> with a <Label value=\"...\"/> for each "
                         "object, its predicted_values the words sam3 looks for), " +
                         std::string(kDocs));
    }
    return std::nullopt;
  }
  VideoLabelConfig config;
  for (const auto& box : boxes) {
    for (const auto& video : videos) {
      const std::string value = video.attribute("value").as_string();
      if (video.attribute("name").as_string() != std::string(box.attribute("toName").as_string()) || !value.starts_with("$") ||
          value.size() < 2 || !config.video_name.empty())
        continue;
      config.video_name = video.attribute("name").as_string();
      config.data_key = value.substr(1);
      config.box_name = box.attribute("name").as_string();
      config.framerate = attribute_ci(video, "framerate");
    }
  }
  if (config.video_name.empty()) {
    throw ApiError(400, "unsupported_label_config",
                   "the label config's <VideoRectangle> has no toName naming a <Video> whose value is a task key like "
                   "\"$video\"; " +
                       std::string(kDocs));
  }
  for (const auto& node : labels) {
    if (node.attribute("toName").as_string() != config.video_name) continue;
    for (const auto& label : node.children()) {
      if (tag_of(label) != "label" || std::string(label.attribute("value").as_string()).empty()) continue;
      LabelValue v{label.attribute("value").as_string(), split_predicted_values(label.attribute("predicted_values").as_string())};
      if (v.prompts.empty()) v.prompts = {v.value};
      config.labels.push_back(std::move(v));
    }
  }
  for (const auto& node : text_areas) {
    if (node.attribute("toName").as_string() == config.video_name) config.text_areas.push_back(node.attribute("name").as_string());
  }
  return config;
}

double label_studio_framerate(const VideoLabelConfig& config, const json& task_data) {
  json value = config.framerate;
  if (config.framerate.starts_with("$")) {  // a task data key, as the editor's parseValue reads it
    const std::string key = config.framerate.substr(1);
    value = task_data.is_object() && task_data.contains(key) ? task_data[key] : json();
  }
  double rate = 0;
  if (value.is_number()) {
    rate = value.get<double>();
  } else if (value.is_string()) {
    const std::string text(trim(value.get_ref<const std::string&>()));
    char* end = nullptr;
    rate = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (end && *end != '\0') rate = 0;  // Number("25fps") is NaN
  }
  if (!std::isfinite(rate) || rate <= 0) return 24.0;
  return rate < 1 ? 1 / rate : rate;
}

VideoJob read_video_job(const VideoLabelConfig& config, const json& context, std::int64_t after) {
  VideoJob job;
  const bool interactive = context.is_object() && context.contains("result") && context["result"].is_array() && !context["result"].empty();
  std::string text;
  if (interactive) {
    const json& result = context["result"];
    for (size_t i = 0; i < result.size(); ++i) {
      const json& item = result[i];
      const std::string where = "params.context.result[" + std::to_string(i) + "]";
      const std::string type =
          item.is_object() && item.contains("type") && item["type"].is_string() ? to_lower(item["type"].get<std::string>()) : "";
      const json value = item.is_object() && item.contains("value") && item["value"].is_object() ? item["value"] : json::object();
      if (type == "textarea" && value.contains("text") && value["text"].is_array() && !value["text"].empty() &&
          value["text"][0].is_string()) {
        if (text.empty()) text = std::string(trim(value["text"][0].get<std::string>()));
        continue;
      }
      if (type != "videorectangle") continue;
      if (!value.contains("sequence") || !value["sequence"].is_array() || value["sequence"].empty()) {
        throw ApiError(400, "invalid_context", where + ".value.sequence must hold the region's keyframes {frame, x, y, width, height}");
      }
      // Its keyframes by frame, one a frame (the first sent for a frame, the one the editor draws):
      // Label Studio's editor reads a sequence in that order.
      std::vector<std::pair<std::int64_t, size_t>> order;  // (frame, index in the sequence)
      for (size_t k = 0; k < value["sequence"].size(); ++k) {
        const json& key = value["sequence"][k];
        const std::string at = where + ".value.sequence[" + std::to_string(k) + "]";
        if (!key.is_object() || !key.contains("frame") || !key["frame"].is_number_integer() || key["frame"].get<std::int64_t>() < 1 ||
            key["frame"].get<std::int64_t>() > (std::int64_t{1} << 40)) {
          throw ApiError(400, "invalid_context", at + ".frame must be a frame number from 1");
        }
        order.emplace_back(key["frame"].get<std::int64_t>(), k);
      }
      std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      order.erase(std::unique(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), order.end());
      // The latest enabled keyframe is the box the object starts from; a keyframe after it is a
      // disabled one, where the annotator said the object leaves: tracking stops there.
      const auto enabled = [&](size_t k) {
        const json& key = value["sequence"][k];
        return !(key.contains("enabled") && key["enabled"].is_boolean() && !key["enabled"].get<bool>());
      };
      std::optional<size_t> latest;  // into `order`
      for (size_t i = 0; i < order.size(); ++i)
        if (enabled(order[i].second)) latest = i;
      if (!latest) throw ApiError(400, "invalid_context", where + ".value.sequence has no enabled keyframe to track from");
      const size_t k = order[*latest].second;
      const json& key = value["sequence"][k];
      const std::string at = where + ".value.sequence[" + std::to_string(k) + "]";
      // Label Studio rotates a box about its top-left corner; the tracker takes upright boxes (Label
      // Studio's SAM2 backend drops the rotation unsaid and tracks the unrotated box).
      if (key.contains("rotation")) {
        const bool number = key["rotation"].is_number() && std::isfinite(key["rotation"].get<double>());
        if (!number || std::fmod(key["rotation"].get<double>(), 360.0) != 0) {
          throw ApiError(400, "invalid_context",
                         at + ".rotation is " + key["rotation"].dump() +
                             ": sam3 tracks from an upright box; draw the object's box without rotating it (rotation 0)");
        }
      }
      VideoJob::Boxed boxed{item,
                            json::array(),
                            at,
                            order[*latest].first - 1,
                            *latest + 1 < order.size() ? order[*latest + 1].first - 1 : -1,
                            percent(key, "x", at),
                            percent(key, "y", at),
                            percent(key, "width", at),
                            percent(key, "height", at)};
      for (const auto& [frame, index] : order) boxed.keyframes.push_back(value["sequence"][index]);
      if (boxed.width <= 0 || boxed.height <= 0) throw ApiError(400, "invalid_context", at + " is a keyframe box without area");
      job.boxed.push_back(std::move(boxed));
    }
    if (job.boxed.empty() && text.empty()) {
      throw ApiError(400, "invalid_context",
                     "params.context.result holds no videorectangle region and no text: draw a box on a keyframe (or type a prompt)");
    }
  }
  if (!job.boxed.empty()) {
    job.first_frame = job.last_frame = job.boxed.front().frame;
    for (const auto& b : job.boxed) {
      job.first_frame = std::min(job.first_frame, b.frame);
      job.last_frame = std::max(job.last_frame, b.stop >= 0 ? std::min(b.frame + after, b.stop - 1) : b.frame + after);
    }
    return job;
  }
  // Text prompts: the annotator's text (labelled by the label it names, else by itself), or every
  // label with its predicted_values, from the first frame.
  if (!text.empty()) {
    std::string label = text;
    for (const auto& v : config.labels) {
      const bool names = to_lower(v.value) == to_lower(text) || std::any_of(v.prompts.begin(), v.prompts.end(), [&](const std::string& p) {
                           return to_lower(p) == to_lower(text);
                         });
      if (names) {
        label = v.value;
        break;
      }
    }
    job.texts = {text};
    job.text_labels = {label};
  } else {
    for (const auto& v : config.labels) {
      for (const auto& p : v.prompts) {
        job.texts.push_back(p);
        job.text_labels.push_back(v.value);
      }
    }
    if (job.texts.empty()) {
      throw ApiError(400, "unsupported_label_config",
                     "the label config has no <Labels> on <Video name=\"" + config.video_name +
                         "\"> with a <Label value=\"...\"/>: the labels are the prompts of a video task, " + std::string(kDocs));
    }
  }
  job.first_frame = 0;
  job.last_frame = after - 1;
  return job;
}

json track_video_task(const std::shared_ptr<const Model>& model, const VideoLabelConfig& config, const VideoJob& job,
                      const std::string& path, double framerate, VideoTrackerOptions options) {
  auto source = open_video_file(path, {.start_index = job.first_frame});
  const VideoInfo info = source->info();
  const int width = info.width, height = info.height;
  // The video's frames: the source counts those from the first tracked one on (none when that
  // one is past the end, and 0 when the container says nothing: then they are counted).
  std::int64_t frames_count = info.frame_count > 0 ? job.first_frame + info.frame_count : 0;
  if (frames_count == 0 && job.first_frame > 0) frames_count = count_frames(path, true);
  for (const auto& b : job.boxed)
    if (frames_count > 0 && b.frame >= frames_count) throw no_such_frame(b.where, b.frame + 1, frames_count);
  VideoPrompts prompts;
  prompts.texts = job.texts;
  for (const auto& b : job.boxed) {
    const Box box{static_cast<float>(b.x / 100.0 * width), static_cast<float>(b.y / 100.0 * height),
                  static_cast<float>(std::min(100.0, b.x + b.width) / 100.0 * width),
                  static_cast<float>(std::min(100.0, b.y + b.height) / 100.0 * height)};
    prompts.objects.push_back({.frame = b.frame, .points = {}, .box = box});
  }
  VideoTracker tracker(model, prompts, options);
  // Each tracked object's sequence, by id; the frames it was seen on, to close a track it leaves.
  struct Track {
    int prompt = 0;
    json sequence = json::array();
    std::int64_t last_seen = -2;
    Box last_box;
  };
  std::map<int, Track> tracks;
  std::int64_t frames = 0, last_index = -1;
  double last_time = 0;
  const auto take = [&](const std::vector<VideoFrameResult>& results) {
    for (const auto& r : results) {
      for (auto& entry : tracks) {   // a track not seen on this frame left after the previous one,
        const int id = entry.first;  // named, not bound: clang 14 cannot capture a structured binding
        Track& t = entry.second;     // whose keyframe is disabled: the editor shows a disabled keyframe on its frame, not after
        if (t.last_seen == r.index - 1 &&
            std::none_of(r.objects.begin(), r.objects.end(), [&](const TrackedObject& o) { return o.id == id; }))
          t.sequence.back()["enabled"] = false;
      }
      for (const auto& o : r.objects) {
        Track& t = tracks[o.id];
        t.prompt = o.prompt;
        t.last_seen = r.index;
        t.last_box = o.box;
        t.sequence.push_back(sequence_item(r.index, framerate, o.box, width, height, true));
      }
    }
  };
  bool ended = true;  // the video ended before the last frame to track
  while (auto frame = source->next()) {
    if (frame->index > job.last_frame) {
      ended = false;
      break;
    }
    take(tracker.push(*frame));
    ++frames;
    last_index = frame->index;
    last_time = frame->time_s;
  }
  if (ended && frames_count == 0) frames_count = last_index + 1;  // counted to the end
  // A container's count can be wrong (an estimate from its duration): the frames decoded say last.
  for (const auto& b : job.boxed)
    if (ended && b.frame > last_index) throw no_such_frame(b.where, b.frame + 1, frames > 0 ? last_index + 1 : count_frames(path, false));
  if (frames == 0) {
    throw ApiError(400, "invalid_context",
                   "the video has no frame " + std::to_string(job.first_frame + 1) + " (it has " + std::to_string(frames_count) + ")");
  }
  take(tracker.finish());
  if (frames_count == 0) frames_count = job.first_frame + frames;
  const double fps = info.fps > 0 ? info.fps : (last_time > 0 ? frames / last_time : 25.0);
  const json common = {{"framesCount", frames_count}, {"duration", microseconds(static_cast<double>(frames_count) / fps)}};
  const auto finish = [&](json region, json value) {
    region["from_name"] = config.box_name;
    region["to_name"] = config.video_name;
    region["type"] = "videorectangle";
    region["value"] = std::move(value);
    return region;
  };
  json results = json::array();
  const size_t texts = job.texts.size();
  // Every boxed region, in the context's order: as sent (its id, labels and keyframes, ordered by
  // frame, one a frame), with the frames its object was tracked on after its latest enabled
  // keyframe and before a disabled one; as sent when none was.
  for (size_t k = 0; k < job.boxed.size(); ++k) {
    const auto& boxed = job.boxed[k];
    const json& old = boxed.region["value"];
    json value = common;
    json tracked = json::array();
    for (auto& entry : tracks) {
      Track& t = entry.second;
      if (t.prompt < 0 || static_cast<size_t>(t.prompt) != texts + k) continue;
      for (auto& item : t.sequence) {
        const std::int64_t frame = item["frame"].get<std::int64_t>() - 1;
        if (frame > boxed.frame && (boxed.stop < 0 || frame < boxed.stop)) tracked.push_back(std::move(item));
      }
      break;  // one object a box
    }
    // The tracked keyframes go between the sent ones, all in frame order (none shares a frame).
    value["sequence"] = json::array();
    size_t next = 0;
    for (const auto& sent : boxed.keyframes) {
      while (next < tracked.size() && tracked[next]["frame"].get<std::int64_t>() < sent["frame"].get<std::int64_t>())
        value["sequence"].push_back(std::move(tracked[next++]));
      value["sequence"].push_back(sent);
    }
    while (next < tracked.size()) value["sequence"].push_back(std::move(tracked[next++]));
    for (const char* key : {"labels", "videorectangle"})
      if (old.contains(key)) value[key] = old[key];
    results.push_back(finish(boxed.region, std::move(value)));
  }
  // The texts' instances, each its own region.
  for (auto& [id, t] : tracks) {
    if (t.prompt < 0 || static_cast<size_t>(t.prompt) >= texts) continue;
    json value = common;
    value["sequence"] = std::move(t.sequence);
    value["labels"] = {job.text_labels.at(static_cast<size_t>(t.prompt))};
    results.push_back(finish({{"id", "sam3-track-" + std::to_string(id)}, {"origin", "prediction"}}, std::move(value)));
  }
  return results;
}

}  // namespace sam3::server::label_studio
