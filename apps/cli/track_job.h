// What `sam3 track` runs, built from its arguments: the prompts parsed, the model loaded, the
// outputs' labels and settings (by which a resumed or an already finished video is recognised).
// `sam3 track` and `sam3 label --video` (a folder of videos, sharded) build it the same way, so
// that either command finishes or skips what the other started with the same settings.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.h"
#include "model_resolver.h"
#include "track_video.h"

namespace sam3::cli {

// sam3 track's command line (see track_command.cpp for what each option means).
struct TrackArgs {
  ModelSelection models;
  std::string video, out;
  std::string formats = "json,davis";
  std::string overlay_encoder = "auto";
  int checkpoint_every = 25;
  bool restart = false;
  bool overwrite = false;  // replace a finished run of another video or settings in --out
  std::string shard = "1/1";
  std::vector<std::string> prompts, points, boxes;
  int every = 1;
  double fps = 0;
  int threads = 0;
  VideoTrackerOptions options;
};

// Throws kInvalidArgument for a malformed --point/--box or --format before the model loads.
TrackJob make_track_job(const TrackArgs& args, const std::atomic<bool>* stop);

// The command line's own mistakes (a malformed --shard, --format, --point or --box, a number
// that is NaN): the message, or "" when there is none. Reported as usage errors (exit 2),
// before the model loads.
std::string track_usage_error(const TrackArgs& args);

// `input` is a folder of frames (a folder with no video file in it): --fps applies to it only.
bool frames_folder(const std::string& input);

// "K/N" (1 <= K <= N) -> {K, N}; throws kInvalidArgument naming the text.
std::pair<int, int> parse_track_shard(const std::string& shard);

}  // namespace sam3::cli
