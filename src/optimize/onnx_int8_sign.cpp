#include "optimize/onnx_int8_sign.h"

#include <cstdint>
#include <vector>

#include "optimize/onnx_fields.h"
#include "optimize/protobuf_wire.h"

namespace sam3::optimize {

std::string shifted_by_128(std::string_view tensor, bool to_signed) {
  // Flipping the top bit is the shift in both directions: u8 v - 128 read as s8, s8 v + 128 read as u8.
  std::string out;
  for (const auto& f : wire::parse(tensor)) {
    if (f.number == onnx::kTensorDataType && f.wire == 0) {
      wire::write_varint_field(out, onnx::kTensorDataType, to_signed ? onnx::kInt8 : onnx::kUint8);
    } else if (f.number == onnx::kTensorRawData && f.wire == 2) {
      std::string data(f.bytes);
      for (char& c : data) c = static_cast<char>(static_cast<std::uint8_t>(c) ^ 0x80);
      wire::write_len(out, onnx::kTensorRawData, data);
    } else if (f.number == onnx::kTensorInt32Data) {
      std::vector<std::uint64_t> values;
      if (f.wire == 2) {
        for (size_t p = 0; p < f.bytes.size();) values.push_back(wire::read_varint(f.bytes, p));
      } else {
        values.push_back(f.varint);
      }
      std::string packed;
      for (auto v : values) {
        const auto flipped = static_cast<std::uint8_t>((v & 0xFF) ^ 0x80);
        // int32_data holds each value as an int32: a negative int8 is a sign-extended varint.
        const std::int64_t value = to_signed ? static_cast<std::int8_t>(flipped) : flipped;
        wire::write_varint(packed, static_cast<std::uint64_t>(value));
      }
      wire::write_len(out, onnx::kTensorInt32Data, packed);
    } else {
      out.append(f.whole);
    }
  }
  return out;
}

}  // namespace sam3::optimize
