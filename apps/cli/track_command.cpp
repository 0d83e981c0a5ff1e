// sam3 track: objects of a text prompt (ids that stay) and clicked or boxed objects followed
// through a video, on SAM 3.1's bundle (sam3/video_tracker.h). Frames and results go through
// track_io.h's FrameSource / VideoSink.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "model_resolver.h"
#include "progress_bar.h"
#include "sam3/output_folder.h"
#include "sam3/video_tracker.h"
#include "track_io.h"

namespace sam3::cli {
namespace {

struct TrackArgs {
  ModelSelection models;
  std::string video, out;
  std::vector<std::string> prompts, points, boxes;
  int every = 1;
  double fps = 0;
  int threads = 0;
  VideoTrackerOptions options;
};

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
    out.push_back({frame, {}, Box{number(parts[0], b, "--box"), number(parts[1], b, "--box"), number(parts[2], b, "--box"),
                                  number(parts[3], b, "--box")}});
  }
  return out;
}

int run_track(const TrackArgs& a) {
  VideoPrompts prompts{a.prompts, object_prompts(a)};
  ModelOptions model_options;
  model_options.providers = execution_providers(a.models);
  model_options.intra_op_threads = a.threads;
  model_options.precision = precision_of(a.models.precision);
  const auto model = Model::load(resolve_model_dir(a.models), model_options);
  VideoTracker tracker(model, prompts, a.options);

  auto source = open_image_folder(a.video, a.every, a.fps);
  VideoInfo info = source->info();
  info.name = safe_file_name(info.name, "video");
  nlohmann::json header = {{"model", {{"directory", model->directory().string()}, {"generation", model->generation()}}},
                           {"prompts", {{"texts", a.prompts}, {"points", a.points}, {"boxes", a.boxes}}},
                           {"settings",
                            {{"every", a.every},
                             {"detection_threshold", a.options.detection_threshold},
                             {"new_object_threshold", a.options.new_object_threshold},
                             {"hotstart_delay", a.options.hotstart_delay},
                             {"confirmation_detections", a.options.confirmation_detections},
                             {"boundary_margin", a.options.boundary_margin}}}};
  auto sink = open_json_sink(a.out, info, header);

  FrameProgress progress(info.name);
  std::deque<VideoFrame> held;  // frames whose results the hot-start delay still holds
  std::int64_t done = 0, objects = 0;
  std::set<int> ids;
  auto deliver = [&](std::vector<VideoFrameResult> results) {
    for (auto& r : results) {
      while (!held.empty() && held.front().index < r.index) held.pop_front();
      if (held.empty()) throw Error(ErrorCode::kRuntime, "a result came for a frame that was not pushed");
      sink->write(held.front(), r);
      held.pop_front();
      for (const auto& o : r.objects) ids.insert(o.id);
      objects += static_cast<std::int64_t>(r.objects.size());
      progress.update(++done, info.frame_count);
    }
  };
  while (auto frame = source->next()) {
    held.push_back(*frame);
    deliver(tracker.push(held.back()));
  }
  deliver(tracker.finish());
  sink->finish();
  progress.finish();
  std::printf("%s  %lld frames  %zu objects (ids %s)  wrote %s\n", info.name.c_str(), static_cast<long long>(done), ids.size(),
              ids.empty() ? "none" : (std::to_string(*ids.begin()) + ".." + std::to_string(*ids.rbegin())).c_str(),
              (std::filesystem::path(a.out) / (info.name + ".json")).c_str());
  return kOk;
}

}  // namespace

void add_track_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<TrackArgs>();
  auto* cmd = app.add_subcommand("track", "Track every instance of a text prompt, or clicked/boxed objects, through a video "
                                          "(SAM 3.1's ONNX bundle)");
  add_model_options(*cmd, args->models);
  cmd->add_option("video", args->video, "Folder of frames (images sorted by name, numbers in order)")->required();
  cmd->add_option("-p,--prompt", args->prompts, "Text prompt: every instance gets an id that stays; repeatable");
  cmd->add_option("--point", args->points, "An object to follow: a click X,Y[,neg]@FRAME in frame pixels; repeatable");
  cmd->add_option("--box", args->boxes, "An object to follow: its box X0,Y0,X1,Y1@FRAME; repeatable");
  cmd->add_option("-o,--out", args->out, "Output folder (<video>.json)")->required();
  cmd->add_option("--every", args->every, "Track every Nth frame")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--fps", args->fps, "Frame rate of a folder of frames (timestamps)")->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--threads", args->threads, "ONNX Runtime threads (0: one per core)")->check(CLI::Range(0, 1024));
  auto& o = args->options;
  cmd->add_option("--detection-threshold", o.detection_threshold, "Detections kept for matching")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--new-object-threshold", o.new_object_threshold, "Score a detection needs to start an object")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--hotstart-delay", o.hotstart_delay, "Frames results wait so that false starts are removed first")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--hotstart-unmatched", o.hotstart_unmatched, "Unmatched frames that remove a new object")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--hotstart-duplicate", o.hotstart_duplicate, "Duplicate frames that remove a new object")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--confirmation", o.confirmation_detections, "Consecutive detections that confirm an object (0: off)")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--boundary-margin", o.boundary_margin, "Detections centred this close to the edge start nothing (0: off)")
      ->check(CLI::Range(0.0, 0.49))->capture_default_str();
  cmd->add_option("--max-objects", o.max_objects, "At most this many objects (0: no limit)")->check(CLI::Range(0, 100000));
  cmd->callback([args, &run] { run = [args] { return run_track(*args); }; });
}

}  // namespace sam3::cli
