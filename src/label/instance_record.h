// One instance as sam3 records it on disk (label records, map tiles and map shards): category,
// score, box, and the mask as the crop rectangle with the COCO RLE of the crop. Read back from
// files a user, a crash or another version may have changed, so everything is checked against
// the image it belongs to before any pixel is touched.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "label/label_image.h"

namespace sam3::label {

nlohmann::ordered_json instance_record_json(const LabeledInstance& instance);

// The instance of `record` in a width x height image with `categories` categories. Throws
// kInvalidArgument saying what is wrong: a field missing or of another type, a category out of
// range, a score or box that is no number, a crop outside the image, counts that do not fill it.
LabeledInstance instance_from_record(const nlohmann::json& record, int width, int height, std::size_t categories);

}  // namespace sam3::label
