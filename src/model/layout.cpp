#include "model/layout.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sam3/error.h"

namespace sam3::detail {
namespace {

struct Part {
  const char* part;
  std::vector<const char*> stems;  // file names without ".onnx" and the precision suffix
  bool required;
};

struct LayoutFiles {
  Layout layout;
  std::vector<Part> parts;
};

// The names each exporter writes; usls's release files carry a precision suffix
// (vision-encoder-q4f16.onnx) and usls's own runtime calls the decoder geo-encoder-mask-decoder.
const std::array<LayoutFiles, 2> kLayouts = {{
    {Layout::kUsls,
     {{"image", {"vision-encoder"}, true},
      {"text", {"text-encoder"}, true},
      {"decoder", {"decoder", "geo-encoder-mask-decoder"}, true},
      {"geometry", {"geometry-encoder"}, false}}},
    {Layout::kSamexporter,
     {{"image", {"sam3_image_encoder"}, true},
      {"text", {"sam3_language_encoder"}, true},
      {"decoder", {"sam3_decoder"}, true}}},
}};

// Preference when several precisions of a part sit side by side: the plain name, then int8
// (fastest on CPUs), fp32, fp16, q4f16.
constexpr std::array<const char*, 5> kSuffixes = {"", "-int8", "-fp32", "-fp16", "-q4f16"};

std::filesystem::path find_part(const std::filesystem::path& dir, const Part& part) {
  std::error_code ec;
  for (const char* suffix : kSuffixes) {
    for (const char* stem : part.stems) {
      const auto path = dir / (std::string(stem) + suffix + ".onnx");
      if (std::filesystem::is_regular_file(path, ec)) return path;
    }
  }
  return {};
}

// The interactive generation as the onnx-community repositories publish it: the graphs under
// onnx/ (or at the folder's root), one file per dtype, with config.json at the root.
constexpr std::array<const char*, 8> kTrackerSuffixes = {"", "_quantized", "_int8", "_uint8", "_fp16", "_q4", "_q4f16", "_bnb4"};
constexpr const char* kTrackerImage = "vision_encoder";
constexpr const char* kTrackerDecoder = "prompt_encoder_mask_decoder";

// Both graphs of one dtype (the plain name first, then the order above); nullopt when the
// folder holds neither; kModelNotFound when it holds only one half.
std::optional<ModelFiles> find_tracker(const std::filesystem::path& dir) {
  std::error_code ec;
  std::string half;
  for (const auto& where : {dir / "onnx", dir}) {
    for (const char* suffix : kTrackerSuffixes) {
      const auto image = where / (std::string(kTrackerImage) + suffix + ".onnx");
      const auto decoder = where / (std::string(kTrackerDecoder) + suffix + ".onnx");
      const bool has_image = std::filesystem::is_regular_file(image, ec), has_decoder = std::filesystem::is_regular_file(decoder, ec);
      if (has_image && has_decoder) return ModelFiles{Layout::kTracker, {{"image", image}, {"decoder", decoder}}};
      if (half.empty() && (has_image || has_decoder)) half = (has_image ? image : decoder).string();
    }
  }
  if (half.empty()) return std::nullopt;
  throw Error(ErrorCode::kModelNotFound,
              dir.string() + ": incomplete sam3-tracker model: found " + half + " but not its partner; the interactive "
                             "model needs vision_encoder.onnx and prompt_encoder_mask_decoder.onnx of the same dtype "
                             "(e.g. both _quantized), under onnx/ or at the folder's root");
}

std::string names_of(const LayoutFiles& l) {
  std::string s;
  for (const auto& p : l.parts) {
    if (p.required) s += (s.empty() ? "" : ", ") + std::string(p.stems[0]) + ".onnx";
  }
  return s;
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
    if (status_ec == std::errc::too_many_symbolic_link_levels) what = "a link that loops";
    else if (status_ec) continue;  // a dangling link: opening it fails at once, with the file named
    else if (status.type() == std::filesystem::file_type::fifo) what = "a FIFO (named pipe)";
    else if (status.type() == std::filesystem::file_type::socket) what = "a socket";
    else if (status.type() == std::filesystem::file_type::character || status.type() == std::filesystem::file_type::block) {
      what = "a device";
    }
    if (!what.empty()) {
      throw Error(ErrorCode::kModelNotFound, entry.path().string() + " is " + what + ", not a file; a model folder holds only "
                                                                     "the model's files: remove it or put the file itself there");
    }
  }
}


ModelFiles detect_layout(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound, dir.string() + ": is a file, not a model folder; pass --models the folder "
                                                          "that holds the SAM3 .onnx files");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error(ErrorCode::kModelNotFound,
                dir.string() + ": model directory does not exist; pass --models DIR with the SAM3 ONNX "
                               "files, or fetch them with 'sam3 models pull'");
  }
  check_model_folder_entries(dir);
  if (auto tracker = find_tracker(dir)) return *tracker;
  for (const auto& candidate : kLayouts) {
    ModelFiles files{candidate.layout, {}};
    int present = 0, required = 0;
    std::string missing;
    for (const auto& part : candidate.parts) {
      const auto path = find_part(dir, part);
      if (!path.empty()) files.parts[part.part] = path;
      if (!part.required) continue;
      ++required;
      if (!path.empty()) ++present;
      else missing += (missing.empty() ? "" : ", ") + std::string(part.stems[0]) + ".onnx";
    }
    if (present == required) return files;
    if (present > 0) {
      throw Error(ErrorCode::kModelNotFound,
                  dir.string() + ": incomplete " + layout_name(candidate.layout) + " model, missing " + missing +
                      "; the layout needs " + names_of(candidate));
    }
  }
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".onnx") found += (found.empty() ? "" : ", ") + entry.path().filename().string();
  }
  throw Error(ErrorCode::kModelNotFound,
              dir.string() + ": not a SAM3 model directory; expected " + names_of(kLayouts[0]) +
                  " (usls layout, also with -int8/-fp16/-q4f16 suffixes), " + names_of(kLayouts[1]) +
                  " (samexporter layout) or onnx/vision_encoder.onnx, onnx/prompt_encoder_mask_decoder.onnx "
                  "(the interactive sam3-tracker model), found " + (found.empty() ? "no .onnx files" : found));
}

std::filesystem::path find_vocabulary(const std::filesystem::path& dir) {
  for (const char* name : {"tokenizer.json", "clip_tokenizer.json", "bpe_simple_vocab_16e6.txt.gz"}) {
    if (std::filesystem::is_regular_file(dir / name)) return dir / name;
  }
  return {};
}

}  // namespace sam3::detail
