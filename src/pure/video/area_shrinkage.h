// The official suppression of masks that the pixel-wise non-overlap would shrink too much,
// applied to every tracked object's mask before its memory is encoded (SAM 3.1:
// sam3_multiplex_base.py _tracker_update_memories -> _suppress_object_pw_area_shrinkage):
// each pixel belongs to the object with the highest value there (ties: the one added first);
// an object whose positive pixels it keeps are fewer than `min_ratio` (0.3) of its positive
// pixels is suppressed entirely; the others keep their whole, possibly overlapping, masks.
// Objects are added one plane at a time so that the planes need not be held together (at
// the memory's 1152 x 1152 each is 5 MB). No ONNX Runtime here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sam3::pure::video {

class ShrinkageVote {
 public:
  explicit ShrinkageVote(size_t pixels);

  // Adds the next object's plane (mask logits or any monotone map of them; positive: inside).
  void add(const float* plane);
  // Per object in the order added: suppressed (kept area / area < min_ratio). An object with
  // no positive pixel keeps 0 of max(area, 1) and is suppressed too (it is empty anyway).
  std::vector<bool> shrunk(float min_ratio) const;

 private:
  std::vector<float> best_;
  std::vector<std::int32_t> owner_;
  std::vector<std::int64_t> areas_;
};

}  // namespace sam3::pure::video
