// The answer's "model" (sam3/answer_json.h), from a loaded model: outside the pure core, as
// Model is.
#include "sam3/answer_json.h"
#include "sam3/model.h"

namespace sam3 {

AnswerModel answer_model(const Model& model) {
  const auto& dir = model.directory();
  const auto name = dir.has_filename() ? dir.filename() : dir.parent_path().filename();  // "models/sam3/" is "sam3"
  return {layout_name(model.layout()), name.string()};
}

}  // namespace sam3
