// The task facades (sam3/image_segmenter.h, sam3/interactive_segmenter.h) over a model folder,
// held by shared pointer as tests hold a Model: `segmenter->segment(...)`, and
// `segmenter->model()` for what the Model itself tells (stats, files, providers).
#pragma once

#include <filesystem>
#include <memory>

#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"

namespace sam3::test {

inline std::shared_ptr<const ImageSegmenter> load_text_segmenter(const std::filesystem::path& dir, const ModelOptions& options = {}) {
  return std::make_shared<const ImageSegmenter>(ImageSegmenter::load(dir, options));
}

inline std::shared_ptr<const InteractiveSegmenter> load_interactive_segmenter(const std::filesystem::path& dir,
                                                                              const ModelOptions& options = {}) {
  return std::make_shared<const InteractiveSegmenter>(InteractiveSegmenter::load(dir, options));
}

}  // namespace sam3::test
