// One multiplex bucket: up to 16 objects that SAM 3.1's tracker carries together (one memory
// attention, one tracking-decoder and one memory-encoder call per frame for all of them), and
// its memory bank: its one conditioning frame (the frame it started on), the non-conditioning
// frames of the last 6, and the object pointers of the conditioning frame and of the non-
// conditioning frames of the last 15, laid out as ailia's driver lays them out
// (MemoryBank.build_memory_inputs). Objects starting on a later frame may join free slots, and
// reconditioned objects take a detection's mask: both flag their slots in that frame's memory,
// which stays a non-conditioning one (SAM 3.1's add_new_masks on a frame already tracked), so
// officially no bucket ever has more than its first frame as a conditioning frame. A slot is
// never reused: the bank still remembers its object for 6 frames (and in its conditioning frame).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "model/video_decoder.h"
#include "pure/families/sam31_video.h"
#include "pure/video/bucket_placement.h"

namespace sam3::video {

using detail::Floats;
using detail::SlotOutputs;
using detail::VideoDecoder;
using pure::sam31::kChannels;
using pure::sam31::kMaskMemories;
using pure::sam31::kObjectPointers;
using pure::sam31::kSlots;

// The current frame as the decoders read it, its memory rows (prop_fpn2 and prop_pos2 as
// [HW,256], shared by every bucket's bank) and its place in processing order.
struct FrameNeck {
  const detail::EncodedFrame* frame = nullptr;
  std::shared_ptr<const Floats> rows, pos_rows;
  std::int64_t t = 0;  // processing order: the bank's ages count processed frames
};

struct MemoryFrame {
  std::int64_t t = 0;
  std::shared_ptr<const Floats> img, img_pos;  // [HW,256]
  Floats mem, mem_pos;                         // [HW,256]
  Floats pointers;                             // [16,256]
  std::array<bool, kSlots> flagged{};          // slots whose conditioning-flag channel was 1 (new or reconditioned)
};

// What a slot holds: kFree (never used), an object id (> 0), or kRetired (its object ended).
inline constexpr int kFree = pure::video::kFreeSlot;
inline constexpr int kRetired = pure::video::kRetiredSlot;

// What this frame's memory holds per slot: the decoder's mask unless `masks` replaces it
// (a reconditioned object), `empty` suppresses it (-10 everywhere: the occlusion rule) or
// `shrunk` does (logits clamped to at most -10: the area-shrinkage rule). Slots in `pointers`
// (reconditioned) take that pointer and are flagged (conditioning-flag channel 1) in this
// frame's memory, which stays a non-conditioning one.
struct SlotMemory {
  std::array<bool, kSlots> empty{};
  std::array<bool, kSlots> shrunk{};
  std::map<int, Floats> masks;     // slot -> [M,M] logits
  std::map<int, Floats> pointers;  // slot -> [256]
};

// Objects that join a bucket's free slots on this frame (packing): their ids, masks ([M,M]
// logits: the detection's) and pointers ([256]: the interactive decoder's), in slot order.
struct JoiningObjects {
  std::vector<int> ids;
  std::vector<Floats> masks, pointers;
};

// The memory encoder's input of a frame: 16 mask planes (sigmoid x 2 - 1 at the memory side),
// then 16 conditioning-flag planes; and the slots that take the no-object embedding.
struct MemoryInput {
  Floats masks32;
  std::vector<bool> no_object;
  std::vector<int> joined;  // a join frame's: the slot each joining object takes, in their order
};

class Bucket {
 public:
  // Starts a bucket on `neck`'s frame with `ids` (at most 16) whose masks ([M,M] logits) and
  // pointers ([256] each) are known: their memory becomes the conditioning frame.
  Bucket(const VideoDecoder& bundle, const FrameNeck& neck, const std::vector<int>& ids, const std::vector<Floats>& masks,
         const std::vector<Floats>& pointers);

  const std::array<int, kSlots>& slots() const { return slots_; }
  bool live() const;

  // Memory attention and the tracking decoder on the current frame; pointers computed.
  void propagate(const VideoDecoder& bundle, const FrameNeck& neck);
  const SlotOutputs& outputs() const { return out_; }
  bool appearing(int slot) const { return out_.score_logits[slot] > 0.0f; }
  // Fills holes and removes sprinkles (hole_filling.h) in the live slots' masks; 0: nothing.
  void fill_holes(const VideoDecoder& bundle, int max_area);

  // The memory encoder's input plane of `slot` ([S,S], S = memory_side()) as `memory` says;
  // returns whether any pixel is inside (the official code's object score for the encoder).
  bool memory_plane(const VideoDecoder& bundle, const SlotMemory& memory, int slot, float* out) const;
  // Encodes this frame's memory as `memory` says, then retires the slots of `removed` objects
  // (as officially: objects removed on a frame are in that frame's memory; a bucket left with
  // no object encodes nothing, it is dropped), and keeps it as a non-conditioning frame. A slot
  // with nothing inside (or not appearing, unless flagged) gets the no-object embedding.
  // `joining` objects (at most the free slots) take the lowest free slots first, flagged, with
  // their pointers, and the frame is encoded as SAM 3.1 re-encodes a frame objects join (see
  // join_planes: raw masks, kept apart per pixel). A join or reconditioning frame leaves the
  // bank after 6 frames (its pointers after 15).
  void remember(const VideoDecoder& bundle, const FrameNeck& neck, const SlotMemory& memory, const std::vector<int>& removed,
                const JoiningObjects* joining = nullptr);
  // The memory input of this frame with `joining` objects in the lowest free slots, as remember
  // encodes it (SAM 3.1's re-encode of a frame objects join: see bucket.cpp).
  MemoryInput join_input(const VideoDecoder& bundle, const SlotMemory& memory, const JoiningObjects& joining) const;
  std::size_t memory_bytes() const;
  // What the bank can come to once full: memory_bytes() of every frame it may hold, and those
  // frames' neck rows (shared with other buckets, so counted here as an upper bound).
  std::size_t memory_bytes_limit() const;
  int conditioning_frames() const { return static_cast<int>(conds_.size()); }  // 1: the first frame
  // The bank as it stands (oldest first): what a test inspects of a join.
  const std::deque<MemoryFrame>& conditioning_memory() const { return conds_; }
  const std::deque<MemoryFrame>& recent_memory() const { return recent_; }

 private:
  Floats slot_pointers(const VideoDecoder& bundle) const;
  MemoryFrame encode(const VideoDecoder& bundle, const FrameNeck& neck, const Floats& masks32, const std::vector<bool>& no_object,
                     Floats pointers) const;

  std::array<int, kSlots> slots_{};
  std::deque<MemoryFrame> conds_;                                // the first frame only
  std::deque<MemoryFrame> recent_;                               // non-conditioning, at most 6
  std::deque<std::pair<std::int64_t, Floats>> recent_pointers_;  // non-conditioning, at most 15
  SlotOutputs out_;
  Floats projected_;  // this frame's pointers after obj_ptr_proj, [16,256]
};

// sigmoid(logits) * 2 - 1 (the memory encoder's mask scale and bias) resized to `side`.
void memory_mask(const Floats& logits, int mask_side, int side, float* out);

}  // namespace sam3::video
