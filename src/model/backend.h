// What differs between the public SAM3 ONNX layouts, behind one interface: which files,
// which tensors go in, and how the decoder's outputs become instances.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/layout.h"
#include "pure/generation.h"
#include "pure/text_plan.h"
#include "pure/tracker.h"
#include "runtime/session.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"

namespace sam3::detail {

// The image encoder's outputs, by name, plus the original image size.
struct EmbeddingData {
  std::map<std::string, Ort::Value> features;
  int width = 0, height = 0;
  Layout layout = Layout::kUsls;  // of the model that encoded it: another layout cannot decode it
  std::uint64_t pixels_hash = 0;  // of the image it was encoded from (PreparedImage's; 0: not known)
};

// The interactive generation's rules are the pure core's (pure/tracker.h); a backend that
// takes clicks runs its decoder on one batch.
using ObjectBatch = pure::TrackerBatch;
using DecodedObjects = pure::TrackerDecoded;

class InteractiveDecoder {
 public:
  virtual ~InteractiveDecoder() = default;
  virtual const pure::Tracker& tracker() const = 0;
  virtual DecodedObjects decode_objects(const EmbeddingData& image, const ObjectBatch& batch) const = 0;
};

struct TextFeatures {
  std::map<std::string, Ort::Value> values;
};

// The text-prompted families' decoding: the sessions of a text plan (pure/text_plan.h, the
// order both the native facade and the browser module run), and the raw paths the video
// decoder reads. Only backends of those families have it.
class TextDecoding {
 public:
  virtual ~TextDecoding() = default;
  virtual const pure::Generation& generation_rules() const = 0;  // the family's, for its text plans
  // Runs the session of one step of a text plan on the step's tensors and feeds: image encoder
  // outputs from `image`, text encoder outputs from `text` (null for a text run).
  virtual std::map<std::string, Ort::Value> run(const pure::TextRun& run, const EmbeddingData& image, const TextFeatures* text) const = 0;
  // The text encoder on its own (video: once per prompt): without one, the ids are the features.
  virtual TextFeatures encode_text(const TokenizedText& tokens) const = 0;
  // Every output of the image encoder (video: SAM 3.1's tracker neck too), and the decoder's raw
  // outputs for a text alone (video: the tracker reads the low-resolution logits).
  virtual std::map<std::string, Ort::Value> encode_image_all(std::vector<float>& planes) const = 0;
  virtual std::map<std::string, Ort::Value> decode_raw(const std::map<std::string, Ort::Value>& image, const TextFeatures& text) const = 0;
};

// What every backend has: its files' sessions and the image encoder. The decoding part is
// one of text() (text families) or interactive() (the tracker); the other is null, so a
// backend never carries calls that exist only to refuse.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Layout layout() const = 0;
  // The export generation recognised from the files' I/O, and what sam3 does differently for it.
  virtual std::string generation() const = 0;
  virtual std::vector<std::string> quirks() const = 0;
  virtual int input_width() const = 0;
  virtual int input_height() const = 0;
  virtual std::vector<const runtime::Session*> sessions() const = 0;
  // planes: [3,H,W] floats in 0..255 (modified in place if the layout normalizes outside).
  virtual std::map<std::string, Ort::Value> encode_image(std::vector<float>& planes) const = 0;
  virtual const TextDecoding* text() const { return nullptr; }
  virtual const InteractiveDecoder* interactive() const { return nullptr; }
};

// `encoder` configures the image encoder session, `config` the text encoder and decoder.
// Every text-prompted family of the registry (pure/families.h).
std::unique_ptr<Backend> make_text_backend(const ModelFiles& files, const runtime::SessionConfig& encoder,
                                           const runtime::SessionConfig& config);
std::unique_ptr<Backend> make_tracker_backend(const ModelFiles& files, const runtime::SessionConfig& encoder,
                                              const runtime::SessionConfig& config);

}  // namespace sam3::detail
