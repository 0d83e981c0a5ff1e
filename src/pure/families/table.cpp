// The family registry's table (pure/families.h): one row per family, in the order they are
// tried. A family whose files have another's names with more inputs comes before it.
#include "pure/families.h"

#include "sam3/error.h"

namespace sam3::pure {

// Each new family's builder, defined in its own file beside this one.
Generation build_sam31_ailia(const char* id, const PartSpecs& parts);
Generation build_efficientsam3(const char* id, const PartSpecs& parts);
// A video capability, defined beside its family's file.
const VideoCapability& sam31_video();

namespace {

// The first three families' builders name their generations themselves (Generation::usls, ...).
Generation build_geti(const char*, const PartSpecs& p) {
  return Generation::geti(p.at("image"), p.at("text"), p.at("decoder"), p.at("geometry"));
}
Generation build_usls(const char*, const PartSpecs& p) {
  auto it = p.find("geometry");
  return Generation::usls(p.at("image"), p.at("text"), p.at("decoder"), it == p.end() ? nullptr : &it->second);
}
Generation build_samexporter(const char*, const PartSpecs& p) {
  return Generation::samexporter(p.at("image"), p.at("text"), p.at("decoder"));
}

// Intel's five names (the -exemplar geometry encoder is not used), for geti and EfficientSAM3.
std::vector<PartNames> geti_files() {
  return {{"image", {"vision-encoder"}, true},
          {"text", {"text-encoder"}, true},
          {"decoder", {"prompt-decoder"}, true},
          {"geometry", {"geometry-encoder"}, true}};
}

}  // namespace

const std::vector<FamilyRow>& families() {
  // usls's release files carry a precision suffix (vision-encoder-q4f16.onnx) and usls's own
  // runtime calls the decoder geo-encoder-mask-decoder. geti-instant-learn shares usls's
  // encoder names: its own prompt-decoder decides, so it is tried first; EfficientSAM3 has
  // geti's five names and two more decoder inputs, so it comes before geti.
  static const std::vector<FamilyRow> rows = {
      {"efficientsam3", "EfficientSAM3", geti_files(), build_efficientsam3, true},
      {"geti", "geti-instant-learn", geti_files(), build_geti, true},
      {"usls",
       "usls",
       {{"image", {"vision-encoder"}, true},
        {"text", {"text-encoder"}, true},
        {"decoder", {"decoder", "geo-encoder-mask-decoder"}, true},
        {"geometry", {"geometry-encoder"}, false}},
       build_usls,
       true},
      {"samexporter",
       "samexporter",
       {{"image", {"sam3_image_encoder"}, true}, {"text", {"sam3_language_encoder"}, true}, {"decoder", {"sam3_decoder"}, true}},
       build_samexporter,
       true},
      {"sam3.1-ailia",
       "SAM 3.1 (ailia)",
       {{"image", {"sam3.1_image_encoder", "sam3.1_image_encoder.opt"}, true}, {"decoder", {"sam3.1_grounding"}, true}},
       build_sam31_ailia,
       true,
       &sam31_video()},
  };
  return rows;
}

const FamilyRow* find_family(std::string_view id) {
  for (const auto& row : families()) {
    if (id == row.id) return &row;
  }
  return nullptr;
}

const VideoCapability* video_capability(std::string_view id) {
  const auto* row = find_family(id);
  return row ? row->video : nullptr;
}

std::string video_families_description() {
  std::string out;
  for (const auto& row : families()) {
    if (!row.video) continue;
    out += (out.empty() ? "" : ", or ") + std::string(row.display) + "'s " + row.video->description;
  }
  return out;
}

Generation build_generation(const std::vector<const FamilyRow*>& candidates, const PartSpecs& parts) {
  if (candidates.empty()) throw Error(ErrorCode::kModelNotFound, "no SAM3 family fits these files");
  for (size_t i = 0; i + 1 < candidates.size(); ++i) {
    try {
      return candidates[i]->build(candidates[i]->id, parts);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kModelMismatch) throw;
    }
  }
  return candidates.back()->build(candidates.back()->id, parts);
}

}  // namespace sam3::pure
