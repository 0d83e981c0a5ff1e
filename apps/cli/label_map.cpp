#include "label_map.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "cli_common.h"
#include "number_options.h"
#include "sam3/error.h"
#include "sam3/map_label.h"
#include "sam3/output_folder.h"

#include <nlohmann/json.hpp>

namespace sam3::cli {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// "labels-shp" is a folder of shapefiles, one per prompt (a shapefile holds one layer).
const char* extension_of(const std::string& format) {
  return format == "gpkg" ? ".gpkg" : format == "fgb" ? ".fgb" : format == "shp" ? "-shp" : ".geojson";
}

}  // namespace

bool is_map_format_list(const std::string& formats) {
  const auto list = split(formats, ',');
  const bool any = std::any_of(list.begin(), list.end(), [](const std::string& f) { return f == "gpkg" || f == "fgb" || f == "shp"; });
  if (!any) return false;
  for (const auto& f : list) {
    if (f != "gpkg" && f != "fgb" && f != "shp" && f != "geojson") {
      throw Error(ErrorCode::kInvalidArgument, "--format " + f + " is an image output; map outputs (gpkg, fgb, shp, geojson) "
                                               "are written from rasters and cannot be mixed with it: run them apart");
    }
  }
  return true;
}

RasterOptions parse_raster_options(const std::string& bands, const std::string& scale) {
  RasterOptions o;
  for (const auto& b : split(bands, ',')) o.bands.push_back(parse_int(b, "--bands", 1));
  if (scale.empty() || scale == "auto") return o;
  if (scale == "minmax") {
    o.scale = RasterOptions::Scale::kMinMax;
  } else if (scale.rfind("percentile:", 0) == 0) {
    const auto p = split(scale.substr(11), ',');
    if (p.size() != 2) throw Error(ErrorCode::kInvalidArgument, "--scale percentile:LOW,HIGH, e.g. percentile:2,98");
    o.scale = RasterOptions::Scale::kPercentile;
    o.low = parse_number(p[0], "--scale"), o.high = parse_number(p[1], "--scale");
    if (!(o.low >= 0 && o.low < o.high && o.high <= 100)) {
      throw Error(ErrorCode::kInvalidArgument, "--scale percentile:LOW,HIGH needs 0 <= LOW < HIGH <= 100");
    }
  } else {
    const auto p = split(scale, ',');
    if (p.size() != 2) throw Error(ErrorCode::kInvalidArgument, "--scale is auto, minmax, percentile:2,98 or MIN,MAX");
    o.scale = RasterOptions::Scale::kFixed;
    o.low = parse_number(p[0], "--scale"), o.high = parse_number(p[1], "--scale");
    if (!(o.low < o.high)) throw Error(ErrorCode::kInvalidArgument, "--scale MIN,MAX needs MIN < MAX");
  }
  return o;
}

namespace {

// The run's outputs, swapped in together, only over files sam3 wrote there before.
void write_outputs(OutputFolderUpdate& update, const std::vector<std::string>& formats, const std::string& target_crs,
                   const std::string& raster_out, const std::vector<LabelCategory>& categories,
                   const std::vector<Raster>& rasters, const std::vector<MapLabelResult>& results) {
  const std::string out = update.root().string();
  std::vector<MapPart> parts;
  for (size_t i = 0; i < rasters.size(); ++i) parts.push_back({&rasters[i], &results[i]});
  std::vector<int> per_category(categories.size(), 0);
  for (const auto& format : formats) {
    per_category = write_map_vectors({update.stage(std::string("labels") + extension_of(format)), target_crs}, categories, parts);
  }
  if (!raster_out.empty()) write_class_raster(update.stage(raster_out), rasters[0], results[0], categories.size());
  update.commit();
  double km2 = 0;
  long long tiles = 0, skipped = 0;
  for (const auto& r : results) km2 += r.area_km2, tiles += r.grid.size(), skipped += r.tiles_skipped;
  std::printf("%zu raster%s, %lld tiles (%lld all nodata, skipped), %.3f km2 with data ->", rasters.size(),
              rasters.size() == 1 ? "" : "s", tiles, skipped, km2);
  for (const auto& f : formats) std::printf(" %s", (std::filesystem::path(out) / (std::string("labels") + extension_of(f))).c_str());
  if (!raster_out.empty()) std::printf(" %s", (std::filesystem::path(out) / raster_out).c_str());
  std::printf("\n");
  for (size_t c = 0; c < categories.size(); ++c) std::printf("  %s: %d\n", categories[c].name.c_str(), per_category[c]);
}

}  // namespace

bool is_map_shard_dir(const std::string& dir) { return std::filesystem::is_regular_file(std::filesystem::path(dir) / "map-shard.json"); }

int run_map_merge(const std::vector<std::string>& dirs, const std::string& out) {
  std::vector<MapShard> shards;
  for (const auto& d : dirs) shards.push_back(read_map_shard(std::filesystem::path(d) / "map-shard.json"));
  const auto extra = nlohmann::json::parse(shards.front().extra_json);
  std::vector<LabelCategory> categories;
  for (const auto& name : shards.front().categories) categories.push_back({name, {name, {}}});
  TileOptions merge;
  std::vector<Raster> rasters;
  RasterOptions raster_options = parse_raster_options(extra.value("bands", ""), extra.value("scale", ""));
  raster_options.gsd_m = extra.value("gsd", 0.0);
  raster_options.allow_network = extra.value("allow_network", false);
  rasters.push_back(Raster::open(shards.front().raster, raster_options));
  std::vector<MapLabelResult> results;
  results.push_back(merge_map_shards(std::move(shards), merge));
  OutputFolderUpdate update(out);
  write_outputs(update, extra.value("formats", std::vector<std::string>{"gpkg"}), extra.value("t_srs", ""),
                extra.value("raster_out", ""), categories, rasters, results);
  return kOk;
}

int run_map_label(const MapLabelArgs& a, const std::atomic<bool>* stop) {
  if (a.rasters.empty()) throw Error(ErrorCode::kInvalidArgument, "no input: give raster files (GeoTIFF, VRT, JPEG 2000, ...)");
  if (a.out.empty()) throw Error(ErrorCode::kInvalidArgument, "give --out DIR for the labels");
  if (a.shards > 1 && a.rasters.size() != 1) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N shares one raster's tiles; give one raster (a VRT joins many)");
  }
  if (!a.raster_out.empty() && a.rasters.size() != 1) {
    throw Error(ErrorCode::kInvalidArgument, "--raster-out aligns with one input raster; give one (a VRT joins many)");
  }
  if (!a.raster_out.empty() && std::filesystem::path(a.raster_out).filename() != a.raster_out) {
    throw Error(ErrorCode::kInvalidArgument, "--raster-out is a file name inside --out, e.g. classes.tif");
  }
  std::vector<Raster> rasters;
  for (const auto& path : a.rasters) rasters.push_back(Raster::open(path, a.raster));
  ModelOptions mo;
  mo.providers = execution_providers(a.models);
  mo.intra_op_threads = a.threads;
  mo.fallback_vocabulary = data_dir() / "clip" / "bpe_simple_vocab_16e6.txt.gz";
  auto model = Model::load(resolve_model_dir(a.models), mo);
  check_categories_fit(*model, a.categories);
  // Every size a run allocates by is checked before it starts (and before the folder is made):
  // a grid of too many tiles, a class raster too large to index, boxes outside the raster.
  std::vector<MapLabelOptions> options_of(rasters.size());
  std::vector<std::string> settings_of;  // per raster: what its tile records and shards are keyed by
  for (size_t i = 0; i < rasters.size(); ++i) {
    MapLabelOptions& options = options_of[i];
    options.segment = a.segment;
    options.tile = a.tile;
    options.overlap = a.overlap;
    options.stop = stop;
    options.shard = a.shard;
    options.shards = a.shards;
    settings_of.push_back(map_settings_hash(*model, rasters[i], a.categories, options, map_tile_grid(*model, rasters[i], options)));
  }
  if (!a.raster_out.empty()) check_class_raster_size(rasters[0]);
  for (const auto& raster : rasters) check_exemplar_boxes(raster, a.categories);
  // Held for the whole run: one run per folder, and the tile records are sam3's own. Made
  // after the inputs and the model are known good, so a run refused at once leaves no folder.
  OutputFolderUpdate update(a.out);
  const std::filesystem::path tiles_dir = update.claim("map-tiles");

  const bool tty = ::isatty(STDERR_FILENO) != 0;
  std::vector<MapLabelResult> results;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < rasters.size(); ++i) {
    const Raster& raster = rasters[i];
    MapLabelOptions& options = options_of[i];
    // Each tile's result is kept as it finishes: a rerun of the same command resumes.
    const MapTileStore store(tiles_dir / settings_of[i].substr(0, 16), settings_of[i]);
    options.store = &store;
    auto last = std::chrono::steady_clock::time_point{};
    options.progress = [&](int done, int total, double km2) {
      const auto now = std::chrono::steady_clock::now();
      if (done < total && now - last < std::chrono::seconds(tty ? 1 : 10)) return;
      last = now;
      const double s = std::chrono::duration<double>(now - t0).count();
      const int eta = done > 0 ? static_cast<int>(s / done * (total - done)) : 0;
      std::fprintf(stderr, "%ssam3 label: %s: %d/%d tiles, %.2f km2, ETA %d:%02d%s", tty ? "\r" : "",
                   raster.path().filename().c_str(), done, total, km2, eta / 60, eta % 60, tty && done < total ? "" : "\n");
      std::fflush(stderr);
    };
    results.push_back(label_raster(*model, raster, a.categories, options));
    if (results.back().stopped) break;
  }
  if (!results.empty() && results.back().stopped) {
    std::printf("interrupted; the finished tiles are kept in %s: run the same command again to go on\n",
                tiles_dir.c_str());
    return 130;
  }
  if (a.shards > 1) {  // instances as found; 'sam3 label merge' of all shards writes the outputs
    const nlohmann::json extra = {{"formats", a.formats}, {"t_srs", a.target_crs}, {"raster_out", a.raster_out},
                                  {"bands", a.bands_text}, {"scale", a.scale_text}, {"gsd", a.raster.gsd_m},
                                  {"allow_network", a.raster.allow_network}};
    write_map_shard(update.stage("map-shard.json"), rasters[0], a.categories, a.shard, a.shards, settings_of[0], results[0],
                    extra.dump());
    update.commit();
    std::printf("shard %d/%d: %zu instances -> %s; merge all shards with 'sam3 label merge SHARD_DIR... --out DIR'\n",
                a.shard + 1, a.shards, results[0].instances.size(), (std::filesystem::path(a.out) / "map-shard.json").c_str());
    return kOk;
  }
  write_outputs(update, a.formats, a.target_crs, a.raster_out, a.categories, rasters, results);
  return kOk;
}

}  // namespace sam3::cli
