// One output format of VideoOutputs: it keeps its frames in the partial-run folder, makes them
// durable at checkpoints, drops what came after the last checkpoint when a run resumes, and
// builds its final entries at the end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sam3/output_folder.h"
#include "sam3/video.h"
#include "sam3/video_outputs.h"

namespace sam3::video_io {

// What every format knows of the run.
struct SinkContext {
  VideoInfo info;                   // as the first run saw it
  std::vector<std::string> labels;  // by prompt index
  nlohmann::json model, settings;
  std::string overlay_encoder;
};

// A frame's result with its final ids, and its label map (width*height, row-major: 0 for the
// background, else the object id; objects painted in id order), made once for every format.
struct FrameOutput {
  const VideoFrame& frame;
  const VideoFrameResult& result;
  const std::vector<std::uint16_t>& labels;
};

class PartialSink {
 public:
  virtual ~PartialSink() = default;
  // The final names it writes (checked against the folder's owners before any work).
  virtual std::vector<std::string> entries() const = 0;
  // `work` is its part of the partial-run folder. `saved` is what its last checkpoint()
  // returned (null on a fresh start): anything written after that is dropped.
  virtual void open(const std::filesystem::path& work, const nlohmann::json* saved, std::int64_t last_committed_index) = 0;
  virtual void write(const FrameOutput& out) = 0;
  // Makes every frame written so far durable; returns what open() needs to resume there.
  virtual nlohmann::json checkpoint() = 0;
  // Refuses, before any format writes the frame, what this format cannot hold (kInvalidArgument),
  // so that a refused frame leaves every format at the same frame.
  virtual void check(const FrameOutput&) const {}
  // Builds the final entries at update.stage(name) paths, leaving the partial files as they are
  // (link_into_stage): a failed finish is retried from them.
  virtual void finish(OutputFolderUpdate& update) = 0;
};

std::unique_ptr<PartialSink> make_davis_sink(const SinkContext& context);
std::unique_ptr<PartialSink> make_mots_sink(const SinkContext& context);
std::unique_ptr<PartialSink> make_overlay_sink(const SinkContext& context);

// The name of frame `index`'s file: `prefix` + the index with at least `digits` digits + ext.
std::string frame_file_name(const std::string& prefix, std::int64_t index, int digits, const std::string& ext);
// Removes the files of `folder` named prefix<number>ext whose number is above `last_index`.
void remove_frame_files_after(const std::filesystem::path& folder, const std::string& prefix, const std::string& ext,
                              std::int64_t last_index);
// Puts a work file or folder where OutputFolderUpdate stages `entry`, leaving the work intact
// (hard links, or copies), so that a finish that fails can be run again from the partial run.
void link_into_stage(const std::filesystem::path& from, OutputFolderUpdate& update, const std::string& entry);

}  // namespace sam3::video_io
