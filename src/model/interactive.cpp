// Points and boxes -> one object each on the interactive generation, and "segment everything"
// (SAM's automatic mask generator) on top of it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>
#include <numeric>
#include <string>

#include "core/parallel.h"
#include "core/timer.h"
#include "model/backend.h"
#include "model/interactive.h"
#include "predictor/postprocess.h"
#include "sam3/error.h"
#include "sam3/model.h"

namespace sam3 {
namespace detail {

void check_embedding_layout(const EmbeddingData& e, Layout model) {
  if (e.layout != model) {
    throw Error(ErrorCode::kInvalidArgument, std::string("this image embedding was made by a ") + layout_name(e.layout) +
                                                 " model and cannot be decoded by a " + layout_name(model) +
                                                 " model; encode the image with the model you prompt");
  }
}

}  // namespace detail

namespace {

// Objects decoded per decoder run: the masks of 64 objects are 64 * 3 * 288 * 288 floats (64 MB).
constexpr int kObjectsPerRun = 64;

std::string fmt(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

void check_prompt(const InteractivePrompt& p, size_t index, int width, int height) {
  const std::string object = "object " + std::to_string(index + 1);
  if (p.points.size() > static_cast<size_t>(kMaxPointsPerObject)) {
    throw Error(ErrorCode::kInvalidArgument, object + " has " + std::to_string(p.points.size()) + " points; at most " +
                                                 std::to_string(kMaxPointsPerObject) +
                                                 " points per object (a few clicks are what the model was trained on)");
  }
  bool positive = false;
  for (size_t j = 0; j < p.points.size(); ++j) {
    const PointPrompt& pt = p.points[j];
    const std::string point = object + ", point " + std::to_string(j + 1);
    if (!std::isfinite(pt.x) || !std::isfinite(pt.y)) {
      throw Error(ErrorCode::kInvalidArgument, point + " (" + fmt(pt.x) + ", " + fmt(pt.y) +
                                                   ") is not a pair of numbers; give pixel coordinates x,y");
    }
    if (pt.x < 0 || pt.y < 0 || pt.x > width || pt.y > height) {
      throw Error(ErrorCode::kInvalidArgument, point + " (" + fmt(pt.x) + ", " + fmt(pt.y) + ") is outside the " +
                                                   std::to_string(width) + "x" + std::to_string(height) +
                                                   " image; x must be 0.." + std::to_string(width) + " and y 0.." +
                                                   std::to_string(height) + " (pixels)");
    }
    positive = positive || pt.positive;
  }
  if (p.box) {
    const Box& b = *p.box;
    const bool finite = std::isfinite(b.x0) && std::isfinite(b.y0) && std::isfinite(b.x1) && std::isfinite(b.y1);
    if (!finite || !(b.x1 > b.x0 && b.y1 > b.y0) || b.x0 < 0 || b.y0 < 0 || b.x1 > width || b.y1 > height) {
      throw Error(ErrorCode::kInvalidArgument, object + "'s box (" + fmt(b.x0) + ", " + fmt(b.y0) + ", " + fmt(b.x1) +
                                                   ", " + fmt(b.y1) + ") must satisfy 0 <= x0 < x1 <= " +
                                                   std::to_string(width) + " and 0 <= y0 < y1 <= " +
                                                   std::to_string(height) + " (pixel x0,y0,x1,y1 of this image)");
    }
  } else if (!positive) {
    throw Error(ErrorCode::kInvalidArgument,
                object + " has neither a positive point nor a box: negative points only say what the object is not; "
                         "add a positive point (x,y) on it or a box around it");
  }
}

// Decoder runs: objects with the same inputs' shapes go together, as the model takes them:
// points only (grouped by point count), a box alone (zero points, as transformers.js sends
// it), and points with a box (one object per run: the model takes one box per image then).
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
    for (size_t start = 0; start < g.members.size(); start += kObjectsPerRun) {
      const size_t end = std::min(g.members.size(), start + kObjectsPerRun);
      runs.push_back({{g.members.begin() + static_cast<std::ptrdiff_t>(start), g.members.begin() + static_cast<std::ptrdiff_t>(end)},
                      g.points, g.box});
    }
  }
  return runs;
}

detail::ObjectBatch make_batch(const std::vector<InteractivePrompt>& prompts, const Group& g, float sx, float sy) {
  detail::ObjectBatch b;
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
std::vector<float> logits_at_image(const detail::DecodedObjects& d, size_t object, size_t candidate, int model_w,
                                   int model_h, int width, int height) {
  const size_t plane = static_cast<size_t>(d.mask_h) * d.mask_w;
  const float* src = d.masks.data() + (object * d.candidates + candidate) * plane;
  std::vector<float> model(static_cast<size_t>(model_w) * model_h);
  resize_bilinear(src, d.mask_h, d.mask_w, model_h, model_w, model.data());
  if (model_w == width && model_h == height) return model;
  std::vector<float> image(static_cast<size_t>(width) * height);
  resize_bilinear(model.data(), model_h, model_w, height, width, image.data());
  return image;
}

Instance instance_from_logits(const std::vector<float>& logits, int width, int height, float score) {
  Instance inst;
  inst.score = score;
  inst.mask.width = width;
  inst.mask.height = height;
  inst.mask.data.resize(logits.size());
  for (size_t k = 0; k < logits.size(); ++k) inst.mask.data[k] = logits[k] > 0.f ? 1 : 0;
  inst.area = std::count(inst.mask.data.begin(), inst.mask.data.end(), std::uint8_t{1});
  inst.box = mask_bounds(inst.mask);
  return inst;
}

const detail::InteractiveDecoder& decoder_of(const detail::Backend& backend) {
  const auto* d = backend.interactive();
  if (!d) {
    throw Error(ErrorCode::kInvalidArgument,
                "this SAM3 model takes text and exemplar boxes, not clicks: points (and \"segment everything\") need "
                "SAM3's interactive model (onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and "
                "prompt_encoder_mask_decoder.onnx)");
  }
  return *d;
}

}  // namespace

namespace detail {

std::vector<ObjectResult> segment_objects(const Backend& backend, const EmbeddingData& image,
                                          const std::vector<InteractivePrompt>& prompts, const InteractiveOptions& options,
                                          int* decoder_runs) {
  const InteractiveDecoder& decoder = decoder_of(backend);
  check_embedding_layout(image, backend.layout());
  if (prompts.empty()) throw Error(ErrorCode::kInvalidArgument, "no object: give points and/or a box for at least one object");
  if (prompts.size() > static_cast<size_t>(kMaxObjectsPerCall)) {
    throw Error(ErrorCode::kInvalidArgument, std::to_string(prompts.size()) + " objects in one call; at most " +
                                                 std::to_string(kMaxObjectsPerCall));
  }
  for (size_t i = 0; i < prompts.size(); ++i) check_prompt(prompts[i], i, image.width, image.height);
  const int model_w = backend.input_width(), model_h = backend.input_height();
  const float sx = static_cast<float>(model_w) / image.width, sy = static_cast<float>(model_h) / image.height;

  std::vector<ObjectResult> results(prompts.size());
  ObjectTimings timings;
  for (const Group& g : group_objects(prompts)) {
    const auto t0 = Clock::now();
    const DecodedObjects d = decoder.decode_objects(image, make_batch(prompts, g, sx, sy));
    if (decoder_runs) ++*decoder_runs;
    timings.decode_ms += ms_since(t0);
    const auto t1 = Clock::now();
    parallel_for(g.members.size(), [&](size_t k) {
      ObjectResult& r = results[g.members[k]];
      r.prompt = prompts[g.members[k]];
      r.object_score = sigmoid(d.object_logits[k]);
      const float* iou = d.iou.data() + k * d.candidates;
      std::vector<size_t> order(static_cast<size_t>(d.candidates));
      std::iota(order.begin(), order.end(), size_t{0});
      // Best predicted IoU first; the first candidate wins a tie (argmax).
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return iou[a] > iou[b]; });
      if (!options.multimask) order.resize(1);
      for (size_t c : order) {
        r.masks.push_back(instance_from_logits(logits_at_image(d, k, c, model_w, model_h, image.width, image.height),
                                               image.width, image.height, iou[c]));
      }
    }, 1);
    timings.postprocess_ms += ms_since(t1);
  }
  for (auto& r : results) r.timings = timings;
  return results;
}

namespace {

void check_everything_options(const EverythingOptions& o) {
  const auto bad = [](const std::string& what) { throw Error(ErrorCode::kInvalidArgument, what); };
  if (o.points_per_side < 1 || o.points_per_side > 256) bad("points_per_side must be 1 to 256");
  if (o.points_per_batch < 1 || o.points_per_batch > kObjectsPerRun) {
    bad("points_per_batch must be 1 to " + std::to_string(kObjectsPerRun));
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

// parallel_for's items per thread so that the threads' scratch (`scratch` bytes each) stays
// within 512 MB: on many cores and a large image it was cores x 5 bytes a pixel (a 100 MP image
// on 64 cores: 32 GB); one thread always runs.
size_t items_per_thread(size_t items, std::uint64_t scratch) {
  constexpr std::uint64_t kBudget = 512ull << 20;
  const std::uint64_t threads = std::max<std::uint64_t>(1, kBudget / std::max<std::uint64_t>(scratch, 1));
  return std::max<size_t>(1, static_cast<size_t>((items + threads - 1) / threads));
}

// IoU of the mask cut at +offset with the mask cut at -offset (SAM's stability score).
float stability_score(const std::vector<float>& logits, float offset) {
  std::int64_t high = 0, low = 0;
  for (float v : logits) high += v > offset, low += v > -offset;
  return low == 0 ? 0.f : static_cast<float>(high) / static_cast<float>(low);
}

}  // namespace

void check_everything(const Backend& backend, const EverythingOptions& options) {
  decoder_of(backend);
  check_everything_options(options);
}

EverythingCandidates segment_everything(const Backend& backend, const EmbeddingData& image, const EverythingOptions& options,
                                        int* decoder_runs, const std::function<bool(const Box&)>& keep) {
  const InteractiveDecoder& decoder = decoder_of(backend);
  check_embedding_layout(image, backend.layout());
  check_everything_options(options);
  const int model_w = backend.input_width(), model_h = backend.input_height();
  const float sx = static_cast<float>(model_w) / image.width, sy = static_cast<float>(model_h) / image.height;
  const int n = options.points_per_side;
  // Each thread's scratch for a candidate: its logits at the model's and the image's size
  // (floats) and its mask (bytes).
  const std::uint64_t scratch = static_cast<std::uint64_t>(model_w) * model_h * 4 + static_cast<std::uint64_t>(image.width) * image.height * 5;
  EverythingCandidates result;
  // Compact until the deduplication: a full mask per candidate was the image's size each.
  std::vector<CompactInstance> candidates;
  std::mutex mutex;
  for (int start = 0; start < n * n; start += options.points_per_batch) {
    const int count = std::min(options.points_per_batch, n * n - start);
    ObjectBatch b;
    b.objects = b.point_rows = count;
    b.points_per_object = 1;
    for (int k = start; k < start + count; ++k) {
      // The grid's cells' centres, as SAM's build_point_grid.
      b.points.push_back((static_cast<float>(k % n) + 0.5f) / static_cast<float>(n) * image.width * sx);
      b.points.push_back((static_cast<float>(k / n) + 0.5f) / static_cast<float>(n) * image.height * sy);
      b.labels.push_back(1);
    }
    const auto t0 = Clock::now();
    const DecodedObjects d = decoder.decode_objects(image, b);
    if (decoder_runs) ++*decoder_runs;
    result.timings.decode_ms += ms_since(t0);
    const auto t1 = Clock::now();
    const size_t items = static_cast<size_t>(count) * d.candidates;
    parallel_for(items, [&](size_t i) {
      const size_t object = i / d.candidates, candidate = i % d.candidates;
      const float iou = d.iou[i];
      if (!(iou > options.pred_iou_threshold)) return;
      if (!(sigmoid(d.object_logits[object]) > options.object_score_threshold)) return;
      const auto logits = logits_at_image(d, object, candidate, model_w, model_h, image.width, image.height);
      if (stability_score(logits, options.stability_offset) < options.stability_threshold) return;
      Instance inst = instance_from_logits(logits, image.width, image.height, iou);
      if (inst.area == 0 || inst.area < options.min_area) return;
      if (keep && !keep(inst.box)) return;
      CompactInstance small = compact(inst);
      std::lock_guard lock(mutex);
      candidates.push_back(std::move(small));
    }, items_per_thread(items, scratch));
    result.timings.postprocess_ms += ms_since(t1);
  }
  // Box NMS, best predicted IoU first (the order of equal scores fixed by the boxes).
  const auto t2 = Clock::now();
  std::sort(candidates.begin(), candidates.end(), [](const CompactInstance& a, const CompactInstance& b) {
    if (a.score != b.score) return a.score > b.score;
    return std::tie(a.box.y0, a.box.x0, a.box.y1, a.box.x1) < std::tie(b.box.y0, b.box.x0, b.box.y1, b.box.x1);
  });
  for (auto& c : candidates) {
    const bool duplicate = std::any_of(result.instances.begin(), result.instances.end(), [&](const CompactInstance& kept) {
      return box_iou(kept.box, c.box) > options.box_nms_threshold;
    });
    if (!duplicate) result.instances.push_back(std::move(c));
  }
  result.timings.postprocess_ms += ms_since(t2);
  return result;
}

}  // namespace detail
}  // namespace sam3
