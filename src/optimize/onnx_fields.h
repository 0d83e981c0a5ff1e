// Field numbers and element types from onnx.proto, for the protobuf-level graph rewrites.
#pragma once

namespace sam3::optimize::onnx {

constexpr int kModelGraph = 7, kModelOpsetImport = 8;
constexpr int kOpsetDomain = 1, kOpsetVersion = 2;
constexpr int kGraphNode = 1, kGraphInitializer = 5, kGraphInput = 11, kGraphOutput = 12;
constexpr int kValueInfoName = 1;
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4, kNodeAttribute = 5, kNodeDomain = 7;
constexpr int kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrT = 5, kAttrInts = 8, kAttrType = 20;
constexpr int kAttrTypeFloat = 1, kAttrTypeInt = 2, kAttrTypeInts = 7;
constexpr int kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorInt32Data = 5, kTensorInt64Data = 7, kTensorName = 8,
              kTensorRawData = 9, kTensorDataLocation = 14;
constexpr int kFloat = 1, kUint8 = 2, kInt8 = 3, kInt64 = 7;

}  // namespace sam3::optimize::onnx
