// YOLO segmentation labels: yolo/labels/<stem>.txt with "class x1 y1 x2 y2 ..." normalized to
// 0..1 (one line per outer ring; holes cannot be expressed), and yolo/data.yaml.
#include <algorithm>
#include <cstdio>

#include "label/records.h"
#include "sam3/export.h"

namespace sam3::label {

void write_yolo(const OutputContext& ctx, const std::vector<ItemRecord>& items) {
  const auto dir = ctx.out / "yolo";
  for (const auto& item : items) {
    std::string text;
    for (const auto& inst : item.instances) {
      for (const auto& poly : instance_polygons(inst, ctx.simplify)) {
        text += std::to_string(inst.category);
        for (const auto& p : poly.outer) {
          char buf[48];
          std::snprintf(buf, sizeof buf, " %.6f %.6f", std::clamp(p.x / item.width, 0.f, 1.f),
                        std::clamp(p.y / item.height, 0.f, 1.f));
          text += buf;
        }
        text += "\n";
      }
    }
    write_file_atomic(dir / "labels" / (item.stem + ".txt"), text);
  }
  std::string yaml = "# Written by sam3 label. Images are referenced by name in ../coco.json; point\n"
                     "# train/val at your image folders.\npath: .\ntrain: images\nval: images\nnc: " +
                     std::to_string(ctx.category_names.size()) + "\nnames:\n";
  for (size_t c = 0; c < ctx.category_names.size(); ++c) {
    std::string quoted;
    for (char ch : ctx.category_names[c]) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
    yaml += "  " + std::to_string(c) + ": '" + quoted + "'\n";
  }
  write_file_atomic(dir / "data.yaml", yaml);
}

}  // namespace sam3::label
