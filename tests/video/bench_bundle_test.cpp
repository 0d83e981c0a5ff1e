// The SAM 3.1-shaped bench bundle (tools/make_sam31_bench_bundle.py): it loads through the same
// family row as ailia's real files, and every graph declares the inputs and outputs of ailia's
// SAM 3.1 bundle at their official sizes (1008-pixel image, 256-channel features at 288/144/72,
// 16 multiplex slots with 3 masks each, 32 mask channels of 1152 for the memory encoder, 5184
// tokens of memory attention). The quick bundle is checked: its declaration is made by the same
// code as the full one's (only inner widths differ), and it is cheap to generate in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sam3/model_inspect.h"

namespace {

namespace fs = std::filesystem;

struct Io {
  std::string name, type;
  std::vector<std::int64_t> shape;  // -1: dynamic
};
using Graph = std::pair<std::vector<Io>, std::vector<Io>>;

// ailia-models segment-anything-3.1 (video_tracking.py, segment_anything_3_1.py): what each file
// takes and gives, at SAM 3.1's sizes.
std::map<std::string, Graph> official() {
  const std::int64_t d = 256, s0 = 288, s1 = 144, s2 = 72, hw = 72 * 72, dyn = -1;
  const auto map = [&](const std::string& n, std::int64_t side) { return Io{n, "float32", {1, d, side, side}}; };
  return {
      {"sam3.1_image_encoder.onnx",
       {{{"image", "float32", {1, 3, 1008, 1008}}},
        {map("fpn0", s0), map("fpn1", s1), map("fpn2", s2), map("pos0", s0), map("pos1", s1), map("pos2", s2), map("prop_fpn0", s0),
         map("prop_fpn1", s1), map("prop_fpn2", s2), map("prop_pos2", s2)}}},
      {"sam3.1_grounding.onnx",
       {{map("fpn0", s0),
         map("fpn1", s1),
         map("fpn2", s2),
         map("pos2", s2),
         {"text_tokens", "int64", {1, 32}},
         {"box_coords", "float32", {dyn, 1, 4}},
         {"box_labels", "int64", {dyn, 1}},
         {"box_mask", "bool", {1, dyn}}},
        {{"pred_masks", "float32", {1, 200, s0, s0}},
         {"pred_boxes", "float32", {1, 200, 4}},
         {"pred_logits", "float32", {1, 200, 1}},
         {"presence_logit_dec", "float32", {1, 1}}}}},
      {"sam3.1_prompt_encoder.onnx",
       {{{"coords", "float32", {dyn, dyn, 2}},
         {"labels", "int32", {dyn, dyn}},
         {"masks", "float32", {dyn, 1, s0, s0}},
         {"masks_enable", "int32", {1}}},
        {{"sparse_embeddings", "float32", {dyn, dyn, d}},
         {"dense_embeddings", "float32", {dyn, d, s2, s2}},
         {"dense_pe", "float32", {1, d, s2, s2}}}}},
      {"sam3.1_mask_decoder.onnx",
       {{{"image_embeddings", "float32", {dyn, d, s2, s2}},
         {"image_pe", "float32", {1, d, s2, s2}},
         {"sparse_prompt_embeddings", "float32", {dyn, dyn, d}},
         {"dense_prompt_embeddings", "float32", {dyn, d, s2, s2}},
         {"high_res_features1", "float32", {dyn, d, s0, s0}},
         {"high_res_features2", "float32", {dyn, d, s1, s1}}},
        {{"masks", "float32", {dyn, 4, s0, s0}},
         {"iou_pred", "float32", {dyn, 4}},
         {"sam_tokens_out", "float32", {dyn, 4, d}},
         {"object_score_logits", "float32", {dyn, 1}}}}},
      {"sam3.1_tracking_mask_decoder.onnx",
       {{map("image_embeddings", s2), map("high_res_feat0", s0), map("high_res_feat1", s1), {"extra_embed", "float32", {1, 16, d}}},
        {{"masks", "float32", {1, 16, 3, s0, s0}},
         {"iou_pred", "float32", {1, 16, 3}},
         {"sam_tokens", "float32", {1, 16, 3, d}},
         {"obj_score", "float32", {1, 16, 1}}}}},
      {"sam3.1_memory_encoder.onnx",
       {{{"pix_feat", "float32", {dyn, d, s2, s2}}, {"masks", "float32", {dyn, 32, 1152, 1152}}},
        {{"vision_features", "float32", {dyn, d, s2, s2}}, {"vision_pos_enc", "float32", {dyn, d, s2, s2}}}}},
      {"sam3.1_memory_attention.onnx",
       {{{"curr_obj", "float32", {hw, 1, d}},
         {"curr_obj_pos", "float32", {hw, 1, d}},
         {"curr_img", "float32", {hw, 1, d}},
         {"memory_obj", "float32", {dyn, 1, d}},
         {"memory_obj_pos", "float32", {dyn, 1, d}},
         {"memory_img", "float32", {dyn, 1, d}},
         {"memory_img_pos", "float32", {dyn, 1, d}}},
        {{"pix_feat_with_mem", "float32", {hw, 1, d}}}}},
      {"sam3.1_obj_ptr_proj.onnx", {{{"x", "float32", {dyn, d}}}, {{"y", "float32", {dyn, d}}}}},
      {"sam3.1_interactive_obj_ptr_proj.onnx", {{{"x", "float32", {dyn, d}}}, {{"y", "float32", {dyn, d}}}}},
      {"sam3.1_obj_ptr_tpos_proj.onnx", {{{"x", "float32", {dyn, d}}}, {{"y", "float32", {dyn, d}}}}},
  };
}

std::string describe(const std::vector<sam3::TensorDescription>& io) {
  std::string s;
  for (const auto& t : io) {
    s += t.name + ":" + t.type + "[";
    for (auto v : t.shape) s += std::to_string(v) + ",";
    s += "] ";
  }
  return s;
}

TEST(Sam31BenchBundle, LoadsAsSam31AndEveryGraphDeclaresTheOfficialInputsAndOutputs) {
  const fs::path dir = SAM3_BENCH_BUNDLE_DIR;
  const auto inspection = sam3::inspect_model(dir);
  EXPECT_EQ(inspection.generation, "sam3.1 (ailia)") << inspection.problem;
  EXPECT_EQ(inspection.input_width, 1008);
  EXPECT_EQ(inspection.input_height, 1008);
  std::map<std::string, const sam3::OnnxFileDescription*> files;
  for (const auto& f : inspection.files) files[f.file.filename().string()] = &f;
  for (const auto& [name, io] : official()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(files.count(name)) << "missing from " << dir;
    const auto& f = *files[name];
    ASSERT_TRUE(f.error.empty()) << f.error;
    EXPECT_GT(f.external_bytes, 0u) << "weights in a .data sidecar, as large exports are stored";
    for (const auto& [want, got] : {std::pair{&io.first, &f.inputs}, std::pair{&io.second, &f.outputs}}) {
      ASSERT_EQ(got->size(), want->size()) << describe(*got);
      for (size_t i = 0; i < want->size(); ++i) {
        EXPECT_EQ((*got)[i].name, (*want)[i].name) << describe(*got);
        EXPECT_EQ((*got)[i].type, (*want)[i].type) << (*want)[i].name;
        EXPECT_EQ((*got)[i].shape, (*want)[i].shape) << (*want)[i].name;
      }
    }
  }
}

}  // namespace
