// VideoOutputs: every format of one video's results, checkpoints, and resuming a partial run.
#include "sam3/video_outputs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "core/json_integer.h"
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
constexpr const char* kRunRecord = "sam3-video.json";  // what a finished run was made from
// Every name a format's sink can write (their entries()), this run's formats or not.
constexpr const char* kEveryFinalEntry[] = {"tracks.json", "davis", "mots.txt", "mots", "overlay.mp4", "overlay", kRunRecord};
constexpr const char* kProgressFile = "progress.json";
constexpr int kProgressVersion = 2;  // 2: the source's identity, formats that may shrink, "complete"

nlohmann::json parse_json_option(const std::string& text, const char* what) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorCode::kInvalidArgument, std::string(what) + " is not JSON: " + text.substr(0, 80));
  return j;
}

nlohmann::json read_json_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json(nullptr);
}

struct NamedSink {
  std::string name;  // its folder in the partial run
  std::unique_ptr<PartialSink> sink;
};

// The first setting that differs, as "model.directory was \"models\", now \"/data/models\"" (a
// user who changed nothing on purpose sees what did: a path spelt otherwise, a flag).
std::string setting_difference(const nlohmann::json& was, const nlohmann::json& now, const std::string& at = "") {
  if (was.is_object() && now.is_object()) {
    for (const auto& [key, value] : now.items()) {
      const std::string name = at.empty() ? key : at + "." + key;
      if (!was.contains(key)) return name + " is new";
      if (was[key] != value) return setting_difference(was[key], value, name);
    }
    for (const auto& [key, value] : was.items()) {
      if (!now.contains(key)) return (at.empty() ? key : at + "." + key) + " is no longer set";
    }
    return "";
  }
  const auto shown = [](const nlohmann::json& v) {
    auto text = v.dump();
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
  };
  return (at.empty() ? std::string("they") : at) + " was " + shown(was) + ", now " + shown(now);
}

// Why a partial run (or a finished one) cannot be continued with `identity`, or "" when it can.
// Formats are compared apart: a run may drop formats, not add them.
std::string difference(const nlohmann::json& saved, const nlohmann::json& identity) {
  // Read back from disk: no accessor here may throw on a field of another type (value() would).
  if (!saved.is_object()) return "it is damaged";
  if (!saved.contains("version") || saved["version"] != kProgressVersion) return "it was made by another version of sam3";
  if (!saved.contains("video") || saved["video"] != identity["video"]) return "it is of another video (name or frame size)";
  if (!saved.contains("source") || saved["source"] != identity["source"]) {
    return "the video changed since (another file, or frames added, removed or rewritten)";
  }
  if (!saved.contains("labels") || saved["labels"] != identity["labels"]) return "it had other prompts";
  if (!saved.contains("settings") || saved["settings"] != identity["settings"]) {
    return "it had other settings (" + setting_difference(saved.value("settings", nlohmann::json::object()), identity["settings"]) + ")";
  }
  if (!saved.contains("overlay_encoder") || saved["overlay_encoder"] != identity["overlay_encoder"]) {
    return "it had another overlay encoder";
  }
  const auto had = saved.value("formats", nlohmann::json::array());
  for (const auto& f : identity["formats"]) {
    if (std::find(had.begin(), had.end(), f) == had.end()) return "it did not write " + f.get<std::string>();
  }
  return "";
}

// Labels as labels.txt holds them, one line each.
std::vector<std::string> one_line_labels(std::vector<std::string> labels) {
  for (auto& label : labels) {
    for (auto& c : label) {
      if (c == '\n' || c == '\r') c = ' ';
    }
  }
  return labels;
}

// The live VideoOutputs of this process, by folder: a second one on a folder is refused naming
// the first (the file lock cannot tell two writers of one process apart).
std::mutex g_writing_mutex;
std::set<fs::path> g_writing;

fs::path writer_key(const fs::path& folder) {
  std::error_code ec;
  auto key = fs::weakly_canonical(fs::absolute(folder, ec), ec);
  if (ec) key = folder;
  key = key.lexically_normal();
  return key.has_filename() ? key : key.parent_path();  // "out/" and "out" are one folder
}

}  // namespace

const char* video_output_format_name(VideoOutputFormat format) {
  switch (format) {
    case VideoOutputFormat::kJson:
      return "json";
    case VideoOutputFormat::kDavis:
      return "davis";
    case VideoOutputFormat::kMots:
      return "mots";
    case VideoOutputFormat::kOverlay:
      return "overlay";
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
  fs::path writing_key;  // in g_writing while this run lives
  std::unique_ptr<OutputFolderUpdate> update;
  fs::path work;
  std::vector<NamedSink> sinks;  // the record (json) first
  ResumePoint resume;
  std::optional<video_io::ResumeIds> ids;
  nlohmann::json identity;  // what a resumed run must share with this one
  std::int64_t committed = 0, last_index = -1, last_seen = -1;
  int max_id = 0, since_checkpoint = 0;
  bool needs_pixels = false, broken = false, finished = false;

  ~State() {
    if (writing_key.empty()) return;
    std::lock_guard lock(g_writing_mutex);
    g_writing.erase(writing_key);
  }

  void checkpoint(bool complete = false) {
    nlohmann::json states = nlohmann::json::object();
    for (auto& s : sinks) states[s.name] = s.sink->checkpoint();
    nlohmann::json progress = identity;
    progress["committed_frames"] = committed;
    progress["last_index"] = last_index;
    progress["max_id"] = max_id;
    progress["sinks"] = std::move(states);
    if (complete) progress["complete"] = true;  // every frame is written: a next run only finishes
    write_file_atomic(work / kProgressFile, progress.dump(1) + "\n");
    since_checkpoint = 0;
  }
};

VideoOutputs::VideoOutputs(const fs::path& folder, const VideoInfo& info, VideoOutputOptions options) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  // Everything that can be refused is refused before `folder` is touched.
  if (options.checkpoint_every < 1) throw Error(ErrorCode::kInvalidArgument, "checkpoint_every must be at least 1");
  if (options.resume_window < 0) throw Error(ErrorCode::kInvalidArgument, "resume_window must not be negative");
  const auto& enc = options.overlay_encoder;
  if (enc != "auto" && enc != "h264" && enc != "mpeg4" && enc != "png") {
    throw Error(ErrorCode::kInvalidArgument, "unknown overlay encoder '" + enc + "'; choose auto, h264, mpeg4 or png");
  }
  if (info.width <= 0 || info.height <= 0) throw Error(ErrorCode::kInvalidArgument, "the video's size is unknown");
  if (!std::isfinite(info.fps) || info.fps < 0) {
    throw Error(ErrorCode::kInvalidArgument, "the video's frame rate must be a finite number from 0 (0: unknown)");
  }
  if (info.frame_count < 0) throw Error(ErrorCode::kInvalidArgument, "the video's frame count must not be negative");
  if (options.labels.empty()) throw Error(ErrorCode::kInvalidArgument, "labels: give a name for each prompt");
  options.labels = one_line_labels(options.labels);
  std::sort(options.formats.begin(), options.formats.end());
  options.formats.erase(std::unique(options.formats.begin(), options.formats.end()), options.formats.end());
  s.context = {info, options.labels, parse_json_option(options.model_json, "model_json"),
               parse_json_option(options.settings_json, "settings_json"), options.overlay_encoder};
  const nlohmann::json source = parse_json_option(options.source_json, "source_json");
  s.options = options;

  const bool final_json = std::find(options.formats.begin(), options.formats.end(), VideoOutputFormat::kJson) != options.formats.end();
  s.sinks.push_back({"json", video_io::make_json_sink(s.context, final_json)});
  for (auto f : options.formats) {
    if (f == VideoOutputFormat::kDavis) s.sinks.push_back({"davis", video_io::make_davis_sink(s.context)});
    if (f == VideoOutputFormat::kMots) s.sinks.push_back({"mots", video_io::make_mots_sink(s.context)});
    if (f == VideoOutputFormat::kOverlay) {
      s.sinks.push_back({"overlay", video_io::make_overlay_sink(s.context)});
      s.needs_pixels = true;
    }
  }

  nlohmann::json formats = nlohmann::json::array();
  for (auto f : options.formats) formats.push_back(video_output_format_name(f));
  s.identity = {{"version", kProgressVersion},
                {"video", {{"name", info.name}, {"width", info.width}, {"height", info.height}}},
                {"source", source},
                {"formats", formats},
                {"labels", options.labels},
                {"overlay_encoder", options.overlay_encoder},
                {"settings", s.context.settings}};

  {
    const fs::path key = writer_key(folder);
    std::lock_guard lock(g_writing_mutex);
    if (!g_writing.insert(key).second) {
      throw Error(ErrorCode::kIo, folder.string() +
                                      ": another run of this process is writing there (a track(out=...) "
                                      "not run to its end: finish or close it first), or choose another folder");
    }
    s.writing_key = key;
  }
  s.update = std::make_unique<OutputFolderUpdate>(folder);
  // A user's file of an output's name is refused now, before a partial run is claimed or cleared.
  for (auto& sink : s.sinks) {
    for (const auto& entry : sink.sink->entries()) s.update->check(entry);
  }
  s.update->check(kRunRecord);
  s.work = s.update->claim(kPartialEntry);
  nlohmann::json saved = read_json_file(s.work / kProgressFile);
  if (!saved.is_null()) {
    const std::string why = options.resume ? difference(saved, s.identity) : "";
    if (!options.resume || !why.empty()) {
      if (options.resume) log(LogLevel::kWarning, (folder / kPartialEntry).string() + ": not resumed, " + why + "; starting over");
      saved = nullptr;
    }
  }
  // A checkpoint is read back from disk: a field of another type or out of range is a damaged
  // one, and the run starts over (a type error escaped as "unexpected failure" before).
  const auto integer_in = [&](const char* key, std::int64_t lo, std::int64_t hi) {
    if (!saved.contains(key)) return true;
    const auto& v = saved[key];
    return core::json_integer_in(v, lo, hi).has_value();
  };
  constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max() / 2;
  if (!saved.is_null() && (!integer_in("committed_frames", 0, kMaxCount) || !integer_in("last_index", -1, kMaxCount) ||
                           !integer_in("max_id", 0, std::numeric_limits<int>::max()) || !integer_in("frame_count", 0, kMaxCount) ||
                           (saved.contains("sinks") && !saved["sinks"].is_object()))) {
    log(LogLevel::kWarning, (folder / kPartialEntry).string() + ": a damaged checkpoint; starting over");
    saved = nullptr;
  }
  if (saved.is_null()) {
    std::error_code ec;
    fs::remove_all(s.work, ec);
  } else {
    s.committed = saved.value("committed_frames", std::int64_t{0});
    s.last_index = saved.value("last_index", std::int64_t{-1});
    s.max_id = saved.value("max_id", 0);
    if (saved.contains("frame_count")) s.context.info.frame_count = saved["frame_count"].get<std::int64_t>();
    // Formats this run no longer writes: their partial frames go.
    const auto saved_sinks = saved.value("sinks", nlohmann::json::object());
    for (const char* name : {"json", "davis", "mots", "overlay"}) {  // only sam3's own folders, never a name read from disk
      if (!saved_sinks.is_object() || !saved_sinks.contains(name)) continue;
      const bool kept = std::any_of(s.sinks.begin(), s.sinks.end(), [&](const NamedSink& k) { return k.name == name; });
      std::error_code ec;
      if (!kept) fs::remove_all(s.work / name, ec);
    }
  }
  s.identity["frame_count"] = s.context.info.frame_count;  // the first run's count (a resumed source counts fewer)
  s.identity["fps"] = s.context.info.fps;
  fs::create_directories(s.work);

  for (auto& sink : s.sinks) {
    for (const auto& entry : sink.sink->entries()) s.update->stage(entry);  // a user's file of that name: kIo now
  }
  s.update->stage(kRunRecord);
  auto open_sinks = [&](const nlohmann::json& from) {
    for (auto& sink : s.sinks) {
      const nlohmann::json* state = nullptr;
      if (!from.is_null() && from.contains("sinks") && from["sinks"].contains(sink.name)) state = &from["sinks"][sink.name];
      sink.sink->open(s.work / sink.name, state, s.last_index);
    }
    s.resume = ResumePoint{};
    s.resume.committed_frames = s.committed;
    s.resume.last_committed_index = s.last_index;
    s.resume.complete = !from.is_null() && from.value("complete", false);
    if (s.committed > 0) {
      const std::int64_t bytes = from["sinks"]["json"].value("bytes", std::int64_t{0});
      const fs::path record = s.work / "json" / video_io::kRecordFile;
      auto lines = video_io::read_recent_lines(record, bytes, std::max(1, options.resume_window));
      if (lines.empty()) throw Error(ErrorCode::kIo, record.string() + ": no frame, though its checkpoint has some");
      s.resume.last_result = video_io::parse_result_line(lines.back(), record);
      s.resume.restart_index =
          options.resume_window == 0 || s.resume.complete ? s.last_index + 1 : video_io::parse_result_line(lines.front(), record).index;
      if (options.resume_window == 0 || s.resume.complete) lines.clear();
      s.ids.emplace(std::move(lines), record, s.max_id);
    }
  };
  try {
    try {
      open_sinks(saved);
    } catch (const nlohmann::json::exception& e) {  // a sink's saved state of another type
      throw Error(ErrorCode::kIo, std::string("a damaged checkpoint (") + e.what() + ")");
    }
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
  s.checkpoint(s.resume.complete);  // a fresh run is resumable from its first frame on
}

VideoOutputs::~VideoOutputs() {
  if (!state_ || state_->finished || state_->broken || !state_->update) return;
  try {
    if (state_->committed == 0) {
      // Nothing written (refused on its first frame, stopped at once): nothing to resume, so
      // nothing is left; a folder this run created goes too (OutputFolderUpdate's destructor).
      std::error_code ec;
      fs::remove_all(state_->work, ec);
      state_->update->release(kPartialEntry);
      return;
    }
    state_->checkpoint(state_->resume.complete);  // what was written so far survives an error elsewhere (the tracker's)
  } catch (...) {
  }
}

const ResumePoint& VideoOutputs::resume_point() const { return state_->resume; }

bool VideoOutputs::needs_pixels() const { return state_->needs_pixels; }

void VideoOutputs::write(const VideoFrame& frame, const VideoFrameResult& result) { write_frame(frame, result); }

std::optional<VideoFrameResult> VideoOutputs::write_frame(const VideoFrame& frame, const VideoFrameResult& result) {
  auto& s = *state_;
  if (s.finished) throw Error(ErrorCode::kInvalidArgument, "a result written after finish()");
  if (s.broken) throw Error(ErrorCode::kIo, "a result could not be written; run again to resume from the last checkpoint");
  const auto& info = s.context.info;
  if (result.index != frame.index) {
    throw Error(ErrorCode::kInvalidArgument,
                "the result of frame " + std::to_string(result.index) + " came with frame " + std::to_string(frame.index));
  }
  if (result.index <= s.last_seen) {
    throw Error(ErrorCode::kInvalidArgument,
                "results must come in frame order: frame " + std::to_string(result.index) + " after frame " + std::to_string(s.last_seen));
  }
  const bool pixelless = frame.image.width == 0 && frame.image.height == 0 && frame.image.rgb.empty();
  if (pixelless && s.needs_pixels) {
    throw Error(ErrorCode::kInvalidArgument, "frame " + std::to_string(frame.index) + " came without its pixels, which the overlay needs");
  }
  if (!pixelless && (frame.image.width != info.width || frame.image.height != info.height)) {
    throw Error(ErrorCode::kInvalidArgument, "frame " + std::to_string(frame.index) + " is not at the video's size");
  }
  for (const auto& o : result.objects) {
    if (o.mask.width() != info.width || o.mask.height() != info.height) {
      throw Error(ErrorCode::kInvalidArgument, "object " + std::to_string(o.id) + " of frame " + std::to_string(result.index) +
                                                   " has a mask of another size than the video's");
    }
    if (o.id < 1 || o.id > 65535) {
      throw Error(ErrorCode::kInvalidArgument, "object ids go from 1 to 65535 (got " + std::to_string(o.id) + ")");
    }
    if (o.prompt < 0 || o.prompt >= static_cast<int>(s.options.labels.size())) {
      throw Error(ErrorCode::kInvalidArgument, "object " + std::to_string(o.id) + " comes from prompt " + std::to_string(o.prompt) +
                                                   ", which has no label (" + std::to_string(s.options.labels.size()) + " labels given)");
    }
  }
  if (result.index <= s.last_index) {  // already written by the interrupted run
    s.last_seen = result.index;
    if (s.ids) s.ids->observe(result);
    return std::nullopt;
  }
  VideoFrameResult mapped = result;
  if (s.ids) {
    for (auto& o : mapped.objects) o.id = s.ids->map(o.id);
  }
  std::sort(mapped.objects.begin(), mapped.objects.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<std::uint16_t> labels(static_cast<size_t>(info.width) * info.height, 0);
  int max_id = s.max_id;
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
    max_id = std::max(max_id, o.id);
  }
  const video_io::FrameOutput out{frame, mapped, labels};
  for (auto& sink : s.sinks) sink.sink->check(out);  // a format's limit: no format has written this frame
  s.last_seen = result.index;
  try {
    for (auto& sink : s.sinks) sink.sink->write(out);
  } catch (...) {
    s.broken = true;  // the formats disagree on this frame: the next run resumes at the last checkpoint
    throw;
  }
  s.max_id = max_id;
  ++s.committed;
  s.last_index = result.index;
  if (++s.since_checkpoint >= s.options.checkpoint_every) {
    try {
      s.checkpoint();
    } catch (...) {
      s.broken = true;  // a flush failed (a full disk, a file-size limit): the last good checkpoint stays the one to resume
      throw;
    }
  }
  return mapped;
}

void VideoOutputs::finish() {
  auto& s = *state_;
  if (s.finished) return;
  if (s.broken) throw Error(ErrorCode::kIo, "a result could not be written; run again to resume from the last checkpoint");
  s.checkpoint(true);  // from here a failure leaves a partial run that the next run only finishes
  s.resume.complete = true;
  try {
    for (auto& sink : s.sinks) sink.sink->finish(*s.update);
    nlohmann::json record = s.identity;
    record.erase("version");
    record["format"] = "sam3-video-run";
    record["version"] = 1;
    record["frames"] = s.committed;
    write_file_atomic(s.update->stage(kRunRecord), record.dump(1) + "\n");
    // What an earlier run in this folder wrote in formats this one does not: gone with the
    // swap, so that the folder never mixes two runs' outputs.
    for (const char* entry : kEveryFinalEntry) s.update->retire(entry);
    s.update->commit();
  } catch (const Error& e) {
    s.broken = true;  // the partial run is whole and marked complete: the next run finishes it
    throw Error(e.code(), std::string(e.what()) + "; every frame is kept: run again to finish without tracking again");
  } catch (...) {
    s.broken = true;
    throw;
  }
  s.finished = true;
  std::error_code ec;
  fs::remove_all(s.work, ec);
}

std::string VideoOutputs::replaced_results(const fs::path& folder, const std::string& video_name, const VideoOutputOptions& options) {
  const nlohmann::json record = read_json_file(folder / kRunRecord);
  if (record.is_null() || record.value("format", "") != "sam3-video-run") return "";
  const nlohmann::json source = parse_json_option(options.source_json, "source_json");
  const nlohmann::json settings = parse_json_option(options.settings_json, "settings_json");
  std::string name = "another video";
  if (record.contains("video") && record["video"].is_object() && record["video"].contains("name") && record["video"]["name"].is_string()) {
    name = record["video"]["name"].get<std::string>();
  }
  const std::string results = folder.string() + " holds the finished results of " + name;
  if (!record.contains("source") || record["source"] != source) {
    return results + (name == video_name ? " as it was before it changed" : " (another video)");
  }
  if (!record.contains("labels") || record["labels"] != nlohmann::json(one_line_labels(options.labels))) {
    return results + " with other prompts (" +
           setting_difference(record.value("labels", nlohmann::json::array()), one_line_labels(options.labels), "the list of labels") + ")";
  }
  if (!record.contains("settings") || record["settings"] != settings) {
    return results + " with other settings (" + setting_difference(record.value("settings", nlohmann::json::object()), settings) + ")";
  }
  return "";
}

bool VideoOutputs::finished(const fs::path& folder, const VideoOutputOptions& options) {
  std::error_code ec;
  if (fs::exists(folder / kPartialEntry, ec)) return false;
  const nlohmann::json record = read_json_file(folder / kRunRecord);
  if (record.is_null() || record.value("format", "") != "sam3-video-run" || record.value("version", 0) != 1) return false;
  try {
    if (record.at("source") != nlohmann::json::parse(options.source_json) || record.at("source").is_null()) return false;
    if (record.at("settings") != nlohmann::json::parse(options.settings_json)) return false;
    if (record.at("labels") != nlohmann::json(one_line_labels(options.labels))) return false;
    if (record.at("overlay_encoder") != options.overlay_encoder) return false;
    const auto& had = record.at("formats");
    std::map<std::string, bool> done;
    for (const auto& f : had) done[f.get<std::string>()] = true;
    for (auto f : options.formats) {
      if (!done[video_output_format_name(f)]) return false;
    }
  } catch (const std::exception&) {
    return false;  // unreadable: track it again
  }
  // Each asked format's files must still be there (a folder removed by hand is written again).
  for (auto f : options.formats) {
    const bool there = f == VideoOutputFormat::kJson    ? fs::is_regular_file(folder / "tracks.json", ec)
                       : f == VideoOutputFormat::kDavis ? fs::is_directory(folder / "davis", ec)
                       : f == VideoOutputFormat::kMots
                           ? fs::is_regular_file(folder / "mots.txt", ec) && fs::is_directory(folder / "mots", ec)
                           : fs::exists(folder / "overlay.mp4", ec) || fs::is_directory(folder / "overlay", ec);
    if (!there) return false;
  }
  return true;
}

}  // namespace sam3
