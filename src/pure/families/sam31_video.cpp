// SAM 3.1's video capability (the sam3.1-ailia row's VideoCapability, pure/families.h): the
// video graphs as ailia-models publishes them, their npy/ constants and the inputs and outputs
// the video tracker needs of them. Read from ailia's video_tracking.py and
// segment_anything_3_1.py; outputs are read by position: the driver never names them.
#include "pure/contract.h"
#include "pure/families.h"
#include "pure/families/sam31_video.h"
#include "sam3/error.h"

namespace sam3::pure {
namespace {

using sam31::kChannels;
using sam31::kMaskMemories;
using sam31::kSlots;

void require_output_count(const PartSpec& part, size_t count) {
  if (part.outputs.size() < count) {
    throw Error(ErrorCode::kModelMismatch, part.file + ": has " + std::to_string(part.outputs.size()) +
                                               " outputs where SAM 3.1's video graph has " + std::to_string(count));
  }
}

void check_sam31_video(const PartSpecs& parts) {
  require_inputs(parts.at("prompt_encoder"),
                 {{"coords", kFloat, {3}}, {"labels", kIntTypes, {2}}, {"masks", kFloat, {4}}, {"masks_enable", kIntTypes, {1}}});
  require_output_count(parts.at("prompt_encoder"), 3);
  require_inputs(parts.at("mask_decoder"), {{"image_embeddings", kFloat, {4}},
                                            {"image_pe", kFloat, {4}},
                                            {"sparse_prompt_embeddings", kFloat, {3}},
                                            {"dense_prompt_embeddings", kFloat, {4}},
                                            {"high_res_features1", kFloat, {4}},
                                            {"high_res_features2", kFloat, {4}}});
  require_output_count(parts.at("mask_decoder"), 4);
  require_inputs(
      parts.at("tracking_decoder"),
      {{"image_embeddings", kFloat, {4}}, {"high_res_feat0", kFloat, {4}}, {"high_res_feat1", kFloat, {4}}, {"extra_embed", kFloat, {3}}});
  require_output_count(parts.at("tracking_decoder"), 4);
  require_inputs(parts.at("memory_encoder"), {{"pix_feat", kFloat, {4}}, {"masks", kFloat, {4}}});
  require_output_count(parts.at("memory_encoder"), 2);
  require_inputs(parts.at("memory_attention"), {{"curr_obj", kFloat, {3}},
                                                {"curr_obj_pos", kFloat, {3}},
                                                {"curr_img", kFloat, {3}},
                                                {"memory_obj", kFloat, {3}},
                                                {"memory_obj_pos", kFloat, {3}},
                                                {"memory_img", kFloat, {3}},
                                                {"memory_img_pos", kFloat, {3}}});
  require_output_count(parts.at("memory_attention"), 1);
  for (const char* proj : {"obj_ptr_proj", "interactive_obj_ptr_proj", "obj_ptr_tpos_proj"}) {
    require_inputs(parts.at(proj), {{"x", kFloat, {2}}});
    require_output_count(parts.at(proj), 1);
  }
}

}  // namespace

const VideoCapability& sam31_video() {
  static const VideoCapability video = {
      {{"prompt_encoder", "sam3.1_prompt_encoder"},
       {"mask_decoder", "sam3.1_mask_decoder"},
       {"tracking_decoder", "sam3.1_tracking_mask_decoder"},
       {"memory_encoder", "sam3.1_memory_encoder"},
       {"memory_attention", "sam3.1_memory_attention"},
       {"obj_ptr_proj", "sam3.1_obj_ptr_proj"},
       {"interactive_obj_ptr_proj", "sam3.1_interactive_obj_ptr_proj"},
       {"obj_ptr_tpos_proj", "sam3.1_obj_ptr_tpos_proj"}},
      {{"maskmem_tpos_enc", "sam3.1_maskmem_tpos_enc.npy", kMaskMemories * kChannels},
       {"no_obj_embed_spatial", "sam3.1_no_obj_embed_spatial.npy", kSlots * kChannels},
       {"no_obj_ptr_linear_weight", "sam3.1_no_obj_ptr_linear_weight.npy", kChannels * kChannels},
       {"no_obj_ptr_linear_bias", "sam3.1_no_obj_ptr_linear_bias.npy", kChannels},
       {"output_valid_embed", "sam3.1_output_valid_embed.npy", kSlots * kChannels},
       {"output_invalid_embed", "sam3.1_output_invalid_embed.npy", kSlots * kChannels},
       {"interactive_mask_downsample_weight", "sam3.1_interactive_mask_downsample_weight.npy", 16},
       {"interactive_mask_downsample_bias", "sam3.1_interactive_mask_downsample_bias.npy", 1}},
      check_sam31_video,
      {"prop_fpn0", "prop_fpn1", "prop_fpn2", "prop_pos2"},
      "bundle as ailia-models publishes it (sam3.1_image_encoder, sam3.1_grounding and the tracker graphs)",
  };
  return video;
}

}  // namespace sam3::pure
