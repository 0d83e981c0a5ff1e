#include "pure/tracker_names.h"

#include "sam3/error.h"

namespace sam3::pure {

const std::vector<const char*>& tracker_suffixes() {
  static const std::vector<const char*> suffixes = {"", "_quantized", "_int8", "_uint8", "_fp16", "_q4", "_q4f16", "_bnb4"};
  return suffixes;
}

std::vector<std::string> tracker_candidate_names() {
  std::vector<std::string> out;
  for (const char* suffix : tracker_suffixes()) {
    out.push_back(std::string(kTrackerImageStem) + suffix + ".onnx");
    out.push_back(std::string(kTrackerDecoderStem) + suffix + ".onnx");
  }
  return out;
}

std::optional<std::map<std::string, std::string>> choose_tracker_files(const std::string& where, const std::set<std::string>& names) {
  std::string half;
  for (const char* suffix : tracker_suffixes()) {
    const std::string image = std::string(kTrackerImageStem) + suffix + ".onnx";
    const std::string decoder = std::string(kTrackerDecoderStem) + suffix + ".onnx";
    const bool has_image = names.contains(image), has_decoder = names.contains(decoder);
    if (has_image && has_decoder) return std::map<std::string, std::string>{{"image", image}, {"decoder", decoder}};
    if (half.empty() && (has_image || has_decoder)) half = has_image ? image : decoder;
  }
  if (half.empty()) return std::nullopt;
  throw Error(ErrorCode::kModelNotFound, where + ": incomplete sam3-tracker model: found " + half +
                                             " but not its partner; the interactive "
                                             "model needs vision_encoder.onnx and prompt_encoder_mask_decoder.onnx of the same dtype "
                                             "(e.g. both _quantized), under onnx/ or at the folder's root");
}

}  // namespace sam3::pure
