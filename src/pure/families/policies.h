// The rules families share, as a few policies a family's file picks from: how the image is
// normalized (image input), how ids and masks are padded (text ids), how exemplar boxes are
// encoded and padded (box encoding), and how the decoder's outputs are read and suppressed
// (outputs). Pure: standard library only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pure/decoded.h"
#include "pure/tensor.h"
#include "sam3/tokenizer.h"
#include "sam3/types.h"

namespace sam3::pure::policy {

// --- image input: [3,H,W] planes in 0..255 -> the encoder's float input.
enum class Pixels {
  kSam3,         // x/127.5 - 1 (mean 0.5, std 0.5), as resampled
  kRoundedSam3,  // rounded and clamped to 0..255 first (a uint8 resize), then x/127.5 - 1
  kHalfSam3,     // rounded; x/255 stored as float16; (x - 0.5)/0.5 in float16 (ailia's driver)
};
Tensor image_tensor(const std::string& name, int onnx_type, std::vector<float>& planes, int width, int height, Pixels rule,
                    bool batch = true);
// The input size from an image input's [B,3,H,W] shape (1008 for a dynamic side).
void input_size(const std::vector<std::int64_t>& shape, int& width, int& height);

// --- text ids: the tokenizer's ids into [1,32] input_ids and attention_mask as Hugging Face's
// CLIP tokenizer gives them (every real token has mask 1, "!" = id 0 included), padded with
// pad_id; the mask only where the part takes one.
std::vector<Tensor> hf_text_inputs(const PartSpec& text, const TokenizedText& tokens, std::int64_t pad_id);
// SAM3's own ids (start, tokens, end, zeros; cut to 32 keeping the end) as one input.
Tensor sam3_ids(const std::string& name, int onnx_type, const TokenizedText& tokens);

// --- box encoding: pixel x0,y0,x1,y1 of a width x height image -> normalized cx,cy,w,h rows.
struct BoxRows {
  std::int64_t n = 0;
  std::vector<float> coords;          // n * 4
  std::vector<std::int64_t> labels;   // 1 positive, 0 negative, pad_label for padding rows
  std::vector<std::uint8_t> padding;  // 1 for padding rows
};
// At least min_rows rows: boxes first, then padding rows (coords 0, pad_label).
BoxRows box_rows(const std::vector<BoxPrompt>& boxes, int width, int height, std::int64_t min_rows, std::int64_t pad_label);

// --- prompt sequences: [1, La, D] and [1, Lb, D] (or masks [1, La], [1, Lb]) joined along axis 1.
Tensor concat_sequences(const std::string& name, int onnx_type, const TensorView& a, const TensorView* b, const std::string& what);
const TensorView& need(const TensorViews& views, const std::string& name, const std::string& part);
// The decoder's prompt_features / prompt_mask: the text's rows, then the geometry's (if any).
std::vector<Tensor> text_then_geometry(const PartSpec& decoder, const TensorViews& text, const TensorViews* geometry);

// --- outputs
// instances_from_outputs, logging the boxes it corrected.
std::vector<Instance> decoded_instances(const TensorViews& outputs, int width, int height, const SegmentOptions& options,
                                        const OutputFormat& format);
// Greedy suppression by score: an instance whose mask overlaps a kept one's by more than
// mask_iom of the smaller mask, or whose box (its mask's bounds, inclusive as masks_to_boxes
// gives them) does by more than box_iom of the smaller box, is dropped (intersection over
// minimum; 0 turns a test off). Keeps the order of the survivors.
void suppress_by_iom(std::vector<Instance>& instances, float mask_iom, float box_iom);
// The same over instances of several prompts: true for each one dropped.
std::vector<bool> iom_suppressed(const std::vector<const Instance*>& instances, float mask_iom, float box_iom);

}  // namespace sam3::pure::policy
