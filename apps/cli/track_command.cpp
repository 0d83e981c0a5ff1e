// sam3 track: objects of a text prompt (ids that stay) and clicked or boxed objects followed
// through a video file or a folder of frames, on SAM 3.1's bundle (sam3/video_tracker.h), into
// the formats of sam3/video_outputs.h, resumably (track_video.h).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "model_resolver.h"
#include "nlohmann/json.hpp"
#include "sam3/log.h"
#include "sam3/video_tracker.h"
#include "sam3/video_outputs.h"
#include "track_batch.h"
#include "track_job.h"
#include "track_video.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};

void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
  std::signal(SIGTERM, SIG_DFL);
}

// The name a video's source gives it without decoding: a file's name, a folder's own name.
std::string video_name(const std::string& video) {
  fs::path named = fs::absolute(video).lexically_normal();
  if (!named.has_filename()) named = named.parent_path();
  return named.filename().string();
}

int run_track(TrackArgs& a) {
  if (const auto usage = track_usage_error(a); !usage.empty()) {
    print_error(usage);
    return kUsage;
  }
  const auto [k, n] = parse_track_shard(a.shard);
  auto job = make_track_job(a, &g_stop);
  std::error_code ec;
  const bool videos = fs::is_directory(a.video, ec) && !list_video_files(a.video).empty();
  if (n > 1 && !videos) throw Error(ErrorCode::kInvalidArgument, "--shard splits a folder of videos; " + a.video + " is one video");
  if (a.fps > 0 && (videos || !fs::is_directory(a.video, ec))) {
    log(LogLevel::kWarning, "--fps is for a folder of frames; video files keep their own frame times");
  }

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  if (videos) return track_videos(a.video, a.out, job, k, n);
  // One video: done already (the same file, settings and formats) is said and skipped, as a
  // folder of videos skips it; another video's or other settings' finished results are not
  // replaced unless asked (a mistyped --out would lose hours of tracking).
  std::optional<VideoOutputOptions> outputs;
  try {
    outputs = outputs_for(a.video, job);
  } catch (const Error&) {  // a missing or unreadable video: track_video says what is wrong
  }
  if (outputs && !a.restart && VideoOutputs::finished(a.out, *outputs)) {
    std::printf("%s: already tracked with these settings and formats in %s; nothing to do (--restart tracks it again)\n",
                video_name(a.video).c_str(), a.out.c_str());
    return kOk;
  }
  if (outputs && !a.overwrite) {
    const auto replaced = VideoOutputs::replaced_results(a.out, video_name(a.video), *outputs);
    if (!replaced.empty()) throw Error(ErrorCode::kIo, replaced + "; give another --out, or --overwrite to replace them");
  }
  try {
    const auto summary = track_video(a.video, a.out, job);
    summary.print(summary.name, a.out);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kCancelled) throw;
    // Ctrl-C or SIGTERM: the hint alone, not an error line naming the graph that was stopped.
    std::fprintf(stderr, "interrupted: run the same command again to continue from the last checkpoint\n");
    return error_traits(ErrorCode::kCancelled).exit_code;
  }
  return kOk;
}

}  // namespace

void add_track_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<TrackArgs>();
  auto* cmd = app.add_subcommand("track",
                                 "Track every instance of a text prompt, or clicked/boxed objects, through a video "
                                 "(SAM 3.1's ONNX bundle)");
  add_model_options(*cmd, args->models);
  args->models.registry_default = false;
  cmd->get_option("--models")->description("SAM 3.1's bundle folder (ailia-models' files, docs/video.md); default $SAM3_MODELS");
  cmd->add_option("video", args->video,
                  "Video file (anything FFmpeg decodes), folder of frames (images in natural order) "
                  "or folder of video files (one sub-folder of --out each)")
      ->required();
  // One value each use (--prompt car --prompt person): options before the video never swallow it.
  cmd->add_option("-p,--prompt", args->prompts, "Text prompt: every instance gets an id that stays; repeatable")->allow_extra_args(false);
  cmd->add_option("--point", args->points, "An object to follow: a click X,Y[,neg]@FRAME in frame pixels; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--box", args->boxes, "An object to follow: its box X0,Y0,X1,Y1@FRAME; repeatable")->allow_extra_args(false);
  cmd->add_option("-o,--out", args->out, "Output folder (tracks.json, davis/, mots.txt + mots/, overlay.mp4)")->required();
  cmd->add_option("-f,--format", args->formats, "Outputs, comma-separated: json, davis, mots, overlay")->capture_default_str();
  cmd->add_option("--overlay-encoder", args->overlay_encoder, "auto (H.264, else MPEG-4), h264, mpeg4 or png (one PNG a frame)")
      ->check(CLI::IsMember({"auto", "h264", "mpeg4", "png"}))
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", args->checkpoint_every, "Frames between checkpoints (what an interruption can lose)")
      ->capture_default_str();
  cmd->add_option("--shard", args->shard, "A folder of videos: take share K of N of them (as sam3 label), e.g. 2/8")->capture_default_str();
  cmd->add_flag("--restart", args->restart,
                "Start over instead of continuing an interrupted run left in --out (or tracking again a video already tracked there)");
  cmd->add_flag("--overwrite", args->overwrite,
                "Replace the finished results of another video, or of other prompts or settings, that --out holds (refused without it)");
  cmd->add_option("--every", args->every, "Track every Nth frame")->capture_default_str();
  cmd->add_option("--fps", args->fps, "Frame rate of a folder of frames (timestamps; default 25)");
  cmd->add_option("--threads", args->threads, "ONNX Runtime threads (0: one per core)");
  // Ranges are checked by track_usage_error, in sam3's words (sam3: error: --every must be ...).
  auto& o = args->options;
  cmd->add_option("--detection-threshold", o.detection_threshold, "Detections kept for matching")->capture_default_str();
  cmd->add_option("--new-object-threshold", o.new_object_threshold, "Score a detection needs to start an object")->capture_default_str();
  cmd->add_option("--hotstart-delay", o.hotstart_delay, "Frames results wait so that false starts are removed first")
      ->capture_default_str();
  cmd->add_option("--hotstart-unmatched", o.hotstart_unmatched, "Unmatched frames that remove a new object")->capture_default_str();
  cmd->add_option("--hotstart-duplicate", o.hotstart_duplicate, "Duplicate frames that remove a new object")->capture_default_str();
  cmd->add_option("--confirmation", o.confirmation_detections, "Consecutive detections that confirm an object (0: off)")
      ->capture_default_str();
  cmd->add_option("--boundary-margin", o.boundary_margin, "Detections centred this close to the edge start nothing (0: off)")
      ->capture_default_str();
  cmd->add_option("--max-objects", o.max_objects, "At most this many objects (0: no limit)");
  cmd->add_option("--recondition-every", o.recondition_every,
                  "Re-prompt confidently tracked objects with their detection every N frames (0: off)")
      ->capture_default_str();
  // Two flags, not CLI11's "--a,!--no-a" pair, whose help reads "--pack-new-objects,--no-pack-new-objects{false}".
  cmd->add_flag("--pack-new-objects", o.pack_new_objects,
                "Objects starting on a later frame join free slots of an existing bucket, as SAM 3.1 (the default)");
  cmd->add_flag_callback(
      "--no-pack-new-objects", [args] { args->options.pack_new_objects = false; }, "A new bucket for each frame on which objects start");
  cmd->add_option("--fill-hole-area", o.fill_hole_area, "Fill holes and drop specks up to this many mask pixels (288x288; 0: off)")
      ->capture_default_str();
  cmd->footer(
      "Rerunning an interrupted command continues where it stopped (the last checkpoint, less a window of\n"
      "frames that is tracked again so that ids carry on); other settings start over. A video already\n"
      "tracked into --out with the same settings and formats is skipped; the finished results of another\n"
      "video or other settings there are kept unless --overwrite. A folder of videos: finished videos are\n"
      "skipped; --shard K/N for K = 1..N splits them (a Slurm array). See docs/video.md.");
  cmd->callback([args, &run] { run = [args] { return run_track(*args); }; });
}

}  // namespace sam3::cli
