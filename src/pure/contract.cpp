#include "pure/contract.h"

#include <algorithm>

#include "sam3/error.h"

namespace sam3::pure {
namespace {

std::string list_names(const std::vector<TensorSpec>& tensors) {
  std::string s;
  for (const auto& t : tensors) s += (s.empty() ? "" : ", ") + t.name;
  return s.empty() ? "none" : s;
}

std::string describe(const Expected& e) {
  std::string s;
  for (auto t : e.types) s += (s.empty() ? "" : " or ") + onnx_type_name(t);
  if (!e.ranks.empty()) {
    s += " of rank ";
    for (size_t i = 0; i < e.ranks.size(); ++i) s += (i ? " or " : "") + std::to_string(e.ranks[i]);
  }
  return s;
}

void require(const PartSpec& s, const std::vector<Expected>& expected, bool inputs) {
  const auto& have = inputs ? s.inputs : s.outputs;
  const char* kind = inputs ? "input" : "output";
  for (const auto& e : expected) {
    const TensorSpec* t = inputs ? s.input(e.name) : s.output(e.name);
    if (!t) {
      throw Error(ErrorCode::kModelMismatch, s.file + ": expected " + kind + " '" + e.name + "' (" + describe(e) + "), found " + kind +
                                                 "s: " + list_names(have) + "; this file is not from the layout its name suggests");
    }
    const bool type_ok = std::find(e.types.begin(), e.types.end(), t->type) != e.types.end();
    const bool rank_ok = e.ranks.empty() || std::find(e.ranks.begin(), e.ranks.end(), static_cast<int>(t->shape.size())) != e.ranks.end();
    if (!type_ok || !rank_ok) {
      throw Error(ErrorCode::kModelMismatch, s.file + ": " + kind + " '" + e.name + "' should be " + describe(e) + ", found " +
                                                 onnx_type_name(t->type) + " " + shape_string(t->shape));
    }
  }
}

}  // namespace

std::string onnx_type_name(int type) {
  switch (type) {
    case 1:
      return "float32";
    case 2:
      return "uint8";
    case 3:
      return "int8";
    case 6:
      return "int32";
    case 7:
      return "int64";
    case 9:
      return "bool";
    case 10:
      return "float16";
    default:
      return "type#" + std::to_string(type);
  }
}

void require_inputs(const PartSpec& s, const std::vector<Expected>& expected) { require(s, expected, true); }
void require_outputs(const PartSpec& s, const std::vector<Expected>& expected) { require(s, expected, false); }

int square_side(const std::vector<std::int64_t>& shape, int fallback) {
  if (shape.empty() || shape.back() <= 0) return fallback;
  return static_cast<int>(shape.back());
}

}  // namespace sam3::pure
