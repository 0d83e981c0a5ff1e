// Moving an 8-bit TensorProto between uint8 and int8 by 128 (u8 v <-> s8 v - 128): the int8 and
// uint8 weight rewrites both do it, in opposite directions.
#pragma once

#include <string>
#include <string_view>

namespace sam3::optimize {

// The same TensorProto retyped as int8 (`to_signed`) or uint8, each value shifted by 128; raw
// data and int32_data (packed or not) alike, other fields as they were.
std::string shifted_by_128(std::string_view tensor, bool to_signed);

}  // namespace sam3::optimize
