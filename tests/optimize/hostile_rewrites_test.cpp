// The graph rewrites stay linear in the size of a hostile file: a tensor name megabytes long that
// starts with a rewrite's own prefix, weights chained through shared zero points. Before, the
// first made a load run quadratically (a name search that grew the prefix by "x_" per match) and
// the second cubically (a fixed point over all weight pairs); at the sizes below either would
// run for hours, past the test's time limit.
#include <gtest/gtest.h>

#include <vector>

#include "optimize/onnx_attention.h"
#include "optimize/onnx_build.h"
#include "optimize/onnx_fields.h"
#include "optimize/onnx_graph_view.h"
#include "optimize/onnx_int8.h"
#include "optimize/onnx_int8_as_float.h"
#include "optimize/protobuf_wire.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

namespace wire = sam3::optimize::wire;
namespace onnx = sam3::optimize::onnx;

// The model with `extra` graph fields appended to its graph.
std::string with_graph_fields(const std::string& model, const std::string& extra) {
  const auto fields = wire::parse(model);
  const auto& graph = wire::message_field(fields, onnx::kModelGraph);
  return wire::with_payload(fields, graph, std::string(graph.bytes) + extra);
}

std::string identity_node(const std::string& input, const std::string& output) {
  return onnx::node("Identity", {input}, output);  // a graph's node field
}

// "<prefix>x_x_x_...": the form the old search for a free prefix walked one "x_" at a time.
std::string long_name(const std::string& prefix) {
  std::string name = prefix;
  while (name.size() < 32u << 20) name += "x_";
  return name;
}

TEST(HostileRewrites, AttentionFusionIgnoresALongNameWithItsPrefix) {
  const std::string original = sam3::test::read_file(sam3::test::test_models_dir() / "attention" / "scaled_4d.fuse1.onnx");
  const std::string name = long_name("sam3_fused_attention_");
  const std::string hostile = with_graph_fields(original, identity_node("q", name));
  sam3::optimize::AttentionFusionStats stats;
  const std::string fused = sam3::optimize::fuse_attention(hostile, &stats);
  EXPECT_EQ(stats.fused, 1);
  EXPECT_NE(fused.find("sam3_fused_attention_0_"), std::string::npos) << "a numbered prefix no name starts with";
}

TEST(HostileRewrites, Int8AsFloatIgnoresALongNameWithItsPrefix) {
  const std::string original = sam3::test::read_file(sam3::test::test_models_dir() / "int8" / "linears.onnx");
  const std::string hostile = with_graph_fields(original, identity_node("x_a", long_name("sam3_int8_as_float_")));
  sam3::optimize::Int8AsFloatStats stats;
  sam3::optimize::int8_products_as_float(hostile, &stats);
  EXPECT_EQ(stats.matmuls, 4);
  EXPECT_EQ(stats.convs, 1);
}

TEST(HostileRewrites, UnusedPrefixSkipsEveryNumberTaken) {
  std::string graph;
  for (const std::string out : {"p_", "p_0_a", "p_1_", "p_01_b", "p_2", "p_3_c", "p_18446744073709551616_"}) {
    graph += identity_node("x", out);
  }
  const auto fields = wire::parse(graph);
  const onnx::GraphView view(fields);
  // 0, 1 and 3 are taken ("p_01_" and "p_2" without "_" do not take 1 and 2).
  EXPECT_EQ(view.unused_prefix("p_"), "p_2_");
  EXPECT_EQ(view.unused_prefix("q_"), "q_") << "a free base is used as it is";
}

// MatMulInteger i reads weight i with zero point i, and weight i + 1 with zero point i again:
// every weight is joined to the next one through a shared zero point.
std::string chained_zero_points(int n, bool last_weight_int8) {
  std::string graph;
  auto initializer = [&](const std::string& name, std::vector<std::int64_t> dims, int type, size_t bytes) {
    std::string t;
    for (auto d : dims) wire::write_varint_field(t, onnx::kTensorDims, static_cast<std::uint64_t>(d));
    wire::write_varint_field(t, onnx::kTensorDataType, static_cast<std::uint64_t>(type));
    wire::write_len(t, onnx::kTensorName, name);
    wire::write_len(t, onnx::kTensorRawData, std::string(bytes, '\x80'));
    wire::write_len(graph, onnx::kGraphInitializer, t);
  };
  for (int i = 0; i <= n; ++i) {
    const bool int8 = last_weight_int8 && i == n;
    initializer("w" + std::to_string(i), {4, 4}, int8 ? onnx::kInt8 : onnx::kUint8, 16);
    if (i < n) initializer("z" + std::to_string(i), {}, onnx::kUint8, 1);
  }
  for (int i = 0; i < n; ++i) {
    const std::string w = "w" + std::to_string(i), next = "w" + std::to_string(i + 1), z = "z" + std::to_string(i);
    graph += onnx::node("MatMulInteger", {"a", w, "az", z}, "y" + std::to_string(i));
    graph += onnx::node("MatMulInteger", {"a", next, "az", z}, "v" + std::to_string(i));
  }
  std::string model;
  wire::write_varint_field(model, 1, 8);  // ir_version
  wire::write_len(model, onnx::kModelGraph, graph);
  return model;
}

TEST(HostileRewrites, ChainedZeroPointsChangeTogetherInLinearTime) {
  constexpr int kWeights = 20000;
  sam3::optimize::Int8RewriteStats stats;
  sam3::optimize::rewrite_matmulinteger_weights_to_int8(chained_zero_points(kWeights, false), &stats);
  EXPECT_EQ(stats.weights, kWeights + 1);
  EXPECT_EQ(stats.zero_points, kWeights);
  EXPECT_EQ(stats.skipped, 0);
  // One weight at the end of the chain that cannot change (already int8) keeps all of them uint8.
  sam3::optimize::rewrite_matmulinteger_weights_to_int8(chained_zero_points(kWeights, true), &stats);
  EXPECT_EQ(stats.weights, 0);
  EXPECT_EQ(stats.skipped, kWeights + 1);
}

}  // namespace
