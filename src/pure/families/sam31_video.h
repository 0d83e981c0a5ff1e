// SAM 3.1's video tracker as ailia-models publishes its graphs beside the image encoder and
// grounding graph of the sam3.1-ailia family (sam31_ailia.cpp): the sizes of its multiplex
// tracker, read from ailia's video_tracking.py and segment_anything_3_1.py. Its graphs,
// constants and their check are the family row's VideoCapability (sam31_video.cpp).
#pragma once

namespace sam3::pure::sam31 {

inline constexpr int kSlots = 16;  // objects per multiplex bucket (MULTIPLEX_COUNT)
inline constexpr int kChannels = 256;
inline constexpr int kMaskMemories = 7;     // NUM_MASKMEM: the conditioning frame and 6 recent ones
inline constexpr int kObjectPointers = 16;  // MAX_OBJ_PTRS

}  // namespace sam3::pure::sam31
