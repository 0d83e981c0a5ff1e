// The video tracker: one image-encoder pass per frame feeds every prompt's detector and tracker
// buckets. The graphs run behind the model's video decoder (model/video_decoder.h, chosen by
// the family row's video capability); the host rules are pure/video's (concept_book.h, the
// output delay output_delay.h, ...), the memory bucket.h's.
#include "sam3/video_tracker.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/timer.h"
#include "model/video_decoder.h"
#include "predictor/postprocess.h"
#include "pure/prompt_rules.h"
#include "pure/video/area_shrinkage.h"
#include "pure/video/bucket_placement.h"
#include "pure/video/concept_book.h"
#include "pure/video/hole_filling.h"
#include "pure/video/output_delay.h"
#include "pure/video/recondition.h"
#include "sam3/error.h"
#include "video/bucket.h"

namespace sam3 {
namespace {

using video::Bucket;
using video::Floats;
using video::kSlots;

float logistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorCode::kInvalidArgument, message); }

void check_options(const VideoTrackerOptions& o) {
  for (auto [name, v] : {std::pair{"detection_threshold", o.detection_threshold},
                         {"nms_iom", o.nms_iom},
                         {"association_iom", o.association_iom},
                         {"track_match_iom", o.track_match_iom},
                         {"new_object_threshold", o.new_object_threshold},
                         {"occlusion_overlap_iou", o.occlusion_overlap_iou}}) {
    if (!(v >= 0.0f && v <= 1.0f)) invalid(std::string("video option ") + name + " must be within 0..1");
  }
  if (!(o.boundary_margin >= 0.0f && o.boundary_margin < 0.5f)) invalid("video option boundary_margin must be within 0..0.5");
  if (o.hotstart_delay < 0 || o.hotstart_unmatched < 0 || o.hotstart_duplicate < 0 || o.confirmation_detections < 0 || o.max_objects < 0) {
    invalid("video options hotstart_*, confirmation_detections and max_objects must not be negative");
  }
  if (o.hotstart_delay > 0 && (o.hotstart_unmatched > o.hotstart_delay || o.hotstart_duplicate > o.hotstart_delay)) {
    invalid("video options hotstart_unmatched and hotstart_duplicate must not exceed hotstart_delay (as the official code asserts)");
  }
  if (o.keep_alive_min > o.keep_alive_max) invalid("video option keep_alive_min must not exceed keep_alive_max");
  for (auto [name, v] : {std::pair{"recondition_iom", o.recondition_iom},
                         {"recondition_detection_score", o.recondition_detection_score},
                         {"recondition_track_score", o.recondition_track_score},
                         {"shrinkage_min_ratio", o.shrinkage_min_ratio}}) {
    if (!(v >= 0.0f && v <= 1.0f)) invalid(std::string("video option ") + name + " must be within 0..1");
  }
  if (o.recondition_every < 0 || o.fill_hole_area < 0) invalid("video options recondition_every and fill_hole_area must not be negative");
}

// An object prompt as the outputs name it (their labels: object1, object2, ...).
std::string object_name(size_t i) { return "object" + std::to_string(i + 1); }

// One prompt's objects: a text's concept (with its detector), or the clicked objects.
struct Track {
  int prompt = 0;
  bool user = false;
  std::unique_ptr<const detail::VideoText> text;
  pure::video::ConceptBook book;
  std::vector<Bucket> buckets;
  std::map<int, float> first_scores;    // id -> the detection score that started it
  std::map<int, std::int64_t> started;  // id -> the frame (counted from 0 as pushed) it started on
  std::map<int, int> object_prompts;    // clicked objects: id -> texts + its object prompt's index
  Track(int p, const VideoTrackerOptions& o) : prompt(p), book(o) {}
  int prompt_of(int id) const {
    const auto it = object_prompts.find(id);
    return it == object_prompts.end() ? prompt : it->second;
  }
};

}  // namespace

struct VideoTracker::Impl {
  std::shared_ptr<const Model> model;
  std::shared_ptr<const detail::VideoDecoder> bundle;  // shared with the model's other trackers
  VideoPrompts prompts;
  VideoTrackerOptions options;
  std::vector<Track> tracks;  // texts first, then the clicked objects' (if any)
  std::vector<bool> object_prompt_done;
  std::optional<pure::video::OutputDelay> delay;
  int width = 0, height = 0;
  std::int64_t last_index = -1, t = 0;
  int next_id = 1;
  VideoTrackerStats stats;

  std::vector<VideoFrameResult> push(const VideoFrame& frame);
  void check_frame(const VideoFrame& frame);
  static void check_places(const VideoPrompts& prompts, int width, int height);
  std::vector<pure::video::Detection> detect(Track& track, const detail::EncodedFrame& frame, std::vector<Floats>& det_logits);
  void step(Track& track, const video::FrameNeck& neck, pure::video::PendingFrame& pending, std::set<int>& removed_now,
            std::vector<pure::video::TrackMask>& clicked);
  void start_clicked(const VideoFrame& frame, const video::FrameNeck& neck, pure::video::PendingFrame& pending,
                     std::vector<pure::video::TrackMask>& clicked);
  // The interactive decoder prompted with a low-resolution mask (upsampled to the frame, > 0):
  // a new or reconditioned object's pointer.
  Floats pointer_from_mask(const Floats& logits, const video::FrameNeck& neck) const;
  // Suppresses, in `memory`, the masks the area-shrinkage rule drops among `track`'s objects.
  void suppress_shrunk(Track& track, std::vector<video::SlotMemory>& memory);
  int live_objects() const;
};

VideoTracker::VideoTracker(std::shared_ptr<const Model> model, VideoPrompts prompts, VideoTrackerOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (!model) invalid("no model given to the video tracker");
  check_options(options);
  if (prompts.texts.empty() && prompts.objects.empty()) {
    invalid("nothing to track: give a text (--prompt car) or an object on a frame (--point x,y@frame, --box x0,y0,x1,y1@frame)");
  }
  for (const auto& text : prompts.texts) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) invalid("a text prompt is empty: give a word such as car");
  }
  for (size_t i = 0; i < prompts.objects.size(); ++i) {
    const auto& o = prompts.objects[i];
    const bool positive = std::any_of(o.points.begin(), o.points.end(), [](const PointPrompt& p) { return p.positive; });
    if (!positive && !o.box) invalid(object_name(i) + " has neither a positive point nor a box");
    if (o.frame < 0) invalid(object_name(i) + " is on frame " + std::to_string(o.frame) + ": frames count from 0");
  }
  auto& d = *impl_;
  d.bundle = detail::video_decoder(model);  // kModelMismatch unless the model's family row tracks video
  d.model = std::move(model);
  d.options = options;
  for (size_t i = 0; i < prompts.texts.size(); ++i) {
    d.tracks.emplace_back(static_cast<int>(i), options);
    d.tracks.back().text = d.bundle->encode_text(prompts.texts[i]);  // once per prompt, not per frame
  }
  if (!prompts.objects.empty()) {
    d.tracks.emplace_back(static_cast<int>(prompts.texts.size()), options);
    d.tracks.back().user = true;
  }
  d.object_prompt_done.assign(prompts.objects.size(), false);
  d.prompts = std::move(prompts);
}

VideoTracker::~VideoTracker() = default;

std::vector<VideoFrameResult> VideoTracker::push(const VideoFrame& frame) { return impl_->push(frame); }

std::vector<VideoFrameResult> VideoTracker::finish() {
  auto& d = *impl_;
  if (!d.delay) invalid("the video has no frames: nothing was tracked");
  for (size_t i = 0; i < d.prompts.objects.size(); ++i) {
    if (!d.object_prompt_done[i]) {
      invalid(object_name(i) + " is on frame " + std::to_string(d.prompts.objects[i].frame) +
              ", which the video never reached (it ended after frame " + std::to_string(d.last_index) + ")");
    }
  }
  const auto t0 = core::Clock::now();
  auto out = d.delay->flush();
  d.stats.output_ms += core::ms_since(t0);
  return out;
}

VideoTrackerStats VideoTracker::stats() const {
  auto s = impl_->stats;
  s.live_objects = impl_->live_objects();
  s.buckets = 0;
  s.memory_bank_bytes = 0;
  s.memory_bank_limit_bytes = 0;
  s.conditioning_frames = 0;
  for (const auto& t : impl_->tracks) {
    s.buckets += static_cast<int>(t.buckets.size());
    for (const auto& b : t.buckets) {
      // Unconfirmed and started too few frames ago to have been confirmed yet (not those the
      // detector had every chance to confirm).
      const int needed = impl_->options.confirmation_detections;
      for (int id : b.slots()) {
        const auto from = t.started.find(id);
        s.unconfirmed_objects +=
            id > 0 && !t.user && needed > 0 && !t.book.confirmed(id) && from != t.started.end() && impl_->t - from->second < needed;
      }
      s.memory_bank_bytes += b.memory_bytes();
      s.memory_bank_limit_bytes += b.memory_bytes_limit();
      s.conditioning_frames += b.conditioning_frames();
    }
  }
  return s;
}

int VideoTracker::Impl::live_objects() const {
  int n = 0;
  for (const auto& t : tracks)
    for (const auto& b : t.buckets)
      for (int id : b.slots()) n += id > 0;
  return n;
}

void VideoTracker::Impl::check_frame(const VideoFrame& frame) {
  const Image& im = frame.image;
  if (im.width <= 0 || im.height <= 0 || im.rgb.size() != static_cast<size_t>(im.width) * im.height * 3) {
    invalid("frame " + std::to_string(frame.index) + " is not an RGB image of width*height*3 bytes");
  }
  if (delay && (im.width != width || im.height != height)) {
    invalid("frame " + std::to_string(frame.index) + " is " + std::to_string(im.width) + "x" + std::to_string(im.height) +
            " but the video's frames are " + std::to_string(width) + "x" + std::to_string(height) +
            ": every frame of a video must have one size");
  }
  if (frame.index <= last_index) {
    invalid("frame " + std::to_string(frame.index) + " comes after frame " + std::to_string(last_index) +
            ": frames must be pushed in increasing index order");
  }
  for (size_t i = 0; i < prompts.objects.size(); ++i) {
    const auto& o = prompts.objects[i];
    if (!object_prompt_done[i] && o.frame < frame.index) {
      // Strides are refused before reading (check_prompt_frames): a gap here is a frame that
      // could not be decoded, which a warning has named.
      invalid(object_name(i) + " is on frame " + std::to_string(o.frame) + ", which the video lacks (the next frame is " +
              std::to_string(frame.index) + "; a frame that could not be decoded, or one a stride skips): prompt a frame it has");
    }
  }
  // Every frame has the first one's size, so the first frame checks every prompt's place:
  // a click outside the frame is refused before any tracking, not when its frame comes.
  if (!delay) check_places(prompts, im.width, im.height);
}

void VideoTracker::Impl::check_places(const VideoPrompts& prompts, int width, int height) {
  for (size_t i = 0; i < prompts.objects.size(); ++i) {  // every frame of a video has one size
    const auto& o = prompts.objects[i];
    const std::string on = " on frame " + std::to_string(o.frame);
    for (size_t j = 0; j < o.points.size(); ++j) {
      const auto& p = o.points[j];
      const auto refusal = pure::point_refusal(object_name(i) + "'s point " + std::to_string(j + 1) + on, p.x, p.y, width, height, "frame");
      if (!refusal.empty()) invalid(refusal);
    }
    if (!o.box) continue;
    if (const auto refusal = pure::box_refusal(object_name(i) + "'s box" + on, *o.box, width, height, "frame"); !refusal.empty()) {
      invalid(refusal);
    }
  }
}

void VideoTracker::check_prompt_places(int width, int height) const {
  if (width <= 0 || height <= 0) invalid("frames of " + std::to_string(width) + "x" + std::to_string(height) + " pixels cannot be tracked");
  Impl::check_places(impl_->prompts, width, height);
}

std::vector<VideoFrameResult> VideoTracker::Impl::push(const VideoFrame& frame) {
  check_frame(frame);
  if (options.stop.stop_requested()) throw Error(ErrorCode::kCancelled, "video tracking stopped");
  const detail::VideoRunStop stop(options.stop);
  if (!delay) {
    width = frame.image.width;
    height = frame.image.height;
    delay.emplace(options.hotstart_delay, options.confirmation_detections, width, height);
  }
  last_index = frame.index;

  // One encoder pass: the detector's neck (fpn*, pos*) and the tracker's (prop_*).
  auto t0 = core::Clock::now();
  const auto encoded = bundle->encode_frame(frame.image);
  video::FrameNeck neck;
  neck.frame = encoded.get();
  neck.rows = encoded->rows;
  neck.pos_rows = encoded->pos_rows;
  neck.t = t;
  stats.encode_ms += core::ms_since(t0);

  pure::video::PendingFrame pending;
  pending.index = frame.index;
  pending.time_s = frame.time_s;
  std::set<int> removed_now;
  // The clicked objects first (those prompted on this frame included): a detection over one
  // of them starts no object of a concept.
  std::vector<pure::video::TrackMask> clicked;
  if (!tracks.empty() && tracks.back().user) step(tracks.back(), neck, pending, removed_now, clicked);
  start_clicked(frame, neck, pending, clicked);
  for (auto& track : tracks) {
    if (!track.user) step(track, neck, pending, removed_now, clicked);
  }
  ++t;
  ++stats.frames;
  t0 = core::Clock::now();
  auto out = delay->push(std::move(pending), removed_now);
  stats.output_ms += core::ms_since(t0);
  return out;
}

std::vector<pure::video::Detection> VideoTracker::Impl::detect(Track& track, const detail::EncodedFrame& frame,
                                                               std::vector<Floats>& det_logits) {
  const auto raw = bundle->detect(frame, *track.text);
  const Floats &masks = raw.masks, &boxes = raw.boxes, &logits = raw.logits;
  const float presence = logistic(raw.presence_logit);
  const size_t q = logits.size();
  const size_t plane = static_cast<size_t>(bundle->mask_side()) * bundle->mask_side();
  if (q == 0 || masks.size() != q * plane || boxes.size() != q * 4) {
    throw Error(ErrorCode::kModelMismatch, "the grounding graph's pred_masks are not " + std::to_string(bundle->mask_side()) + "x" +
                                               std::to_string(bundle->mask_side()) + " per query, the tracker's mask size");
  }
  std::vector<pure::video::Detection> kept;
  std::vector<Floats> kept_logits;
  for (size_t i = 0; i < q; ++i) {
    const float score = logistic(logits[i]) * presence;
    if (!(score > options.detection_threshold)) continue;
    pure::video::Detection d;
    d.mask = pure::video::binarize(&masks[i * plane], bundle->mask_side(), bundle->mask_side());
    d.score = score;
    d.cx = boxes[i * 4];
    d.cy = boxes[i * 4 + 1];
    kept.push_back(std::move(d));
    kept_logits.emplace_back(masks.begin() + i * plane, masks.begin() + (i + 1) * plane);
  }
  std::vector<pure::video::BinaryMask> kept_masks;
  std::vector<float> scores;
  for (const auto& d : kept) {
    kept_masks.push_back(d.mask);
    scores.push_back(d.score);
  }
  std::vector<int> order = options.nms_iom > 0 ? pure::video::nms_by_iom(kept_masks, scores, options.nms_iom) : std::vector<int>{};
  if (options.nms_iom <= 0)
    for (size_t i = 0; i < kept.size(); ++i) order.push_back(static_cast<int>(i));
  std::sort(order.begin(), order.end());  // the detector's query order
  std::vector<pure::video::Detection> out;
  for (int i : order) {
    out.push_back(std::move(kept[i]));
    det_logits.push_back(std::move(kept_logits[i]));
  }
  return out;
}

Floats VideoTracker::Impl::pointer_from_mask(const Floats& logits, const video::FrameNeck& neck) const {
  std::vector<std::uint8_t> full(static_cast<size_t>(width) * height);
  predictor::upsample_threshold(logits.data(), bundle->mask_side(), bundle->mask_side(), height, width, 0.0f, full.data());
  const Floats prompt_mask = bundle->mask_prompt(full, width, height);
  return bundle->prompt(*neck.frame, {}, {}, &prompt_mask).pointer;
}

void VideoTracker::Impl::suppress_shrunk(Track& track, std::vector<video::SlotMemory>& memory) {
  if (!(options.shrinkage_min_ratio > 0)) return;
  const size_t plane = static_cast<size_t>(bundle->memory_side()) * bundle->memory_side();
  pure::video::ShrinkageVote vote(plane);
  std::vector<std::pair<size_t, int>> voters;  // (bucket, slot) in the order added
  Floats scratch(plane);
  for (size_t b = 0; b < track.buckets.size(); ++b) {
    for (int k = 0; k < kSlots; ++k) {
      // A suppressed mask (-10 everywhere) owns no positive pixel of another: leaving it out is exact.
      if (track.buckets[b].slots()[k] <= 0 || memory[b].empty[k]) continue;
      track.buckets[b].memory_plane(*bundle, memory[b], k, scratch.data());
      vote.add(scratch.data());
      voters.emplace_back(b, k);
    }
  }
  // (A lone object is voted on too: an empty mask is "shrunk" and clamped, as officially.)
  const auto shrunk = vote.shrunk(options.shrinkage_min_ratio);
  for (size_t i = 0; i < voters.size(); ++i) {
    if (!shrunk[i]) continue;
    memory[voters[i].first].shrunk[voters[i].second] = true;
    ++stats.shrunk;
  }
}

void VideoTracker::Impl::step(Track& track, const video::FrameNeck& neck, pure::video::PendingFrame& pending, std::set<int>& removed_now,
                              std::vector<pure::video::TrackMask>& clicked) {
  const size_t plane = static_cast<size_t>(bundle->mask_side()) * bundle->mask_side();
  // 1. Every bucket's memory attention and tracking decoder; holes filled in their masks.
  auto t0 = core::Clock::now();
  std::vector<pure::video::TrackMask> masks;
  std::vector<std::pair<size_t, int>> where;  // masks[i]'s (bucket, slot)
  for (size_t b = 0; b < track.buckets.size(); ++b) {
    auto& bucket = track.buckets[b];
    bucket.propagate(*bundle, neck);
    ++stats.bucket_frames;
    bucket.fill_holes(*bundle, options.fill_hole_area);
    for (int k = 0; k < kSlots; ++k) {
      if (bucket.slots()[k] <= 0) continue;
      masks.push_back(
          {bucket.slots()[k], pure::video::binarize(&bucket.outputs().masks[k * plane], bundle->mask_side(), bundle->mask_side())});
      where.emplace_back(b, k);
    }
  }
  stats.track_ms += core::ms_since(t0);
  const size_t own = masks.size();
  if (track.user)
    clicked.insert(clicked.end(), masks.begin(), masks.end());
  else
    masks.insert(masks.end(), clicked.begin(), clicked.end());
  // 2. The detector (text prompts), NMS by IoM.
  t0 = core::Clock::now();
  std::vector<Floats> det_logits;
  std::vector<pure::video::Detection> dets;
  if (track.text) dets = detect(track, *neck.frame, det_logits);
  stats.detect_ms += core::ms_since(t0);
  // 3. Reconditioning (periodic): which tracks a detection re-prompts, and their new masks.
  std::map<int, Floats> recond_masks;  // id -> blended logits
  std::map<int, int> recond_det;       // id -> detection
  std::vector<pure::video::TrackMask> recond_view;
  if (track.text && pure::video::is_recondition_frame(t, options.recondition_every) && !dets.empty()) {
    std::vector<float> scores(masks.size(), -1.0f);  // clicked objects are not reconditioned
    for (size_t i = 0; i < own; ++i) {
      scores[i] = logistic(track.buckets[where[i].first].outputs().score_logits[where[i].second]);
    }
    for (const auto& [i, d] : pure::video::recondition_matches(dets, masks, scores, options)) {
      const auto& out = track.buckets[where[i].first].outputs();
      Floats blended(out.masks.begin() + where[i].second * plane, out.masks.begin() + (where[i].second + 1) * plane);
      pure::video::blend_recondition(blended.data(), det_logits[d].data(), plane);
      pure::video::fill_holes_and_remove_sprinkles(blended.data(), bundle->mask_side(), bundle->mask_side(), options.fill_hole_area);
      recond_det[masks[i].id] = d;
      recond_masks[masks[i].id] = std::move(blended);
    }
    if (!recond_masks.empty()) {
      recond_view = masks;
      for (auto& m : recond_view) {
        if (auto it = recond_masks.find(m.id); it != recond_masks.end())
          m.mask = pure::video::binarize(it->second.data(), bundle->mask_side(), bundle->mask_side());
      }
    }
  }
  // 4. The host rules.
  const int room = options.max_objects > 0 ? std::max(0, options.max_objects - live_objects()) : -1;
  const auto plan = track.book.step(t, dets, masks, next_id, room, recond_view.empty() ? nullptr : &recond_view);
  removed_now.insert(plan.removed.begin(), plan.removed.end());
  pending.suppressed.insert(plan.suppressed.begin(), plan.suppressed.end());
  pending.suppressed.insert(plan.ended.begin(), plan.ended.end());  // the clicked object shows there from this frame on
  pending.unconfirmed.insert(plan.unconfirmed.begin(), plan.unconfirmed.end());
  std::set<int> gone = plan.removed;  // slots retired after this frame's memory
  gone.insert(plan.ended.begin(), plan.ended.end());
  for (int id : gone) recond_masks.erase(id), recond_det.erase(id);  // their memory is dropped anyway
  // 5. Output candidates: every tracked object's prediction (reconditioned: the blended mask;
  // occlusion-suppressed: empty).
  for (auto& b : track.buckets) {
    for (int k = 0; k < kSlots; ++k) {
      const int id = b.slots()[k];
      if (id <= 0) continue;
      pure::video::PendingObject o;
      o.id = id;
      o.prompt = track.prompt_of(id);
      o.tracker_score = logistic(b.outputs().score_logits[k]);
      o.score = track.user ? o.tracker_score : track.first_scores[id];
      o.mask_h = o.mask_w = bundle->mask_side();
      if (auto it = recond_masks.find(id); it != recond_masks.end())
        o.logits = it->second;
      else
        o.logits.assign(b.outputs().masks.begin() + k * plane, b.outputs().masks.begin() + (k + 1) * plane);
      if (plan.occluded_suppressed.contains(id)) std::fill(o.logits.begin(), o.logits.end(), -10.0f);
      pending.objects.push_back(std::move(o));
    }
  }
  // 6. New objects from detections: their pointers from the interactive decoder with the
  // detection's mask as the prompt. Their output masks have holes filled; their memory takes
  // the detection's own mask.
  t0 = core::Clock::now();
  video::JoiningObjects fresh;
  for (size_t i = 0; i < plan.new_detections.size(); ++i) {
    const Floats& logits = det_logits[plan.new_detections[i]];
    const int id = plan.new_ids[i];
    const float score = dets[plan.new_detections[i]].score;
    track.first_scores[id] = score;
    track.started[id] = t;
    fresh.ids.push_back(id);
    fresh.masks.push_back(logits);
    fresh.pointers.push_back(pointer_from_mask(logits, neck));
    Floats shown = logits;
    pure::video::fill_holes_and_remove_sprinkles(shown.data(), bundle->mask_side(), bundle->mask_side(), options.fill_hole_area);
    pending.objects.push_back({id, track.prompt, score, score, bundle->mask_side(), bundle->mask_side(), std::move(shown)});
    ++stats.objects;
  }
  // Where they go (pack_new_objects, SAM 3.1's _tracker_add_new_objects): all together into
  // the bucket with the fewest free slots that holds them and keeps an object past this frame,
  // or new buckets.
  std::optional<size_t> host;
  if (options.pack_new_objects && !fresh.ids.empty()) {
    std::vector<pure::video::BucketSlots> slots;
    for (const auto& b : track.buckets) slots.push_back(b.slots());
    host = pure::video::bucket_for_new_objects(slots, gone, static_cast<int>(fresh.ids.size()));
  }
  stats.new_objects_ms += core::ms_since(t0);
  // 7. Memory of this frame, a non-conditioning one (reconditioned objects and objects
  // joining a bucket are encoded with it from their own masks and pointers, flagged); masks
  // the non-overlap would shrink too much suppressed; removed objects' slots retired after;
  // empty buckets dropped.
  t0 = core::Clock::now();
  std::vector<video::SlotMemory> memory(track.buckets.size());
  for (size_t b = 0; b < track.buckets.size(); ++b) {
    for (int k = 0; k < kSlots; ++k) {
      const int id = track.buckets[b].slots()[k];
      if (id <= 0) continue;
      memory[b].empty[k] = plan.occluded_suppressed.contains(id);
      if (auto it = recond_masks.find(id); it != recond_masks.end()) {
        memory[b].masks[k] = it->second;
        memory[b].pointers[k] = pointer_from_mask(det_logits[recond_det[id]], neck);
        ++stats.reconditioned;
      }
    }
  }
  suppress_shrunk(track, memory);
  const std::vector<int> removed(gone.begin(), gone.end());
  for (size_t b = 0; b < track.buckets.size(); ++b)
    track.buckets[b].remember(*bundle, neck, memory[b], removed, host == b ? &fresh : nullptr);
  std::erase_if(track.buckets, [](const Bucket& b) { return !b.live(); });
  if (host) stats.packed += static_cast<std::int64_t>(fresh.ids.size());
  stats.memory_ms += core::ms_since(t0);
  // 8. Objects not packed start new buckets of up to 16 whose conditioning frame is this one.
  if (host) return;
  t0 = core::Clock::now();
  const auto& ids = fresh.ids;
  for (size_t start = 0; start < ids.size(); start += kSlots) {
    const size_t end = std::min(ids.size(), start + kSlots);
    track.buckets.emplace_back(*bundle, neck, std::vector<int>(ids.begin() + start, ids.begin() + end),
                               std::vector<Floats>(fresh.masks.begin() + start, fresh.masks.begin() + end),
                               std::vector<Floats>(fresh.pointers.begin() + start, fresh.pointers.begin() + end));
  }
  stats.new_objects_ms += core::ms_since(t0);
}

void VideoTracker::Impl::start_clicked(const VideoFrame& frame, const video::FrameNeck& neck, pure::video::PendingFrame& pending,
                                       std::vector<pure::video::TrackMask>& clicked) {
  if (tracks.empty() || !tracks.back().user) return;
  Track& track = tracks.back();
  const auto t0 = core::Clock::now();
  std::vector<int> ids;
  std::vector<Floats> masks, pointers;
  // Frame pixels to the encoder's input pixels (the prompt encoder reads 1008-pixel coordinates).
  const float sx = static_cast<float>(bundle->input_size()) / width, sy = static_cast<float>(bundle->input_size()) / height;
  for (size_t i = 0; i < prompts.objects.size(); ++i) {
    const auto& o = prompts.objects[i];
    if (o.frame != frame.index) continue;
    object_prompt_done[i] = true;
    Floats coords;
    std::vector<int> labels;
    if (o.box) {  // SAM's box: two corner points labelled 2 and 3, before the clicks
      coords.insert(coords.end(), {o.box->x0 * sx, o.box->y0 * sy, o.box->x1 * sx, o.box->y1 * sy});
      labels.insert(labels.end(), {2, 3});
    }
    for (const auto& p : o.points) {
      coords.insert(coords.end(), {p.x * sx, p.y * sy});
      labels.push_back(p.positive ? 1 : 0);
    }
    auto prompted = bundle->prompt(*neck.frame, coords, labels, nullptr);
    const int id = next_id++;
    track.object_prompts[id] = track.prompt + static_cast<int>(i);
    for (auto& any : tracks) any.book.add_user_object(id, t);
    clicked.push_back({id, pure::video::binarize(prompted.mask.data(), bundle->mask_side(), bundle->mask_side())});
    ids.push_back(id);
    const float score = logistic(prompted.score_logit);
    pending.objects.push_back({id, track.prompt_of(id), score, score, bundle->mask_side(), bundle->mask_side(), prompted.mask});
    masks.push_back(std::move(prompted.mask));
    pointers.push_back(std::move(prompted.pointer));
    ++stats.objects;
  }
  for (size_t start = 0; start < ids.size(); start += kSlots) {
    const size_t end = std::min(ids.size(), start + kSlots);
    track.buckets.emplace_back(*bundle, neck, std::vector<int>(ids.begin() + start, ids.begin() + end),
                               std::vector<Floats>(masks.begin() + start, masks.begin() + end),
                               std::vector<Floats>(pointers.begin() + start, pointers.begin() + end));
  }
  stats.new_objects_ms += core::ms_since(t0);
}

}  // namespace sam3
