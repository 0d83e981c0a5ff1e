// `sam3 track FOLDER_OF_VIDEOS`: every video file of a folder into a sub-folder of its own,
// optionally one shard of them (a Slurm array), skipping videos already finished from the same
// file with the same settings in the formats asked (VideoOutputs::finished); any other is
// tracked again. A video that fails is reported and the others go on.
#pragma once

#include <filesystem>

#include "track_video.h"

namespace sam3::cli {

// Share K of N (1-based) of the folder's videos by `sam3 label --shard`'s hash of the file
// name. Returns kOk, kFailure when a video failed, 130 when interrupted (job.tracker.stop).
int track_videos(const std::filesystem::path& folder, const std::filesystem::path& out, const TrackJob& job, int shard, int shards);

}  // namespace sam3::cli
