#include "label_studio_regions.h"

#include <random>

#include "sam3/mask_encodings.h"

namespace sam3::server::label_studio {
namespace {

using json = nlohmann::ordered_json;

std::string region_id() {
  static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id(10, 'a');
  for (auto& c : id) c = digits[rng() % (sizeof(digits) - 1)];
  return id;
}

json region(const Instance& inst, const RegionControl& control, json value, const std::string& label) {
  value[region_type(control.kind)] = {label};
  return {{"id", region_id()},
          {"from_name", control.name},
          {"to_name", control.to_name},
          {"type", region_type(control.kind)},
          {"original_width", inst.mask.width()},
          {"original_height", inst.mask.height()},
          {"image_rotation", 0},
          {"score", inst.score},
          {"readonly", false},
          {"value", std::move(value)}};
}

double percent(double v, int size) { return size > 0 ? v * 100.0 / size : 0.0; }

}  // namespace

json regions_of(const Instance& inst, const RegionControl& control, const std::string& label, SplicedJson& answer) {
  const int w = inst.mask.width(), h = inst.mask.height();
  json out = json::array();
  switch (control.kind) {
    case RegionKind::kBrush:
      out.push_back(region(inst, control, {{"format", "rle"}, {"rle", answer.value([rle = brush_rle_encode(inst.mask)](std::string& text) {
                                                                 append_integers(text, rle);
                                                               })}},
                           label));
      break;
    case RegionKind::kRectangle:
      out.push_back(region(inst, control,
                           {{"x", percent(inst.box.x0, w)},
                            {"y", percent(inst.box.y0, h)},
                            {"width", percent(inst.box.x1 - inst.box.x0, w)},
                            {"height", percent(inst.box.y1 - inst.box.y0, h)},
                            {"rotation", 0}},
                           label));
      break;
    case RegionKind::kPolygon:
      // Label Studio polygons have no holes; each piece of the mask is a region of its own.
      for (auto& poly : mask_to_polygons(inst.mask, 1.0)) {
        // Boundary pixel centres (x + 0.5) in the editor's continuous frame.
        json points = answer.value([ring = std::move(poly.outer), w, h](std::string& text) {
          text += '[';
          for (size_t i = 0; i < ring.size(); ++i) {
            if (i) text += ',';
            text += json::array({percent(ring[i].x + 0.5, w), percent(ring[i].y + 0.5, h)}).dump();
          }
          text += ']';
        });
        out.push_back(region(inst, control, {{"points", std::move(points)}, {"closed", true}}, label));
      }
      break;
  }
  return out;
}

}  // namespace sam3::server::label_studio
