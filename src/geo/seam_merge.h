// Instances found tile by tile merged where tiles overlap, each attributed to the tile holding
// its centre: the last step of one run (label_raster) and of merged shards (merge_map_shards).
#pragma once

#include "geo/map_label.h"

namespace sam3::geo {

MapLabelResult merged(MapLabelResult found, const TileOptions& merge);

}  // namespace sam3::geo
