#include "model/layout.h"

#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pure/layout_names.h"
#include "pure/tracker_names.h"
#include "sam3/error.h"

namespace sam3::detail {
namespace {

// The interactive generation as the onnx-community repositories publish it: the graphs under
// onnx/ (or at the folder's root), one file per dtype, with config.json at the root.
// (The names are the pure core's, shared with the browser: pure/tracker_names.h.)
using pure::kTrackerDecoderStem;
using pure::kTrackerImageStem;

// Both graphs of one dtype (the plain name first, then the order above); nullopt when the
// folder holds neither; kModelNotFound when it holds only one half.
std::optional<ModelFiles> find_tracker(const std::filesystem::path& dir) {
  std::error_code ec;
  std::string half;
  for (const auto& where : {dir / "onnx", dir}) {
    for (const char* suffix : pure::tracker_suffixes()) {
      const auto image = where / (std::string(kTrackerImageStem) + suffix + ".onnx");
      const auto decoder = where / (std::string(kTrackerDecoderStem) + suffix + ".onnx");
      const bool has_image = std::filesystem::is_regular_file(image, ec), has_decoder = std::filesystem::is_regular_file(decoder, ec);
      if (has_image && has_decoder) return ModelFiles{Layout::kTracker, {}, {{"image", image}, {"decoder", decoder}}};
      if (half.empty() && (has_image || has_decoder)) half = (has_image ? image : decoder).string();
    }
  }
  if (half.empty()) return std::nullopt;
  throw Error(ErrorCode::kModelNotFound, dir.string() + ": incomplete sam3-tracker model: found " + half +
                                             " but not its partner; the interactive "
                                             "model needs vision_encoder.onnx and prompt_encoder_mask_decoder.onnx of the same dtype "
                                             "(e.g. both _quantized), under onnx/ or at the folder's root");
}

}  // namespace

// A model folder holds files, folders and links to them, nothing else: an open() of a FIFO can
// block, a device reads without end, a looping link fails deep inside ONNX Runtime (1.30 says
// only "cannot get file size" in its own log). Named here, before anything is opened. (Only the
// top level: the folder is not walked.)
void check_model_folder_entries(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code status_ec;
    const auto status = std::filesystem::status(entry.path(), status_ec);
    std::string what;
    if (status_ec == std::errc::too_many_symbolic_link_levels)
      what = "a link that loops";
    else if (status_ec)
      continue;  // a dangling link: opening it fails at once, with the file named
    else if (status.type() == std::filesystem::file_type::fifo)
      what = "a FIFO (named pipe)";
    else if (status.type() == std::filesystem::file_type::socket)
      what = "a socket";
    else if (status.type() == std::filesystem::file_type::character || status.type() == std::filesystem::file_type::block) {
      what = "a device";
    }
    if (!what.empty()) {
      throw Error(ErrorCode::kModelNotFound, entry.path().string() + " is " + what +
                                                 ", not a file; a model folder holds only "
                                                 "the model's files: remove it or put the file itself there");
    }
  }
}

ModelFiles detect_layout(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound, dir.string() +
                                               ": is a file, not a model folder; give the folder that holds "
                                               "the SAM3 .onnx files");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound, dir.string() +
                                               ": model directory does not exist; give a folder that holds the "
                                               "SAM3 ONNX files, or fetch them with 'sam3 models pull'");
  }
  check_model_folder_entries(dir);
  if (auto tracker = find_tracker(dir)) return *tracker;
  std::set<std::string> names;
  for (const auto& name : pure::candidate_names()) {
    if (std::filesystem::is_regular_file(dir / name, ec)) names.insert(name);
  }
  // The hub's layout of geti-instant-learn (and others): the graphs under onnx/, the tokenizer
  // files at the folder's root.
  const auto graphs = names.empty() && std::filesystem::is_directory(dir / "onnx", ec) ? dir / "onnx" : dir;
  if (graphs != dir) {
    for (const auto& name : pure::candidate_names()) {
      if (std::filesystem::is_regular_file(graphs / name, ec)) names.insert(name);
    }
  }
  if (auto chosen = pure::choose_files(graphs.string(), names)) {
    ModelFiles files{Layout(chosen->families.front()->id), chosen->families, {}};
    for (const auto& [part, name] : chosen->parts) files.parts[part] = graphs / name;
    return files;
  }
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".onnx") found += (found.empty() ? "" : ", ") + entry.path().filename().string();
  }
  throw Error(ErrorCode::kModelNotFound, dir.string() + ": not a SAM3 model directory; expected " + pure::every_family_names() +
                                             " (also with -int8/-fp16/-q4f16 suffixes, also under onnx/), or " +
                                             pure::kTrackerFilesDescription + ", found " + (found.empty() ? "no .onnx files" : found));
}

std::filesystem::path find_vocabulary(const std::filesystem::path& dir) {
  // The folder, then (for graphs under onnx/, as the hub lays them out) the folder above them.
  for (const auto& where : {dir, dir / "onnx", dir.filename() == "onnx" ? dir.parent_path() : dir}) {
    for (const char* name : pure::vocabulary_names()) {
      if (std::filesystem::is_regular_file(where / name)) return where / name;
    }
  }
  return {};
}

}  // namespace sam3::detail
