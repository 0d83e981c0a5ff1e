// The interactive (sam3-tracker) model's file names, as the onnx-community repositories publish
// it: vision_encoder.onnx and prompt_encoder_mask_decoder.onnx under onnx/ (or at the folder's
// root), one pair per dtype, weights beside each graph as "<file>_data". Pure (names only): the
// native loader (model/layout.cpp) checks the folder with them, the browser probes a URL or a
// File list.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sam3::pure {

inline constexpr const char* kTrackerImageStem = "vision_encoder";
inline constexpr const char* kTrackerDecoderStem = "prompt_encoder_mask_decoder";
inline constexpr const char* kTrackerLayout = "sam3-tracker";
// How error messages name the pair, natively and in the browser.
inline constexpr const char* kTrackerFilesDescription =
    "onnx/vision_encoder.onnx and onnx/prompt_encoder_mask_decoder.onnx (the interactive sam3-tracker model)";

// The dtype suffixes in preference order: the plain name first.
const std::vector<const char*>& tracker_suffixes();
// Every graph name the pair may have, in preference order (what a browser probes for).
std::vector<std::string> tracker_candidate_names();
// {"image": vision_encoder<s>.onnx, "decoder": prompt_encoder_mask_decoder<s>.onnx} for the
// first dtype with both graphs among `names`; nullopt when neither graph of any dtype is
// there; kModelNotFound (opened by `where`) when only one half is.
std::optional<std::map<std::string, std::string>> choose_tracker_files(const std::string& where, const std::set<std::string>& names);

}  // namespace sam3::pure
