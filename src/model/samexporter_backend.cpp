// Layout "samexporter" (rusen sam3-browser-int8) on ONNX Runtime: the generation's rules are
// the pure core's (pure/generation.h); this file only runs its sessions.
#include "core/timer.h"
#include "model/backend.h"
#include "model/contract.h"
#include "model/ort_tensors.h"
#include "pure/generation.h"

namespace sam3::detail {
namespace {

class SamexporterBackend final : public Backend {
 public:
  SamexporterBackend(const ModelFiles& files, const rt::SessionConfig& encoder, const rt::SessionConfig& config)
      : image_(files.parts.at("image"), encoder), language_(files.parts.at("text"), config),
        decoder_(files.parts.at("decoder"), config),
        generation_(pure::Generation::samexporter(part_spec(image_), part_spec(language_), part_spec(decoder_))) {}

  Layout layout() const override { return Layout::kSamexporter; }
  std::string generation() const override { return generation_.name(); }
  std::vector<std::string> quirks() const override { return generation_.quirks(); }
  int input_width() const override { return generation_.input_width(); }
  int input_height() const override { return generation_.input_height(); }
  std::vector<const rt::Session*> sessions() const override { return {&image_, &language_, &decoder_}; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    auto inputs = generation_.image_inputs(planes);
    Feeds feeds;
    feeds.add(inputs);
    return image_.run(feeds.map());
  }

  TextFeatures encode_text(const TokenizedText& tokens) const override {
    auto inputs = generation_.text_inputs(tokens);
    Feeds feeds;
    feeds.add(inputs);
    return {language_.run(feeds.map())};
  }

  std::vector<Instance> decode(const EmbeddingData& image, const TextFeatures& text,
                               const std::vector<BoxPrompt>& boxes, const SegmentOptions& options,
                               PromptTimings& timings) const override {
    auto box_inputs = generation_.decoder_inputs(boxes, image.width, image.height);  // refuses too many boxes first
    Feeds feeds;
    feeds.add(box_inputs);
    for (const auto& name : generation_.image_feeds()) feeds.add(name, image.features.at(name));
    for (const auto& [input, output] : generation_.text_feeds()) feeds.add(input, text.values.at(output));
    const auto t0 = Clock::now();
    auto outputs = decoder_.run(feeds.map());
    timings.decode_ms = ms_since(t0);
    const auto t1 = Clock::now();
    auto instances = generation_.instances(views_of(outputs), image.width, image.height, options);
    timings.postprocess_ms = ms_since(t1);
    return instances;
  }

 private:
  rt::Session image_, language_, decoder_;
  pure::Generation generation_;
};

}  // namespace

std::unique_ptr<Backend> make_samexporter_backend(const ModelFiles& files, const rt::SessionConfig& encoder,
                                                  const rt::SessionConfig& config) {
  return std::make_unique<SamexporterBackend>(files, encoder, config);
}

}  // namespace sam3::detail
