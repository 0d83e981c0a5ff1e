#include "label_map.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli_common.h"
#include "sam3/error.h"

namespace sam3::cli {
namespace {

void print_summary(const MapRunSummary& s) {
  std::printf("%d raster%s, %lld tiles (%lld all nodata, skipped), %.3f km2 with data ->", s.rasters, s.rasters == 1 ? "" : "s",
              static_cast<long long>(s.tiles), static_cast<long long>(s.tiles_skipped), s.area_km2);
  for (const auto& path : s.outputs) std::printf(" %s", path.c_str());
  std::printf("\n");
  for (size_t c = 0; c < s.categories.size() && c < s.features_per_category.size(); ++c) {
    std::printf("  %s: %d\n", s.categories[c].c_str(), s.features_per_category[c]);
  }
}

}  // namespace

bool asks_for_maps(const std::string& formats) { return is_map_format_list(formats); }
std::vector<MapFormat> map_formats(const std::string& formats) { return parse_map_formats(formats); }
bool is_map_shard_dir(const std::filesystem::path& dir) { return MapLabeler::is_shard_dir(dir); }
bool is_georeferenced(const std::filesystem::path& path) { return is_georeferenced_raster(path); }
bool maps_built() { return true; }

int run_map_merge(const std::vector<std::string>& dirs, const std::string& out) {
  std::vector<std::filesystem::path> paths(dirs.begin(), dirs.end());
  print_summary(MapLabeler::merge(paths, out));
  return kOk;
}

int run_map_label(const MapLabelJob& job, const ModelSelection& models, int threads, const std::atomic<bool>* stop) {
  ModelOptions mo;
  mo.providers = execution_providers(models);
  mo.intra_op_threads = threads;
  mo.precision = precision_of(models.precision);
  const auto model = Model::load(resolve_model_dir(models), mo);
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto last = std::chrono::steady_clock::time_point{};
  const auto progress = [&](const MapProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.tiles_done < p.tiles_total && now - last < std::chrono::seconds(tty ? 1 : 10)) return;
    last = now;
    const double s = std::chrono::duration<double>(now - t0).count();
    const int eta = p.tiles_done > 0 ? static_cast<int>(s / p.tiles_done * (p.tiles_total - p.tiles_done)) : 0;
    std::fprintf(stderr, "%ssam3 label: %s: %d/%d tiles, %.2f km2, ETA %d:%02d%s", tty ? "\r" : "", p.raster.filename().c_str(),
                 p.tiles_done, p.tiles_total, p.area_km2, eta / 60, eta % 60, tty && p.tiles_done < p.tiles_total ? "" : "\n");
    std::fflush(stderr);
  };
  const MapRunSummary s = MapLabeler(model).run(job, progress, stop);
  if (s.stopped) {
    std::printf("interrupted; the finished tiles are kept in %s: run the same command again to go on\n", s.tiles_dir.c_str());
    return 130;
  }
  if (job.shards > 1) {
    std::printf("shard %d/%d: %lld instances -> %s; merge all shards with 'sam3 label merge SHARD_DIR... --out DIR'\n", job.shard + 1,
                job.shards, static_cast<long long>(s.instances), s.outputs.front().c_str());
    return kOk;
  }
  print_summary(s);
  return kOk;
}

}  // namespace sam3::cli
