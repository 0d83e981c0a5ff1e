// SAM3 instances as Label Studio result regions: brush (Label Studio's RLE at the image's
// true size), polygon and rectangle (percent of width and height).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "json_splice.h"
#include "label_studio_config.h"
#include "sam3/types.h"

namespace sam3::server::label_studio {

// The regions of one instance for `control` (a polygon control gives one region per part
// of a mask in several pieces), labelled `label`; ids are unique. The brush's RLE bytes and the
// polygons' points are `answer`'s spliced values (text, not a JSON value per element).
nlohmann::ordered_json regions_of(const Instance& instance, const RegionControl& control, const std::string& label, SplicedJson& answer);

}  // namespace sam3::server::label_studio
