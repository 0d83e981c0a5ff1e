// Which public layout a model directory holds, from its file names.
#pragma once

#include <filesystem>

#include "sam3/model.h"

namespace sam3::detail {

// Throws kModelNotFound saying which files are missing and what each layout needs.
Layout detect_layout(const std::filesystem::path& dir);

// tokenizer.json or clip_tokenizer.json in the directory; empty when neither exists.
std::filesystem::path find_vocabulary(const std::filesystem::path& dir);

}  // namespace sam3::detail
