// A Label Studio project's label config (XML), as far as segmentation needs it: the Image
// tag whose data key holds the task's image, the controls that take regions on it, and the
// TextArea that carries an annotator's prompt in interactive mode.
#pragma once

#include <string>
#include <vector>

namespace sam3::server::label_studio {

enum class RegionKind { kBrush, kPolygon, kRectangle };
const char* region_type(RegionKind kind);  // "brushlabels", "polygonlabels", "rectanglelabels"

struct LabelValue {
  std::string value;                 // what Label Studio shows and stores
  std::vector<std::string> prompts;  // its predicted_values (comma separated), else {value}
};

struct RegionControl {
  RegionKind kind;
  std::string name, to_name;
  std::vector<LabelValue> labels;
};

struct LabelConfig {
  std::string image_name;               // the Image tag's name (regions' to_name)
  std::string data_key;                 // the task data key of its image ("$image" -> "image")
  std::vector<RegionControl> controls;  // brush, polygon and rectangle controls on that image
  std::vector<std::string> text_areas;  // TextArea names (interactive prompts)
};

// A Label's predicted_values: comma separated, each trimmed, empty ones dropped.
std::vector<std::string> split_predicted_values(const std::string& list);

// Throws ApiError(400) naming what is wrong: not XML, no Image tag with a $key, no supported
// control on it.
LabelConfig parse_label_config(const std::string& xml);

}  // namespace sam3::server::label_studio
