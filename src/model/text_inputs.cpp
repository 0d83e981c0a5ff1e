#include "model/text_inputs.h"

namespace sam3::detail {

HfTextInputs hf_text_inputs(const TokenizedText& tokens) {
  HfTextInputs in{std::vector<std::int64_t>(kContextLength, kEndOfText), std::vector<std::int64_t>(kContextLength, 0)};
  for (int i = 0; i < tokens.length && i < kContextLength; ++i) {
    in.ids[static_cast<size_t>(i)] = tokens.ids[static_cast<size_t>(i)];
    in.attention_mask[static_cast<size_t>(i)] = 1;
  }
  return in;
}

}  // namespace sam3::detail
