// The library's side of Model for the task facades (src/model/image_segmenter.cpp,
// interactive_segmenter.cpp) and the video tracker (src/video): the backend's parts, the
// tokenizer, the shared caches and counters, and the session settings the model was loaded
// with. Users never see these.
#pragma once

#include "model/backend.h"
#include "model/model_state.h"
#include "runtime/session.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"

namespace sam3::detail {

struct ModelAccess {
  static const Backend& backend(const Model& model);
  static const ClipTokenizer* tokenizer(const Model& model);  // null for the interactive generation
  static const runtime::SessionConfig& session_config(const Model& model);
  static ModelState& state(const Model& model);  // thread-safe: a cache and atomic counters
};

}  // namespace sam3::detail
