#include "optimize/protobuf_wire.h"

#include "sam3/error.h"

namespace sam3::optimize::wire {

void malformed() { throw Error(ErrorCode::kModelMismatch, "the ONNX file is not a valid protobuf ModelProto; download it again"); }

std::uint64_t read_varint(std::string_view s, size_t& p) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= s.size()) malformed();
    const auto b = static_cast<std::uint8_t>(s[p++]);
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
  malformed();
}

std::vector<Field> parse(std::string_view s) {
  std::vector<Field> fields;
  size_t p = 0;
  while (p < s.size()) {
    const size_t start = p;
    Field f;
    const std::uint64_t key = read_varint(s, p);
    f.number = static_cast<int>(key >> 3);
    f.wire = static_cast<int>(key & 7);
    switch (f.wire) {
      case 0:
        f.varint = read_varint(s, p);
        break;
      case 1:
        if (p + 8 > s.size()) malformed();
        f.bytes = s.substr(p, 8);
        p += 8;
        break;
      case 5:
        if (p + 4 > s.size()) malformed();
        f.bytes = s.substr(p, 4);
        p += 4;
        break;
      case 2: {
        const std::uint64_t n = read_varint(s, p);
        if (n > s.size() - p) malformed();
        f.bytes = s.substr(p, n);
        p += n;
        break;
      }
      default:
        malformed();
    }
    f.whole = s.substr(start, p - start);
    fields.push_back(f);
  }
  return fields;
}

const Field& message_field(const std::vector<Field>& fields, int number) {
  const Field* found = nullptr;
  for (const auto& f : fields) {
    if (f.number == number && f.wire == 2) found = &f;
  }
  if (!found) malformed();
  return *found;
}

std::string with_payload(const std::vector<Field>& fields, const Field& replaced, std::string_view payload) {
  std::string out;
  size_t size = payload.size() + 16;
  for (const auto& f : fields) size += &f == &replaced ? 0 : f.whole.size();
  out.reserve(size);  // a model's bytes, once: no doubling growth (the browser's heap is 4 GB)
  for (const auto& f : fields) {
    if (&f == &replaced)
      write_len(out, f.number, payload);
    else
      out.append(f.whole);
  }
  return out;
}

void write_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void write_varint_field(std::string& out, int number, std::uint64_t v) {
  write_varint(out, static_cast<std::uint64_t>(number) << 3);
  write_varint(out, v);
}

void write_fixed32_field(std::string& out, int number, std::uint32_t v) {
  write_varint(out, (static_cast<std::uint64_t>(number) << 3) | 5);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void write_len(std::string& out, int number, std::string_view payload) {
  write_varint(out, (static_cast<std::uint64_t>(number) << 3) | 2);
  write_varint(out, payload.size());
  out.append(payload);
}

}  // namespace sam3::optimize::wire
