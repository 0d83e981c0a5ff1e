// How each layout's text encoder takes a tokenized prompt.
#pragma once

#include <cstdint>
#include <vector>

#include "sam3/tokenizer.h"

namespace sam3::detail {

// The text encoder's inputs as Hugging Face's CLIP tokenizer gives them (what the usls exports
// were traced with): every real token has mask 1, "!" (id 0) included, and the padding is the
// end token. SAM3's own rule (TokenizedText::mask, ids != 0) would mask a "!".
struct HfTextInputs {
  std::vector<std::int64_t> ids, attention_mask;
};
HfTextInputs hf_text_inputs(const TokenizedText& tokens);

}  // namespace sam3::detail
