#include "label/instance_record.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "core/json_integer.h"
#include "sam3/error.h"
#include "sam3/export.h"

namespace sam3::label {
namespace {

using json = nlohmann::json;

[[noreturn]] void damaged(const std::string& what) { throw Error(ErrorCode::kInvalidArgument, "a damaged instance record: " + what); }

const json& field(const json& record, const char* name) {
  if (!record.is_object() || !record.contains(name)) damaged(std::string("no \"") + name + "\"");
  return record[name];
}

// An integer in [lo, hi], read in its own type (a JSON number of any size) before narrowing.
int bounded_int(const json& v, std::int64_t lo, std::int64_t hi, const char* what) {
  if (!v.is_number_integer()) damaged(std::string(what) + " is not an integer");
  const auto n = core::json_integer_in(v, lo, hi);
  if (!n) damaged(std::string(what) + " " + v.dump() + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(*n);
}

float finite(const json& v, const char* what) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) damaged(std::string(what) + " is not a finite number");
  return v.get<float>();
}

}  // namespace

nlohmann::ordered_json instance_record_json(const LabeledInstance& inst) {
  const MaskCrop& m = inst.mask;
  return {{"category", inst.category},
          {"score", inst.score},
          {"box", {inst.box.x0, inst.box.y0, inst.box.x1, inst.box.y1}},
          {"crop", {m.x0, m.y0, m.width, m.height}},
          {"counts", rle_encode(Mask::from_raster(m.width, m.height, m.data))}};
}

LabeledInstance instance_from_record(const json& record, int width, int height, std::size_t categories) {
  if (width < 0 || height < 0) damaged("the image is " + std::to_string(width) + "x" + std::to_string(height));
  LabeledInstance inst;
  if (categories == 0) damaged("no categories");
  inst.category = bounded_int(field(record, "category"), 0, static_cast<std::int64_t>(categories) - 1, "category");
  inst.score = finite(field(record, "score"), "score");
  const json& b = field(record, "box");
  if (!b.is_array() || b.size() != 4) damaged("\"box\" is not [x0, y0, x1, y1]");
  inst.box = {finite(b[0], "box x0"), finite(b[1], "box y0"), finite(b[2], "box x1"), finite(b[3], "box y1")};
  const json& c = field(record, "crop");
  if (!c.is_array() || c.size() != 4) damaged("\"crop\" is not [x, y, width, height]");
  const int x0 = bounded_int(c[0], 0, width, "crop x"), y0 = bounded_int(c[1], 0, height, "crop y");
  const int w = bounded_int(c[2], 0, width - x0, "crop width"), h = bounded_int(c[3], 0, height - y0, "crop height");
  const json& counts = field(record, "counts");
  if (!counts.is_string()) damaged("\"counts\" is not a COCO RLE string");
  Mask crop;
  try {
    crop = rle_decode(counts.get<std::string>(), h, w);
  } catch (const Error& e) {
    damaged(std::string("its counts (") + e.what() + ")");
  }
  if (crop.width() != w || crop.height() != h) {
    damaged("its counts do not fill its " + std::to_string(w) + "x" + std::to_string(h) + " crop");
  }
  inst.mask = {x0, y0, w, h, width, height, crop.to_raster()};
  return inst;
}

}  // namespace sam3::label
