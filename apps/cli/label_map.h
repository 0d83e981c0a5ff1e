// sam3 label on maps: the command line translated into a MapLabelJob (sam3/map_labeler.h),
// progress on stderr and the summary on stdout.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "model_resolver.h"
#include "sam3/map_labeler.h"
#include "sam3/raster.h"

namespace sam3::cli {

// --bands "1,2,3" and --scale "minmax" | "percentile:2,98" | "A,B" into the raster options.
RasterOptions parse_raster_options(const std::string& bands, const std::string& scale);
int run_map_label(const MapLabelJob& job, const ModelSelection& models, int threads, const std::atomic<bool>* stop);
// `sam3 label merge` of folders written by map shards (map-shard.json), into their outputs.
int run_map_merge(const std::vector<std::string>& dirs, const std::string& out);

}  // namespace sam3::cli
