// One video through the tracker into its output folder, resumably: `sam3 track`'s loop over
// sam3/video_sources.h (frames in), sam3/video_tracker.h and sam3/video_outputs.h (files out).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "sam3/model.h"
#include "sam3/video_outputs.h"
#include "sam3/video_sources.h"
#include "sam3/video_tracker.h"

namespace sam3::cli {

struct TrackJob {
  std::shared_ptr<const Model> model;
  VideoPrompts prompts;
  VideoTrackerOptions tracker;  // its stop token ends the run (the partial outputs stay, resumable)
  FrameSourceOptions source;    // every, fps; start_index is set here on a resumed run
  VideoOutputOptions outputs;   // formats, labels, settings: a run with other settings starts over
};

struct TrackSummary {
  std::string name;                 // the video's, as its source names it (a folder's own name for "frames/")
  std::int64_t frames = 0;          // results the tracker gave (re-run ones included); finished_only: those written before
  std::int64_t resumed_after = -1;  // the last frame an interrupted run had written; -1: a fresh run
  std::int64_t restarted_at = 0;    // the first frame tracked (a resumed run tracks a window again)
  bool finished_only = false;       // an earlier run had tracked every frame; only its finish was left
  int unconfirmed = 0;              // objects found too near the end to be confirmed: not in the results

  // " (resumed after frame 18, tracked again from frame 3)", or "" for a fresh run.
  std::string resumed() const;
  // The summary line: "clip.mp4: 30 frames (resumed ...) -> OUT", and on stderr a note on
  // objects never confirmed.
  void print(const std::string& video, const std::filesystem::path& out) const;
};

// The outputs' options for `video`: the job's, with the video's source identity.
VideoOutputOptions outputs_for(const std::filesystem::path& video, const TrackJob& job);

// `out` holds a finished run of this very video file or folder (size, time, first bytes), with
// the job's settings, in at least its formats (VideoOutputs::finished): nothing left to do.
bool already_tracked(const std::filesystem::path& video, const std::filesystem::path& out, const TrackJob& job);

// Tracks `video` (a video file or a folder of frames) into `out`. On an interrupted run left in
// `out` (of the same source: video_source_identity), the frames are read again from
// VideoOutputs' restart point (or from the earliest clicked/boxed object's frame when that is
// earlier: the tracker needs the click's frame); one that had tracked every frame is only
// finished. Refused before the first frame: a click past a folder's last frame or a video
// file's declared one (VideoInfo::frame_count_exact), frames too
// large for the memory left (sam3/video_memory.h); running out of memory later is
// kImageTooLarge naming the video and frame. Frames are held for their delayed results only
// when an output needs their pixels (the overlay).
TrackSummary track_video(const std::filesystem::path& video, const std::filesystem::path& out, const TrackJob& job);

}  // namespace sam3::cli
