// The map run (sam3/map_labeler.h): check everything, claim the output folder, label each
// raster tile by tile with per-tile records, then write the vectors and class raster (or this
// shard's instances) in one swap. The CLI and the Python module only translate into a job.
#include "sam3/map_labeler.h"

#include <cpl_vsi.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/split_list.h"
#include "sam3/error.h"
#include "geo/map_label.h"
#include "label/output_entries.h"
#include "sam3/output_folder.h"

namespace sam3 {
namespace {

constexpr const char* kShardFile = "map-shard.json";

struct FormatName {
  MapFormat format;
  const char* name;
  const char* output;  // "labels-shp" is a folder: a shapefile holds one layer
};
constexpr FormatName kFormats[] = {{MapFormat::kGpkg, "gpkg", "labels.gpkg"},
                                   {MapFormat::kFgb, "fgb", "labels.fgb"},
                                   {MapFormat::kShp, "shp", "labels-shp"},
                                   {MapFormat::kGeojson, "geojson", "labels.geojson"}};

// Every output a map run writes is in the list that image and map runs retire (output_entries.h).
constexpr bool listed(std::string_view name) {
  for (std::string_view e : label::kMapOutputEntries) {
    if (e == name) return true;
  }
  return false;
}
static_assert(listed(kShardFile) && listed(kFormats[0].output) && listed(kFormats[1].output) && listed(kFormats[2].output) &&
                  listed(kFormats[3].output) && std::size(kFormats) == 4,
              "a map output missing from label::kMapOutputEntries");

const char* format_name(MapFormat f) {
  for (const auto& k : kFormats) {
    if (k.format == f) return k.name;
  }
  return "gpkg";
}

// What a shard records of its job so that `merge` writes what one run would have.
nlohmann::json job_record(const MapLabelJob& job) {
  std::vector<std::string> formats;
  for (auto f : job.formats) formats.push_back(format_name(f));
  const RasterOptions& r = job.raster;
  return {{"formats", formats},
          {"t_srs", job.target_crs},
          {"raster_out", job.raster_out},
          {"bands", r.bands},
          {"scale", static_cast<int>(r.scale)},
          {"low", r.low},
          {"high", r.high},
          {"gsd", r.gsd_m},
          {"allow_network", r.allow_network}};
}

MapLabelJob job_of_record(const nlohmann::json& j) {
  MapLabelJob job;
  job.formats = parse_map_formats([&] {
    std::string list;
    for (const auto& f : j.value("formats", std::vector<std::string>{"gpkg"})) list += f + ",";
    return list;
  }());
  job.target_crs = j.value("t_srs", "");
  job.raster_out = j.value("raster_out", "");
  job.raster.bands = j.value("bands", std::vector<int>{});
  const int scale = j.value("scale", 0);
  if (scale < 0 || scale > static_cast<int>(RasterOptions::Scale::kFixed)) {
    throw Error(ErrorCode::kInvalidArgument, "map-shard.json: unknown band scaling " + std::to_string(scale));
  }
  job.raster.scale = static_cast<RasterOptions::Scale>(scale);
  job.raster.low = j.value("low", 2.0);
  job.raster.high = j.value("high", 98.0);
  job.raster.gsd_m = j.value("gsd", 0.0);
  job.raster.allow_network = j.value("allow_network", false);
  return job;
}

// Stages what the job writes (which refuses, before any tile is labelled, an entry that is not
// sam3's or a folder of sam3's holding a user's file) and retires the other outputs of `sam3
// label` an earlier run left there (other formats, a shard's file, an image run's), to go with
// the same swap.
void stage_map_outputs(OutputFolderUpdate& update, const MapLabelJob& job) {
  if (job.shards > 1) {
    update.stage(kShardFile);
  } else {
    for (auto format : job.formats) update.stage(map_output_name(format));
    if (!job.raster_out.empty()) update.stage(job.raster_out);
  }
  label::retire_other_label_outputs(update);
}

// The run's outputs, swapped in together, only over files sam3 wrote there before.
void write_outputs(OutputFolderUpdate& update, const MapLabelJob& job, const std::vector<Raster>& rasters,
                   const std::vector<geo::MapLabelResult>& results, MapRunSummary& summary) {
  stage_map_outputs(update, job);
  std::vector<geo::MapPart> parts;
  for (size_t i = 0; i < rasters.size(); ++i) parts.push_back({&rasters[i], &results[i]});
  summary.features_per_category.assign(job.categories.size(), 0);
  for (const auto& c : job.categories) summary.categories.push_back(c.name);
  for (auto format : job.formats) {
    const std::string name = map_output_name(format);
    summary.features_per_category = geo::write_map_vectors({update.stage(name), job.target_crs}, job.categories, parts);
    summary.outputs.push_back(update.root() / name);
  }
  if (!job.raster_out.empty()) {
    geo::write_class_raster(update.stage(job.raster_out), rasters[0], results[0], job.categories.size());
    summary.outputs.push_back(update.root() / job.raster_out);
  }
  update.commit();
}

// The vector outputs written empty into GDAL's memory before any tile is labelled: layer names a
// format refuses or holds twice ("white" and "White" in a GeoPackage, a leading "-"), a CRS GDAL
// does not know, a raster without one where a CRS is asked for, fail now, not after the work.
void check_vector_outputs(const MapLabelJob& job, const std::vector<Raster>& rasters) {
  const std::vector<geo::MapLabelResult> nothing(rasters.size());
  std::vector<geo::MapPart> parts;
  for (size_t i = 0; i < rasters.size(); ++i) parts.push_back({&rasters[i], &nothing[i]});
  static std::atomic<unsigned> checks{0};
  for (auto format : job.formats) {
    const std::string name = map_output_name(format);
    const std::string dir = "/vsimem/sam3-check-" + std::to_string(::getpid()) + "-" + std::to_string(checks++);
    const std::string scratch = dir + "/" + name;
    try {
      geo::write_map_vectors({scratch, job.target_crs}, job.categories, parts);
    } catch (const Error& e) {
      VSIRmdirRecursive(dir.c_str());
      std::string message = e.what();
      for (size_t at; (at = message.find(scratch)) != std::string::npos;) message.replace(at, scratch.size(), name);
      // Into memory nothing fails for want of disk: what failed is in the arguments.
      throw Error(ErrorCode::kInvalidArgument, message + " (checked before labelling; nothing was written)");
    }
    VSIRmdirRecursive(dir.c_str());
  }
}

void add_totals(const std::vector<geo::MapLabelResult>& results, MapRunSummary& s) {
  for (const auto& r : results) {
    s.area_km2 += r.area_km2, s.tiles += r.grid.size(), s.tiles_skipped += r.tiles_skipped;
    s.instances += static_cast<std::int64_t>(r.instances.size());
  }
}

void check_job(const MapLabelJob& job) {
  if (job.rasters.empty()) throw Error(ErrorCode::kInvalidArgument, "no input: give raster files (GeoTIFF, VRT, JPEG 2000, ...)");
  if (job.out.empty()) throw Error(ErrorCode::kInvalidArgument, "give an output folder for the labels (--out DIR)");
  if (job.categories.empty()) throw Error(ErrorCode::kInvalidArgument, "give at least one prompt");
  if (job.formats.empty()) throw Error(ErrorCode::kInvalidArgument, "give at least one map format (gpkg, fgb, shp, geojson)");
  if (job.shards < 1 || job.shard < 0 || job.shard >= job.shards) {
    throw Error(ErrorCode::kInvalidArgument, "shard " + std::to_string(job.shard + 1) + " of " + std::to_string(job.shards) +
                                                 " does not exist: give K/N with 1 <= K <= N");
  }
  if (job.shards > 1 && job.rasters.size() != 1) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N shares one raster's tiles; give one raster (a VRT joins many)");
  }
  if (!job.raster_out.empty() && job.rasters.size() != 1) {
    throw Error(ErrorCode::kInvalidArgument, "--raster-out aligns with one input raster; give one (a VRT joins many)");
  }
  if (!job.raster_out.empty() && std::filesystem::path(job.raster_out).filename() != job.raster_out) {
    throw Error(ErrorCode::kInvalidArgument, "--raster-out is a file name inside --out, e.g. classes.tif");
  }
  if (!job.raster_out.empty()) {  // always a GeoTIFF: classes.png would be one under another name
    std::string ext = std::filesystem::path(job.raster_out).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".tif" && ext != ".tiff") {
      throw Error(ErrorCode::kInvalidArgument,
                  "--raster-out " + job.raster_out + ": the class raster is a GeoTIFF; name it .tif or .tiff, e.g. classes.tif");
    }
  }
}

// Map outputs place objects on the ground: a raster with no geotransform (in the file or a world
// file) would get pixel rows as map coordinates, upside down in a GIS, in a CRS the GeoPackage
// calls "undefined". Refused before any work; pixel coordinates are the image outputs' job.
void check_georeferenced(const Raster& raster) {
  if (raster.georeferenced()) return;
  const std::string name = raster.path().string();
  throw Error(ErrorCode::kInvalidArgument,
              name +
                  " has no georeferencing (no geotransform in the file, no world file beside it), so map outputs (gpkg, fgb, shp, "
                  "geojson) could not place its objects on the ground: give it some (a world file beside it: .pgw for a PNG, .jgw "
                  "for a JPEG, .tfw for a TIFF, or .wld; or gdal_translate -a_srs EPSG:CODE -a_ullr ULX ULY LRX LRY " +
                  name + " geo.tif), or label it as an image, in pixel coordinates (--format coco, yolo, masks, or geojson alone)");
}

}  // namespace

std::vector<MapFormat> parse_map_formats(const std::string& list) {
  std::vector<MapFormat> out;
  for (const auto& f : core::split_list(list)) {
    const FormatName* known = nullptr;
    for (const auto& k : kFormats) {
      if (f == k.name) known = &k;
    }
    if (!known) {
      throw Error(ErrorCode::kInvalidArgument, "--format " + f +
                                                   " is an image output; map outputs (gpkg, fgb, shp, geojson) "
                                                   "are written from rasters and cannot be mixed with it: run them apart");
    }
    out.push_back(known->format);
  }
  return out;
}

bool is_map_format_list(const std::string& list) {
  const auto names = core::split_list(list);
  const bool any = std::any_of(names.begin(), names.end(), [](const std::string& f) { return f == "gpkg" || f == "fgb" || f == "shp"; });
  if (any) parse_map_formats(list);  // every format given must then be a map format
  return any;
}

std::string map_output_name(MapFormat format) {
  for (const auto& k : kFormats) {
    if (k.format == format) return k.output;
  }
  return "labels.gpkg";
}

MapLabeler::MapLabeler(std::shared_ptr<const Model> model) : model_(std::move(model)) {
  if (!model_) throw Error(ErrorCode::kInvalidArgument, "MapLabeler needs a loaded model");
}

bool MapLabeler::is_shard_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / kShardFile, ec);
}

MapRunSummary MapLabeler::run(const MapLabelJob& job, const std::function<void(const MapProgress&)>& progress,
                              const std::atomic<bool>* stop) const {
  check_job(job);
  label::check_categories_fit(*model_, job.categories);  // "everything" needs the interactive model, prompts the other
  label::check_categories_distinct(job.categories);
  std::vector<Raster> rasters;
  for (const auto& path : job.rasters) {
    rasters.push_back(Raster::open(path, job.raster));
    check_georeferenced(rasters.back());
  }
  // Every size a run allocates by is checked before it starts (and before the folder is made):
  // a grid of too many tiles, a class raster too large to index, boxes outside the raster.
  std::vector<geo::MapLabelOptions> options_of(rasters.size());
  std::vector<std::string> settings_of;  // per raster: what its tile records and shards are keyed by
  for (size_t i = 0; i < rasters.size(); ++i) {
    geo::MapLabelOptions& options = options_of[i];
    options.segment = job.segment;
    options.tile = job.tile;
    options.overlap = job.overlap;
    options.stop = stop;
    options.shard = job.shard;
    options.shards = job.shards;
    settings_of.push_back(
        geo::map_settings_hash(*model_, rasters[i], job.categories, options, geo::map_tile_grid(*model_, rasters[i], options)));
  }
  if (!job.raster_out.empty()) geo::check_class_raster_size(rasters[0]);
  for (const auto& raster : rasters) geo::check_exemplar_boxes(raster, job.categories);
  check_vector_outputs(job, rasters);
  // Held for the whole run: one run per folder, and the tile records are sam3's own. Made
  // after the inputs and the model are known good, so a run refused at once leaves no folder.
  OutputFolderUpdate update(job.out);
  stage_map_outputs(update, job);
  MapRunSummary summary;
  summary.tiles_dir = update.claim("map-tiles");
  summary.rasters = static_cast<int>(rasters.size());

  std::vector<geo::MapLabelResult> results;
  for (size_t i = 0; i < rasters.size(); ++i) {
    geo::MapLabelOptions& options = options_of[i];
    // Each tile's result is kept as it finishes: a rerun of the same job resumes.
    const geo::MapTileStore store(summary.tiles_dir / settings_of[i].substr(0, 16), settings_of[i]);
    options.store = &store;
    if (progress) {
      options.progress = [&, i](int done, int total, double km2) { progress({rasters[i].path(), done, total, km2}); };
    }
    results.push_back(geo::label_raster(model_, rasters[i], job.categories, options));
    if (results.back().stopped) {
      summary.stopped = true;
      return summary;
    }
  }
  add_totals(results, summary);
  if (job.shards > 1) {  // instances as found; merge() of all shards writes the outputs
    stage_map_outputs(update, job);
    geo::write_map_shard(update.stage(kShardFile), rasters[0], job.categories, job.shard, job.shards, settings_of[0], results[0],
                         job_record(job).dump());
    update.commit();
    summary.outputs.push_back(update.root() / kShardFile);
    return summary;
  }
  write_outputs(update, job, rasters, results, summary);
  return summary;
}

MapRunSummary MapLabeler::merge(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& out) {
  if (shard_dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "give the shard folders to merge");
  std::vector<geo::MapShard> shards;
  for (const auto& d : shard_dirs) shards.push_back(geo::read_map_shard(d / kShardFile));
  MapLabelJob job;
  try {
    job = job_of_record(nlohmann::json::parse(shards.front().extra_json));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kInvalidArgument,
                (shard_dirs.front() / kShardFile).string() + ": the job it records cannot be read (" + e.what() + "); run the shard again");
  }
  for (const auto& name : shards.front().categories) job.categories.push_back({name, {name, {}}, std::nullopt});
  std::vector<Raster> rasters;
  rasters.push_back(Raster::open(shards.front().raster, job.raster));
  std::vector<geo::MapLabelResult> results;
  results.push_back(geo::merge_map_shards(std::move(shards), TileOptions{}));
  OutputFolderUpdate update(out);
  MapRunSummary summary;
  summary.rasters = 1;
  add_totals(results, summary);
  write_outputs(update, job, rasters, results, summary);
  return summary;
}

}  // namespace sam3
