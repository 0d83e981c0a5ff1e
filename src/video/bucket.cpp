#include "video/bucket.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "predictor/postprocess.h"
#include "pure/video/hole_filling.h"
#include "pure/video/mask_prompt.h"
#include "pure/video/non_overlap.h"

namespace sam3::video {
namespace {

constexpr float kSuppressedLogit = -10.0f;  // NO_OBJ_LOGIT of the official code
constexpr float kNoObjectScore = -1024.0f;  // NO_OBJ_SCORE: the mask of an object the tracker does not see

// [256, HW] -> [HW, 256].
Floats to_rows(const Floats& chw, size_t hw) {
  Floats rows(chw.size());
  for (size_t c = 0; c < kChannels; ++c)
    for (size_t p = 0; p < hw; ++p) rows[p * kChannels + c] = chw[c * hw + p];
  return rows;
}

Floats to_planes(const Floats& rows, size_t hw) {
  Floats chw(rows.size());
  for (size_t p = 0; p < hw; ++p)
    for (size_t c = 0; c < kChannels; ++c) chw[c * hw + p] = rows[p * kChannels + c];
  return chw;
}

// Adds `vec` [256] to every row.
void add_rows(Floats& rows, const float* vec) {
  for (size_t i = 0; i < rows.size(); ++i) rows[i] += vec[i % kChannels];
}

}  // namespace

void memory_mask(const Floats& logits, int mask_side, int side, float* out) {
  Floats prob(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) prob[i] = 2.0f / (1.0f + std::exp(-logits[i])) - 1.0f;
  predictor::resize_bilinear(prob.data(), mask_side, mask_side, side, side, out);
}

Bucket::Bucket(const VideoDecoder& bundle, const FrameNeck& neck, const std::vector<int>& ids, const std::vector<Floats>& masks,
               const std::vector<Floats>& pointers) {
  const size_t plane = static_cast<size_t>(bundle.memory_side()) * bundle.memory_side();
  Floats masks32(2 * kSlots * plane, 0.0f);
  std::vector<bool> no_object(kSlots, true);
  Floats ptrs(kSlots * kChannels, 0.0f);  // free slots' pointers are 0 (the official mux of an empty slot)
  for (size_t k = 0; k < ids.size(); ++k) {
    slots_[k] = ids[k];
    no_object[k] = false;
    memory_mask(masks[k], bundle.mask_side(), bundle.memory_side(), &masks32[k * plane]);
    std::fill_n(&masks32[(kSlots + k) * plane], plane, 1.0f);  // conditioning flag
    std::copy(pointers[k].begin(), pointers[k].end(), &ptrs[k * kChannels]);
  }
  conds_.push_back(encode(bundle, neck, masks32, no_object, std::move(ptrs)));
}

bool Bucket::live() const {
  return std::any_of(slots_.begin(), slots_.end(), [](int id) { return id > 0; });
}

void Bucket::propagate(const VideoDecoder& bundle, const FrameNeck& neck) {
  const auto& tpos = bundle.constant("maskmem_tpos_enc");
  const size_t hw = static_cast<size_t>(bundle.feature_side()) * bundle.feature_side();
  Floats mem, mem_pos, img, img_pos;
  auto add_spatial = [&](const MemoryFrame& f, int tpos_index) {
    const float* code = &tpos[tpos_index * kChannels];
    mem.insert(mem.end(), f.mem.begin(), f.mem.end());
    Floats p = f.mem_pos;
    add_rows(p, code);
    mem_pos.insert(mem_pos.end(), p.begin(), p.end());
    img.insert(img.end(), f.img->begin(), f.img->end());
    Floats q = *f.img_pos;
    add_rows(q, code);
    img_pos.insert(img_pos.end(), q.begin(), q.end());
  };
  // The conditioning frames by their age (use_maskmem_tpos_v2), the recent ones by distance.
  for (const auto& c : conds_) {
    const std::int64_t age = neck.t - c.t;
    add_spatial(c, age <= 0 || age >= kMaskMemories ? kMaskMemories - 1 : static_cast<int>(kMaskMemories - age - 1));
  }
  for (const auto& f : recent_) add_spatial(f, static_cast<int>(std::min<std::int64_t>(neck.t - f.t - 1, kMaskMemories - 2)));
  // Object pointers: the conditioning frames', then the recent ones; each frame's 16 slots
  // share one temporal code (obj_ptr_tpos_proj of the sine code of age / 15).
  std::vector<float> ages;
  for (const auto& c : conds_) {
    ages.push_back(static_cast<float>(neck.t - c.t) / (kObjectPointers - 1));
    mem.insert(mem.end(), c.pointers.begin(), c.pointers.end());
  }
  for (const auto& [t, ptrs] : recent_pointers_) {
    ages.push_back(static_cast<float>(neck.t - t) / (kObjectPointers - 1));
    mem.insert(mem.end(), ptrs.begin(), ptrs.end());
  }
  const Floats codes = bundle.project("obj_ptr_tpos_proj", pure::video::sine_positions(ages, kChannels));
  for (size_t a = 0; a < ages.size(); ++a)
    for (int k = 0; k < kSlots; ++k) mem_pos.insert(mem_pos.end(), &codes[a * kChannels], &codes[(a + 1) * kChannels]);

  const Floats attended = bundle.attend(*neck.rows, *neck.pos_rows, mem, mem_pos, img, img_pos);
  Floats extra(kSlots * kChannels);
  const auto& valid = bundle.constant("output_valid_embed");
  const auto& invalid = bundle.constant("output_invalid_embed");
  for (int k = 0; k < kSlots; ++k) {
    const auto& src = slots_[k] > 0 ? valid : invalid;
    std::copy_n(&src[k * kChannels], kChannels, &extra[k * kChannels]);
  }
  out_ = bundle.track(to_planes(attended, hw), *neck.frame, extra);
  projected_ = bundle.project("obj_ptr_proj", out_.tokens);
}

// This frame's pointers as the bank keeps them: live appearing slots as projected; live
// slots not appearing through the no-object linear map; free and retired slots 0 (SAM 3.1's
// mux gives an empty or REMOVED slot zeros; ailia's driver gives them the map's bias).
Floats Bucket::slot_pointers(const VideoDecoder& bundle) const {
  const auto& w = bundle.constant("no_obj_ptr_linear_weight");
  const auto& b = bundle.constant("no_obj_ptr_linear_bias");
  Floats ptrs(kSlots * kChannels, 0.0f);
  for (int k = 0; k < kSlots; ++k) {
    float* dst = &ptrs[k * kChannels];
    if (slots_[k] <= 0) continue;
    const float* src = &projected_[k * kChannels];
    if (appearing(k)) {
      std::copy_n(src, kChannels, dst);
      continue;
    }
    for (int o = 0; o < kChannels; ++o) {
      float acc = b[o];
      for (int i = 0; i < kChannels; ++i) acc += w[o * kChannels + i] * src[i];
      dst[o] = acc;
    }
  }
  return ptrs;
}

void Bucket::fill_holes(const VideoDecoder& bundle, int max_area) {
  if (max_area <= 0) return;
  const size_t plane = static_cast<size_t>(bundle.mask_side()) * bundle.mask_side();
  for (int k = 0; k < kSlots; ++k) {
    if (slots_[k] > 0)
      pure::video::fill_holes_and_remove_sprinkles(&out_.masks[k * plane], bundle.mask_side(), bundle.mask_side(), max_area);
  }
}

bool Bucket::memory_plane(const VideoDecoder& bundle, const SlotMemory& memory, int slot, float* out) const {
  const size_t mask_plane = static_cast<size_t>(bundle.mask_side()) * bundle.mask_side();
  const size_t plane = static_cast<size_t>(bundle.memory_side()) * bundle.memory_side();
  auto given = memory.masks.find(slot);
  Floats logits = given != memory.masks.end()
                      ? given->second
                      : Floats(out_.masks.begin() + slot * mask_plane, out_.masks.begin() + (slot + 1) * mask_plane);
  if (memory.empty[slot]) std::fill(logits.begin(), logits.end(), kSuppressedLogit);
  if (memory.shrunk[slot])
    for (auto& v : logits) v = std::min(v, kSuppressedLogit);
  memory_mask(logits, bundle.mask_side(), bundle.memory_side(), out);
  return std::any_of(out, out + plane, [](float v) { return v > 0.0f; });
}

// A join frame as SAM 3.1 re-encodes it once objects are added to it (video_tracking_multiplex_demo.py
// _consolidate_temp_output_across_obj, then _encode_new_memory): the masks of every object of
// the bucket, the old ones' raw decoder logits (NO_OBJ_SCORE where the tracker does not see them;
// the occlusion and area-shrinkage suppressions of the memory step are not applied there), a
// reconditioned one's given mask, the new ones' detection masks binarised to +-1024; resized to
// the memory side, kept apart per pixel (the highest logit wins, pure/video/non_overlap.h), then
// sigmoid x 2 - 1. The official code resizes to 1008 for the non-overlap and its memory encoder
// to 1152; this resizes once, to the memory side. Old objects take the no-object embedding by
// the tracker's score, new ones by their mask's area (their score is +-10 from it).
MemoryInput Bucket::join_input(const VideoDecoder& bundle, const SlotMemory& memory, const JoiningObjects& joining) const {
  const auto free = pure::video::lowest_free_slots(slots_, static_cast<int>(joining.ids.size()));
  if (free.size() != joining.ids.size()) throw std::logic_error("more objects join a bucket than it has free slots");
  std::map<int, size_t> joined;  // slot -> joining object
  for (size_t i = 0; i < free.size(); ++i) joined[free[i]] = i;
  const int m = bundle.mask_side(), side = bundle.memory_side();
  const size_t mask_plane = static_cast<size_t>(m) * m, plane = static_cast<size_t>(side) * side;
  MemoryInput in{Floats(2 * kSlots * plane, 0.0f), std::vector<bool>(kSlots, true), free};
  const auto empty = [](const Floats& logits) { return std::none_of(logits.begin(), logits.end(), [](float v) { return v > 0.0f; }); };
  std::vector<float*> planes;
  Floats logits(mask_plane);
  for (int k = 0; k < kSlots; ++k) {
    const auto join = joined.find(k);
    const auto own = memory.masks.find(k);
    if (join != joined.end()) {
      const Floats& detection = joining.masks[join->second];
      in.no_object[k] = empty(detection);
      for (size_t i = 0; i < mask_plane; ++i) logits[i] = detection[i] > 0.0f ? -kNoObjectScore : kNoObjectScore;
    } else if (slots_[k] <= 0) {
      continue;
    } else if (own != memory.masks.end()) {
      logits = own->second;
      in.no_object[k] = empty(logits);
    } else if (appearing(k)) {
      logits.assign(out_.masks.begin() + k * mask_plane, out_.masks.begin() + (k + 1) * mask_plane);
      in.no_object[k] = false;
    } else {
      std::fill(logits.begin(), logits.end(), kNoObjectScore);
    }
    float* dst = &in.masks32[k * plane];
    predictor::resize_bilinear(logits.data(), m, m, side, side, dst);
    planes.push_back(dst);
    if (join != joined.end() || memory.pointers.contains(k)) std::fill_n(&in.masks32[(kSlots + k) * plane], plane, 1.0f);
  }
  pure::video::keep_highest_per_pixel(planes, plane);
  for (float* p : planes)
    for (size_t i = 0; i < plane; ++i) p[i] = 2.0f / (1.0f + std::exp(-p[i])) - 1.0f;
  return in;
}

void Bucket::remember(const VideoDecoder& bundle, const FrameNeck& neck, const SlotMemory& memory, const std::vector<int>& removed,
                      const JoiningObjects* joining) {
  const auto ending = [&](int id) { return std::find(removed.begin(), removed.end(), id) != removed.end(); };
  const auto retire = [&] {
    for (auto& id : slots_)
      if (id > 0 && ending(id)) id = kRetired;
  };
  if (!joining && std::none_of(slots_.begin(), slots_.end(), [&](int id) { return id > 0 && !ending(id); })) {
    retire();  // every object ends here: the bucket is dropped, its memory of this frame never read
    return;
  }
  const size_t plane = static_cast<size_t>(bundle.memory_side()) * bundle.memory_side();
  MemoryInput in;
  Floats pointers = slot_pointers(bundle);
  if (joining) {
    // Joining objects take the lowest free slots, with their pointers, flagged (SAM 3.1's
    // add_new_masks on a frame already tracked).
    in = join_input(bundle, memory, *joining);
    for (size_t i = 0; i < in.joined.size(); ++i) {
      slots_[in.joined[i]] = joining->ids[i];
      std::copy(joining->pointers[i].begin(), joining->pointers[i].end(), &pointers[in.joined[i] * kChannels]);
    }
  } else {
    in = {Floats(2 * kSlots * plane, 0.0f), std::vector<bool>(kSlots, true), {}};
    for (int k = 0; k < kSlots; ++k) {
      if (slots_[k] <= 0) continue;
      const bool inside = memory_plane(bundle, memory, k, &in.masks32[k * plane]);
      const bool flagged = memory.pointers.contains(k);  // conditioning_objects (reconditioned)
      // The official code gives the encoder an object score from the mask's area; a slot the
      // tracker does not see appearing keeps the no-object embedding as in ailia's driver.
      in.no_object[k] = !inside || (!appearing(k) && !flagged);
      if (flagged) std::fill_n(&in.masks32[(kSlots + k) * plane], plane, 1.0f);
    }
  }
  for (const auto& [k, p] : memory.pointers) std::copy(p.begin(), p.end(), &pointers[k * kChannels]);
  MemoryFrame frame = encode(bundle, neck, in.masks32, in.no_object, std::move(pointers));
  retire();
  // Always a recent (non-conditioning) frame: officially only a frame not tracked yet (the
  // bucket's first) is a conditioning one (is_init_cond_frame; add_all_frames_to_correct_as_cond
  // is off).
  recent_pointers_.emplace_back(neck.t, frame.pointers);
  recent_.push_back(std::move(frame));
  // Next frame attends to the non-conditioning frames of its last 6 (memories) and 15 (pointers).
  while (!recent_.empty() && neck.t - recent_.front().t > kMaskMemories - 2) recent_.pop_front();
  while (!recent_pointers_.empty() && neck.t - recent_pointers_.front().first > kObjectPointers - 2) recent_pointers_.pop_front();
}

MemoryFrame Bucket::encode(const VideoDecoder& bundle, const FrameNeck& neck, const Floats& masks32, const std::vector<bool>& no_object,
                           Floats pointers) const {
  const size_t hw = static_cast<size_t>(bundle.feature_side()) * bundle.feature_side();
  auto [feat, pos] = bundle.encode_memory(*neck.frame, masks32);
  // Slots with no object (free, retired, or not appearing) add their no-object embedding.
  const auto& no_obj = bundle.constant("no_obj_embed_spatial");
  for (int k = 0; k < kSlots; ++k) {
    if (!no_object[k]) continue;
    for (size_t c = 0; c < kChannels; ++c) {
      float* plane = &feat[c * hw];
      for (size_t p = 0; p < hw; ++p) plane[p] += no_obj[k * kChannels + c];
    }
  }
  MemoryFrame f;
  f.t = neck.t;
  f.img = neck.rows;
  f.img_pos = neck.pos_rows;
  f.mem = to_rows(feat, hw);
  f.mem_pos = to_rows(pos, hw);
  f.pointers = std::move(pointers);
  const size_t plane = static_cast<size_t>(bundle.memory_side()) * bundle.memory_side();
  for (int k = 0; k < kSlots; ++k) f.flagged[k] = masks32[(kSlots + k) * plane] > 0.0f;
  return f;
}

std::size_t Bucket::memory_bytes() const {
  std::size_t n = 0;
  for (const auto& c : conds_) n += (c.mem.size() + c.mem_pos.size() + c.pointers.size()) * sizeof(float);
  for (const auto& f : recent_) n += (f.mem.size() + f.mem_pos.size() + f.pointers.size()) * sizeof(float);
  for (const auto& p : recent_pointers_) n += p.second.size() * sizeof(float);
  return n;
}

std::size_t Bucket::memory_bytes_limit() const {
  if (conds_.empty()) return memory_bytes();
  const MemoryFrame& f = conds_.front();  // every frame of a bank has the same sizes
  const std::size_t frame = (f.mem.size() + f.mem_pos.size() + f.pointers.size()) * sizeof(float);
  const std::size_t rows = ((f.img ? f.img->size() : 0) + (f.img_pos ? f.img_pos->size() : 0)) * sizeof(float);
  const std::size_t frames = 1 + (kMaskMemories - 1), pointer_frames = kObjectPointers - 1;  // the first frame and 6 recent ones
  return frames * (frame + rows) + pointer_frames * f.pointers.size() * sizeof(float);
}

}  // namespace sam3::video
