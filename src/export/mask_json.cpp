// A mask's JSON object in each of the answer's formats (sam3/result_json.h), and the entries
// written with it. PNG and polygons need the image codecs and OpenCV, so they live here, outside
// the pure core (result_document.cpp, which the browser module links, writes RLE alone).
#include <cmath>
#include <nlohmann/json.hpp>

#include "pure/result_document.h"
#include "sam3/base64.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/mask_encodings.h"
#include "sam3/polygons.h"
#include "sam3/result_json.h"

namespace sam3 {
namespace {

using json = nlohmann::ordered_json;

// A ring as a flat [x,y,x,y,...] list, each number as dump() writes it.
void append_ring(std::string& out, const Ring& ring) {
  out += '[';
  for (size_t i = 0; i < ring.size(); ++i) {
    if (i) out += ',';
    out += json(ring[i].x).dump();
    out += ',';
    out += json(ring[i].y).dump();
  }
  out += ']';
}

void append_polygon_mask(std::string& out, const Mask& mask, double tolerance) {
  const auto polygons = mask_to_polygons(mask, tolerance);
  out += json{{"size", {mask.height(), mask.width()}}}.dump();
  out.pop_back();  // '}'
  out += ",\"polygons\":[";
  for (size_t i = 0; i < polygons.size(); ++i) {
    if (i) out += ',';
    append_ring(out, polygons[i].outer);
  }
  out += "],\"holes\":[";
  bool first = true;
  for (const auto& polygon : polygons) {
    for (const auto& hole : polygon.holes) {
      if (!first) out += ',';
      first = false;
      append_ring(out, hole);
    }
  }
  out += "]}";
}

pure::MaskWriter writer_of(const MaskJsonOptions& options) {
  if (options.format == MaskFormat::kPolygon && !(options.polygon_tolerance >= 0 && options.polygon_tolerance <= kMaxPolygonTolerance)) {
    throw Error(ErrorCode::kInvalidArgument,
                "the polygon tolerance must be between 0 and " + std::to_string(static_cast<int>(kMaxPolygonTolerance)) + " pixels");
  }
  return [options](std::string& out, const Mask& mask) {
    switch (options.format) {
      case MaskFormat::kRle:
        pure::append_rle_mask(out, mask);
        return;
      case MaskFormat::kPng:
        out += json{{"size", {mask.height(), mask.width()}}, {"png", base64_encode(encode_mask_png(mask))}}.dump();
        return;
      case MaskFormat::kPolygon:
        append_polygon_mask(out, mask, options.polygon_tolerance);
        return;
    }
  };
}

}  // namespace

std::optional<MaskFormat> mask_format_named(std::string_view name) {
  if (name == "rle") return MaskFormat::kRle;
  if (name == "png") return MaskFormat::kPng;
  if (name == "polygon") return MaskFormat::kPolygon;
  return std::nullopt;
}

const char* mask_format_name(MaskFormat format) {
  switch (format) {
    case MaskFormat::kRle:
      return "rle";
    case MaskFormat::kPng:
      return "png";
    case MaskFormat::kPolygon:
      return "polygon";
  }
  return "rle";
}

std::string mask_json(const Mask& mask, const MaskJsonOptions& options) {
  std::string out;
  writer_of(options)(out, mask);
  return out;
}

std::string prompt_result_json(const PromptResult& result, const MaskJsonOptions& masks) {
  return pure::prompt_result_text(result, writer_of(masks));
}

std::string object_result_json(const ObjectResult& result, const MaskJsonOptions& masks) {
  return pure::object_result_text(result, writer_of(masks));
}

std::string everything_result_json(const std::vector<Instance>& instances, const MaskJsonOptions& masks) {
  return pure::everything_result_text(instances, writer_of(masks));
}

}  // namespace sam3
