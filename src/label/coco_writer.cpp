// COCO instances JSON: images by name order, categories from the prompts, segmentation as
// compressed RLE (or polygons), bbox [x, y, w, h], area in mask pixels, score.
#include <cmath>

#include "label/records.h"
#include "sam3/export.h"

namespace sam3::label {

void write_coco(const OutputContext& ctx, const std::vector<ItemRecord>& items) {
  using ojson = nlohmann::ordered_json;
  ojson images = ojson::array(), annotations = ojson::array(), categories = ojson::array();
  for (size_t c = 0; c < ctx.category_names.size(); ++c) {
    categories.push_back({{"id", c + 1}, {"name", ctx.category_names[c]}, {"supercategory", "object"}});
  }
  int annotation_id = 1;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    images.push_back({{"id", i + 1}, {"file_name", item.name}, {"width", item.width}, {"height", item.height}});
    for (const auto& inst : item.instances) {
      ojson segmentation;
      if (ctx.coco_polygons) {
        segmentation = ojson::array();
        for (const auto& poly : instance_polygons(inst, ctx.simplify)) {
          ojson flat = ojson::array();
          for (const auto& p : poly.outer) flat.push_back(p.x), flat.push_back(p.y);
          segmentation.push_back(std::move(flat));
        }
      } else {
        segmentation = {{"size", {item.height, item.width}}, {"counts", rle_to_string(rle_counts(inst.mask))}};
      }
      const auto& b = inst.box;
      annotations.push_back({{"id", annotation_id++},
                             {"image_id", i + 1},
                             {"category_id", inst.category + 1},
                             {"segmentation", segmentation},
                             {"area", inst.mask.area()},
                             {"bbox", {b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0}},
                             {"iscrowd", 0},
                             {"score", std::round(static_cast<double>(inst.score) * 1e4) / 1e4}});
    }
  }
  const ojson doc = {{"info", {{"description", "sam3cpp auto-labels"}, {"version", "1.0"}}},
                     {"images", images},
                     {"annotations", annotations},
                     {"categories", categories}};
  write_file_atomic(ctx.out / "coco.json", doc.dump() + "\n");
}

}  // namespace sam3::label
