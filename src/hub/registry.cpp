#include "sam3/hub.h"

namespace sam3 {

const std::vector<RegistryEntry>& model_registry() {
  static const std::vector<RegistryEntry> registry = {
      {"sam3-v2-int8", "Luminia/sam3-v2-onnx", "main", Layout::kUsls,
       {"vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx", "tokenizer.json"}, 887'000'000,
       "SAM3 v2 int8 (usls layout, RectLabel sam3_v2 export, as used by the Map2Mask demo)"},
      {"sam3-browser-int8", "rusen/sam3-browser-int8", "main", Layout::kSamexporter,
       {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx", "clip_tokenizer.json"},
       887'000'000, "SAM3 int8 (samexporter layout, in-graph postprocessing)"},
      {"sam3-fp32", "vietanhdev/segment-anything-3-onnx-models", "main", Layout::kSamexporter,
       {"sam3_image_encoder.onnx", "sam3_image_encoder.onnx.data", "sam3_language_encoder.onnx",
        "sam3_language_encoder.onnx.data", "sam3_decoder.onnx", "sam3_decoder.onnx.data"},
       3'450'000'000, "SAM3 fp32 (samexporter layout, external .onnx.data weights; slower, exact)"},
  };
  return registry;
}

const RegistryEntry& default_registry_entry() { return model_registry().front(); }

const RegistryEntry* find_registry_entry(std::string_view name_or_repo) {
  for (const auto& e : model_registry()) {
    if (e.name == name_or_repo || e.repo == name_or_repo) return &e;
  }
  return nullptr;
}

}  // namespace sam3
