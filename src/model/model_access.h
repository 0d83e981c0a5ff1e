// The library's side of Model for the video tracker (src/video): the backend's sessions, the
// tokenizer and the session settings the model was loaded with. Users never see these.
#pragma once

#include "model/backend.h"
#include "runtime/session.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"

namespace sam3::detail {

struct ModelAccess {
  static const Backend& backend(const Model& model);
  static const ClipTokenizer* tokenizer(const Model& model);  // null for the interactive generation
  static const rt::SessionConfig& session_config(const Model& model);
};

}  // namespace sam3::detail
