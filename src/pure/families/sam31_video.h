// SAM 3.1's video graphs as ailia-models publishes them beside the image encoder and grounding
// graph of the sam3.1-ailia family (sam31_ailia.cpp), their constants in npy/, and the inputs
// and outputs the video tracker (src/video) needs of them. Read from ailia's video_tracking.py
// and segment_anything_3_1.py. Outputs are read by position: the driver never names them.
#pragma once

#include <string>
#include <vector>

#include "pure/generation.h"

namespace sam3::pure {

struct VideoGraph {
  const char* part;  // the tracker's name for it
  const char* stem;  // the bundle's file name without ".onnx"
};

// prompt_encoder, mask_decoder, tracking_decoder, memory_encoder, memory_attention,
// obj_ptr_proj, interactive_obj_ptr_proj, obj_ptr_tpos_proj.
const std::vector<VideoGraph>& sam31_video_graphs();
// The npy/ constants, by the tracker's name -> file name.
const std::vector<VideoGraph>& sam31_video_constants();

// Throws kModelMismatch naming the file, tensor, expected and found.
void check_sam31_video(const PartSpecs& parts);

}  // namespace sam3::pure
