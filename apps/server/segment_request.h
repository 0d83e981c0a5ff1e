// Parsing and validating POST /v1/segment bodies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sam3/types.h"

namespace sam3::server {

enum class MaskFormat { kRle, kPolygon, kPng };

struct SegmentRequest {
  std::string image_id;      // either this...
  std::string inline_image;  // ...or decoded bytes of "image" (base64)
  std::vector<Prompt> prompts;
  SegmentOptions options;
  MaskFormat mask_format = MaskFormat::kRle;
  double polygon_tolerance = 1.0;
};

// Throws ApiError(400) naming the offending field.
SegmentRequest parse_segment_request(const std::string& body);

}  // namespace sam3::server
