// sam3cpp.label_map: MapLabeler (sam3/map_labeler.h) for Python, as `sam3 label RASTER
// --format gpkg` runs it; the arguments are translated, nothing is computed here.
#include "bind_label_map.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <optional>

#include "sam3/error.h"
#include "sam3/map_labeler.h"
#include "sam3/raster.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

sam3::RasterOptions::Scale scale_of(const std::string& kind) {
  if (kind == "auto") return sam3::RasterOptions::Scale::kAuto;
  if (kind == "minmax") return sam3::RasterOptions::Scale::kMinMax;
  if (kind == "percentile") return sam3::RasterOptions::Scale::kPercentile;
  if (kind == "fixed") return sam3::RasterOptions::Scale::kFixed;
  throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                    "scale must be \"auto\", \"minmax\", (\"percentile\", low, high) or (min, max), got " + kind);
}

}  // namespace

bool is_georeferenced_input(const std::filesystem::path& path) { return sam3::is_georeferenced_raster(path); }

void bind_label_map(py::module_& m) {
  m.def(
      "label_map",
      [](const std::vector<std::filesystem::path>& rasters, const std::vector<std::string>& prompts, const std::filesystem::path& out,
         const std::shared_ptr<sam3::Model>& model, const std::string& formats, float threshold, int tile, int overlap,
         const std::vector<int>& bands, const std::string& scale, double low, double high, double gsd, const std::string& t_srs,
         const std::string& raster_out, bool allow_network, const std::function<void(py::dict)>& progress) {
        sam3::MapLabelJob job;
        job.rasters = rasters;
        for (const auto& p : prompts) job.categories.push_back({p, {p, {}}, std::nullopt});
        job.formats = sam3::parse_map_formats(formats);
        job.out = out;
        job.segment.score_threshold = threshold;
        job.tile = tile;
        job.overlap = overlap;
        job.raster.bands = bands;
        job.raster.scale = scale_of(scale);
        job.raster.low = low, job.raster.high = high;
        job.raster.gsd_m = gsd;
        job.raster.allow_network = allow_network;
        job.target_crs = t_srs;
        job.raster_out = raster_out;
        std::atomic<bool> stop{false};
        std::optional<py::error_already_set> callback_error;  // raised again once the run has stopped
        sam3::MapRunSummary s;
        {
          py::gil_scoped_release release;
          s = sam3::MapLabeler(model).run(
              job,
              [&](const sam3::MapProgress& p) {
                if (!progress || stop) return;
                py::gil_scoped_acquire acquire;
                try {
                  progress(py::dict("raster"_a = p.raster, "tiles_done"_a = p.tiles_done, "tiles_total"_a = p.tiles_total,
                                    "area_km2"_a = p.area_km2));
                } catch (py::error_already_set& e) {
                  stop = true;  // the tile in flight is finished and kept, then it is raised
                  callback_error = std::move(e);
                }
              },
              &stop);
        }
        if (callback_error) throw std::move(*callback_error);
        py::dict features;
        for (size_t c = 0; c < s.categories.size() && c < s.features_per_category.size(); ++c) {
          features[py::str(s.categories[c])] = s.features_per_category[c];
        }
        return py::dict("outputs"_a = s.outputs, "features"_a = features, "tiles"_a = s.tiles, "tiles_skipped"_a = s.tiles_skipped,
                        "area_km2"_a = s.area_km2, "stopped"_a = s.stopped);
      },
      "rasters"_a, "prompts"_a, "out"_a, py::kw_only(), "model"_a, "formats"_a = "gpkg", "threshold"_a = 0.5f, "tile"_a = 0,
      "overlap"_a = 0, "bands"_a = std::vector<int>{}, "scale"_a = "auto", "low"_a = 2.0, "high"_a = 98.0, "gsd"_a = 0.0, "t_srs"_a = "",
      "raster_out"_a = "", "allow_network"_a = false, "progress"_a = nullptr);
}
