// The graph split at its int8 linear layers for the browser's own kernel: the segments run on
// ONNX Runtime, with each product computed in between as the kernel computes it (exact integer
// sums, then ONNX Runtime's float steps), give the whole graph's outputs; and the same splitter
// at attention (below).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <stdexcept>

#include "optimize/onnx_attention.h"
#include "optimize/onnx_attention_chunks.h"
#include "optimize/onnx_split_attention.h"
#include "optimize/onnx_split_linears.h"
#include "optimize/onnx_split_matmuls.h"
#include "runtime/session.h"
#include "sam3/error.h"
#include "support/files.h"
#include "support/test_images.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Value {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};
using Values = std::map<std::string, Value>;

Values run(Ort::Session& session, Values& feeds) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<std::string> in_names, out_names;
  std::vector<Ort::Value> values;
  const auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  for (size_t i = 0; i < session.GetInputCount(); ++i) {
    in_names.push_back(session.GetInputNameAllocated(i, allocator).get());
    Value& v = feeds.at(in_names.back());
    values.push_back(Ort::Value::CreateTensor(memory, v.bytes.data(), v.bytes.size(), v.shape.data(), v.shape.size(), v.type));
  }
  for (size_t i = 0; i < session.GetOutputCount(); ++i) out_names.push_back(session.GetOutputNameAllocated(i, allocator).get());
  std::vector<const char*> in_ptrs, out_ptrs;
  for (const auto& n : in_names) in_ptrs.push_back(n.c_str());
  for (const auto& n : out_names) out_ptrs.push_back(n.c_str());
  auto outputs = session.Run(Ort::RunOptions{}, in_ptrs.data(), values.data(), values.size(), out_ptrs.data(), out_ptrs.size());
  Values out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto info = outputs[i].GetTensorTypeAndShapeInfo();
    Value v{info.GetElementType(), info.GetShape(), {}};
    const size_t element = v.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64                                                    ? 8
                           : v.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || v.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 ? 4
                                                                                                                            : 1;
    const size_t bytes = info.GetElementCount() * element;
    const auto* p = static_cast<const std::uint8_t*>(outputs[i].GetTensorRawData());
    v.bytes.assign(p, p + bytes);
    out[out_names[i]] = std::move(v);
  }
  return out;
}

Ort::Session session_of(std::string_view bytes) {
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(1);
  return Ort::Session(sam3::runtime::env(), bytes.data(), bytes.size(), options);
}

// The kernel's arithmetic (apps/web/kernels/int8_gemm.c) in plain C++.
Value linear(const json& l, const std::string& blobs, const Values& values) {
  auto blob = [&](const json& b) { return std::string_view(blobs).substr(b["offset"].get<size_t>(), b["bytes"].get<size_t>()); };
  const Value& x = values.at(l["x"]);
  const auto k = l["k"].get<std::int64_t>(), n = l["n"].get<std::int64_t>();
  const bool is_signed = l["signed"];
  const std::int64_t m = static_cast<std::int64_t>(x.bytes.size()) / k;
  const int za = values.at(l["zero_point"]).bytes[0];
  float sa;
  std::memcpy(&sa, values.at(l["scale"]).bytes.data(), 4);
  const auto w = blob(l["weight"]);
  const std::string_view zp = l["w_zero_point"].is_null() ? std::string_view() : blob(l["w_zero_point"]);
  const auto ws = blob(l["w_scale"]);
  const std::string_view bias = l["bias"].is_null() ? std::string_view() : blob(l["bias"]);
  auto value = [&](char c) { return is_signed ? int(static_cast<std::int8_t>(c)) : int(static_cast<std::uint8_t>(c)); };
  auto f = [](std::string_view s, size_t i) {
    float v;
    std::memcpy(&v, s.data() + 4 * i, 4);
    return v;
  };
  Value y{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, x.shape, std::vector<std::uint8_t>(static_cast<size_t>(m * n) * 4)};
  y.shape.back() = n;
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t c = 0; c < n; ++c) {
      const int zw = zp.empty() ? 0 : value(zp[zp.size() > 1 ? static_cast<size_t>(c) : 0]);
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < k; ++i)
        sum += (x.bytes[static_cast<size_t>(r * k + i)] - za) * (value(w[static_cast<size_t>(i * n + c)]) - zw);
      const float scale = sa * f(ws, ws.size() > 4 ? static_cast<size_t>(c) : 0);
      float v = static_cast<float>(sum) * scale;
      if (!bias.empty()) v = v + f(bias, static_cast<size_t>(c));
      std::memcpy(y.bytes.data() + 4 * (r * n + c), &v, 4);
    }
  }
  if (l.contains("residual")) {  // a residual taken in: added after, repeated over the leading rows when shorter
    const Value& res = values.at(l["residual"]);
    const std::string_view rs(reinterpret_cast<const char*>(res.bytes.data()), res.bytes.size());
    for (size_t i = 0; i < y.bytes.size(); i += 4) {
      float v;
      std::memcpy(&v, y.bytes.data() + i, 4);
      v = v + f(rs, (i % rs.size()) / 4);
      std::memcpy(y.bytes.data() + i, &v, 4);
    }
  }
  return y;
}

// A split bundle (onnx_split_graph.h): its JSON header and the blobs after it.
struct Bundle {
  json header;
  std::string blobs;
};

Bundle read_bundle(const std::string& bundle) {
  std::uint32_t length = 0;
  std::memcpy(&length, bundle.data() + 8, 4);
  return {json::parse(bundle.substr(12, length)), bundle.substr((12 + length + 15) / 16 * 16)};
}

// Every input of the bundle filled with floats drawn from [lo, hi].
Values random_feeds(const json& header, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> draw(lo, hi);
  Values feeds;
  for (const auto& in : header["inputs"]) {
    Value v{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, in["shape"].get<std::vector<std::int64_t>>(), {}};
    std::int64_t count = 1;
    for (auto d : v.shape) count *= d;
    v.bytes.resize(static_cast<size_t>(count) * 4);
    for (std::int64_t i = 0; i < count; ++i) {
      const float x = draw(rng);
      std::memcpy(v.bytes.data() + 4 * i, &x, 4);
    }
    feeds[in["name"]] = std::move(v);
  }
  return feeds;
}

// The bundle's steps in order, as the tab runs them: segments on ONNX Runtime, and each kernel
// step by `kernel` (which returns the step's output value and the name it goes under).
Values run_steps(const Bundle& b, const Values& feeds,
                 const std::function<std::pair<std::string, Value>(const json&, const Values&)>& kernel) {
  Values values = feeds;
  for (const auto& step : b.header["steps"]) {
    if (step.contains("segment")) {
      const auto& s = step["segment"];
      Ort::Session session = session_of(std::string_view(b.blobs).substr(s["offset"].get<size_t>(), s["bytes"].get<size_t>()));
      // The blob is the segment the header describes (its inputs, its outputs).
      Ort::AllocatorWithDefaultOptions allocator;
      std::set<std::string> names, listed(s["inputs"].begin(), s["inputs"].end());
      for (size_t i = 0; i < session.GetInputCount(); ++i) names.insert(session.GetInputNameAllocated(i, allocator).get());
      if (names != listed) throw std::runtime_error("a segment's blob reads other inputs than its header lists: " + s.dump());
      names.clear(), listed = std::set<std::string>(s["outputs"].begin(), s["outputs"].end());
      for (size_t i = 0; i < session.GetOutputCount(); ++i) names.insert(session.GetOutputNameAllocated(i, allocator).get());
      if (names != listed) throw std::runtime_error("a segment's blob makes other outputs than its header lists: " + s.dump());
      Values in;
      for (const auto& name : s["inputs"]) in[name] = values.at(name);
      for (auto& [name, v] : run(session, in)) values[name] = std::move(v);
    } else {
      auto [name, v] = kernel(step, values);
      values[name] = std::move(v);
    }
  }
  return values;
}

void expect_split_equals_whole(const std::string& file, int linears, int segments, const std::vector<std::string>& unsigned_outputs) {
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "int8" / file);
  sam3::optimize::SplitLinearsStats stats;
  const std::string bundle = sam3::optimize::split_at_int8_linears(model, &stats);
  EXPECT_EQ(stats.linears, linears) << file;
  EXPECT_EQ(stats.segments, segments) << file;
  ASSERT_EQ(bundle.substr(0, 8), sam3::optimize::kSplitBundleMagic);
  const Bundle split = read_bundle(bundle);
  Ort::Session whole = session_of(model);
  std::mt19937 rng(45);
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-1, 1}, {0.5f, 3}, {-7, -0.1f}, {2, 2}, {-1e4f, 3e4f}}) {
    Values feeds = random_feeds(split.header, rng, lo, hi);
    const Values values = run_steps(split, feeds, [&](const json& step, const Values& v) {
      return std::pair{step["linear"]["output"].get<std::string>(), linear(step["linear"], split.blobs, v)};
    });
    const Values want = run(whole, feeds);
    for (const auto& [name, w] : want) {
      const Value& got = values.at(name);
      ASSERT_EQ(got.shape, w.shape) << file << " " << name;
      ASSERT_EQ(got.bytes.size(), w.bytes.size()) << name;
      const bool exact = std::find(unsigned_outputs.begin(), unsigned_outputs.end(), name) != unsigned_outputs.end();
      for (size_t i = 0; i < w.bytes.size(); i += 4) {
        float a, b;
        std::memcpy(&a, w.bytes.data() + i, 4);
        std::memcpy(&b, got.bytes.data() + i, 4);
        // uint8 weights: ONNX Runtime's u8 x u8 kernels are exact on every CPU, so the split's
        // products equal its fused ones bit for bit. int8 weights: its u8 x s8 kernel saturates
        // 16-bit sums on AVX2 (tests/support/int8_reference.h), so only close there.
        if (exact)
          ASSERT_EQ(a, b) << file << " " << name << "[" << i / 4 << "] on [" << lo << ", " << hi << "]";
        else
          ASSERT_LE(std::abs(a - b), 0.02 * std::max(1.0f, std::abs(a))) << file << " " << name << "[" << i / 4 << "]";
      }
    }
  }
}

TEST(SplitLinears, TheSegmentsAndTheKernelsArithmeticGiveTheWholeGraphsOutputs) {
  // linears.onnx: y_conv (ConvInteger) and y_kept (an Add on the integers) stay in the segments.
  expect_split_equals_whole("linears.onnx", 4, 2, {"y_published", "y_per_column", "y_conv", "y_kept"});
  // linears_bias.onnx: biases either side, per-column scales, a chain over three segments.
  expect_split_equals_whole("linears_bias.onnx", 4, 3, {"y_bias", "y_columns"});
}

TEST(SplitLinears, SegmentsOfTheSameSizeKeepTheirOwnBytes) {
  // Four residual blocks alike: their segments are as long as one another. The bundle shares the
  // blobs of identical bytes, and a map holding views of each segment's freed bytes took the
  // next segment, made in the same memory, for the one before it: the tab ran block 1's segment
  // in block 2's place ("input ... is missing", on the bench tracker's image encoder).
  expect_split_equals_whole("int8_blocks.onnx", 4, 5, {"y"});
}

TEST(SplitLinears, AResidualAddedAfterTheProductIsTakenIn) {
  // x + linear(Relu(x)), four times: each block's sum was made in the segment after its product
  // and left ONNX Runtime there (in the tab a new array on every run: the image encoder's
  // residual stream, 21 MB a block). Taken into the product (the kernel adds it), only the
  // quantizers' outputs (and the graph's output y) leave a segment, and the sums stay in the
  // kernels' memory.
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "int8" / "int8_blocks.onnx");
  sam3::optimize::SplitLinearsStats stats;
  const Bundle split = read_bundle(sam3::optimize::split_at_int8_linears(model, &stats));
  ASSERT_EQ(stats.linears, 4) << stats.refused;
  std::set<std::string> quantized;
  int residuals = 0;
  for (const auto& step : split.header["steps"]) {
    if (!step.contains("linear")) continue;
    for (const char* f : {"x", "scale", "zero_point"}) quantized.insert(step["linear"][f].get<std::string>());
    residuals += step["linear"].contains("residual") ? 1 : 0;
  }
  EXPECT_EQ(residuals, 4);
  for (const auto& step : split.header["steps"]) {
    if (!step.contains("segment")) continue;
    for (const auto& o : step["segment"]["outputs"]) EXPECT_TRUE(quantized.contains(o) || o == "y") << "a segment gives out " << o;
  }
}

TEST(SplitLinears, GraphsWithoutLinearsAreLeftAlone) {
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "int8" / "matmulinteger.onnx");
  sam3::optimize::SplitLinearsStats stats;
  EXPECT_EQ(sam3::optimize::split_at_int8_linears(model, &stats), "") << "integer outputs: no Cast -> Mul, no linear layer";
  EXPECT_EQ(stats.linears, 0);
  EXPECT_THROW(sam3::optimize::split_at_int8_linears("not a model", nullptr), sam3::Error);
}

}  // namespace

// The same splitter at MultiHeadAttention nodes (optimize/onnx_split_attention.h, the browser's
// attention kernel): the attention test graphs fused as the tab fuses them, split, the segments
// run on ONNX Runtime with attention computed here in double between them, give the whole
// graph's outputs as written within float rounding; masked attention is not split.
namespace {

Value attention(const json& a, const Values& values) {
  const Value &q = values.at(a["q"]), &k = values.at(a["k"]), &v = values.at(a["v"]);
  const auto heads = a["heads"].get<std::int64_t>();
  const std::int64_t B = q.shape[0], S = q.shape[1], L = k.shape[1], dh = q.shape[2] / heads, dv = v.shape[2] / heads;
  const double scale = a["scale"].get<double>() != 0 ? a["scale"].get<double>() : 1 / std::sqrt(static_cast<double>(dh));
  auto f = [](const Value& t, std::int64_t i) {
    float x;
    std::memcpy(&x, t.bytes.data() + 4 * i, 4);
    return static_cast<double>(x);
  };
  Value out{
      ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {B, S, heads * dv}, std::vector<std::uint8_t>(static_cast<size_t>(B * S * heads * dv) * 4)};
  std::vector<double> p(static_cast<size_t>(L));
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t i = 0; i < S; ++i) {
      for (std::int64_t h = 0; h < heads; ++h) {
        double max = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < dh; ++d) dot += f(q, ((b * S + i) * heads + h) * dh + d) * f(k, ((b * L + j) * heads + h) * dh + d);
          p[static_cast<size_t>(j)] = dot * scale;
          max = std::max(max, dot * scale);
        }
        for (auto& x : p) sum += (x = std::exp(x - max));
        for (std::int64_t c = 0; c < dv; ++c) {
          double acc = 0;
          for (std::int64_t j = 0; j < L; ++j) acc += p[static_cast<size_t>(j)] * f(v, ((b * L + j) * heads + h) * dv + c);
          const float y = static_cast<float>(acc / sum);
          std::memcpy(out.bytes.data() + 4 * (((b * S + i) * heads + h) * dv + c), &y, 4);
        }
      }
    }
  }
  return out;
}

// Every output of `want` (the whole graph's) within 1e-5 of `got`'s, relative to max(1, |value|).
void expect_outputs_close(const Values& want, const Values& got, const std::string& what) {
  for (const auto& [name, w] : want) {
    const Value& g = got.at(name);
    ASSERT_EQ(g.shape, w.shape) << what << " " << name;
    for (size_t i = 0; i < w.bytes.size(); i += 4) {
      float a, b;
      std::memcpy(&a, w.bytes.data() + i, 4);
      std::memcpy(&b, g.bytes.data() + i, 4);
      ASSERT_NEAR(a, b, 1e-5f * std::max(1.0f, std::abs(a))) << what << " " << name << "[" << i / 4 << "]";
    }
  }
}

void expect_attention_split_equals_whole(const std::string& file, int steps) {
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "attention" / file);
  const std::string fused = sam3::optimize::fuse_attention(model, nullptr);
  sam3::optimize::SplitStats stats;
  const std::string bundle = sam3::optimize::split_graph(fused, {sam3::optimize::match_attention}, &stats);
  ASSERT_EQ(stats.kernel_steps["attention"], steps) << file << " " << stats.refused;
  if (steps == 0) {
    EXPECT_EQ(bundle, "") << file;
    return;
  }
  const Bundle split = read_bundle(bundle);
  Ort::Session whole = session_of(model);
  std::mt19937 rng(45);
  Values feeds = random_feeds(split.header, rng, -4, 4);
  Values values;
  ASSERT_NO_THROW(values = run_steps(split, feeds, [](const json& step, const Values& v) {
                    if (!step.contains("attention"))
                      throw std::runtime_error("a step that is neither a segment nor attention: " + step.dump());
                    return std::pair{step["attention"]["output"].get<std::string>(), attention(step["attention"], v)};
                  }));
  expect_outputs_close(run(whole, feeds), values, file);
}

}  // namespace

TEST(SplitAttention, TheSegmentsAndAttentionBetweenThemGiveTheWholeGraphsOutputs) {
  for (const char* f : {"div_scale_3d.fuse1.onnx", "few_keys.fuse1.onnx", "scaled_4d.fuse1.onnx", "torch_sdpa_default_scale.fuse1.onnx",
                        "torch_sqrt_scale.fuse1.onnx"}) {
    expect_attention_split_equals_whole(f, 1);
  }
  expect_attention_split_equals_whole("projected.fuse2.onnx", 2);
  expect_attention_split_equals_whole("masked.fuse0.onnx", 0);  // a mask added to the scores: not fused, not split
}

// The same splitter at float products by constant weights (optimize/onnx_split_matmuls.h, the
// browser's float kernel): float_matmuls.onnx (tools/make_float_matmul_models.py) split, the
// segments run on ONNX Runtime with each product (and its bias) computed here in double between
// them, gives the whole graph's outputs within float rounding; the products over a few rows, over
// rows it cannot know, and by a second input that is not a constant stay in the segments.
namespace {

Value float_matmul(const json& f, const std::string& blobs, const Values& values) {
  auto blob = [&](const json& b) { return std::string_view(blobs).substr(b["offset"].get<size_t>(), b["bytes"].get<size_t>()); };
  auto at = [](std::string_view s, std::int64_t i) {
    float v;
    std::memcpy(&v, s.data() + 4 * i, 4);
    return static_cast<double>(v);
  };
  Value x = values.at(f["x"]);
  const auto k = f["k"].get<std::int64_t>(), n = f["n"].get<std::int64_t>();
  if (f.contains("x_add")) {  // an Add of a constant taken in: x + C, C repeated over x's leading dimensions
    const auto c = blob(f["x_add"]);
    for (size_t i = 0; i < x.bytes.size(); i += 4) {
      float v, a;
      std::memcpy(&v, x.bytes.data() + i, 4);
      std::memcpy(&a, c.data() + i % c.size(), 4);
      v += a;
      std::memcpy(x.bytes.data() + i, &v, 4);
    }
  }
  const std::string_view xs(reinterpret_cast<const char*>(x.bytes.data()), x.bytes.size());
  const std::int64_t m = static_cast<std::int64_t>(x.bytes.size()) / 4 / k;
  const auto w = blob(f["weight"]);
  const std::string_view bias = f["bias"].is_null() ? std::string_view() : blob(f["bias"]);
  Value y{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, x.shape, std::vector<std::uint8_t>(static_cast<size_t>(m * n) * 4)};
  y.shape.back() = n;
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t c = 0; c < n; ++c) {
      double sum = bias.empty() ? 0 : at(bias, c);
      for (std::int64_t i = 0; i < k; ++i) sum += at(xs, r * k + i) * at(w, i * n + c);
      const float v = static_cast<float>(sum);
      std::memcpy(y.bytes.data() + 4 * (r * n + c), &v, 4);
    }
  }
  return y;
}

}  // namespace

TEST(SplitMatMuls, TheSegmentsAndTheProductsBetweenThemGiveTheWholeGraphsOutputs) {
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "matmuls" / "float_matmuls.onnx");
  sam3::optimize::SplitStats stats;
  const std::string bundle =
      sam3::optimize::split_graph(model, {sam3::optimize::float_matmul_matcher(model, {.min_rows = 100, .min_weight = 1})}, &stats);
  // y_image's three products (the first with its bias; rows through Expand, whose first size
  // is unknown) and y_flat's (rows through Reshape's -1; its bias of rank 3 would broadcast the
  // output: left in the segment); y_pe's two, which take keys + pe in (x_add, one blob), and y_pe_kept's.
  ASSERT_EQ(stats.kernel_steps["matmul"], 7) << stats.refused;
  EXPECT_EQ(stats.segments, 3);
  const Bundle split = read_bundle(bundle);
  int with_bias = 0;
  std::set<std::string> added, added_blobs;
  for (const auto& step : split.header["steps"]) {
    if (!step.contains("matmul")) continue;
    EXPECT_EQ(step["matmul"]["rows"], 120) << step.dump();
    with_bias += step["matmul"]["bias"].is_null() ? 0 : 1;
    if (!step["matmul"].contains("x_add")) continue;
    added.insert(step["matmul"]["output"].get<std::string>());
    added_blobs.insert(step["matmul"]["x_add"].dump());
    EXPECT_EQ(step["matmul"]["x"], "keys");
    EXPECT_EQ(step["matmul"]["x_add_shape"], json({120, 16}));
  }
  EXPECT_EQ(with_bias, 1);
  EXPECT_EQ(added, (std::set<std::string>{"q_pe", "k_pe"})) << "pe_keys is read by y_relu too: its Add stays";
  EXPECT_EQ(added_blobs.size(), 1u) << "the two steps share pe's blob";
  for (const auto& step : split.header["steps"]) {
    if (!step.contains("segment")) continue;
    for (const auto& o : step["segment"]["outputs"]) EXPECT_NE(o, "keys_pe") << "the sum taken into the products stays inside";
  }
  Ort::Session whole = session_of(model);
  std::mt19937 rng(45);
  for (const std::int64_t objects : {1, 3}) {
    Values feeds;
    auto fill = [&](const std::string& name, std::vector<std::int64_t> shape) {
      Value v{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, shape, {}};
      std::int64_t count = 1;
      for (auto d : shape) count *= d;
      std::uniform_real_distribution<float> draw(-2, 2);
      for (std::int64_t i = 0; i < count; ++i) {
        const float x = draw(rng);
        v.bytes.insert(v.bytes.end(), reinterpret_cast<const std::uint8_t*>(&x), reinterpret_cast<const std::uint8_t*>(&x) + 4);
      }
      feeds[name] = std::move(v);
    };
    fill("image", {1, 16, 12, 10});
    fill("tokens", {1, 7, 16});
    fill("x", {5, 16});
    feeds["labels"] =
        Value{ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, {1, objects, 2}, std::vector<std::uint8_t>(static_cast<size_t>(objects) * 16)};
    Values values;
    ASSERT_NO_THROW(values = run_steps(split, feeds, [&](const json& step, const Values& v) {
                      if (!step.contains("matmul"))
                        throw std::runtime_error("a step that is neither a segment nor a product: " + step.dump());
                      return std::pair{step["matmul"]["output"].get<std::string>(), float_matmul(step["matmul"], split.blobs, v)};
                    }));
    expect_outputs_close(run(whole, feeds), values, "with " + std::to_string(objects) + " objects:");
  }
}

TEST(SplitMatMuls, AValueReadOnlyAfterTheProductsIsMadeInTheSegmentReadingIt) {
  // y_gated adds to y_image a gate made from the image alone. Placed in the first segment (after
  // the last kernel step it depends on: none), the gate left ONNX Runtime there and came back in
  // the last one: in the tab a new array on every run, whose fresh memory costs more than the
  // work (the decoder's upscaling, 10.6 MB a click). Made where it is read, only what the kernel
  // steps read and the graph's outputs leave a segment.
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "matmuls" / "float_matmuls.onnx");
  sam3::optimize::SplitStats stats;
  const Bundle split = read_bundle(
      sam3::optimize::split_graph(model, {sam3::optimize::float_matmul_matcher(model, {.min_rows = 100, .min_weight = 1})}, &stats));
  std::set<std::string> kernel_inputs, graph_outputs;
  for (const auto& o : split.header["outputs"]) graph_outputs.insert(o["name"]);
  for (const auto& step : split.header["steps"]) {
    if (step.contains("matmul")) kernel_inputs.insert(step["matmul"]["x"].get<std::string>());
  }
  int segment = 0;
  bool gate_made = false;
  for (const auto& step : split.header["steps"]) {
    if (!step.contains("segment")) continue;
    ++segment;
    for (const auto& o : step["segment"]["outputs"]) {
      const std::string name = o;
      EXPECT_TRUE(kernel_inputs.contains(name) || graph_outputs.contains(name))
          << "segment " << segment << " gives out '" << name << "', which no kernel step reads";
    }
    for (const auto& i : step["segment"]["inputs"]) EXPECT_NE(i, "gate") << "segment " << segment << " reads the gate from another";
    gate_made |= segment == stats.segments &&
                 std::find(step["segment"]["inputs"].begin(), step["segment"]["inputs"].end(), "image") != step["segment"]["inputs"].end();
  }
  EXPECT_TRUE(gate_made) << "the last segment reads the image (to make the gate)";
}

TEST(SplitMatMuls, ProductsOverFewerRowsThanAskedForStayInTheSegments) {
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "matmuls" / "float_matmuls.onnx");
  sam3::optimize::SplitStats stats;
  EXPECT_EQ(sam3::optimize::split_graph(model, {sam3::optimize::float_matmul_matcher(model, {.min_rows = 121, .min_weight = 1})}, &stats),
            "");
  EXPECT_EQ(stats.kernel_steps["matmul"], 0);
  EXPECT_EQ(sam3::optimize::split_graph(model, {sam3::optimize::float_matmul_matcher(model)}, &stats), "") << "default: 1024 rows";
  // A weight smaller than asked for: only y_image's [40, 24] products and larger pass 900.
  sam3::optimize::split_graph(model, {sam3::optimize::float_matmul_matcher(model, {.min_rows = 100, .min_weight = 900})}, &stats);
  EXPECT_EQ(stats.kernel_steps["matmul"], 2) << "w2 and w_res are 40 x 24 = 960; w1 640 and w3 528 are smaller";
}

TEST(SplitMatMuls, ProductsAfterChunkedAttentionAreSplitToo) {
  // The tab fuses attention and loops it over query chunks (a Loop) before it splits: the
  // output projection reads a value made after that Loop, whose element type the split must
  // know to make it a segment's output (it did not: nothing was split, "the element type of ...
  // is not known").
  const std::string model = sam3::test::read_file(sam3::test::test_models_dir() / "matmuls" / "attention_projected.onnx");
  sam3::optimize::AttentionChunkStats chunks;
  const std::string chunked = sam3::optimize::chunk_attention_queries(sam3::optimize::fuse_attention(model, nullptr), 32, &chunks);
  ASSERT_EQ(chunks.chunked, 1);
  sam3::optimize::SplitStats stats;
  const std::string bundle =
      sam3::optimize::split_graph(chunked, {sam3::optimize::float_matmul_matcher(chunked, {.min_rows = 100, .min_weight = 1})}, &stats);
  ASSERT_EQ(stats.kernel_steps["matmul"], 4) << "q, k, v and the output projection: " << stats.refused;
  const Bundle split = read_bundle(bundle);
  Ort::Session whole = session_of(model);
  std::mt19937 rng(45);
  Values feeds = random_feeds(split.header, rng, -2, 2);
  Values values;
  ASSERT_NO_THROW(values = run_steps(split, feeds, [&](const json& step, const Values& v) {
                    return std::pair{step["matmul"]["output"].get<std::string>(), float_matmul(step["matmul"], split.blobs, v)};
                  }));
  expect_outputs_close(run(whole, feeds), values, "after chunked attention:");
}
