// Splits a graph at the nodes the browser's own kernels compute (apps/web/kernels, docs/browser.md
// "Relaxed-SIMD int8 products" and "The tab's own attention kernel"): ONNX Runtime Web runs the
// graph between them as a chain of smaller graphs ("segments"), and the kernel computes each
// "kernel step" from values the segments made. What a kernel step is comes from a matcher
// (optimize/onnx_split_linears.h: int8 linear layers; optimize/onnx_split_attention.h:
// MultiHeadAttention); this file cuts the graph around them, the same for every kind.
//
// The result is one "bundle": the magic "SAM3SPL1", a little-endian uint32 header length, the
// header (JSON), then the blobs it points to (16-byte aligned offsets from the bundle's start):
//   {"version": 1, "inputs"/"outputs": the graph's [{name, type (ONNX element type), shape}],
//    "steps": [{"segment": {offset, bytes, inputs, outputs}} | {KIND: {the step's fields, its
//    blobs as {offset, bytes} or null}}, ...]}
// run in order: each segment's inputs are graph inputs or earlier steps' outputs; a node runs in
// the segment after the last kernel step it depends on. Segments are ONNX models (the input's
// opsets) holding the nodes in their original order and the initializers they read; their
// inputs carry element types, inferred for the common operators (a value whose type is unknown
// stops the split: nothing is split then).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optimize/onnx_graph_view.h"

namespace sam3::optimize {

// One node pattern a kernel computes instead of ONNX Runtime.
struct KernelStep {
  std::string kind;                                        // the header's key: "linear", "attention"
  int first = 0;                                           // the pattern's node where all its inputs are known (its first reader of them)
  std::set<int> nodes;                                     // the pattern's nodes, left out of the segments
  std::vector<std::string> inputs;                         // the values it reads, made by segments or graph inputs
  std::string output;                                      // the one value it makes
  nlohmann::json fields;                                   // what the kernel needs ("output" is added)
  std::vector<std::pair<std::string, std::string>> blobs;  // fields written as blobs (empty bytes: null)
};

struct SplitStats {
  std::map<std::string, int> kernel_steps;  // per kind
  int segments = 0;                         // graphs left to ONNX Runtime
  std::string refused;                      // why nothing was split although steps were found
};

inline constexpr std::string_view kSplitBundleMagic = "SAM3SPL1";

// Finds the kernel steps of a graph (in any order; patterns must not overlap).
using KernelMatcher = std::function<void(const onnx::GraphView&, std::vector<KernelStep>&)>;

// The bundle, or an empty string when no matcher found a step or the graph cannot be split
// (stats->refused says why). Throws sam3::Error(kModelMismatch) on a malformed file.
std::string split_graph(std::string_view model_bytes, const std::vector<KernelMatcher>& matchers, SplitStats* stats);

}  // namespace sam3::optimize
