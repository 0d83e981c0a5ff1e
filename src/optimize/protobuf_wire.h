// The protobuf wire format, just enough to edit ONNX files without the ONNX library: split a
// message into its fields (keeping each field's original bytes for unchanged copying) and
// write new fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sam3::optimize::wire {

struct Field {
  int number = 0;
  int wire = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  std::uint64_t varint = 0;
  std::string_view bytes;  // payload for LEN; the raw encoding for fixed types
  std::string_view whole;  // the full encoded field (key included), for copying unchanged
};

// Throws sam3::Error(kModelMismatch) on bytes that are not a protobuf message.
[[noreturn]] void malformed();
std::uint64_t read_varint(std::string_view s, size_t& p);
std::vector<Field> parse(std::string_view message);

// The length-delimited field `number` of a message (the last one if repeated); malformed() when
// there is none.
const Field& message_field(const std::vector<Field>& fields, int number);
// The message again with `replaced` (one of `fields`) carrying `payload`; other fields unchanged.
std::string with_payload(const std::vector<Field>& fields, const Field& replaced, std::string_view payload);

void write_varint(std::string& out, std::uint64_t v);
void write_varint_field(std::string& out, int number, std::uint64_t v);
void write_fixed32_field(std::string& out, int number, std::uint32_t v);
void write_len(std::string& out, int number, std::string_view payload);

}  // namespace sam3::optimize::wire
