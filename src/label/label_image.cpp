#include <algorithm>
#include <optional>

#include "core/timer.h"
#include "label/tile_prompts.h"
#include "sam3/error.h"
#include "label/label_image.h"

#include <set>
#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"

namespace sam3::label {
namespace {

struct TilePlan {
  bool tiled = false;
  int tile = 0, overlap = 0;
};

TilePlan plan(const Model& model, int width, int height, const TileOptions& tiles) {
  TilePlan p{false, tiles.tile, tiles.overlap};
  if (tiles.mode == TileOptions::Mode::kAuto) {
    p.tile = model.input_size();
    p.tiled = std::max(width, height) > 2 * p.tile;
    if (p.overlap <= 0) p.overlap = p.tile / 8;
  } else if (tiles.mode == TileOptions::Mode::kFixed) {
    p.tiled = p.tile > 0 && (width > p.tile || height > p.tile);
  }
  return p;
}

}  // namespace

void check_categories_distinct(const std::vector<LabelCategory>& categories) {
  std::set<std::string> names;
  for (const auto& c : categories) {
    if (!names.insert(c.name).second) {
      throw Error(ErrorCode::kInvalidArgument, "category \"" + c.name +
                                                   "\" is given twice: give each prompt once "
                                                   "(twice, every instance would be labelled twice)");
    }
  }
}

void check_categories_fit(const Model& model, const std::vector<LabelCategory>& categories) {
  const bool interactive = model.kind() == ModelKind::kInteractive;
  for (const auto& c : categories) {
    if (c.everything && !interactive) {
      throw Error(ErrorCode::kInvalidArgument,
                  "\"" + c.name +
                      "\" is \"segment everything\", which needs SAM3's interactive model "
                      "(onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and prompt_encoder_mask_decoder.onnx); " +
                      model.directory().string() + " holds a text-prompted " + layout_name(model.layout()) + " model");
    }
    if (!c.everything && interactive) {
      throw Error(ErrorCode::kInvalidArgument,
                  "\"" + c.name + "\" is a text or box prompt, but " + model.directory().string() +
                      " holds SAM3's interactive model, which takes clicks, not prompts: give a text-prompted SAM3 "
                      "model (or label every object: sam3 label --everything)");
    }
  }
}

bool will_tile(const Model& model, int width, int height, const TileOptions& tiles) { return plan(model, width, height, tiles).tiled; }

std::vector<LabeledInstance> label_image(const std::shared_ptr<const Model>& shared_model, const Image& image,
                                         const std::vector<LabelCategory>& categories, const SegmentOptions& options,
                                         const TileOptions& tiles, LabelTimings* timings, PreparedImage* prepared) {
  const Model& model = *shared_model;
  // The facade of the model's kind (check_categories_fit has matched the categories to it).
  std::optional<ImageSegmenter> text;
  std::optional<InteractiveSegmenter> clicks;
  if (model.kind() == ModelKind::kInteractive)
    clicks.emplace(shared_model);
  else
    text.emplace(shared_model);
  LabelTimings local;
  LabelTimings& t = timings ? *timings : local;
  t = {};
  const auto [tiled, tile, overlap] = plan(model, image.width, image.height, tiles);
  const TileGrid grid = tiled ? TileGrid(image.width, image.height, tile, std::max(0, std::min(overlap, tile / 2)))
                              : TileGrid(image.width, image.height, std::max({1, image.width, image.height}), 0);
  t.tiles = static_cast<int>(grid.size());

  std::vector<LabeledInstance> found;
  std::vector<int> tile_of;
  for (std::int64_t ti = 0; ti < grid.size(); ++ti) {
    const TileRect r = grid[ti];
    auto t0 = core::Clock::now();
    const EncodeOptions encode{options.stop};  // a stop asked for mid-tile ends the tile's runs
    const std::optional<Image> tile_image = tiled ? std::optional<Image>(crop_image(image, r)) : std::nullopt;
    const Image& pixels = tiled ? *tile_image : image;
    const ImageEmbedding embedding = tiled      ? model.encode(pixels, encode)
                                     : prepared ? model.encode(std::move(*prepared), encode)
                                                : model.encode(image, encode);
    t.encode_ms += core::ms_since(t0);
    t0 = core::Clock::now();
    std::vector<PromptResult> results;  // this tile's, one per category that ran
    std::vector<size_t> category_of;
    std::vector<Prompt> prompts;  // the text categories' prompts, answered together below
    std::vector<size_t> prompt_slot;
    for (size_t c = 0; c < categories.size(); ++c) {
      PromptResult result;
      if (const auto& everything = categories[c].everything) {
        EverythingOptions o = *everything;
        o.min_area = std::max(o.min_area, options.min_area);
        o.stop = options.stop;
        if (!clicks) check_categories_fit(model, {categories[c]});  // says which model "everything" needs
        result = clicks->segment_everything(pixels, embedding, o);
      } else {
        Prompt prompt = tiled ? prompt_for_tile(categories[c].prompt, r) : categories[c].prompt;
        const bool blank = prompt.text.find_first_not_of(" \t\r\n") == std::string::npos;
        if (blank && prompt.boxes.empty()) continue;              // a box-only category with no box in this tile
        if (!text) check_categories_fit(model, {categories[c]});  // says which model prompts need
        prompts.push_back(std::move(prompt));
        prompt_slot.push_back(results.size());
      }
      results.push_back(std::move(result));
      category_of.push_back(c);
    }
    if (!prompts.empty()) {  // the image's prompts in one call: the family's rule runs across them
      auto answered = text->segment_all(embedding, prompts, options);
      for (size_t k = 0; k < answered.size(); ++k) results[prompt_slot[k]] = std::move(answered[k]);
    }
    for (size_t k = 0; k < results.size(); ++k) {
      const size_t c = category_of[k];
      for (auto& inst : results[k].instances) {
        LabeledInstance li;
        li.category = static_cast<int>(c);
        li.score = inst.score;
        li.mask = crop_mask(inst.mask);
        li.mask.x0 += r.x0;
        li.mask.y0 += r.y0;
        li.mask.full_width = image.width;
        li.mask.full_height = image.height;
        li.box = {inst.box.x0 + r.x0, inst.box.y0 + r.y0, inst.box.x1 + r.x0, inst.box.y1 + r.y0};
        found.push_back(std::move(li));
        tile_of.push_back(static_cast<int>(ti));
      }
    }
    t.segment_ms += core::ms_since(t0);
  }
  if (tiled) {
    const auto t0 = core::Clock::now();
    found = merge_across_tiles(std::move(found), tile_of, grid, tiles);
    t.merge_ms = core::ms_since(t0);
  }
  std::stable_sort(found.begin(), found.end(), [](const LabeledInstance& a, const LabeledInstance& b) {
    return a.category != b.category ? a.category < b.category : a.score > b.score;
  });
  return found;
}

}  // namespace sam3::label
