// --bands and --scale of `sam3 label` on maps: command-line parsing only, no GDAL, so a build
// without maps links it too.
#include "label_map.h"
#include "number_options.h"
#include "sam3/error.h"

namespace sam3::cli {

RasterOptions parse_raster_options(const std::string& bands, const std::string& scale) {
  RasterOptions o;
  for (const auto& b : option_list(bands)) o.bands.push_back(parse_int(b, "--bands", 1));
  if (scale.empty() || scale == "auto") return o;
  if (scale == "minmax") {
    o.scale = RasterOptions::Scale::kMinMax;
  } else if (scale.rfind("percentile:", 0) == 0) {
    const auto p = option_list(scale.substr(11));
    if (p.size() != 2) throw Error(ErrorCode::kInvalidArgument, "--scale percentile:LOW,HIGH, e.g. percentile:2,98");
    o.scale = RasterOptions::Scale::kPercentile;
    o.low = parse_number(p[0], "--scale"), o.high = parse_number(p[1], "--scale");
    if (!(o.low >= 0 && o.low < o.high && o.high <= 100)) {
      throw Error(ErrorCode::kInvalidArgument, "--scale percentile:LOW,HIGH needs 0 <= LOW < HIGH <= 100");
    }
  } else {
    const auto p = option_list(scale);
    if (p.size() != 2) throw Error(ErrorCode::kInvalidArgument, "--scale is auto, minmax, percentile:2,98 or MIN,MAX");
    o.scale = RasterOptions::Scale::kFixed;
    o.low = parse_number(p[0], "--scale"), o.high = parse_number(p[1], "--scale");
    if (!(o.low < o.high)) throw Error(ErrorCode::kInvalidArgument, "--scale MIN,MAX needs MIN < MAX");
  }
  return o;
}

}  // namespace sam3::cli
