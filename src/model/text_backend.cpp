// Every text-prompted family on ONNX Runtime: the family's rules are the pure core's
// (pure/generation.h, chosen by the registry, pure/families.h) and the order of its runs the
// text plan's (pure/text_plan.h); this file only opens its sessions and moves tensors.
#include <optional>

#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/ort_tensors.h"
#include "pure/families.h"
#include "pure/generation.h"

namespace sam3::detail {
namespace {

std::optional<runtime::Session> optional_session(const ModelFiles& files, const char* part, const runtime::SessionConfig& config) {
  if (const auto* path = files.find(part)) return std::make_optional<runtime::Session>(*path, config);
  return std::nullopt;
}

class TextBackend final : public Backend, public TextDecoding {
 public:
  TextBackend(const ModelFiles& files, const runtime::SessionConfig& encoder, const runtime::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder),
        text_(optional_session(files, "text", config)),
        decoder_(files.parts.at("decoder"), config),
        geometry_(optional_session(files, "geometry", config)),
        generation_(make_generation(files)) {}

  Layout layout() const override { return Layout(generation_.layout()); }
  std::string generation() const override { return generation_.name(); }
  std::vector<std::string> quirks() const override { return generation_.quirks(); }
  int input_width() const override { return generation_.input_width(); }
  int input_height() const override { return generation_.input_height(); }
  std::vector<const runtime::Session*> sessions() const override {
    std::vector<const runtime::Session*> all = {&vision_};
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

  std::map<std::string, Ort::Value> decode_raw(const std::map<std::string, Ort::Value>& image, const TextFeatures& text) const override {
    auto box_inputs = generation_.decoder_inputs({}, 1, 1);
    Feeds feeds;
    feeds.add(box_inputs);
    for (const auto& name : generation_.image_feeds()) feeds.add(name, image.at(name));
    for (const auto& [input, output] : generation_.text_feeds()) feeds.add(input, text.values.at(output));
    std::vector<pure::Tensor> prompt;
    if (generation_.has_geometry()) prompt = generation_.prompt_inputs(views_of(text.values), nullptr);
    feeds.add(prompt);
    auto outputs = decoder_.run(feeds.map());
    runtime::outputs_to_float32(outputs);
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

  const pure::Generation& generation_rules() const override { return generation_; }

  // One step of a text plan: its tensors, plus its feeds from the image's or the text's outputs.
  std::map<std::string, Ort::Value> run(const pure::TextRun& run, const EmbeddingData& image, const TextFeatures* text) const override {
    auto tensors = run.tensors;  // the runtime reads them in place: they must outlive the run
    Feeds feeds;
    feeds.add(tensors);
    for (const auto& [input, feed] : run.feeds) {
      if (feed.from == pure::TextRun::Feed::From::kEmbedding)
        feeds.add(input, image.features.at(feed.name));
      else
        feeds.add(input, text->values.at(feed.name));
    }
    return session(run.session).run(feeds.map());
  }

 private:
  pure::Generation make_generation(const ModelFiles& files) const {
    pure::PartSpecs specs = {{"image", part_spec(vision_)}, {"decoder", part_spec(decoder_)}};
    if (text_) specs["text"] = part_spec(*text_);
    if (geometry_) specs["geometry"] = part_spec(*geometry_);
    return pure::build_generation(files.families, specs);
  }

  const runtime::Session& session(pure::TextRun::Session which) const {
    switch (which) {
      case pure::TextRun::Session::kText:
        return *text_;
      case pure::TextRun::Session::kGeometry:
        return *geometry_;
      case pure::TextRun::Session::kDecoder:
        break;
    }
    return decoder_;
  }

  runtime::Session vision_;
  std::optional<runtime::Session> text_;
  runtime::Session decoder_;
  std::optional<runtime::Session> geometry_;
  pure::Generation generation_;
};

}  // namespace

std::unique_ptr<Backend> make_text_backend(const ModelFiles& files, const runtime::SessionConfig& encoder,
                                           const runtime::SessionConfig& config) {
  return std::make_unique<TextBackend>(files, encoder, config);
}

}  // namespace sam3::detail
