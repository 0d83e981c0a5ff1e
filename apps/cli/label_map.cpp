#include "label_map.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "cli_common.h"
#include "number_options.h"
#include "sam3/error.h"

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
    std::fprintf(stderr, "%ssam3 label: %s: %d/%d tiles, %.2f km2, ETA %d:%02d%s", tty ? "\r" : "",
                 p.raster.filename().c_str(), p.tiles_done, p.tiles_total, p.area_km2, eta / 60, eta % 60,
                 tty && p.tiles_done < p.tiles_total ? "" : "\n");
    std::fflush(stderr);
  };
  const MapRunSummary s = MapLabeler(model).run(job, progress, stop);
  if (s.stopped) {
    std::printf("interrupted; the finished tiles are kept in %s: run the same command again to go on\n", s.tiles_dir.c_str());
    return 130;
  }
  if (job.shards > 1) {
    std::printf("shard %d/%d: %lld instances -> %s; merge all shards with 'sam3 label merge SHARD_DIR... --out DIR'\n",
                job.shard + 1, job.shards, static_cast<long long>(s.instances), s.outputs.front().c_str());
    return kOk;
  }
  print_summary(s);
  return kOk;
}

}  // namespace sam3::cli
