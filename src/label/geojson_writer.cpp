// GeoJSON per image: one Feature per instance, always a MultiPolygon (its parts, holes kept; one
// geometry type a layer, as GIS tools and the maps' outputs have it), in pixel coordinates, or
// in map coordinates when the image has a world file (.wld, .jgw, .pgw, .tfw, ...):
// X = A*x + B*y + C, Y = D*x + E*y + F, coordinates of pixel centres. Neither has a CRS;
// the document's "coordinates" property says which. (A raster georeferenced by its own content
// never comes here: `sam3 label` labels it as a map, through GDAL.)
#include <array>
#include <fstream>
#include <optional>

#include "label/records.h"
#include "sam3/export.h"

namespace sam3::label {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

struct WorldFile {
  double a, d, b, e, c, f;  // the six lines, in file order
  std::string name;         // the file's name, for the document's note
};

std::optional<WorldFile> find_world_file(const fs::path& image) {
  std::string ext = image.extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::vector<std::string> candidates = {".wld"};
  if (ext.size() >= 3) candidates.push_back(std::string(".") + ext[1] + ext.back() + "w");  // .jpg -> .jgw
  candidates.push_back(ext + "w");                                                          // .jpg -> .jpgw
  for (const auto& suffix : candidates) {
    for (const auto& variant : {suffix, [&] {
                                  std::string up = suffix;
                                  for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                                  return up;
                                }()}) {
      fs::path p = image;
      p.replace_extension(variant);
      std::ifstream in(p);
      WorldFile w;
      if (in && (in >> w.a >> w.d >> w.b >> w.e >> w.c >> w.f)) {
        w.name = p.filename().string();
        return w;
      }
    }
  }
  return std::nullopt;
}

ojson ring_json(const Ring& ring, const std::optional<WorldFile>& w) {
  ojson coords = ojson::array();
  auto point = [&](const Point& p) {
    if (!w) return ojson::array({p.x, p.y});
    return ojson::array({w->a * p.x + w->b * p.y + w->c, w->d * p.x + w->e * p.y + w->f});
  };
  for (const auto& p : ring) coords.push_back(point(p));
  if (!ring.empty()) coords.push_back(point(ring.front()));  // GeoJSON rings are closed
  return coords;
}

}  // namespace

void write_geojson(const OutputContext& ctx, const std::vector<ItemRecord>& items) {
  for (const auto& item : items) {
    const auto world = find_world_file(item.path);
    ojson features = ojson::array();
    for (size_t i = 0; i < item.instances.size(); ++i) {
      const auto& inst = item.instances[i];
      ojson polygons = ojson::array();
      for (const auto& poly : instance_polygons(inst, ctx.simplify)) {
        ojson rings = ojson::array({ring_json(poly.outer, world)});
        for (const auto& h : poly.holes) rings.push_back(ring_json(h, world));
        polygons.push_back(std::move(rings));
      }
      if (polygons.empty()) continue;
      features.push_back({{"type", "Feature"},
                          {"properties",
                           {{"id", i + 1},
                            {"category", ctx.category_names[static_cast<size_t>(inst.category)]},
                            {"category_id", inst.category + 1},
                            {"score", inst.score},
                            {"area_px", inst.mask.area()}}},
                          {"geometry", {{"type", "MultiPolygon"}, {"coordinates", std::move(polygons)}}}});
    }
    ojson doc = {{"type", "FeatureCollection"},
                 {"properties",
                  {{"image", item.name},
                   {"width", item.width},
                   {"height", item.height},
                   {"coordinates",
                    world ? "map, from the world file " + world->name + "; no CRS" : std::string("pixel (x right, y down); no CRS")}}},
                 {"features", features}};
    write_file_atomic(ctx.out / "geojson" / (item.stem + ".geojson"), doc.dump() + "\n");
  }
}

}  // namespace sam3::label
