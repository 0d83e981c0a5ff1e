#include <ogr_spatialref.h>

#include <algorithm>
#include <cmath>

#include "geo/seam_merge.h"
#include "label/tile_prompts.h"
#include "pure/prompt_rules.h"
#include "sam3/error.h"
#include "geo/map_label.h"

namespace sam3::geo {
namespace {

// Square metres of one pixel, or 0 when the raster has no projected CRS to say.
double pixel_m2(const Raster& raster) {
  if (!raster.georeferenced() || raster.crs_wkt().empty()) return 0;
  OGRSpatialReference srs;
  if (srs.importFromWkt(raster.crs_wkt().c_str()) != OGRERR_NONE || !srs.IsProjected()) return 0;
  const auto& g = raster.geotransform();
  const double unit = srs.GetLinearUnits();
  return std::abs(g[1] * g[5] - g[2] * g[4]) * unit * unit;
}

// The instance without its pixels where the raster has no data; false when nothing is left.
bool clip_to_data(label::LabeledInstance& inst, const std::vector<std::uint8_t>& valid, const TileRect& tile) {
  label::MaskCrop& m = inst.mask;
  const int tw = tile.x1 - tile.x0;
  std::int64_t kept = 0;
  for (int y = 0; y < m.height; ++y) {
    for (int x = 0; x < m.width; ++x) {
      auto& px = m.data[static_cast<size_t>(y) * m.width + x];
      if (px && !valid[static_cast<size_t>(m.y0 + y) * tw + (m.x0 + x)]) px = 0;
      kept += px != 0;
    }
  }
  return kept > 0;
}

TileRecord label_tile(const std::shared_ptr<const Model>& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                      const MapLabelOptions& options, const label::TileGrid& grid, std::int64_t t, double m2) {
  const TileRect r = grid[t];
  std::vector<std::uint8_t> valid;
  const Image window = raster.read(r, &valid);
  std::int64_t data_pixels = 0, own_data_pixels = 0;
  const TileRect own = grid.own_part(t);
  for (int y = r.y0; y < r.y1; ++y) {
    for (int x = r.x0; x < r.x1; ++x) {
      const bool v = valid[static_cast<size_t>(y - r.y0) * (r.x1 - r.x0) + (x - r.x0)] != 0;
      data_pixels += v;
      own_data_pixels += v && x >= own.x0 && y >= own.y0;
    }
  }
  TileRecord record;
  if (data_pixels == 0) {
    record.nodata = true;  // nothing to find, nothing to encode
    return record;
  }
  record.area_km2 = own_data_pixels * m2 / 1e6;
  // Each category with the exemplar boxes inside this tile, in the tile's coordinates.
  std::vector<LabelCategory> here;
  for (const auto& c : categories) here.push_back({c.name, label::prompt_for_tile(c.prompt, r), c.everything});
  const TileOptions untiled;  // each window is one image for label_image
  for (auto& inst : label::label_image(model, window, here, options.segment, untiled)) {
    if (!clip_to_data(inst, valid, r)) continue;
    inst.mask.x0 += r.x0;
    inst.mask.y0 += r.y0;
    inst.mask.full_width = raster.width();
    inst.mask.full_height = raster.height();
    inst.box = {inst.box.x0 + r.x0, inst.box.y0 + r.y0, inst.box.x1 + r.x0, inst.box.y1 + r.y0};
    record.instances.push_back(std::move(inst));
  }
  return record;
}

// Exemplar boxes are drawn on the raster file's pixels; the grid is read at --gsd. Boxes
// outside the raster are refused, not clipped to nothing.
std::vector<LabelCategory> boxes_on_grid(const Raster& raster, std::vector<LabelCategory> categories) {
  check_exemplar_boxes(raster, categories);
  const float sx = static_cast<float>(raster.width()) / static_cast<float>(raster.source_width());
  const float sy = static_cast<float>(raster.height()) / static_cast<float>(raster.source_height());
  for (auto& c : categories) {
    for (auto& box : c.prompt.boxes) {
      Box& b = box.box;
      b = {b.x0 * sx, b.y0 * sy, b.x1 * sx, b.y1 * sy};
    }
  }
  return categories;
}

}  // namespace

void check_exemplar_boxes(const Raster& raster, const std::vector<LabelCategory>& categories) {
  for (const auto& c : categories) {
    for (size_t i = 0; i < c.prompt.boxes.size(); ++i) {
      const auto refusal = pure::box_refusal("box " + std::to_string(i + 1) + " of '" + c.name + "'", c.prompt.boxes[i].box,
                                             raster.source_width(), raster.source_height(), raster.path().filename().string());
      if (!refusal.empty()) throw Error(ErrorCode::kInvalidArgument, refusal);
    }
  }
}

label::TileGrid map_tile_grid(const Model& model, const Raster& raster, const MapLabelOptions& options) {
  const int tile = options.tile > 0 ? options.tile : model.input_size();
  const int overlap = options.overlap > 0 ? options.overlap : tile / 8;
  if (tile < kMinTile && options.tile != 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "--tile " + std::to_string(tile) + ": a map tile is at least " + std::to_string(kMinTile) + " pixels a side");
  }
  if (tile > kMaxMapTile) {
    throw Error(ErrorCode::kInvalidArgument, "--tile " + std::to_string(tile) + ": a map tile is at most " + std::to_string(kMaxMapTile) +
                                                 " pixels a side (the model sees it at " + std::to_string(model.input_size()) + " anyway)");
  }
  if (options.tile < 0 || options.overlap < 0) throw Error(ErrorCode::kInvalidArgument, "--tile and --overlap must be positive");
  if (overlap >= tile) {
    throw Error(ErrorCode::kInvalidArgument,
                "the tile overlap (" + std::to_string(overlap) + ") must be smaller than the tile (" + std::to_string(tile) + ")");
  }
  label::TileGrid grid(raster.width(), raster.height(), tile, overlap);
  if (grid.size() > kMaxMapTiles) {
    throw Error(ErrorCode::kInvalidArgument,
                raster.path().string() + " is read as " + std::to_string(raster.width()) + " x " + std::to_string(raster.height()) +
                    " pixels: " + std::to_string(grid.size()) + " tiles of " + std::to_string(tile) + ", more than the " +
                    std::to_string(kMaxMapTiles) +
                    " one run can label; label a window of it (gdal_translate -srcwin), a coarser --gsd or larger --tile");
  }
  return grid;
}

MapLabelResult label_raster(const std::shared_ptr<const Model>& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                            const MapLabelOptions& options) {
  MapLabelResult out;
  out.grid = geo::map_tile_grid(*model, raster, options);
  const double m2 = pixel_m2(raster);
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N needs 1 <= K <= N");
  }
  const std::vector<LabelCategory> on_grid = boxes_on_grid(raster, categories);
  const std::int64_t total = out.grid.size();
  MapLabelOptions stoppable = options;  // a stop asked for mid-tile also ends that tile's runs
  if (options.stop) stoppable.segment.stop = StopToken::following(options.stop);
  for (std::int64_t t = options.shard; t < total; t += options.shards) {  // tiles are computed, never listed
    if (options.stop && *options.stop) {
      out.stopped = true;
      break;
    }
    TileRecord record;
    if (!options.store || !options.store->load(static_cast<int>(t), raster.width(), raster.height(), on_grid.size(), &record)) {
      try {
        record = label_tile(model, raster, on_grid, stoppable, out.grid, t, m2);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kCancelled) throw;
        out.stopped = true;  // the tile is not recorded: a resumed run redoes it
        break;
      }
      if (options.store) options.store->save(static_cast<int>(t), record);
    }
    out.tiles_skipped += record.nodata;
    out.area_km2 += record.area_km2;
    for (auto& inst : record.instances) {
      out.instances.push_back(std::move(inst));
      out.tile_of_instance.push_back(static_cast<int>(t));
    }
    if (options.progress) options.progress(static_cast<int>(t + 1), static_cast<int>(total), out.area_km2);
  }
  if (options.shards > 1) return out;  // merged once all shards are in (merge_map_shards)
  return merged(std::move(out), options.merge);
}

MapLabelResult merged(MapLabelResult out, const TileOptions& merge) {
  // Seams: the same object seen from two tiles becomes one instance.
  out.instances = label::merge_across_tiles(std::move(out.instances), out.tile_of_instance, out.grid, merge);
  // An object merged across a seam spans tiles; it is attributed to the tile holding its centre.
  out.tile_of_instance.clear();
  for (const auto& inst : out.instances) {
    const float cx = (inst.box.x0 + inst.box.x1) / 2, cy = (inst.box.y0 + inst.box.y1) / 2;
    out.tile_of_instance.push_back(static_cast<int>(out.grid.tile_at(cx, cy)));
  }
  return out;
}

}  // namespace sam3::geo
