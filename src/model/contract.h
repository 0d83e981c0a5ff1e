// Checks a session against the tensors a layout needs, with errors that say what was
// expected and what the file has.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace sam3::detail {

struct Expected {
  std::string name;
  std::vector<ONNXTensorElementDataType> types;  // any of these
  std::vector<int> ranks;                        // any of these; empty = any rank
};

// Throws kModelMismatch naming the file, the tensor, what was expected and what was found.
void require_inputs(const rt::Session& s, const std::vector<Expected>& expected);
void require_outputs(const rt::Session& s, const std::vector<Expected>& expected);

// Integer inputs come as int32 or int64 depending on the export.
inline const std::vector<ONNXTensorElementDataType> kIntTypes = {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
                                                                 ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32};
inline const std::vector<ONNXTensorElementDataType> kFloat = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT};
// usls's fp16 and q4f16 release files take and give float16 (converted at the edges).
inline const std::vector<ONNXTensorElementDataType> kFloatOrHalf = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16};
inline const std::vector<ONNXTensorElementDataType> kBool = {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL};
inline const std::vector<ONNXTensorElementDataType> kUint8 = {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8};

// Square spatial side from a shape's last dimension, or `fallback` when dynamic.
int square_side(const std::vector<std::int64_t>& shape, int fallback);

}  // namespace sam3::detail
