#include "sam3/hub.h"

namespace sam3 {

const std::vector<RegistryEntry>& model_registry() {
  static const std::vector<RegistryEntry> registry = {
      {"sam3-v2-int8",
       "Luminia/sam3-v2-onnx",
       "main",
       Layout::kUsls,
       {"vision-encoder.onnx", "text-encoder.onnx", "decoder.onnx", "tokenizer.json"},
       887'000'000,
       "SAM3 v2 int8 (usls layout, RectLabel sam3_v2 export, as used by the Map2Mask demo)",
       "",
       {}},
      {"sam3-browser-int8",
       "rusen/sam3-browser-int8",
       "main",
       Layout::kSamexporter,
       {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx", "clip_tokenizer.json"},
       887'000'000,
       "SAM3 int8 (samexporter layout, in-graph postprocessing)",
       "",
       {}},
      // The repository holds one archive, sam3_vit_h.zip, with the three fp32 files inside.
      {"sam3-fp32",
       "vietanhdev/segment-anything-3-onnx-models",
       "main",
       Layout::kSamexporter,
       {"sam3_image_encoder.onnx", "sam3_language_encoder.onnx", "sam3_decoder.onnx"},
       3'450'000'000,
       "SAM3 fp32 (samexporter layout, from the repository's sam3_vit_h.zip; slower, exact)",
       "sam3_vit_h.zip",
       {}},
      // What osam (labelme's model runner) loads: six files at the root; sha256 as osam pins them.
      {"sam3-osam-fp32",
       "wkentaro/sam3-onnx-models",
       "main",
       Layout::kSamexporter,
       {"sam3_image_encoder.onnx", "sam3_image_encoder.onnx.data", "sam3_language_encoder.onnx", "sam3_language_encoder.onnx.data",
        "sam3_decoder.onnx", "sam3_decoder.onnx.data"},
       3'450'000'000,
       "SAM3 fp32 as osam/labelme use it (samexporter names, .onnx.data weights)",
       "",
       {{"sam3_image_encoder.onnx", "3dd676271e9c459463f7026d8ab2c6318672cd89511f89c30b34cdf0a2e67a3f"},
        {"sam3_image_encoder.onnx.data", "03bd50b0703e2b04e2193ca831b7f9d5ecf40bc5287cc59b1970f56ab800c995"},
        {"sam3_language_encoder.onnx", "af80dffcd8fc369281b0422295244ba22f64e8424e9eefa111ac8966e9ea9ba6"},
        {"sam3_language_encoder.onnx.data", "1b03dabc657c1f2887d1b8ce2a3537467d4c033ea1f8c8be141fbca55e4b95f7"},
        {"sam3_decoder.onnx", "aca3109a1bf87d1589bf2a4a61c641fd97624152b21c6e9a5aa85735db398884"},
        {"sam3_decoder.onnx.data", "afae2f057f4c6e2478589877aa3d361a0d863cdfdb8259f7eee903f529188ac6"}}},
      // SAM3's interactive (tracker) model as transformers.js loads it: the graphs under onnx/
      // with their weights beside them, the configs at the root. Not pinned: the files' sha256
      // cannot be learned without the hub, so a pull checks them against what the hub
      // announces (size and LFS sha256) only, as for the other unpinned entries.
      {"sam3-tracker",
       "onnx-community/sam3-tracker-ONNX",
       "main",
       Layout::kTracker,
       {"onnx/vision_encoder.onnx", "onnx/vision_encoder.onnx_data", "onnx/prompt_encoder_mask_decoder.onnx",
        "onnx/prompt_encoder_mask_decoder.onnx_data", "config.json", "preprocessor_config.json"},
       1'900'000'000,
       "SAM3 interactive model, fp32 (clicks and boxes -> one object, \"segment everything\"; "
       "transformers.js's Sam3TrackerModel files)",
       "",
       {}},
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
