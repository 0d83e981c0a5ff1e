// sam3cpp._native.label_map in a build without maps (SAM3_MAPS=OFF, or GDAL not found at
// configure time): it raises InvalidArgumentError saying how to turn maps on.
#include "bind_label_map.h"

#include "sam3/error.h"

bool is_georeferenced_input(const std::filesystem::path&) { return false; }

void bind_label_map(pybind11::module_& m) {
  m.def("label_map", [](const pybind11::args&, const pybind11::kwargs&) {
    throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                      "this sam3cpp was built without maps (GDAL): install libgdal-dev (scripts/setup.sh does) and build "
                      "again with -DSAM3_MAPS=ON");
  });
}
