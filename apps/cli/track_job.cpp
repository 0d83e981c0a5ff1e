#include "track_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nlohmann/json.hpp"
#include "sam3/error.h"

namespace sam3::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorCode::kInvalidArgument, message); }

// "a,b,c@frame" -> numbers and the frame.
std::pair<std::vector<std::string>, std::int64_t> split_at_frame(const std::string& text, const char* option, const char* form) {
  const auto at = text.rfind('@');
  if (at == std::string::npos) usage(std::string(option) + " " + text + ": say the frame, as " + form);
  std::int64_t frame = 0;
  try {
    size_t used = 0;
    frame = std::stoll(text.substr(at + 1), &used);
    if (used != text.size() - at - 1 || frame < 0) throw std::invalid_argument("frame");
  } catch (const std::exception&) {
    usage(std::string(option) + " " + text + ": the frame after @ must be a whole number from 0");
  }
  std::vector<std::string> parts;
  std::string body = text.substr(0, at), cur;
  for (char c : body + ",") {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return {parts, frame};
}

float number(const std::string& s, const std::string& whole, const char* option) {
  try {
    size_t used = 0;
    const float v = std::stof(s, &used);
    if (used != s.size() || !std::isfinite(v)) throw std::invalid_argument("number");
    return v;
  } catch (const std::exception&) {
    usage(std::string(option) + " " + whole + ": '" + s + "' is not a number");
  }
}

std::vector<VideoObjectPrompt> object_prompts(const TrackArgs& a) {
  std::vector<VideoObjectPrompt> out;
  for (const auto& p : a.points) {
    auto [parts, frame] = split_at_frame(p, "--point", "X,Y[,neg]@FRAME");
    if (parts.size() < 2 || parts.size() > 3) usage("--point " + p + ": expected X,Y[,neg]@FRAME");
    bool positive = true;
    if (parts.size() == 3) {
      const auto polarity = parse_polarity(parts[2]);
      if (!polarity) usage("--point " + p + ": the third field must be pos or neg");
      positive = *polarity;
    }
    out.push_back({frame, {{number(parts[0], p, "--point"), number(parts[1], p, "--point"), positive}}, std::nullopt});
  }
  for (const auto& b : a.boxes) {
    auto [parts, frame] = split_at_frame(b, "--box", "X0,Y0,X1,Y1@FRAME");
    if (parts.size() != 4) usage("--box " + b + ": expected X0,Y0,X1,Y1@FRAME");
    out.push_back(
        {frame,
         {},
         Box{number(parts[0], b, "--box"), number(parts[1], b, "--box"), number(parts[2], b, "--box"), number(parts[3], b, "--box")}});
  }
  return out;
}

std::vector<VideoOutputFormat> output_formats(const std::string& list) {
  std::vector<VideoOutputFormat> formats;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const auto format = parse_video_output_format(list.substr(start, comma - start));
    if (std::find(formats.begin(), formats.end(), format) == formats.end()) formats.push_back(format);
    start = comma + 1;
  }
  return formats;
}

// What the results depend on: a resumed run must have the same, or VideoOutputs starts over.
nlohmann::json settings_of(const TrackArgs& a, const nlohmann::json& model) {
  const auto& o = a.options;
  return {{"model", model},
          {"prompts", {{"texts", a.prompts}, {"points", a.points}, {"boxes", a.boxes}}},
          {"every", a.every},
          {"fps", a.fps},
          {"detection_threshold", o.detection_threshold},
          {"nms_iom", o.nms_iom},
          {"association_iom", o.association_iom},
          {"track_match_iom", o.track_match_iom},
          {"new_object_threshold", o.new_object_threshold},
          {"hotstart_delay", o.hotstart_delay},
          {"hotstart_unmatched", o.hotstart_unmatched},
          {"hotstart_duplicate", o.hotstart_duplicate},
          {"keep_alive", {o.keep_alive_init, o.keep_alive_min, o.keep_alive_max}},
          {"keep_alive_suppression", o.keep_alive_suppression},
          {"occlusion_overlap_iou", o.occlusion_overlap_iou},
          {"boundary_margin", o.boundary_margin},
          {"confirmation_detections", o.confirmation_detections},
          {"max_objects", o.max_objects},
          {"recondition", {o.recondition_every, o.recondition_iom, o.recondition_detection_score, o.recondition_track_score}},
          {"fill_hole_area", o.fill_hole_area},
          {"shrinkage_min_ratio", o.shrinkage_min_ratio},
          {"pack_new_objects", o.pack_new_objects}};
}

}  // namespace

TrackJob make_track_job(const TrackArgs& a, const std::atomic<bool>* stop) {
  TrackJob job;
  job.prompts = {a.prompts, object_prompts(a)};
  ModelOptions model_options;
  model_options.providers = execution_providers(a.models);
  model_options.intra_op_threads = a.threads;
  model_options.precision = precision_of(a.models.precision);
  job.model = Model::load(resolve_model_dir(a.models), model_options);
  job.tracker = a.options;
  job.tracker.stop = StopToken::following(stop);
  job.source.every = a.every;
  job.source.fps = a.fps;
  job.outputs.formats = output_formats(a.formats);
  job.outputs.labels = a.prompts;  // a text's objects carry its index; clicked/boxed ones come after the texts
  for (size_t i = 0; i < job.prompts.objects.size(); ++i) job.outputs.labels.push_back("object" + std::to_string(i + 1));
  const nlohmann::json model = {
      {"directory", job.model->directory().string()}, {"generation", job.model->generation()}, {"precision", a.models.precision}};
  job.outputs.model_json = model.dump();
  job.outputs.settings_json = settings_of(a, model).dump();
  job.outputs.checkpoint_every = a.checkpoint_every;
  job.outputs.resume = !a.restart;
  job.outputs.overlay_encoder = a.overlay_encoder;

  return job;
}

std::string track_usage_error(const TrackArgs& a) {
  try {
    parse_track_shard(a.shard);
    output_formats(a.formats);
    object_prompts(a);
  } catch (const Error& e) {
    return e.what();
  }
  const auto& o = a.options;
  for (const auto& [name, value] : {std::pair<const char*, double>{"--fps", a.fps},
                                    {"--detection-threshold", o.detection_threshold},
                                    {"--new-object-threshold", o.new_object_threshold},
                                    {"--boundary-margin", o.boundary_margin}}) {
    if (!std::isfinite(value)) return std::string(name) + " must be a number, got " + std::to_string(value);
  }
  // A text twice would track each instance twice and name two labels alike (MOTS' labels.txt).
  for (size_t i = 0; i < a.prompts.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (a.prompts[j] == a.prompts[i]) return "--prompt '" + a.prompts[i] + "' is given twice: give each text once";
    }
  }
  return "";
}

std::pair<int, int> parse_track_shard(const std::string& shard) {
  int k = 1, n = 1, used = 0;
  if (std::sscanf(shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 || used != static_cast<int>(shard.size()) || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard must be K/N with 1 <= K <= N, e.g. 3/8, got '" + shard + "'");
  }
  return {k, n};
}

}  // namespace sam3::cli
