// PNG masks per image: <stem>_instances.png (16-bit, instance number, 0 = background) and
// <stem>_classes.png (category id = prompt index + 1; 8-bit, or 16-bit with more than 255
// categories); higher scores paint last, on top. With `semantic`, <stem>_<category>.png per
// category (0/255 union of its instances; names made distinct).
#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "core/codecs.h"
#include "label/records.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/output_folder.h"

namespace sam3::label {
void write_masks(const OutputContext& ctx, const std::vector<ItemRecord>& items) {
  const auto dir = ctx.out / "masks";
  for (const auto& item : items) {
    const size_t pixels = static_cast<size_t>(item.width) * item.height;
    std::vector<std::uint16_t> instances(pixels, 0), wide_classes;
    std::vector<std::uint8_t> classes;
    const bool wide = ctx.category_names.size() > 255;
    if (wide)
      wide_classes.assign(pixels, 0);
    else
      classes.assign(pixels, 0);
    std::vector<size_t> order(item.instances.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return item.instances[a].score < item.instances[b].score; });
    for (size_t i : order) {
      const auto& c = item.instances[i].mask;
      for (int y = 0; y < c.height; ++y)
        for (int x = 0; x < c.width; ++x)
          if (c.data[static_cast<size_t>(y) * c.width + x]) {
            const size_t at = static_cast<size_t>(y + c.y0) * item.width + (x + c.x0);
            instances[at] = static_cast<std::uint16_t>(i + 1);
            const int id = item.instances[i].category + 1;
            if (wide)
              wide_classes[at] = static_cast<std::uint16_t>(id);
            else
              classes[at] = static_cast<std::uint8_t>(id);
          }
    }
    const std::string& stem = item.stem;
    write_file_atomic(dir / (stem + "_instances.png"), core::encode_png(instances.data(), item.width, item.height, 1, 16));
    write_file_atomic(dir / (stem + "_classes.png"), wide ? core::encode_png(wide_classes.data(), item.width, item.height, 1, 16)
                                                          : core::encode_png(classes.data(), item.width, item.height, 1, 8));
    if (!ctx.semantic) continue;
    std::set<std::string> used = {"instances", "classes"};
    for (size_t cat = 0; cat < ctx.category_names.size(); ++cat) {
      const Mask m = semantic_mask(item.instances, static_cast<int>(cat), item.width, item.height);
      std::string name;
      for (char ch : ctx.category_names[cat]) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      write_file_atomic(dir / (stem + "_" + unique_file_name(name, used) + ".png"), encode_mask_png(m));
    }
  }
}

}  // namespace sam3::label
