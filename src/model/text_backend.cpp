// Every text-prompted family on ONNX Runtime: the family's rules are the pure core's
// (pure/generation.h, chosen by the registry, pure/families.h); this file only opens its
// sessions and moves tensors between them.
#include <optional>

#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/ort_tensors.h"
#include "pure/families.h"
#include "pure/generation.h"

namespace sam3::detail {
namespace {

std::optional<rt::Session> optional_session(const ModelFiles& files, const char* part, const rt::SessionConfig& config) {
  if (const auto* path = files.find(part)) return std::make_optional<rt::Session>(*path, config);
  return std::nullopt;
}

class TextBackend final : public Backend, public TextDecoding {
 public:
  TextBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder), text_(optional_session(files, "text", config)),
        decoder_(files.parts.at("decoder"), config), geometry_(optional_session(files, "geometry", config)),
        generation_(make_generation(files)) {}

  Layout layout() const override { return Layout(generation_.layout()); }
  std::string generation() const override { return generation_.name(); }
  std::vector<std::string> quirks() const override { return generation_.quirks(); }
  int input_width() const override { return generation_.input_width(); }
  int input_height() const override { return generation_.input_height(); }
  std::vector<const rt::Session*> sessions() const override {
    std::vector<const rt::Session*> all = {&vision_};
    if (text_) all.push_back(&*text_);
    all.push_back(&decoder_);
    if (geometry_) all.push_back(&*geometry_);
    return all;
  }

  const TextDecoding* text() const override { return this; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    auto outputs = encode_image_all(planes);
    std::erase_if(outputs, [&](const auto& kv) { return !generation_.keeps_image_output(kv.first); });
    return outputs;
  }

  std::map<std::string, Ort::Value> encode_image_all(std::vector<float>& planes) const override {
    auto inputs = generation_.image_inputs(planes);
    Feeds feeds;
    feeds.add(inputs);
    return vision_.run(feeds.map());
  }

  std::map<std::string, Ort::Value> decode_raw(const std::map<std::string, Ort::Value>& image,
                                               const TextFeatures& text) const override {
    auto box_inputs = generation_.decoder_inputs({}, 1, 1);
    Feeds feeds;
    feeds.add(box_inputs);
    for (const auto& name : generation_.image_feeds()) feeds.add(name, image.at(name));
    for (const auto& [input, output] : generation_.text_feeds()) feeds.add(input, text.values.at(output));
    std::vector<pure::Tensor> prompt;
    if (generation_.has_geometry()) prompt = generation_.prompt_inputs(views_of(text.values), nullptr);
    feeds.add(prompt);
    auto outputs = decoder_.run(feeds.map());
    rt::outputs_to_float32(outputs);
    return outputs;
  }

  // Without a text encoder (the decoder encodes the text itself) the text inputs are the features.
  TextFeatures encode_text(const TokenizedText& tokens) const override {
    auto inputs = generation_.text_inputs(tokens);
    if (!text_) {
      TextFeatures owned;
      for (const auto& t : inputs) owned.values.emplace(t.name, owned_value(t));
      return owned;
    }
    Feeds feeds;
    feeds.add(inputs);
    return {text_->run(feeds.map())};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    auto box_inputs = generation_.decoder_inputs(boxes, image.width, image.height);  // refuses too many boxes first
    const auto t0 = Clock::now();
    Feeds feeds;
    feeds.add(box_inputs);
    for (const auto& name : generation_.image_feeds()) feeds.add(name, image.features.at(name));
    for (const auto& [input, output] : generation_.text_feeds()) feeds.add(input, text.values.at(output));
    std::vector<pure::Tensor> prompt;
    if (generation_.has_geometry()) prompt = prompt_with_geometry(image, text, boxes);
    feeds.add(prompt);
    auto outputs = decoder_.run(feeds.map());
    timings.decode_ms = ms_since(t0);
    const auto t1 = Clock::now();
    auto instances = generation_.instances(views_of(outputs), image.width, image.height, options);
    timings.postprocess_ms = ms_since(t1);
    return instances;
  }

  void suppress_across_prompts(std::vector<PromptResult>& results) const override {
    std::vector<std::vector<Instance>*> lists;
    for (auto& r : results) lists.push_back(&r.instances);
    generation_.suppress_across_prompts(lists);
  }

 private:
  pure::Generation make_generation(const ModelFiles& files) const {
    pure::PartSpecs specs = {{"image", part_spec(vision_)}, {"decoder", part_spec(decoder_)}};
    if (text_) specs["text"] = part_spec(*text_);
    if (geometry_) specs["geometry"] = part_spec(*geometry_);
    return pure::build_generation(files.families, specs);
  }

  // The geometry encoder's features appended to the text's as the decoder's prompt: for a
  // prompt with boxes (usls v1), or for every prompt (geti-instant-learn, EfficientSAM3: the
  // generation gives its inputs even without boxes).
  std::vector<pure::Tensor> prompt_with_geometry(const EmbeddingData& image, const TextFeatures& text,
                                                 const std::vector<BoxPrompt>& boxes) const {
    const auto text_views = views_of(text.values);
    auto inputs = generation_.geometry_inputs(boxes, image.width, image.height);
    if (inputs.empty()) return generation_.prompt_inputs(text_views, nullptr);
    Feeds feeds;
    feeds.add(inputs);
    for (const auto& [input, output] : generation_.geometry_image_feeds()) feeds.add(input, image.features.at(output));
    const auto geo = geometry_->run(feeds.map());
    const auto geo_views = views_of(geo);
    return generation_.prompt_inputs(text_views, &geo_views);
  }

  rt::Session vision_;
  std::optional<rt::Session> text_;
  rt::Session decoder_;
  std::optional<rt::Session> geometry_;
  pure::Generation generation_;
};

}  // namespace

std::unique_ptr<Backend> make_text_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                           const rt::SessionConfig& config) {
  return std::make_unique<TextBackend>(files, encoder, config);
}

}  // namespace sam3::detail
