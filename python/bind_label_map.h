// Binds sam3cpp._native.label_map (map labeling, sam3/map_labeler.h).
#pragma once

#include <pybind11/pybind11.h>

void bind_label_map(pybind11::module_& m);
