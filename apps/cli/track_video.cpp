#include "track_video.h"

#include <algorithm>
#include <deque>

#include "progress_bar.h"
#include "sam3/error.h"

namespace sam3::cli {

std::string TrackSummary::resumed() const {
  if (resumed_after < 0) return "";
  return " (resumed after frame " + std::to_string(resumed_after) + ", tracked again from frame " + std::to_string(restarted_at) + ")";
}

TrackSummary track_video(const std::filesystem::path& video, const std::filesystem::path& out, const TrackJob& job) {
  // Bad prompts or options fail here, before the outputs touch a partial run left in `out`.
  VideoTracker tracker(job.model, job.prompts, job.tracker);
  auto source = open_frame_source(video, job.source);
  VideoOutputs outputs(out, source->info(), job.outputs);
  TrackSummary summary;
  const ResumePoint& from = outputs.resume_point();
  if (from.committed_frames > 0) {
    summary.resumed_after = from.last_committed_index;
    auto options = job.source;
    options.start_index = from.restart_index;
    for (const auto& o : job.prompts.objects) options.start_index = std::min(options.start_index, o.frame);
    source = open_frame_source(video, options);
    summary.restarted_at = options.start_index;
  }

  FrameProgress progress(source->info().name);
  const std::int64_t total = source->info().frame_count;
  std::deque<VideoFrame> held;  // frames whose results the hot-start delay still holds (the overlay needs pixels)
  auto deliver = [&](const std::vector<VideoFrameResult>& results) {
    for (const auto& r : results) {
      while (!held.empty() && held.front().index < r.index) held.pop_front();
      if (held.empty()) throw Error(ErrorCode::kRuntime, "a result came for frame " + std::to_string(r.index) + ", which was not pushed");
      outputs.write(held.front(), r);
      held.pop_front();
      progress.update(++summary.frames, total);
    }
  };
  while (auto frame = source->next()) {
    held.push_back(std::move(*frame));
    deliver(tracker.push(held.back()));
  }
  deliver(tracker.finish());
  outputs.finish();
  progress.finish();
  return summary;
}

}  // namespace sam3::cli
