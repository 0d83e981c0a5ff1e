// VideoOutputs: every format of one video's results, checkpoints, and resuming a partial run.
#include "sam3/video_outputs.h"

#include <algorithm>
#include <fstream>
#include <optional>

#include "sam3/error.h"
#include "sam3/files.h"
#include "sam3/log.h"
#include "sam3/output_folder.h"
#include "video_io/partial_sink.h"
#include "video_io/record.h"
#include "video_io/resume_ids.h"

namespace sam3 {

namespace fs = std::filesystem;
using video_io::PartialSink;

namespace {

constexpr const char* kPartialEntry = "sam3-video.partial";
// Every name a format's sink can write (their entries()), this run's formats or not.
constexpr const char* kEveryFinalEntry[] = {"tracks.json", "davis", "mots.txt", "mots", "overlay.mp4", "overlay"};
constexpr const char* kProgressFile = "progress.json";
constexpr int kProgressVersion = 1;

nlohmann::json parse_json_option(const std::string& text, const char* what) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorCode::kInvalidArgument, std::string(what) + " is not JSON: " + text.substr(0, 80));
  return j;
}

nlohmann::json read_progress(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json(nullptr);
}

struct NamedSink {
  std::string name;  // its folder in the partial run
  std::unique_ptr<PartialSink> sink;
};

}  // namespace

const char* video_output_format_name(VideoOutputFormat format) {
  switch (format) {
    case VideoOutputFormat::kJson: return "json";
    case VideoOutputFormat::kDavis: return "davis";
    case VideoOutputFormat::kMots: return "mots";
    case VideoOutputFormat::kOverlay: return "overlay";
  }
  return "json";
}

VideoOutputFormat parse_video_output_format(const std::string& name) {
  for (auto f : {VideoOutputFormat::kJson, VideoOutputFormat::kDavis, VideoOutputFormat::kMots, VideoOutputFormat::kOverlay}) {
    if (name == video_output_format_name(f)) return f;
  }
  throw Error(ErrorCode::kInvalidArgument, "unknown video output format '" + name + "'; choose json, davis, mots or overlay");
}

struct VideoOutputs::State {
  VideoOutputOptions options;
  video_io::SinkContext context;
  std::unique_ptr<OutputFolderUpdate> update;
  fs::path work;
  std::vector<NamedSink> sinks;  // the record (json) first
  ResumePoint resume;
  std::optional<video_io::ResumeIds> ids;
  nlohmann::json identity;  // what a resumed run must share with this one
  std::int64_t committed = 0, last_index = -1, last_seen = -1;
  int max_id = 0, since_checkpoint = 0;
  bool broken = false, finished = false;

  void checkpoint(bool finishing = false) {
    nlohmann::json states = nlohmann::json::object();
    for (auto& s : sinks) states[s.name] = s.sink->checkpoint();
    nlohmann::json progress = identity;
    progress["committed_frames"] = committed;
    progress["last_index"] = last_index;
    progress["max_id"] = max_id;
    progress["sinks"] = std::move(states);
    if (finishing) progress["finishing"] = true;  // files are being moved: not resumable
    write_file_atomic(work / kProgressFile, progress.dump(1) + "\n");
    since_checkpoint = 0;
  }
};

VideoOutputs::VideoOutputs(const fs::path& folder, const VideoInfo& info, VideoOutputOptions options)
    : state_(std::make_unique<State>()) {
  auto& s = *state_;
  if (options.checkpoint_every < 1) throw Error(ErrorCode::kInvalidArgument, "checkpoint_every must be at least 1");
  if (options.resume_window < 0) throw Error(ErrorCode::kInvalidArgument, "resume_window must not be negative");
  const auto& enc = options.overlay_encoder;
  if (enc != "auto" && enc != "h264" && enc != "mpeg4" && enc != "png") {
    throw Error(ErrorCode::kInvalidArgument, "unknown overlay encoder '" + enc + "'; choose auto, h264, mpeg4 or png");
  }
  if (info.width <= 0 || info.height <= 0) throw Error(ErrorCode::kInvalidArgument, "the video's size is unknown");
  if (options.labels.empty()) throw Error(ErrorCode::kInvalidArgument, "labels: give a name for each prompt");
  for (auto& label : options.labels) {
    for (auto& c : label) {
      if (c == '\n' || c == '\r') c = ' ';  // one line in labels.txt
    }
  }
  std::sort(options.formats.begin(), options.formats.end());
  options.formats.erase(std::unique(options.formats.begin(), options.formats.end()), options.formats.end());
  s.context = {info, options.labels, parse_json_option(options.model_json, "model_json"),
               parse_json_option(options.settings_json, "settings_json"), options.overlay_encoder};
  s.options = options;

  nlohmann::json formats = nlohmann::json::array();
  for (auto f : options.formats) formats.push_back(video_output_format_name(f));
  s.identity = {{"version", kProgressVersion},
                {"video", {{"name", info.name}, {"width", info.width}, {"height", info.height}}},
                {"formats", formats},
                {"labels", options.labels},
                {"overlay_encoder", options.overlay_encoder},
                {"settings", s.context.settings}};

  s.update = std::make_unique<OutputFolderUpdate>(folder);
  s.work = s.update->claim(kPartialEntry);
  nlohmann::json saved = read_progress(s.work / kProgressFile);
  if (!saved.is_null()) {
    bool same = true;
    for (const auto& [key, value] : s.identity.items()) same = same && saved.contains(key) && saved[key] == value;
    if (saved.value("finishing", false)) {  // a finish() cut short may have moved some partial files
      log(LogLevel::kWarning, (folder / kPartialEntry).string() + ": a run stopped while finishing; starting over");
      same = false;
    }
    if (!options.resume || !same) {
      if (options.resume) {
        log(LogLevel::kWarning, (folder / kPartialEntry).string() +
                                    ": a partial run of another video or other settings; starting over");
      }
      saved = nullptr;
    }
  }
  if (saved.is_null()) {
    std::error_code ec;
    fs::remove_all(s.work, ec);
  } else {
    s.committed = saved.value("committed_frames", std::int64_t{0});
    s.last_index = saved.value("last_index", std::int64_t{-1});
    s.max_id = saved.value("max_id", 0);
    if (saved.contains("frame_count")) s.context.info.frame_count = saved["frame_count"].get<std::int64_t>();
  }
  s.identity["frame_count"] = s.context.info.frame_count;  // the first run's count (a resumed source counts fewer)
  s.identity["fps"] = s.context.info.fps;
  fs::create_directories(s.work);

  const bool final_json = std::find(options.formats.begin(), options.formats.end(), VideoOutputFormat::kJson) != options.formats.end();
  s.sinks.push_back({"json", video_io::make_json_sink(s.context, final_json)});
  for (auto f : options.formats) {
    if (f == VideoOutputFormat::kDavis) s.sinks.push_back({"davis", video_io::make_davis_sink(s.context)});
    if (f == VideoOutputFormat::kMots) s.sinks.push_back({"mots", video_io::make_mots_sink(s.context)});
    if (f == VideoOutputFormat::kOverlay) s.sinks.push_back({"overlay", video_io::make_overlay_sink(s.context)});
  }
  for (auto& sink : s.sinks) {
    for (const auto& entry : sink.sink->entries()) s.update->stage(entry);  // a user's file of that name: kIo now
  }
  auto open_sinks = [&](const nlohmann::json& from) {
    for (auto& sink : s.sinks) {
      const nlohmann::json* state = nullptr;
      if (!from.is_null() && from.contains("sinks") && from["sinks"].contains(sink.name)) state = &from["sinks"][sink.name];
      sink.sink->open(s.work / sink.name, state, s.last_index);
    }
    s.resume = ResumePoint{};
    s.resume.committed_frames = s.committed;
    s.resume.last_committed_index = s.last_index;
    if (s.committed > 0) {
      const std::int64_t bytes = from["sinks"]["json"].value("bytes", std::int64_t{0});
      const fs::path record = s.work / "json" / video_io::kRecordFile;
      auto lines = video_io::read_recent_lines(record, bytes, std::max(1, options.resume_window));
      if (lines.empty()) throw Error(ErrorCode::kIo, record.string() + ": no frame, though its checkpoint has some");
      s.resume.last_result = video_io::parse_result_line(lines.back(), record);
      s.resume.restart_index = options.resume_window == 0 ? s.last_index + 1
                                                          : video_io::parse_result_line(lines.front(), record).index;
      if (options.resume_window == 0) lines.clear();
      s.ids.emplace(std::move(lines), record, s.max_id);
    }
  };
  try {
    open_sinks(saved);
  } catch (const Error& e) {
    if (saved.is_null()) throw;
    // A partial run whose files do not match its checkpoint (a damaged disk, files edited):
    // its frames cannot be trusted, so the run starts over.
    log(LogLevel::kWarning, (folder / kPartialEntry).string() + ": cannot resume (" + e.what() + "); starting over");
    s.committed = 0;
    s.last_index = -1;
    s.max_id = 0;
    s.ids.reset();
    std::error_code ec;
    fs::remove_all(s.work, ec);
    fs::create_directories(s.work);
    open_sinks(nullptr);
  }
  s.checkpoint();  // a fresh run is resumable from its first frame on
}

VideoOutputs::~VideoOutputs() {
  if (!state_ || state_->finished || state_->broken) return;
  try {
    if (state_->committed == 0) {
      // Nothing written (refused on its first frame, stopped at once): nothing to resume, so
      // nothing is left; a folder this run created goes too (OutputFolderUpdate's destructor).
      std::error_code ec;
      fs::remove_all(state_->work, ec);
      state_->update->release(kPartialEntry);
      return;
    }
    state_->checkpoint();  // what was written so far survives an error elsewhere (the tracker's)
  } catch (...) {
  }
}

const ResumePoint& VideoOutputs::resume_point() const { return state_->resume; }

void VideoOutputs::write(const VideoFrame& frame, const VideoFrameResult& result) {
  auto& s = *state_;
  if (s.finished) throw Error(ErrorCode::kInvalidArgument, "a result written after finish()");
  const auto& info = s.context.info;
  if (result.index != frame.index) {
    throw Error(ErrorCode::kInvalidArgument, "the result of frame " + std::to_string(result.index) +
                                                 " came with frame " + std::to_string(frame.index));
  }
  if (result.index <= s.last_seen) {
    throw Error(ErrorCode::kInvalidArgument, "results must come in frame order: frame " + std::to_string(result.index) +
                                                 " after frame " + std::to_string(s.last_seen));
  }
  if (frame.image.width != info.width || frame.image.height != info.height) {
    throw Error(ErrorCode::kInvalidArgument, "frame " + std::to_string(frame.index) + " is not at the video's size");
  }
  for (const auto& o : result.objects) {
    if (o.mask.width() != info.width || o.mask.height() != info.height) {
      throw Error(ErrorCode::kInvalidArgument, "object " + std::to_string(o.id) + " of frame " +
                                                   std::to_string(result.index) + " has a mask of another size than the video's");
    }
    if (o.id < 1 || o.id > 65535) {
      throw Error(ErrorCode::kInvalidArgument, "object ids go from 1 to 65535 (got " + std::to_string(o.id) + ")");
    }
    if (o.prompt < 0 || o.prompt >= static_cast<int>(s.options.labels.size())) {
      throw Error(ErrorCode::kInvalidArgument, "object " + std::to_string(o.id) + " comes from prompt " +
                                                   std::to_string(o.prompt) + ", which has no label (" +
                                                   std::to_string(s.options.labels.size()) + " labels given)");
    }
  }
  s.last_seen = result.index;
  if (result.index <= s.last_index) {  // already written by the interrupted run
    if (s.ids) s.ids->observe(result);
    return;
  }
  VideoFrameResult mapped = result;
  if (s.ids) {
    for (auto& o : mapped.objects) o.id = s.ids->map(o.id);
  }
  std::sort(mapped.objects.begin(), mapped.objects.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<std::uint16_t> labels(static_cast<size_t>(info.width) * info.height, 0);
  for (const auto& o : mapped.objects) {  // id order: on a shared pixel the larger id is on top
    if (o.id > 65535) throw Error(ErrorCode::kInvalidArgument, "more than 65535 objects in one video");
    const TileRect b = o.mask.bounds();
    for (int y = b.y0; y < b.y1; ++y) {
      const auto row = o.mask.row(y);
      std::uint16_t* line = &labels[static_cast<size_t>(y) * static_cast<size_t>(info.width) + static_cast<size_t>(b.x0)];
      for (size_t x = 0; x < row.size(); ++x) {
        if (row[x]) line[x] = static_cast<std::uint16_t>(o.id);
      }
    }
    s.max_id = std::max(s.max_id, o.id);
  }
  const video_io::FrameOutput out{frame, mapped, labels};
  try {
    for (auto& sink : s.sinks) sink.sink->write(out);
  } catch (...) {
    s.broken = true;  // the formats disagree on this frame: the next run resumes at the last checkpoint
    throw;
  }
  ++s.committed;
  s.last_index = result.index;
  if (++s.since_checkpoint >= s.options.checkpoint_every) s.checkpoint();
}

void VideoOutputs::finish() {
  auto& s = *state_;
  if (s.finished) return;
  if (s.broken) throw Error(ErrorCode::kIo, "a result could not be written; run again to resume from the last checkpoint");
  try {
    s.checkpoint(true);
    for (auto& sink : s.sinks) sink.sink->finish(*s.update);
    // What an earlier run in this folder wrote in formats this one does not: gone with the
    // swap, so that the folder never mixes two runs' outputs.
    for (const char* entry : kEveryFinalEntry) s.update->retire(entry);
    s.update->commit();
  } catch (...) {
    s.broken = true;  // partial files may have been moved: the next run starts from the saved checkpoint
    throw;
  }
  s.finished = true;
  std::error_code ec;
  fs::remove_all(s.work, ec);
}

}  // namespace sam3
