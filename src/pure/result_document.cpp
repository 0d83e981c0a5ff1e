#include "pure/result_document.h"

#include <cmath>

#include "sam3/mask_encodings.h"

namespace sam3::pure {
namespace {

using json = nlohmann::ordered_json;

// Two decimals are plenty for pixel coordinates and keep the JSON readable.
double round2(float v) { return std::round(static_cast<double>(v) * 100.0) / 100.0; }
double round4(float v) { return std::round(static_cast<double>(v) * 1e4) / 1e4; }

json box_value(const Box& b) { return {round2(b.x0), round2(b.y0), round2(b.x1), round2(b.y1)}; }

// `head`'s text with one more key, written by `write`, before its closing brace.
template <typename Write>
std::string with_last_key(const json& head, const char* key, Write&& write) {
  std::string out = head.dump();
  out.pop_back();  // '}'
  if (!head.empty()) out += ',';
  out += '"';
  out += key;
  out += "\":";
  write(out);
  out += '}';
  return out;
}

void append_instances(std::string& out, const std::vector<Instance>& instances, const MaskWriter& mask) {
  out += '[';
  for (size_t i = 0; i < instances.size(); ++i) {
    const Instance& inst = instances[i];
    if (i) out += ',';
    const json head = {{"score", round4(inst.score)}, {"box", box_value(inst.box)}, {"area", inst.area}};
    out += with_last_key(head, "mask", [&](std::string& text) { mask(text, inst.mask); });
  }
  out += ']';
}

std::string with_instances(const json& head, const std::vector<Instance>& instances, const MaskWriter& mask) {
  return with_last_key(head, "instances", [&](std::string& text) { append_instances(text, instances, mask); });
}

}  // namespace

void append_rle_mask(std::string& out, const Mask& mask) {
  out += json{{"size", {mask.height(), mask.width()}}, {"counts", rle_encode(mask)}}.dump();
}

json box_prompts_value(const std::vector<BoxPrompt>& boxes) {
  auto out = json::array();
  for (const auto& b : boxes) {
    out.push_back({round2(b.box.x0), round2(b.box.y0), round2(b.box.x1), round2(b.box.y1), b.positive ? "pos" : "neg"});
  }
  return out;
}

std::string prompt_result_text(const PromptResult& result, const MaskWriter& mask) {
  return with_instances({{"text", result.prompt.text}, {"boxes", box_prompts_value(result.prompt.boxes)}}, result.instances, mask);
}

std::string object_result_text(const ObjectResult& result, const MaskWriter& mask) {
  auto points = json::array();
  for (const auto& p : result.prompt.points) points.push_back({round2(p.x), round2(p.y), p.positive ? "pos" : "neg"});
  json box = nullptr;
  if (const auto& b = result.prompt.box) box = box_value(*b);
  return with_instances({{"points", points}, {"box", box}, {"object_score", round4(result.object_score)}}, result.masks, mask);
}

std::string everything_result_text(const std::vector<Instance>& instances, const MaskWriter& mask) {
  return with_instances({{"everything", true}}, instances, mask);
}

}  // namespace sam3::pure
