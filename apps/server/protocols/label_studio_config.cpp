#include "label_studio_config.h"

#include <pugixml.hpp>

#include "api_error.h"
#include "http/http_message.h"

namespace sam3::server::label_studio {
namespace {

constexpr const char* kDocs = "see docs/label-studio.md for a config that works";

std::vector<std::string> split_prompts(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string item(trim(std::string_view(list).substr(start, end - start)));
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

bool kind_of(const std::string& tag, RegionKind* kind) {
  if (tag == "brushlabels")
    *kind = RegionKind::kBrush;
  else if (tag == "polygonlabels")
    *kind = RegionKind::kPolygon;
  else if (tag == "rectanglelabels")
    *kind = RegionKind::kRectangle;
  else
    return false;
  return true;
}

// Label Studio's tag names are case-insensitive.
std::string tag_of(const pugi::xml_node& node) { return to_lower(node.name()); }

}  // namespace

std::vector<std::string> split_predicted_values(const std::string& list) { return split_prompts(list); }

const char* region_type(RegionKind kind) {
  switch (kind) {
    case RegionKind::kBrush:
      return "brushlabels";
    case RegionKind::kPolygon:
      return "polygonlabels";
    case RegionKind::kRectangle:
      return "rectanglelabels";
  }
  return "";
}

LabelConfig parse_label_config(const std::string& xml) {
  if (xml.empty()) throw ApiError(400, "invalid_label_config", "the request has no label config; " + std::string(kDocs));
  pugi::xml_document doc;
  const auto parsed = doc.load_buffer(xml.data(), xml.size());
  if (!parsed) {
    throw ApiError(
        400, "invalid_label_config",
        std::string("the label config is not valid XML (") + parsed.description() + " at offset " + std::to_string(parsed.offset) + ")");
  }
  std::vector<pugi::xml_node> images, controls, text_areas;
  for (const pugi::xpath_node& found : doc.select_nodes("//*")) {
    const pugi::xml_node node = found.node();
    const std::string tag = tag_of(node);
    RegionKind kind;
    if (tag == "image")
      images.push_back(node);
    else if (tag == "textarea")
      text_areas.push_back(node);
    else if (kind_of(tag, &kind))
      controls.push_back(node);
  }
  LabelConfig config;
  // The first Image that a supported control points at; the regions go there.
  for (const auto& image : images) {
    const std::string name = image.attribute("name").as_string();
    const std::string value = image.attribute("value").as_string();
    bool targeted = false;
    for (const auto& c : controls) targeted = targeted || c.attribute("toName").as_string() == name;
    if (!targeted || !value.starts_with("$") || value.size() < 2) continue;
    config.image_name = name;
    config.data_key = value.substr(1);
    break;
  }
  if (config.image_name.empty()) {
    throw ApiError(400, "unsupported_label_config",
                   images.empty()
                       ? "the label config has no <Image> tag; sam3 segments images (and tracks a <Video> with a <VideoRectangle> "
                         "on SAM 3.1's bundle), " +
                             std::string(kDocs)
                   : controls.empty() ? "the label config has no <BrushLabels>, <PolygonLabels> or <RectangleLabels> control; add "
                                        "one with toName set to the Image's name, " +
                                            std::string(kDocs)
                                      : "no <BrushLabels>, <PolygonLabels> or <RectangleLabels> control has toName naming an "
                                        "<Image> whose value is a task key like \"$image\"; " +
                                            std::string(kDocs));
  }
  for (const auto& node : controls) {
    if (node.attribute("toName").as_string() != config.image_name) continue;
    RegionControl control;
    kind_of(tag_of(node), &control.kind);
    control.name = node.attribute("name").as_string();
    control.to_name = config.image_name;
    for (const auto& label : node.children()) {
      if (tag_of(label) != "label") continue;
      LabelValue v;
      v.value = label.attribute("value").as_string();
      if (v.value.empty()) continue;
      v.prompts = split_prompts(label.attribute("predicted_values").as_string());
      if (v.prompts.empty()) v.prompts = {v.value};
      control.labels.push_back(std::move(v));
    }
    if (!control.labels.empty()) config.controls.push_back(std::move(control));
  }
  if (config.controls.empty()) {
    throw ApiError(400, "unsupported_label_config",
                   "the label config's controls on <Image name=\"" + config.image_name +
                       "\"> have no <Label value=\"...\"/>; the labels are the prompts, " + std::string(kDocs));
  }
  for (const auto& node : text_areas) {
    if (node.attribute("toName").as_string() == config.image_name) config.text_areas.push_back(node.attribute("name").as_string());
  }
  return config;
}

}  // namespace sam3::server::label_studio
