// The partial run's record: the results written so far as JSON lines (the JSON sink keeps
// them), read back when a run resumes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "sam3/video.h"
#include "video_io/partial_sink.h"

namespace sam3::video_io {

inline constexpr const char* kTracksFile = "tracks.json";
inline constexpr const char* kRecordFile = "frames.jsonl";

// The JSON sink: always there (it is the record); writes tracks.json only when `final_file`.
std::unique_ptr<PartialSink> make_json_sink(const SinkContext& context, bool final_file);

// The last `count` results of a record cut to `bytes`, masks decoded, oldest first.
std::vector<VideoFrameResult> read_recent_results(const std::filesystem::path& record, std::int64_t bytes, int count);

// fsync of a whole file (kIo on failure).
void sync_file(const std::filesystem::path& path);

}  // namespace sam3::video_io
