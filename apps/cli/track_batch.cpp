#include "track_batch.h"

#include <cstdio>
#include <map>

#include "cli_common.h"
#include "sam3/error.h"
#include "sam3/labeler.h"
#include "sam3/output_folder.h"

namespace sam3::cli {
namespace fs = std::filesystem;

int track_videos(const fs::path& folder, const fs::path& out, const TrackJob& job, int shard, int shards) {
  std::vector<LabelInput> inputs;
  std::map<std::string, std::string> by_stem;  // sub-folder -> video, to refuse two videos in one folder
  for (const auto& video : list_video_files(folder)) {
    const auto stem = safe_file_name(video.stem().string(), "video");
    const auto [it, fresh] = by_stem.emplace(stem, video.filename().string());
    if (!fresh) {
      throw Error(ErrorCode::kInvalidArgument,
                  it->second + " and " + video.filename().string() + " would both write " + (out / stem).string() + ": rename one of them");
    }
    inputs.push_back({video, video.filename().string()});
  }
  const auto mine = shard_label_inputs(inputs, shard, shards);
  int tracked = 0, done = 0, failed = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const auto& video = mine[i].path;
    const fs::path target = out / safe_file_name(video.stem().string(), "video");
    std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, mine.size(), mine[i].name.c_str());
    try {
      if (already_tracked(video, target, job)) {
        ++done;
        continue;
      }
      track_video(video, target, job).print(mine[i].name, target);
      ++tracked;
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kCancelled) {
        std::printf("%zu videos: %d tracked, %d already done, %d failed, interrupted -> %s\n", mine.size(), tracked, done, failed,
                    out.c_str());
        return error_traits(ErrorCode::kCancelled).exit_code;
      }
      // Most messages start with the video's path already: it is not named twice.
      const std::string what = e.what();
      const bool named = what.rfind(video.string(), 0) == 0;
      std::fprintf(stderr, "%s%s\n", named ? "" : (mine[i].name + ": ").c_str(), what.c_str());
      ++failed;
    }
  }
  std::printf("%zu video%s%s: %d tracked, %d already done, %d failed -> %s\n", mine.size(), mine.size() == 1 ? "" : "s",
              shards > 1 ? (" (shard " + std::to_string(shard) + "/" + std::to_string(shards) + ")").c_str() : "", tracked, done, failed,
              out.c_str());
  return failed ? kFailure : kOk;
}

}  // namespace sam3::cli
