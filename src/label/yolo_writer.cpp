// YOLO segmentation labels: yolo/labels/<stem>.txt with "class x1 y1 x2 y2 ..." normalized to
// 0..1 (one line per outer ring; holes cannot be expressed), yolo/images/<stem>.<ext> linking
// to each labelled image, and yolo/data.yaml. Ultralytics finds an image's labels by its path
// with the last images/ turned into labels/ and the extension into .txt, so the images must sit
// in an images/ folder beside labels/: links, not copies (the images stay where they are).
#include <algorithm>
#include <cstdio>

#include "sam3/error.h"

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
          std::snprintf(buf, sizeof buf, " %.6f %.6f", std::clamp(p.x / item.width, 0.f, 1.f), std::clamp(p.y / item.height, 0.f, 1.f));
          text += buf;
        }
        text += "\n";
      }
    }
    write_file_atomic(dir / "labels" / (item.stem + ".txt"), text);
    std::string ext = item.path.extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto link = dir / "images" / (item.stem + ext);
    std::error_code ec;
    const auto target = std::filesystem::absolute(item.path, ec);
    if (!ec) std::filesystem::create_directories(link.parent_path(), ec);
    if (!ec) std::filesystem::create_symlink(target, link, ec);
    if (ec) {
      throw Error(ErrorCode::kIo, link.string() + ": cannot link to " + item.path.string() + " (" + ec.message() +
                                      "); YOLO's images/ holds links to the images: write the outputs on a file system "
                                      "with symbolic links, or leave out --format yolo");
    }
  }
  const auto quoted = [](const std::string& text) {
    std::string q = "'";
    for (char ch : text) q += ch == '\'' ? std::string("''") : std::string(1, ch);
    return q + "'";
  };
  // `path` absolute: Ultralytics resolves a relative one against its working or datasets folder.
  std::string yaml =
      "# Written by sam3 label: images/ links to each labelled image, labels/ holds its YOLO-seg\n"
      "# labels. One split: train and val are the same images; make a split of your own for a\n"
      "# fair validation. `path` is where this folder was written: change it if you move it.\npath: " +
      quoted(std::filesystem::absolute(ctx.root / "yolo").lexically_normal().string()) +
      "\ntrain: images\nval: images\nnc: " + std::to_string(ctx.category_names.size()) + "\nnames:\n";
  for (size_t c = 0; c < ctx.category_names.size(); ++c) yaml += "  " + std::to_string(c) + ": " + quoted(ctx.category_names[c]) + "\n";
  write_file_atomic(dir / "data.yaml", yaml);
}

}  // namespace sam3::label
