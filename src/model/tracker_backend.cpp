// The interactive generation (onnx-community/sam3-tracker-ONNX, what transformers.js's
// Sam3TrackerModel runs): SAM3's tracker neck on its trunk, and a SAM2-style prompt encoder and
// mask decoder taking points and boxes in the model's input pixels. No text.
#include <algorithm>

#include "model/backend.h"
#include "model/contract.h"
#include "model/ort_tensors.h"
#include "predictor/preprocess.h"

namespace sam3::detail {
namespace {

// The files' contract, the tensors and the rules are the pure core's (pure/tracker.h); this
// runs its two sessions.
class TrackerBackend final : public Backend, public InteractiveDecoder {
 public:
  TrackerBackend(const ModelFiles& files, const runtime::SessionConfig& encoder, const runtime::SessionConfig& config)
      : vision_(files.parts.at("image"), encoder),
        decoder_(files.parts.at("decoder"), config),
        tracker_(part_spec(vision_), part_spec(decoder_)) {}

  Layout layout() const override { return Layout::kTracker; }
  std::string generation() const override { return tracker_.name(); }
  std::vector<std::string> quirks() const override { return tracker_.quirks(); }
  int input_width() const override { return tracker_.input_width(); }
  int input_height() const override { return tracker_.input_height(); }
  std::vector<const runtime::Session*> sessions() const override { return {&vision_, &decoder_}; }

  std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const override {
    auto inputs = tracker_.image_inputs(planes);
    Feeds feeds;
    feeds.add(inputs);
    auto outputs = vision_.run(feeds.map());
    const auto& keep = pure::Tracker::embedding_names();
    std::erase_if(outputs, [&](const auto& kv) { return std::find(keep.begin(), keep.end(), kv.first) == keep.end(); });
    return outputs;
  }

  const InteractiveDecoder* interactive() const override { return this; }
  const pure::Tracker& tracker() const override { return tracker_; }

  DecodedObjects decode_objects(const EmbeddingData& image, const ObjectBatch& b) const override {
    auto inputs = tracker_.decoder_inputs(b);
    Feeds feeds;
    feeds.add(inputs);
    for (const auto& [name, value] : image.features) feeds.add(name, value);
    const auto out = decoder_.run(feeds.map());
    return tracker_.decoded(views_of(out), b.objects);
  }

 private:
  runtime::Session vision_, decoder_;
  pure::Tracker tracker_;
};

}  // namespace

std::unique_ptr<Backend> make_tracker_backend(const ModelFiles& files, const runtime::SessionConfig& encoder,
                                              const runtime::SessionConfig& config) {
  return std::make_unique<TrackerBackend>(files, encoder, config);
}

}  // namespace sam3::detail
