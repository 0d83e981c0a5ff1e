#include "pure/tracker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "core/parallel.h"
#include "predictor/postprocess.h"
#include "pure/prompt_rules.h"
#include "predictor/preprocess.h"
#include "pure/contract.h"
#include "sam3/error.h"
#include "sam3/prompt_check.h"

namespace sam3::pure {
namespace {

std::string fmt(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

// The CLI's names: objects and points counted from 1.
InteractivePromptNames counted_names(size_t index) {
  const std::string object = "object " + std::to_string(index + 1);
  return {object, [object](size_t j) { return object + ", point " + std::to_string(j + 1); }, object + "'s box"};
}

struct Group {
  std::vector<size_t> members;
  int points = 0;
  bool box = false;
};

std::vector<Group> group_objects(const std::vector<InteractivePrompt>& prompts) {
  std::map<std::pair<int, int>, Group> by_shape;  // (points, box) -> objects
  std::vector<Group> runs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const int points = static_cast<int>(prompts[i].points.size());
    const bool box = prompts[i].box.has_value();
    if (box && points > 0) {
      runs.push_back({{i}, points, true});
      continue;
    }
    auto& g = by_shape[{points, box ? 1 : 0}];
    g.points = points;
    g.box = box;
    g.members.push_back(i);
  }
  for (auto& [key, g] : by_shape) {
    for (size_t start = 0; start < g.members.size(); start += kTrackerObjectsPerRun) {
      const size_t end = std::min(g.members.size(), start + kTrackerObjectsPerRun);
      runs.push_back({{g.members.begin() + static_cast<std::ptrdiff_t>(start), g.members.begin() + static_cast<std::ptrdiff_t>(end)},
                      g.points,
                      g.box});
    }
  }
  return runs;
}

TrackerBatch make_batch(const std::vector<InteractivePrompt>& prompts, const Group& g, float sx, float sy) {
  TrackerBatch b;
  b.objects = static_cast<int>(g.members.size());
  b.points_per_object = g.points;
  b.point_rows = g.points == 0 ? 1 : b.objects;
  for (size_t i : g.members) {
    for (const auto& pt : prompts[i].points) {
      b.points.push_back(pt.x * sx);
      b.points.push_back(pt.y * sy);
      b.labels.push_back(pt.positive ? 1 : 0);
    }
    if (g.box) {
      const Box& box = *prompts[i].box;
      b.boxes.insert(b.boxes.end(), {box.x0 * sx, box.y0 * sy, box.x1 * sx, box.y1 * sy});
    }
  }
  return b;
}

// One candidate's logits at the image size: upsampled to the model's input size, then resized
// to the image's (transformers' post_process_masks; the stretch has no padding to crop).
std::vector<float> logits_at_image(const TrackerDecoded& d, size_t object, size_t candidate, int model_w, int model_h, int width,
                                   int height) {
  const size_t plane = static_cast<size_t>(d.mask_h) * d.mask_w;
  const float* src = d.masks.data() + (object * d.candidates + candidate) * plane;
  std::vector<float> model(static_cast<size_t>(model_w) * model_h);
  predictor::resize_bilinear(src, d.mask_h, d.mask_w, model_h, model_w, model.data());
  if (model_w == width && model_h == height) return model;
  std::vector<float> image(static_cast<size_t>(width) * height);
  predictor::resize_bilinear(model.data(), model_h, model_w, height, width, image.data());
  return image;
}

Instance instance_from_logits(const std::vector<float>& logits, int width, int height, float score) {
  Instance inst;
  inst.score = score;
  inst.mask = predictor::mask_above(logits.data(), width, height, 0.f);
  inst.area = inst.mask.area();
  inst.box = predictor::mask_bounds(inst.mask);
  return inst;
}

// parallel_for's items per thread so that the threads' scratch (`scratch` bytes each) stays
// within 512 MB: on many cores and a large image it was cores x 5 bytes a pixel (a 100 MP image
// on 64 cores: 32 GB); one thread always runs.
size_t items_per_thread(size_t items, std::uint64_t scratch) {
  constexpr std::uint64_t kBudget = 512ull << 20;
  const std::uint64_t threads = std::max<std::uint64_t>(1, kBudget / std::max<std::uint64_t>(scratch, 1));
  return std::max<size_t>(1, static_cast<size_t>((items + threads - 1) / threads));
}

void checked_floats(const TensorViews& outputs, const char* name, size_t expected, std::vector<float>& out) {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw Error(ErrorCode::kRuntime, std::string("the decoder produced no '") + name + "' output");
  if (it->second.count != expected) {
    throw Error(ErrorCode::kModelMismatch, std::string("decoder output '") + name + "' has shape " + shape_string(it->second.shape) + ", " +
                                               std::to_string(it->second.count) + " values where " + std::to_string(expected) +
                                               " were expected");
  }
  out = to_float32(it->second, name);
}

}  // namespace

float stability_score(const std::vector<float>& logits, float offset) {
  std::int64_t high = 0, low = 0;
  for (float v : logits) high += v > offset, low += v > -offset;
  return low == 0 ? 0.f : static_cast<float>(high) / static_cast<float>(low);
}

Tracker::Tracker(const PartSpec& image, const PartSpec& decoder) : image_(image), decoder_(decoder) {
  require_inputs(image_, {{"pixel_values", kFloatOrHalf, {4}}});
  std::vector<Expected> embeddings;
  for (const auto& name : embedding_names()) embeddings.push_back({name, kFloatOrHalf, {4}});
  require_outputs(image_, embeddings);
  embeddings.push_back({"input_points", kFloatOrHalf, {4}});
  embeddings.push_back({"input_labels", kIntTypes, {3}});
  embeddings.push_back({"input_boxes", kFloatOrHalf, {3}});
  require_inputs(decoder_, embeddings);
  require_outputs(decoder_,
                  {{"iou_scores", kFloatOrHalf, {3}}, {"pred_masks", kFloatOrHalf, {5}}, {"object_score_logits", kFloatOrHalf, {3}}});
  const auto& shape = image_.input("pixel_values")->shape;
  height_ = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
  width_ = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
  half_ = image_.input("pixel_values")->type == 10 || decoder_.output("pred_masks")->type == 10;
}

std::vector<std::string> Tracker::quirks() const {
  std::vector<std::string> q = {"no text: one object per set of points and/or box",
                                "image normalized outside the graph ((x/255 - 0.5) / 0.5)",
                                "masks upsampled to the model's input size, then to the image's, cut at logit 0"};
  if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
  return q;
}

const std::vector<std::string>& Tracker::embedding_names() {
  static const std::vector<std::string> names = {"image_embeddings.0", "image_embeddings.1", "image_embeddings.2"};
  return names;
}

std::vector<Tensor> Tracker::image_inputs(std::vector<float>& planes) const {
  predictor::normalize_sam3(planes);
  std::vector<Tensor> out;
  out.push_back(float_tensor("pixel_values", image_.input("pixel_values")->type, {1, 3, height_, width_}, planes));
  return out;
}

std::vector<TrackerRun> Tracker::object_runs(const std::vector<InteractivePrompt>& prompts, int width, int height) const {
  if (prompts.empty()) throw Error(ErrorCode::kInvalidArgument, "no object: give points and/or a box for at least one object");
  if (prompts.size() > static_cast<size_t>(kMaxObjectsPerCall)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::to_string(prompts.size()) + " objects in one call; at most " + std::to_string(kMaxObjectsPerCall));
  }
  for (size_t i = 0; i < prompts.size(); ++i) check_interactive_prompt(prompts[i], counted_names(i), width, height);
  const float sx = static_cast<float>(width_) / width, sy = static_cast<float>(height_) / height;
  std::vector<TrackerRun> runs;
  for (const Group& g : group_objects(prompts)) runs.push_back({g.members, make_batch(prompts, g, sx, sy)});
  return runs;
}

std::vector<Tensor> Tracker::decoder_inputs(const TrackerBatch& b) const {
  std::vector<Tensor> out;
  out.push_back(float_tensor("input_points", decoder_.input("input_points")->type, {1, b.point_rows, b.points_per_object, 2}, b.points));
  out.push_back(int_tensor("input_labels", decoder_.input("input_labels")->type, {1, b.objects, b.points_per_object}, b.labels));
  out.push_back(
      float_tensor("input_boxes", decoder_.input("input_boxes")->type, {1, static_cast<std::int64_t>(b.boxes.size() / 4), 4}, b.boxes));
  return out;
}

TrackerDecoded Tracker::decoded(const TensorViews& outputs, int objects) const {
  auto masks = outputs.find("pred_masks");
  if (masks == outputs.end()) throw Error(ErrorCode::kRuntime, "the decoder produced no 'pred_masks' output");
  const auto& shape = masks->second.shape;
  if (shape.size() != 5 || shape[1] != objects) {
    throw Error(ErrorCode::kModelMismatch, "decoder output 'pred_masks' has shape " + shape_string(shape) + " for " +
                                               std::to_string(objects) + " objects; expected [1," + std::to_string(objects) +
                                               ",candidates,height,width]");
  }
  TrackerDecoded d;
  d.objects = objects;
  d.candidates = static_cast<int>(shape[2]);
  d.mask_h = static_cast<int>(shape[3]);
  d.mask_w = static_cast<int>(shape[4]);
  const size_t n = static_cast<size_t>(objects), per_object = static_cast<size_t>(d.candidates);
  checked_floats(outputs, "iou_scores", n * per_object, d.iou);
  checked_floats(outputs, "pred_masks", n * per_object * d.mask_h * d.mask_w, d.masks);
  checked_floats(outputs, "object_score_logits", n, d.object_logits);
  return d;
}

void Tracker::object_results(const TrackerDecoded& d, const TrackerRun& run, const std::vector<InteractivePrompt>& prompts,
                             const InteractiveOptions& options, int width, int height, std::vector<ObjectResult>& results) const {
  core::parallel_for(
      run.members.size(),
      [&](size_t k) {
        ObjectResult& r = results[run.members[k]];
        r.prompt = prompts[run.members[k]];
        r.object_score = predictor::sigmoid(d.object_logits[k]);
        const float* iou = d.iou.data() + k * d.candidates;
        std::vector<size_t> order(static_cast<size_t>(d.candidates));
        std::iota(order.begin(), order.end(), size_t{0});
        // Best predicted IoU first; the first candidate wins a tie (argmax).
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return iou[a] > iou[b]; });
        if (!options.multimask) order.resize(1);
        for (size_t c : order) {
          r.masks.push_back(instance_from_logits(logits_at_image(d, k, c, width_, height_, width, height), width, height, iou[c]));
        }
      },
      1);
}

void Tracker::check_everything_options(const EverythingOptions& o) {
  const auto bad = [](const std::string& what) { throw Error(ErrorCode::kInvalidArgument, what); };
  if (o.points_per_side < 1 || o.points_per_side > 256) bad("points_per_side must be 1 to 256");
  if (o.points_per_batch < 1 || o.points_per_batch > kTrackerObjectsPerRun) {
    bad("points_per_batch must be 1 to " + std::to_string(kTrackerObjectsPerRun));
  }
  const auto unit = [&](float v, const char* name) {
    if (!(v >= 0.f && v <= 1.f)) bad(std::string(name) + " must be a number from 0 to 1, got " + fmt(v));
  };
  unit(o.pred_iou_threshold, "pred_iou_threshold");
  unit(o.stability_threshold, "stability_threshold");
  unit(o.box_nms_threshold, "box_nms_threshold");
  unit(o.object_score_threshold, "object_score_threshold");
  if (!(o.stability_offset >= 0.f && o.stability_offset < 1e3f)) bad("stability_offset must be 0 or more");
  if (o.min_area < 0) bad("min_area must be 0 or more");
  if (o.crop_layers < 0 || o.crop_layers > kMaxCropLayers) {
    bad("crop_layers must be 0 to " + std::to_string(kMaxCropLayers) + " (layer i encodes 4^i crops)");
  }
  if (!(o.crop_overlap_ratio >= 0.f && o.crop_overlap_ratio < 1.f)) {
    bad("crop_overlap_ratio must be a number from 0 to below 1, got " + fmt(o.crop_overlap_ratio));
  }
  if (o.crop_points_downscale < 1 || o.crop_points_downscale > 16) bad("crop_points_downscale must be 1 to 16");
  unit(o.crop_nms_threshold, "crop_nms_threshold");
}

std::vector<TrackerBatch> Tracker::everything_runs(const EverythingOptions& options, int width, int height) const {
  check_everything_options(options);
  const float sx = static_cast<float>(width_) / width, sy = static_cast<float>(height_) / height;
  const int n = options.points_per_side;
  std::vector<TrackerBatch> runs;
  for (int start = 0; start < n * n; start += options.points_per_batch) {
    const int count = std::min(options.points_per_batch, n * n - start);
    TrackerBatch b;
    b.objects = b.point_rows = count;
    b.points_per_object = 1;
    for (int k = start; k < start + count; ++k) {
      // The grid's cells' centres, as SAM's build_point_grid.
      b.points.push_back((static_cast<float>(k % n) + 0.5f) / static_cast<float>(n) * width * sx);
      b.points.push_back((static_cast<float>(k / n) + 0.5f) / static_cast<float>(n) * height * sy);
      b.labels.push_back(1);
    }
    runs.push_back(std::move(b));
  }
  return runs;
}

std::vector<CompactInstance> Tracker::everything_candidates(const TrackerDecoded& d, const EverythingOptions& options, int width,
                                                            int height, const std::function<bool(const Box&)>& keep) const {
  // Each thread's scratch for a candidate: its logits at the model's and the image's size
  // (floats) and its mask (bytes).
  const std::uint64_t scratch = static_cast<std::uint64_t>(width_) * height_ * 4 + static_cast<std::uint64_t>(width) * height * 5;
  std::vector<std::pair<size_t, CompactInstance>> found;  // with its item's index: threads push in any order
  std::mutex mutex;
  const size_t items = static_cast<size_t>(d.objects) * d.candidates;
  core::parallel_for(
      items,
      [&](size_t i) {
        const size_t object = i / d.candidates, candidate = i % d.candidates;
        const float iou = d.iou[i];
        if (!(iou > options.pred_iou_threshold)) return;
        if (!(predictor::sigmoid(d.object_logits[object]) > options.object_score_threshold)) return;
        const auto logits = logits_at_image(d, object, candidate, width_, height_, width, height);
        if (stability_score(logits, options.stability_offset) < options.stability_threshold) return;
        Instance inst = instance_from_logits(logits, width, height, iou);
        if (inst.area == 0 || inst.area < options.min_area) return;
        if (keep && !keep(inst.box)) return;
        CompactInstance small = compact(inst);
        std::lock_guard lock(mutex);
        found.emplace_back(i, std::move(small));
      },
      items_per_thread(items, scratch));
  // In the grid's order, whatever thread found each: the same run gives the same list.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CompactInstance> candidates;
  candidates.reserve(found.size());
  for (auto& f : found) candidates.push_back(std::move(f.second));
  return candidates;
}

std::vector<CompactInstance> Tracker::deduplicate(std::vector<CompactInstance> candidates, float box_nms_threshold) {
  // A total order on what a candidate is, never on where it came from: candidates of equal score
  // and box (a grid's neighbouring points often decode the same object) are ordered by their
  // masks, so which one the NMS keeps does not depend on the order the threads found them in.
  std::sort(candidates.begin(), candidates.end(), [](const CompactInstance& a, const CompactInstance& b) {
    if (a.score != b.score) return a.score > b.score;
    const CompactMask &m = a.mask, &n = b.mask;
    return std::tie(a.box.y0, a.box.x0, a.box.y1, a.box.x1, a.area, m.y0, m.x0, m.y1, m.x1, m.runs) <
           std::tie(b.box.y0, b.box.x0, b.box.y1, b.box.x1, b.area, n.y0, n.x0, n.y1, n.x1, n.runs);
  });
  std::vector<CompactInstance> kept;
  for (auto& c : candidates) {
    const bool duplicate = std::any_of(kept.begin(), kept.end(),
                                       [&](const CompactInstance& k) { return predictor::box_iou(k.box, c.box) > box_nms_threshold; });
    if (!duplicate) kept.push_back(std::move(c));
  }
  return kept;
}

}  // namespace sam3::pure
