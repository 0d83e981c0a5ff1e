// An exact evaluation of the int8 test graphs (tools/make_int8_models.py), the reference every
// int8 kernel and rewrite is compared with: DynamicQuantizeLinear as the ONNX specification
// defines it (float32 arithmetic, round half to even), MatMulInteger and ConvInteger summed in
// 64-bit integers, Cast and the float operators in float32. Independent of the CPU: ONNX
// Runtime's own u8 x s8 kernel saturates 16-bit pair sums on AVX2 (vpmaddubsw), so it cannot be
// the reference.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace sam3::test {

struct RefTensor {
  std::vector<std::int64_t> shape;
  std::vector<double> values;  // integers exactly; float32 values as doubles
};

// Evaluates the graph output by output. Throws std::runtime_error naming the node for an operator
// or a form the test graphs do not use.
std::map<std::string, RefTensor> evaluate_int8_graph(const std::string& model_bytes, const std::map<std::string, RefTensor>& inputs);

// Inputs of matmulinteger.onnx (x_a [2,37,64], x_b [5,19], x_c [3,4736]) drawn uniformly from
// [lo, hi], as the tests feed them to a session and to evaluate_int8_graph.
struct MatMulIntegerInputs {
  std::vector<float> a, b, c;
  MatMulIntegerInputs(std::mt19937& rng, float lo, float hi) : a(2 * 37 * 64), b(5 * 19), c(3 * 4736) {
    std::uniform_real_distribution<float> value(lo, hi);
    for (auto* v : {&a, &b, &c})
      for (float& x : *v) x = value(rng);
  }
  std::map<std::string, RefTensor> reference_inputs() const {
    return {
        {"x_a", {{2, 37, 64}, {a.begin(), a.end()}}}, {"x_b", {{5, 19}, {b.begin(), b.end()}}}, {"x_c", {{3, 4736}, {c.begin(), c.end()}}}};
  }
};

}  // namespace sam3::test
