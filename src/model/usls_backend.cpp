// Layout "usls" (RectLabel sam3_v2) on ONNX Runtime: the generation's rules are the pure
// core's (pure/generation.h); this file only runs its sessions.
#include <optional>

#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/ort_tensors.h"
#include "pure/generation.h"

namespace sam3::detail {
namespace {

std::optional<rt::Session> geometry_session(const ModelFiles& files, const rt::SessionConfig& config) {
  if (const auto* path = files.find("geometry")) return std::make_optional<rt::Session>(*path, config);
  return std::nullopt;
}

class UslsBackend final : public Backend {
 public:
  UslsBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder), text_(files.parts.at("text"), config),
        decoder_(files.parts.at("decoder"), config), geometry_(geometry_session(files, config)),
        generation_(make_generation()) {}

  Layout layout() const override { return Layout::kUsls; }
  std::string generation() const override { return generation_.name(); }
  std::vector<std::string> quirks() const override { return generation_.quirks(); }
  int input_width() const override { return generation_.input_width(); }
  int input_height() const override { return generation_.input_height(); }
  std::vector<const rt::Session*> sessions() const override {
    std::vector<const rt::Session*> all = {&vision_, &text_, &decoder_};
    if (geometry_) all.push_back(&*geometry_);
    return all;
  }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    auto inputs = generation_.image_inputs(planes);
    Feeds feeds;
    feeds.add(inputs);
    auto outputs = vision_.run(feeds.map());
    std::erase_if(outputs, [&](const auto& kv) { return !generation_.keeps_image_output(kv.first); });
    return outputs;
  }

  TextFeatures encode_text(const TokenizedText& tokens) const override {
    auto inputs = generation_.text_inputs(tokens);
    Feeds feeds;
    feeds.add(inputs);
    return {text_.run(feeds.map())};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    const auto t0 = Clock::now();
    Feeds feeds;
    for (const auto& name : generation_.image_feeds()) feeds.add(name, image.features.at(name));
    for (const auto& [input, output] : generation_.text_feeds()) feeds.add(input, text.values.at(output));
    auto box_inputs = generation_.decoder_inputs(boxes, image.width, image.height);
    feeds.add(box_inputs);
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

 private:
  pure::Generation make_generation() const {
    const auto geometry = geometry_ ? std::make_optional(part_spec(*geometry_)) : std::nullopt;
    return pure::Generation::usls(part_spec(vision_), part_spec(text_), part_spec(decoder_), geometry ? &*geometry : nullptr);
  }

  // usls v1: text-only prompts give the decoder the text alone; with boxes the geometry
  // encoder's features are appended.
  std::vector<pure::Tensor> prompt_with_geometry(const EmbeddingData& image, const TextFeatures& text,
                                                 const std::vector<BoxPrompt>& boxes) const {
    const auto text_views = views_of(text.values);
    if (boxes.empty()) return generation_.prompt_inputs(text_views, nullptr);
    auto inputs = generation_.geometry_inputs(boxes, image.width, image.height);
    Feeds feeds;
    feeds.add(inputs);
    for (const auto& [input, output] : generation_.geometry_image_feeds()) feeds.add(input, image.features.at(output));
    const auto geo = geometry_->run(feeds.map());
    const auto geo_views = views_of(geo);
    return generation_.prompt_inputs(text_views, &geo_views);
  }

  rt::Session vision_, text_, decoder_;
  std::optional<rt::Session> geometry_;
  pure::Generation generation_;
};

}  // namespace

std::unique_ptr<Backend> make_usls_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                           const rt::SessionConfig& config) {
  return std::make_unique<UslsBackend>(files, encoder, config);
}

}  // namespace sam3::detail
