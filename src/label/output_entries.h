// Every output entry `sam3 label` writes in its folder, for images and for maps. A run retires
// those an earlier run wrote and it does not (other formats, or the other kind of run), in
// the same all-or-nothing swap as its own outputs, so that two runs' outputs never stand side
// by side (a new coco.json beside an older run's geojson/). The records and tile stores that
// resume a run (items/, failed/, map-tiles/, config.json, ...) are not outputs and stay.
#pragma once

#include "sam3/output_folder.h"

namespace sam3::label {

inline constexpr const char* kImageOutputEntries[] = {"coco.json", "failures.json", "yolo", "masks", "geojson"};
// MapLabeler's (map_output_name of each MapFormat, and a shard's file); a test checks they agree.
inline constexpr const char* kMapOutputEntries[] = {"labels.gpkg", "labels.fgb", "labels-shp", "labels.geojson", "map-shard.json"};

// Retires every entry of both lists that `update` has not staged: call after staging.
inline void retire_other_label_outputs(OutputFolderUpdate& update) {
  for (const char* entry : kImageOutputEntries) update.retire(entry);
  for (const char* entry : kMapOutputEntries) update.retire(entry);
}

}  // namespace sam3::label
