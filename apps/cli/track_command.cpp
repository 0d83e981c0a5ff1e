// sam3 track: objects of a text prompt (ids that stay) and clicked or boxed objects followed
// through a video file or a folder of frames, on SAM 3.1's bundle (sam3/video_tracker.h), into
// the formats of sam3/video_outputs.h, resumably (track_video.h).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "model_resolver.h"
#include "nlohmann/json.hpp"
#include "sam3/video_tracker.h"
#include "sam3/video_outputs.h"
#include "track_batch.h"
#include "track_video.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

struct TrackArgs {
  ModelSelection models;
  std::string video, out;
  std::string formats = "json,davis";
  std::string overlay_encoder = "auto";
  int checkpoint_every = 25;
  bool restart = false;
  std::string shard = "1/1";
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

std::atomic<bool> g_stop{false};

void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
  std::signal(SIGTERM, SIG_DFL);
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
          {"shrinkage_min_ratio", o.shrinkage_min_ratio}};
}

int run_track(TrackArgs& a) {
  TrackJob job;
  job.prompts = {a.prompts, object_prompts(a)};
  ModelOptions model_options;
  model_options.providers = execution_providers(a.models);
  model_options.intra_op_threads = a.threads;
  model_options.precision = precision_of(a.models.precision);
  job.model = Model::load(resolve_model_dir(a.models), model_options);
  job.tracker = a.options;
  job.tracker.stop = StopToken::following(&g_stop);
  job.source.every = a.every;
  job.source.fps = a.fps;
  job.outputs.formats = output_formats(a.formats);
  job.outputs.labels = a.prompts;  // a text's objects carry its index; clicked/boxed ones come after the texts
  for (size_t i = 0; i < job.prompts.objects.size(); ++i) job.outputs.labels.push_back("object" + std::to_string(i + 1));
  const nlohmann::json model = {{"directory", job.model->directory().string()},
                                {"generation", job.model->generation()},
                                {"precision", a.models.precision}};
  job.outputs.model_json = model.dump();
  job.outputs.settings_json = settings_of(a, model).dump();
  job.outputs.checkpoint_every = a.checkpoint_every;
  job.outputs.resume = !a.restart;
  job.outputs.overlay_encoder = a.overlay_encoder;

  int k = 1, n = 1, used = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 || used != static_cast<int>(a.shard.size()) || k < 1 ||
      k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard must be K/N with 1 <= K <= N, e.g. 3/8, got '" + a.shard + "'");
  }
  std::error_code ec;
  const bool videos = fs::is_directory(a.video, ec) && !list_video_files(a.video).empty();
  if (n > 1 && !videos) throw Error(ErrorCode::kInvalidArgument, "--shard splits a folder of videos; " + a.video + " is one video");

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  if (videos) return track_videos(a.video, a.out, job, k, n);
  try {
    const auto s = track_video(a.video, a.out, job);
    std::printf("%s: %lld frames%s -> %s\n", fs::path(a.video).filename().c_str(), static_cast<long long>(s.frames),
                s.resumed().c_str(),
                a.out.c_str());
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kCancelled) {
      std::fprintf(stderr, "interrupted: run the same command again to continue from the last checkpoint\n");
    }
    throw;
  }
  return kOk;
}

}  // namespace

void add_track_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<TrackArgs>();
  auto* cmd = app.add_subcommand("track", "Track every instance of a text prompt, or clicked/boxed objects, through a video "
                                          "(SAM 3.1's ONNX bundle)");
  add_model_options(*cmd, args->models);
  cmd->add_option("video", args->video, "Video file (anything FFmpeg decodes), folder of frames (images in natural order) "
                                      "or folder of video files (one sub-folder of --out each)")
      ->required();
  cmd->add_option("-p,--prompt", args->prompts, "Text prompt: every instance gets an id that stays; repeatable");
  cmd->add_option("--point", args->points, "An object to follow: a click X,Y[,neg]@FRAME in frame pixels; repeatable");
  cmd->add_option("--box", args->boxes, "An object to follow: its box X0,Y0,X1,Y1@FRAME; repeatable");
  cmd->add_option("-o,--out", args->out, "Output folder (tracks.json, davis/, mots.txt + mots/, overlay.mp4)")->required();
  cmd->add_option("-f,--format", args->formats, "Outputs, comma-separated: json, davis, mots, overlay")->capture_default_str();
  cmd->add_option("--overlay-encoder", args->overlay_encoder, "auto (H.264, else MPEG-4), h264, mpeg4 or png (one PNG a frame)")
      ->check(CLI::IsMember({"auto", "h264", "mpeg4", "png"}))->capture_default_str();
  cmd->add_option("--checkpoint-every", args->checkpoint_every, "Frames between checkpoints (what an interruption can lose)")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--shard", args->shard, "A folder of videos: take share K of N of them (as sam3 label), e.g. 2/8")
      ->capture_default_str();
  cmd->add_flag("--restart", args->restart, "Start over instead of continuing an interrupted run left in --out");
  cmd->add_option("--every", args->every, "Track every Nth frame")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--fps", args->fps, "Frame rate of a folder of frames (timestamps; default 25)")->check(CLI::Range(0.0, 1000.0));
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
  cmd->add_option("--recondition-every", o.recondition_every,
                  "Re-prompt confidently tracked objects with their detection every N frames (0: off)")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  cmd->add_option("--fill-hole-area", o.fill_hole_area, "Fill holes and drop specks up to this many mask pixels (288x288; 0: off)")
      ->check(CLI::Range(0, 1000000))->capture_default_str();
  cmd->footer("Rerunning an interrupted command continues where it stopped (the last checkpoint, less a window of\n"
              "frames that is tracked again so that ids carry on); other settings start over. A folder of videos:\n"
              "finished videos are skipped; --shard K/N for K = 1..N splits them (a Slurm array). See docs/video.md.");
  cmd->callback([args, &run] { run = [args] { return run_track(*args); }; });
}

}  // namespace sam3::cli
