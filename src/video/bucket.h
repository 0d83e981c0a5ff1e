// One multiplex bucket: up to 16 objects that SAM 3.1's tracker carries together (one memory
// attention, one tracking-decoder and one memory-encoder call per frame for all of them), and
// its memory bank: the conditioning frame (when its objects started), the 6 most recent
// frames, and the object pointers of the conditioning frame and the 15 most recent ones, laid
// out as ailia's driver lays them out (MemoryBank.build_memory_inputs). A slot is never
// reused: the bank still remembers its object for 6 frames (and in the conditioning frame).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "video/bundle.h"

namespace sam3::video {

// The current frame's tracker neck: prop_fpn0/1 for the decoders, prop_fpn2 and prop_pos2 as
// [HW,256] rows for the memory (shared by every bucket's bank).
struct FrameNeck {
  const Ort::Value* prop_fpn0 = nullptr;
  const Ort::Value* prop_fpn1 = nullptr;
  const Ort::Value* prop_fpn2 = nullptr;
  std::shared_ptr<const Floats> rows, pos_rows;
  std::int64_t t = 0;  // processing order: the bank's ages count processed frames
};

struct MemoryFrame {
  std::int64_t t = 0;
  std::shared_ptr<const Floats> img, img_pos;  // [HW,256]
  Floats mem, mem_pos;                         // [HW,256]
  Floats pointers;                             // [16,256]
};

// What a slot holds: kFree (never used), an object id (> 0), or kRetired (its object ended).
inline constexpr int kFree = 0;
inline constexpr int kRetired = -1;

class Bucket {
 public:
  // Starts a bucket on `neck`'s frame with `ids` (at most 16) whose masks ([M,M] logits) and
  // pointers ([256] each) are known: their memory becomes the conditioning frame.
  Bucket(const Bundle& bundle, const FrameNeck& neck, const std::vector<int>& ids, const std::vector<Floats>& masks,
         const std::vector<Floats>& pointers);

  const std::array<int, kSlots>& slots() const { return slots_; }
  bool live() const;

  // Memory attention and the tracking decoder on the current frame; pointers computed.
  void propagate(const Bundle& bundle, const FrameNeck& neck);
  const SlotOutputs& outputs() const { return out_; }
  bool appearing(int slot) const { return out_.score_logits[slot] > 0.0f; }

  // Encodes this frame's memory from the slots' masks (`masks[k]` null: the decoder's own
  // mask; empty: suppressed, -10 everywhere), then retires the slots of `removed` objects.
  void remember(const Bundle& bundle, const FrameNeck& neck, const std::vector<bool>& suppressed, const std::vector<int>& removed);
  std::size_t memory_bytes() const;

 private:
  Floats slot_pointers(const Bundle& bundle) const;
  MemoryFrame encode(const Bundle& bundle, const FrameNeck& neck, const Floats& masks32, const std::vector<bool>& no_object,
                     Floats pointers) const;

  std::array<int, kSlots> slots_{};
  MemoryFrame cond_;
  std::deque<MemoryFrame> recent_;                             // at most 6
  std::deque<std::pair<std::int64_t, Floats>> recent_pointers_;  // at most 15
  SlotOutputs out_;
  Floats projected_;  // this frame's pointers after obj_ptr_proj, [16,256]
};

// sigmoid(logits) * 2 - 1 (the memory encoder's mask scale and bias) resized to `side`.
void memory_mask(const Floats& logits, int mask_side, int side, float* out);

}  // namespace sam3::video
