// Moves chosen nodes of a model to a custom operator domain (their op type, inputs, outputs
// and attributes unchanged) and imports that domain: how the prepare step hands nodes to
// sam3's own kernels (kernels/onednn_*.h). Works on the serialized protobuf.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "optimize/onnx_graph_view.h"

namespace sam3::optimize {

// The names of a node's attributes.
std::vector<std::string> attribute_names(const onnx::Node& n);

// Returns the model with every node for which `movable` is true moved to `domain` (the input
// unchanged when none is); *moved counts them. Throws sam3::Error(kModelMismatch) on a
// malformed file.
std::string move_nodes_to_domain(const std::string& model_bytes, std::string_view domain,
                                 const std::function<bool(const onnx::GraphView&, const onnx::Node&)>& movable, int* moved);

}  // namespace sam3::optimize
