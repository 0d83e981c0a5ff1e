// Checks a file's inputs and outputs against the tensors a generation needs, with errors that
// say what was expected and what the file has. Pure: the specs come from any runtime.
#pragma once

#include <string>
#include <vector>

#include "pure/tensor.h"

namespace sam3::pure {

struct Expected {
  std::string name;
  std::vector<int> types;  // ONNX element types, any of these
  std::vector<int> ranks;  // any of these; empty = any rank
};

// Throws kModelMismatch naming the file, the tensor, what was expected and what was found.
void require_inputs(const PartSpec& part, const std::vector<Expected>& expected);
void require_outputs(const PartSpec& part, const std::vector<Expected>& expected);

// ONNX Runtime's names ("float32", "int8", ...; "type#N" for others).
std::string onnx_type_name(int type);

// Integer inputs come as int32 or int64 depending on the export.
inline const std::vector<int> kIntTypes = {7, 6};
inline const std::vector<int> kFloat = {1};
// usls's fp16 and q4f16 release files take and give float16.
inline const std::vector<int> kFloatOrHalf = {1, 10};
inline const std::vector<int> kBool = {9};
inline const std::vector<int> kUint8 = {2};

// Square spatial side from a shape's last dimension, or `fallback` when dynamic.
int square_side(const std::vector<std::int64_t>& shape, int fallback);

}  // namespace sam3::pure
