// SAM 3.1's video arithmetic on plain floats, shared by the tracker's buckets and its prompts:
// the 1-D sine position code of object pointers' ages and a binary mask as the interactive
// prompt encoder's mask input. Pure: standard library only.
#pragma once

#include <cstdint>
#include <vector>

namespace sam3::pure::video {

// The driver's get_1d_sine_pe: [sin(p f_i), cos(p f_i)], f_i = 10000^(-i/(channels/2)), for
// each position; [n, channels].
std::vector<float> sine_positions(const std::vector<float>& positions, int channels);

// A binary mask at the frame's size -> the prompt encoder's mask input [side, side]: the
// bundle's 4x4 stride-4 downsampling convolution (`weight`: 16 values, `bias`), zero-padded to
// whole blocks, then bilinear resizing (ailia's mask_for_prompt_encoder).
std::vector<float> mask_prompt(const std::vector<std::uint8_t>& mask, int width, int height, const std::vector<float>& weight, float bias,
                               int side);

}  // namespace sam3::pure::video
