// Binds sam3cpp._native.label_map (map labeling, sam3/map_labeler.h).
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>

void bind_label_map(pybind11::module_& m);

// Whether GDAL reads `path` as georeferenced (false in a build without maps): label() refuses to
// write such a raster's GeoJSON in pixels, as `sam3 label` sends it to the map path.
bool is_georeferenced_input(const std::filesystem::path& path);
