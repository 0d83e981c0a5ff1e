#include <ogr_spatialref.h>

#include <algorithm>
#include <cmath>

#include "geo/seam_merge.h"
#include "sam3/error.h"
#include "sam3/map_label.h"

namespace sam3 {
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
bool clip_to_data(LabeledInstance& inst, const std::vector<std::uint8_t>& valid, const TileRect& tile) {
  MaskCrop& m = inst.mask;
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

// The part of tile t that no earlier tile of the grid covers, so each pixel counts once.
TileRect own_part(const std::vector<TileRect>& tiles, size_t t) {
  TileRect own = tiles[t];
  for (size_t u = 0; u < t; ++u) {
    if (tiles[u].y0 == tiles[t].y0 && tiles[u].x0 < tiles[t].x0) own.x0 = std::max(own.x0, std::min(tiles[u].x1, own.x1));
    if (tiles[u].x0 == tiles[t].x0 && tiles[u].y0 < tiles[t].y0) own.y0 = std::max(own.y0, std::min(tiles[u].y1, own.y1));
  }
  return own;
}

TileRecord label_tile(const Model& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                      const MapLabelOptions& options, const std::vector<TileRect>& tiles, size_t t, double m2) {
  const TileRect& r = tiles[t];
  std::vector<std::uint8_t> valid;
  const Image window = raster.read(r, &valid);
  std::int64_t data_pixels = 0, own_data_pixels = 0;
  const TileRect own = own_part(tiles, t);
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
  const TileOptions untiled;  // each window is one image for label_image
  for (auto& inst : label_image(model, window, categories, options.segment, untiled)) {
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

}  // namespace

std::vector<TileRect> map_tile_grid(const Model& model, const Raster& raster, const MapLabelOptions& options) {
  const int tile = options.tile > 0 ? options.tile : model.input_size();
  const int overlap = options.overlap > 0 ? options.overlap : tile / 8;
  if (overlap >= tile) throw Error(ErrorCode::kInvalidArgument, "the tile overlap must be smaller than the tile");
  return tile_grid(raster.width(), raster.height(), tile, overlap);
}

MapLabelResult label_raster(const Model& model, const Raster& raster, const std::vector<LabelCategory>& categories,
                            const MapLabelOptions& options) {
  MapLabelResult out;
  out.tiles = map_tile_grid(model, raster, options);
  const double m2 = pixel_m2(raster);
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N needs 1 <= K <= N");
  }
  for (size_t t = 0; t < out.tiles.size(); ++t) {
    if (static_cast<int>(t % static_cast<size_t>(options.shards)) != options.shard) continue;
    if (options.stop && *options.stop) {
      out.stopped = true;
      break;
    }
    TileRecord record;
    if (!options.store || !options.store->load(static_cast<int>(t), raster.width(), raster.height(), &record)) {
      record = label_tile(model, raster, categories, options, out.tiles, t, m2);
      if (options.store) options.store->save(static_cast<int>(t), record);
    }
    out.tiles_skipped += record.nodata;
    out.area_km2 += record.area_km2;
    for (auto& inst : record.instances) {
      out.instances.push_back(std::move(inst));
      out.tile_of_instance.push_back(static_cast<int>(t));
    }

    if (options.progress) options.progress(static_cast<int>(t + 1), static_cast<int>(out.tiles.size()), out.area_km2);
  }
  if (options.shards > 1) return out;  // merged once all shards are in (merge_map_shards)
  return merged(std::move(out), options.merge);
}

MapLabelResult merged(MapLabelResult out, const TileOptions& merge) {
  // Seams: the same object seen from two tiles becomes one instance.
  std::vector<int> tiles_of = out.tile_of_instance;
  out.instances = merge_across_tiles(std::move(out.instances), tiles_of, out.tiles, merge);
  // An object merged across a seam spans tiles; it is attributed to the tile holding its centre.
  out.tile_of_instance.clear();
  for (const auto& inst : out.instances) {
    const float cx = (inst.box.x0 + inst.box.x1) / 2, cy = (inst.box.y0 + inst.box.y1) / 2;
    int at = 0;
    for (size_t t = 0; t < out.tiles.size(); ++t) {
      const auto& r = out.tiles[t];
      if (cx >= r.x0 && cx < r.x1 && cy >= r.y0 && cy < r.y1) {
        at = static_cast<int>(t);
        break;
      }
    }
    out.tile_of_instance.push_back(at);
  }
  return out;
}

}  // namespace sam3
