#include "track_video.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <new>

#include "progress_bar.h"
#include "sam3/error.h"
#include "sam3/video_memory.h"

namespace sam3::cli {

namespace fs = std::filesystem;

std::string TrackSummary::resumed() const {
  if (resumed_after < 0) return "";
  if (finished_only) return " (every frame was tracked by an earlier run; its outputs finished now)";
  return " (resumed after frame " + std::to_string(resumed_after) + ", tracked again from frame " + std::to_string(restarted_at) + ")";
}

void TrackSummary::print(const std::string& video, const fs::path& out) const {
  std::printf("%s: %lld frame%s%s -> %s\n", video.c_str(), static_cast<long long>(frames), frames == 1 ? "" : "s", resumed().c_str(),
              out.c_str());
  if (unconfirmed > 0) {
    std::fprintf(stderr,
                 "%s: %d object%s found on the last frames %s never confirmed (confirmation needs --confirmation frames in a row, "
                 "3 by default) and %s not in the results; --confirmation 0 keeps %s\n",
                 video.c_str(), unconfirmed, unconfirmed == 1 ? "" : "s", unconfirmed == 1 ? "was" : "were",
                 unconfirmed == 1 ? "is" : "are", unconfirmed == 1 ? "it" : "them");
  }
}

VideoOutputOptions outputs_for(const fs::path& video, const TrackJob& job) {
  auto outputs = job.outputs;
  outputs.source_json = video_source_identity(video);
  return outputs;
}

bool already_tracked(const fs::path& video, const fs::path& out, const TrackJob& job) {
  return VideoOutputs::finished(out, outputs_for(video, job));
}

namespace {

TrackSummary track_video_or_throw(const fs::path& video, const fs::path& out, const TrackJob& job) {
  // Bad prompts or options fail here, before the outputs touch a partial run left in `out`.
  VideoTracker tracker(job.model, job.prompts, job.tracker);
  auto source = open_frame_source(video, job.source);
  std::vector<std::int64_t> frames;
  for (const auto& o : job.prompts.objects) frames.push_back(o.frame);
  check_prompt_frames(video, source->info(), job.source.every, frames);
  tracker.check_prompt_places(source->info().width, source->info().height);
  const auto& formats = job.outputs.formats;
  const bool hold_pixels = std::find(formats.begin(), formats.end(), VideoOutputFormat::kOverlay) != formats.end();
  check_video_tracking_memory(source->info(), job.tracker.hotstart_delay, hold_pixels);
  VideoOutputs outputs(out, source->info(), outputs_for(video, job));
  TrackSummary summary;
  summary.name = source->info().name;
  const ResumePoint& from = outputs.resume_point();
  if (from.committed_frames > 0) summary.resumed_after = from.last_committed_index;
  if (from.complete) {  // an earlier run wrote every frame and its finish failed: only finish
    summary.finished_only = true;
    summary.frames = from.committed_frames;
    outputs.finish();
    return summary;
  }
  if (from.committed_frames > 0) {
    auto options = job.source;
    options.start_index = from.restart_index;
    for (const auto& o : job.prompts.objects) options.start_index = std::min(options.start_index, o.frame);
    source = open_frame_source(video, options);
    summary.restarted_at = options.start_index;
  }

  FrameProgress progress(source->info().name);
  // An estimated count (Matroska's duration times its rate: 358 for 30 frames of a variable
  // rate) would give a wrong total and time left: frames done and the rate only.
  const std::int64_t total = source->info().frame_count_exact ? source->info().frame_count : 0;
  // Frames whose results the hot-start delay still holds: their pixels only when an output
  // needs them (the overlay), else their index and time.
  std::deque<VideoFrame> held;
  auto deliver = [&](const std::vector<VideoFrameResult>& results) {
    for (const auto& r : results) {
      while (!held.empty() && held.front().index < r.index) held.pop_front();
      if (held.empty()) throw Error(ErrorCode::kRuntime, "a result came for frame " + std::to_string(r.index) + ", which was not pushed");
      outputs.write(held.front(), r);
      held.pop_front();
      progress.update(++summary.frames, total);
    }
  };
  std::int64_t at = -1;  // the frame being tracked, for a message
  try {
    while (auto frame = source->next()) {
      at = frame->index;
      const auto results = tracker.push(*frame);
      if (!hold_pixels) frame->image = Image{};
      held.push_back(std::move(*frame));
      deliver(results);
    }
    deliver(tracker.finish());
  } catch (const std::bad_alloc&) {
    const auto& info = source->info();
    throw Error(ErrorCode::kImageTooLarge,
                video.string() + ": out of memory while tracking frame " + std::to_string(at) + " (frames of " +
                    std::to_string(info.width) + "x" + std::to_string(info.height) + "; the frames before it are kept)" +
                    "; scale the video down (ffmpeg -i IN -vf scale=1920:-2 OUT.mp4)" +
                    (hold_pixels ? ", or leave overlay out of the formats" : "") + ", or track fewer objects (--max-objects)");
  }
  outputs.finish();
  progress.finish();
  summary.unconfirmed = tracker.stats().unconfirmed_objects;
  return summary;
}

}  // namespace

TrackSummary track_video(const fs::path& video, const fs::path& out, const TrackJob& job) {
  try {
    return track_video_or_throw(video, out, job);
  } catch (const std::bad_alloc&) {  // opening the video, the outputs, or finishing them
    throw Error(ErrorCode::kImageTooLarge, video.string() + ": out of memory (its frames are too large for the memory " +
                                               "left); scale the video down (ffmpeg -i IN -vf scale=1920:-2 OUT.mp4)");
  }
}

}  // namespace sam3::cli
