// The thin adapter between the pure core's tensors (pure/tensor.h) and ONNX Runtime: the
// core's inputs as non-owning Ort::Values, a session's outputs as the core's views.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pure/tensor.h"
#include "runtime/session.h"

namespace sam3::detail {

// Feeds for one run: the core's tensors (which must outlive the run) and borrowed values.
class Feeds {
 public:
  void add(pure::Tensor& tensor);
  void add(std::vector<pure::Tensor>& tensors) {
    for (auto& t : tensors) add(t);
  }
  void add(const std::string& name, const Ort::Value& value) { feeds_[name] = value; }
  const std::map<std::string, const OrtValue*>& map() const { return feeds_; }

 private:
  std::vector<Ort::Value> views_;
  std::map<std::string, const OrtValue*> feeds_;
};

// A copy of the core's tensor that ONNX Runtime owns (kept beyond one run).
Ort::Value owned_value(const pure::Tensor& tensor);
pure::TensorView view_of(const Ort::Value& value);
pure::TensorViews views_of(const std::map<std::string, Ort::Value>& values);

}  // namespace sam3::detail
