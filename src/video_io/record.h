// The partial run's record: the results written so far as JSON lines (the JSON sink keeps
// them), read back when a run resumes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sam3/video.h"
#include "video_io/partial_sink.h"

namespace sam3::video_io {

inline constexpr const char* kTracksFile = "tracks.json";
inline constexpr const char* kRecordFile = "frames.jsonl";

// The JSON sink: always there (it is the record); writes tracks.json only when `final_file`.
std::unique_ptr<PartialSink> make_json_sink(const SinkContext& context, bool final_file);

// The last `count` lines of a record cut to `bytes`, oldest first (a few kilobytes each: masks
// stay RLE until a line is parsed).
std::vector<std::string> read_recent_lines(const std::filesystem::path& record, std::int64_t bytes, int count);
// One line as a result, masks decoded; kIo naming `record` if it is damaged.
VideoFrameResult parse_result_line(const std::string& line, const std::filesystem::path& record);

// fsync of a whole file (kIo on failure).
void sync_file(const std::filesystem::path& path);

}  // namespace sam3::video_io
