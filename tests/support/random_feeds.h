// Runs a session on float inputs, filling the ones not given yet with seeded normal values (kept
// in `inputs`, so a second session can be run on the same values and compared).
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace sam3::test {

inline std::map<std::string, std::vector<float>> run_on_random_inputs(const sam3::runtime::Session& session,
                                                                      std::map<std::string, std::vector<float>>& inputs, unsigned seed) {
  std::vector<Ort::Value> values;
  std::map<std::string, const OrtValue*> feeds;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  values.reserve(session.inputs().size());
  for (const auto& in : session.inputs()) {
    size_t n = 1;
    for (auto d : in.shape) n *= static_cast<size_t>(d);
    auto& data = inputs[in.name];
    if (data.empty()) {
      data.resize(n);
      for (auto& x : data) x = normal(rng);
    }
    values.push_back(sam3::runtime::view(data.data(), data.size(), in.shape));
    feeds[in.name] = values.back();
  }
  std::map<std::string, std::vector<float>> out;
  for (auto& [name, value] : session.run(feeds)) {
    const float* p = value.GetTensorData<float>();
    out[name].assign(p, p + value.GetTensorTypeAndShapeInfo().GetElementCount());
  }
  return out;
}

}  // namespace sam3::test
