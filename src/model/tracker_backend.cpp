// The interactive generation (onnx-community/sam3-tracker-ONNX, what transformers.js's
// Sam3TrackerModel runs): SAM3's tracker neck on its trunk, and a SAM2-style prompt encoder and
// mask decoder taking points and boxes in the model's input pixels. No text.
#include <algorithm>

#include "model/backend.h"
#include "model/contract.h"
#include "predictor/preprocess.h"
#include "sam3/error.h"

namespace sam3::detail {
namespace {

const char* const kEmbeddings[] = {"image_embeddings.0", "image_embeddings.1", "image_embeddings.2"};

const float* float_data(const std::map<std::string, Ort::Value>& outputs, const char* name, size_t expected) {
  auto it = outputs.find(name);
  if (it == outputs.end()) throw Error(ErrorCode::kRuntime, std::string("the decoder produced no '") + name + "' output");
  const size_t n = it->second.GetTensorTypeAndShapeInfo().GetElementCount();
  if (n != expected) {
    throw Error(ErrorCode::kModelMismatch, std::string("decoder output '") + name + "' has shape " +
                                               rt::shape_string(rt::shape_of(it->second)) + ", " + std::to_string(n) +
                                               " values where " + std::to_string(expected) + " were expected");
  }
  return it->second.GetTensorData<float>();
}

class TrackerBackend final : public Backend, public InteractiveDecoder {
 public:
  TrackerBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder), decoder_(files.parts.at("decoder"), config) {
    require_inputs(vision_, {{"pixel_values", kFloatOrHalf, {4}}});
    std::vector<Expected> embeddings;
    for (const char* name : kEmbeddings) embeddings.push_back({name, kFloatOrHalf, {4}});
    require_outputs(vision_, embeddings);
    embeddings.push_back({"input_points", kFloatOrHalf, {4}});
    embeddings.push_back({"input_labels", kIntTypes, {3}});
    embeddings.push_back({"input_boxes", kFloatOrHalf, {3}});
    require_inputs(decoder_, embeddings);
    require_outputs(decoder_, {{"iou_scores", kFloatOrHalf, {3}}, {"pred_masks", kFloatOrHalf, {5}},
                               {"object_score_logits", kFloatOrHalf, {3}}});
    const auto& shape = vision_.input("pixel_values")->shape;
    height_ = shape.size() == 4 && shape[2] > 0 ? static_cast<int>(shape[2]) : 1008;
    width_ = shape.size() == 4 && shape[3] > 0 ? static_cast<int>(shape[3]) : 1008;
    half_ = vision_.input("pixel_values")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ||
            decoder_.output("pred_masks")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
  }

  Layout layout() const override { return Layout::kTracker; }
  std::string generation() const override { return "sam3-tracker (interactive: points and boxes)"; }
  std::vector<std::string> quirks() const override {
    std::vector<std::string> q = {"no text: one object per set of points and/or box",
                                  "image normalized outside the graph ((x/255 - 0.5) / 0.5)",
                                  "masks upsampled to the model's input size, then to the image's, cut at logit 0"};
    if (half_) q.push_back("float16 inputs and outputs, converted at the edges");
    return q;
  }
  int input_width() const override { return width_; }
  int input_height() const override { return height_; }
  std::vector<const rt::Session*> sessions() const override { return {&vision_, &decoder_}; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    normalize_sam3(planes);
    auto input = rt::view(planes.data(), planes.size(), {1, 3, height_, width_});
    auto outputs = vision_.run({{"pixel_values", input}});
    std::erase_if(outputs, [](const auto& kv) {
      return std::find(std::begin(kEmbeddings), std::end(kEmbeddings), kv.first) == std::end(kEmbeddings);
    });
    return outputs;
  }

  TextFeatures encode_text(const TokenizedText&) const override { throw no_text(); }
  std::vector<Instance> decode(const EmbeddingData&, const TextFeatures&, const std::vector<BoxPrompt>&,
                               const SegmentOptions&, PromptTimings&) const override {
    throw no_text();
  }
  const InteractiveDecoder* interactive() const override { return this; }

  DecodedObjects decode_objects(const EmbeddingData& image, const ObjectBatch& b) const override {
    // Zero-sized inputs still need a valid address.
    float no_float = 0;
    std::int64_t no_label = 0;
    std::vector<float> points = b.points, boxes = b.boxes;
    std::vector<std::int64_t> labels = b.labels;
    const auto n_boxes = static_cast<std::int64_t>(boxes.size() / 4);
    auto points_v = rt::view(points.empty() ? &no_float : points.data(), points.size(),
                             {1, b.point_rows, b.points_per_object, 2});
    std::vector<std::int32_t> labels32(labels.begin(), labels.end());
    const bool i32 = decoder_.input("input_labels")->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    const std::vector<std::int64_t> label_shape = {1, b.objects, b.points_per_object};
    auto labels_v = i32 ? rt::view(labels32.empty() ? reinterpret_cast<std::int32_t*>(&no_label) : labels32.data(),
                                   labels32.size(), label_shape)
                        : rt::view(labels.empty() ? &no_label : labels.data(), labels.size(), label_shape);
    auto boxes_v = rt::view(boxes.empty() ? &no_float : boxes.data(), boxes.size(), {1, n_boxes, 4});
    std::map<std::string, const OrtValue*> feeds = {
        {"input_points", points_v}, {"input_labels", labels_v}, {"input_boxes", boxes_v}};
    for (const auto& [name, value] : image.features) feeds[name] = value;
    auto out = decoder_.run(feeds);
    rt::outputs_to_float32(out);

    DecodedObjects d;
    d.objects = b.objects;
    const auto mask_shape = rt::shape_of(out.at("pred_masks"));
    if (mask_shape.size() != 5 || mask_shape[1] != b.objects) {
      throw Error(ErrorCode::kModelMismatch, "decoder output 'pred_masks' has shape " + rt::shape_string(mask_shape) +
                                                 " for " + std::to_string(b.objects) + " objects; expected [1," +
                                                 std::to_string(b.objects) + ",candidates,height,width]");
    }
    d.candidates = static_cast<int>(mask_shape[2]);
    d.mask_h = static_cast<int>(mask_shape[3]);
    d.mask_w = static_cast<int>(mask_shape[4]);
    const size_t per_object = static_cast<size_t>(d.candidates);
    const size_t n = static_cast<size_t>(b.objects);
    const float* iou = float_data(out, "iou_scores", n * per_object);
    const float* masks = float_data(out, "pred_masks", n * per_object * d.mask_h * d.mask_w);
    const float* object = float_data(out, "object_score_logits", n);
    d.iou.assign(iou, iou + n * per_object);
    d.masks.assign(masks, masks + n * per_object * d.mask_h * d.mask_w);
    d.object_logits.assign(object, object + n);
    return d;
  }

 private:
  static Error no_text() {
    return Error(ErrorCode::kInvalidArgument,
                 "this is SAM3's interactive (tracker) model: it takes points and boxes (--point, --box), not text; "
                 "load a text-prompted SAM3 model for words and exemplar boxes");
  }

  rt::Session vision_, decoder_;
  int width_ = 1008, height_ = 1008;
  bool half_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_tracker_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                              const rt::SessionConfig& config) {
  return std::make_unique<TrackerBackend>(files, encoder, config);
}

}  // namespace sam3::detail
