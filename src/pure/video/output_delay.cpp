#include "pure/video/output_delay.h"

#include <algorithm>

#include "predictor/mask_overlaps.h"
#include "predictor/postprocess.h"

namespace sam3::pure::video {

std::vector<TrackedObject> render_objects(const std::vector<const PendingObject*>& shown, int width, int height) {
  std::vector<float> scores;
  for (const PendingObject* object : shown) scores.push_back(object->tracker_score);
  // Object-wise non-overlap (_apply_object_wise_non_overlapping_constraints): the highest
  // tracker score claims a shared pixel; `shown` is in id order, so ties go to the lower id.
  std::vector<Mask> masks = predictor::exclusive_masks(scores, [&](size_t k) {
    return predictor::upsample_mask(shown[k]->logits.data(), shown[k]->mask_h, shown[k]->mask_w, height, width, 0.0f);
  });
  std::vector<TrackedObject> out;
  for (size_t k = 0; k < shown.size(); ++k) {
    if (masks[k].empty()) continue;
    TrackedObject obj;
    obj.id = shown[k]->id;
    obj.prompt = shown[k]->prompt;
    obj.score = shown[k]->score;
    obj.box = predictor::mask_bounds(masks[k]);
    obj.mask = std::move(masks[k]);
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<VideoFrameResult> OutputDelay::push(PendingFrame frame, const std::set<int>& removed_now) {
  removed_.insert(removed_now.begin(), removed_now.end());
  frames_.push_back(std::move(frame));
  std::vector<VideoFrameResult> out;
  while (!frames_.empty() && static_cast<int>(frames_.size()) >= std::max(delay_, 1)) out.push_back(emit(false));
  return out;
}

std::vector<VideoFrameResult> OutputDelay::flush() {
  std::vector<VideoFrameResult> out;
  while (!frames_.empty()) out.push_back(emit(true));
  return out;
}

VideoFrameResult OutputDelay::emit(bool video_ended) {
  PendingFrame frame = std::move(frames_.front());
  frames_.pop_front();
  // Confirmation is read `lookahead_` frames later (at the video's end: on its last frame). A
  // frame not processed yet has no record, and SAM 3.1 then hides nothing as unconfirmed; with
  // no delay it keeps no records (nor the removed list) at all.
  const PendingFrame* status = &frame;
  if (lookahead_ > 0) {
    if (frames_.size() >= static_cast<size_t>(lookahead_))
      status = &frames_[lookahead_ - 1];
    else if (video_ended)
      status = frames_.empty() ? &frame : &frames_.back();
    else
      status = nullptr;
  }
  if (delay_ == 0) status = nullptr;
  std::vector<const PendingObject*> shown;
  for (const auto& obj : frame.objects) {
    if ((delay_ > 0 && removed_.contains(obj.id)) || frame.suppressed.contains(obj.id)) continue;
    if (status && status->unconfirmed.contains(obj.id)) continue;
    shown.push_back(&obj);
  }
  std::sort(shown.begin(), shown.end(), [](const PendingObject* a, const PendingObject* b) { return a->id < b->id; });
  VideoFrameResult result;
  result.index = frame.index;
  result.time_s = frame.time_s;
  result.objects = render_objects(shown, width_, height_);
  return result;
}

}  // namespace sam3::pure::video
