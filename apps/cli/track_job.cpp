#include "track_job.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "nlohmann/json.hpp"
#include "sam3/error.h"
#include "sam3/video_sources.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

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

// A float setting as the shortest decimal that reads back as it (0.1, not 0.10000000149011612).
double shortest(float v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

// Text a user typed around a list item (--format "json, davis").
std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
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
    const auto format = parse_video_output_format(trimmed(list.substr(start, comma - start)));
    if (std::find(formats.begin(), formats.end(), format) == formats.end()) formats.push_back(format);
    start = comma + 1;
  }
  return formats;
}

// What the results depend on: a resumed run must have the same, or VideoOutputs starts over.
// Only what is used: --fps is a folder of frames' rate (a video file keeps its own times, and a
// rerun without the ignored flag must still resume).
nlohmann::json settings_of(const TrackArgs& a, const nlohmann::json& model) {
  const auto& o = a.options;
  return {
      {"model", model},
      {"prompts", {{"texts", a.prompts}, {"points", a.points}, {"boxes", a.boxes}}},
      {"every", a.every},
      {"fps", frames_folder(a.video) ? a.fps : 0.0},
      {"detection_threshold", shortest(o.detection_threshold)},
      {"nms_iom", shortest(o.nms_iom)},
      {"association_iom", shortest(o.association_iom)},
      {"track_match_iom", shortest(o.track_match_iom)},
      {"new_object_threshold", shortest(o.new_object_threshold)},
      {"hotstart_delay", o.hotstart_delay},
      {"hotstart_unmatched", o.hotstart_unmatched},
      {"hotstart_duplicate", o.hotstart_duplicate},
      {"keep_alive", {o.keep_alive_init, o.keep_alive_min, o.keep_alive_max}},
      {"keep_alive_suppression", o.keep_alive_suppression},
      {"occlusion_overlap_iou", shortest(o.occlusion_overlap_iou)},
      {"boundary_margin", shortest(o.boundary_margin)},
      {"confirmation_detections", o.confirmation_detections},
      {"max_objects", o.max_objects},
      {"recondition",
       {o.recondition_every, shortest(o.recondition_iom), shortest(o.recondition_detection_score), shortest(o.recondition_track_score)}},
      {"fill_hole_area", o.fill_hole_area},
      {"shrinkage_min_ratio", shortest(o.shrinkage_min_ratio)},
      {"pack_new_objects", o.pack_new_objects}};
}

// The model folder by what it is, not how it was spelt: "models", "./models" and
// "/data/models/" are one folder, and a run resumes whichever the command line says.
std::string model_identity(const fs::path& dir) {
  std::error_code ec;
  fs::path path = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) path = fs::absolute(dir, ec).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();
  return path.string();
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
  job.source.fps = frames_folder(a.video) ? a.fps : 0.0;
  job.outputs.formats = output_formats(a.formats);
  job.outputs.labels = a.prompts;  // a text's objects carry its index; clicked/boxed ones come after the texts
  for (size_t i = 0; i < job.prompts.objects.size(); ++i) job.outputs.labels.push_back("object" + std::to_string(i + 1));
  const nlohmann::json model = {
      {"directory", model_identity(job.model->directory())}, {"generation", job.model->generation()}, {"precision", a.models.precision}};
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
  // Each number in its range, said as every other sam3 error is (not CLI11's "Value 0 not in range").
  struct Bound {
    const char* name;
    double value, lo, hi;
  };
  for (const Bound& b :
       {Bound{"--every", static_cast<double>(a.every), 1, 1e6},
        Bound{"--checkpoint-every", static_cast<double>(a.checkpoint_every), 1, 1e6}, Bound{"--fps", a.fps, 0, 1000},
        Bound{"--threads", static_cast<double>(a.threads), 0, 1024}, Bound{"--detection-threshold", o.detection_threshold, 0, 1},
        Bound{"--new-object-threshold", o.new_object_threshold, 0, 1},
        Bound{"--hotstart-delay", static_cast<double>(o.hotstart_delay), 0, 1000},
        Bound{"--hotstart-unmatched", static_cast<double>(o.hotstart_unmatched), 0, 1000},
        Bound{"--hotstart-duplicate", static_cast<double>(o.hotstart_duplicate), 0, 1000},
        Bound{"--confirmation", static_cast<double>(o.confirmation_detections), 0, 1000},
        Bound{"--boundary-margin", o.boundary_margin, 0, 0.49}, Bound{"--max-objects", static_cast<double>(o.max_objects), 0, 100000},
        Bound{"--recondition-every", static_cast<double>(o.recondition_every), 0, 1e6},
        Bound{"--fill-hole-area", static_cast<double>(o.fill_hole_area), 0, 1e6}}) {
    if (b.value >= b.lo && b.value <= b.hi) continue;
    char text[160];
    std::snprintf(text, sizeof text, "%s must be from %.10g to %.10g, got %.10g", b.name, b.lo, b.hi, b.value);
    return text;
  }
  // A text twice would track each instance twice and name two labels alike (MOTS' labels.txt).
  for (size_t i = 0; i < a.prompts.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (a.prompts[j] == a.prompts[i]) return "--prompt '" + a.prompts[i] + "' is given twice: give each text once";
    }
  }
  return "";
}

bool frames_folder(const std::string& input) {
  std::error_code ec;
  return fs::is_directory(input, ec) && list_video_files(input).empty();
}

std::pair<int, int> parse_track_shard(const std::string& shard) {
  int k = 1, n = 1, used = 0;
  if (std::sscanf(shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 || used != static_cast<int>(shard.size()) || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard must be K/N with 1 <= K <= N, e.g. 3/8, got '" + shard + "'");
  }
  return {k, n};
}

}  // namespace sam3::cli
