#include "export/result_document.h"

#include <cmath>

#include "sam3/mask_encodings.h"
#include "sam3/result_json.h"

namespace sam3 {
namespace detail {
namespace {

// Two decimals are plenty for pixel coordinates and keep the JSON readable.
double round2(float v) { return std::round(static_cast<double>(v) * 100.0) / 100.0; }

}  // namespace

nlohmann::ordered_json box_prompts_value(const std::vector<BoxPrompt>& boxes) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& b : boxes) {
    out.push_back({round2(b.box.x0), round2(b.box.y0), round2(b.box.x1), round2(b.box.y1), b.positive ? "pos" : "neg"});
  }
  return out;
}

nlohmann::ordered_json instances_value(const std::vector<Instance>& list) {
  auto instances = nlohmann::ordered_json::array();
  for (const auto& inst : list) {
    instances.push_back({
        {"score", std::round(static_cast<double>(inst.score) * 1e4) / 1e4},
        {"box", {round2(inst.box.x0), round2(inst.box.y0), round2(inst.box.x1), round2(inst.box.y1)}},
        {"area", inst.area},
        {"mask", {{"size", {inst.mask.height(), inst.mask.width()}}, {"counts", rle_encode(inst.mask)}}},
    });
  }
  return instances;
}

nlohmann::ordered_json prompt_result_value(const PromptResult& result) {
  return {{"text", result.prompt.text}, {"boxes", box_prompts_value(result.prompt.boxes)},
          {"instances", instances_value(result.instances)}};
}

nlohmann::ordered_json object_result_value(const ObjectResult& result) {
  auto points = nlohmann::ordered_json::array();
  for (const auto& p : result.prompt.points) points.push_back({round2(p.x), round2(p.y), p.positive ? "pos" : "neg"});
  nlohmann::ordered_json box = nullptr;
  if (const auto& b = result.prompt.box) box = {round2(b->x0), round2(b->y0), round2(b->x1), round2(b->y1)};
  return {{"points", points}, {"box", box}, {"object_score", std::round(static_cast<double>(result.object_score) * 1e4) / 1e4},
          {"instances", instances_value(result.masks)}};
}

nlohmann::ordered_json everything_result_value(const std::vector<Instance>& instances) {
  return {{"everything", true}, {"instances", instances_value(instances)}};
}

}  // namespace detail

std::string prompt_result_json(const PromptResult& result) { return detail::prompt_result_value(result).dump(); }
std::string object_result_json(const ObjectResult& result) { return detail::object_result_value(result).dump(); }
std::string everything_result_json(const std::vector<Instance>& instances) {
  return detail::everything_result_value(instances).dump();
}

}  // namespace sam3
