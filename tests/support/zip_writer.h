// Zip archives written byte by byte, so that a test can make one lie: an entry whose header
// declares another size than its data inflates to (a zip bomb's trick). Deflated entries; a
// declared size of 4 GiB or more is written as zip64.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sam3::test {

struct ZipEntry {
  std::string name;
  std::string data;            // what the entry inflates to
  std::int64_t declared = -1;  // the unpacked size its headers state; -1: the truth
};

inline std::string make_zip(const std::vector<ZipEntry>& entries) {
  const auto u16 = [](std::string& s, unsigned v) { s += char(v & 0xFF), s += char((v >> 8) & 0xFF); };
  const auto u32 = [&](std::string& s, std::uint32_t v) { u16(s, v & 0xFFFF), u16(s, v >> 16); };
  std::string out, central;
  for (const auto& e : entries) {
    z_stream z{};
    if (deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
    std::string packed(deflateBound(&z, e.data.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(e.data.data()));
    z.avail_in = static_cast<uInt>(e.data.size());
    z.next_out = reinterpret_cast<Bytef*>(packed.data());
    z.avail_out = static_cast<uInt>(packed.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
    packed.resize(z.total_out);
    deflateEnd(&z);
    const auto crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    const auto size = static_cast<std::uint64_t>(e.declared >= 0 ? e.declared : static_cast<std::int64_t>(e.data.size()));
    const bool zip64 = size >= 0xFFFFFFFFu;
    std::string extra;  // zip64: the sizes, unpacked first
    if (zip64) {
      u16(extra, 1), u16(extra, 16), u32(extra, size & 0xFFFFFFFFu), u32(extra, size >> 32);
      u32(extra, static_cast<std::uint32_t>(packed.size())), u32(extra, 0);
    }
    std::string fields;  // version, flags, method, time, date, crc, sizes, name length, extra length
    u16(fields, zip64 ? 45 : 20), u16(fields, 0), u16(fields, 8), u16(fields, 0), u16(fields, 0x21), u32(fields, crc);
    u32(fields, zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(packed.size()));
    u32(fields, zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(size));
    u16(fields, e.name.size()), u16(fields, extra.size());
    const auto offset = static_cast<std::uint32_t>(out.size());
    u32(out, 0x04034b50);
    out += fields + e.name + extra + packed;
    u32(central, 0x02014b50), u16(central, zip64 ? 45 : 20);
    central += fields;
    u16(central, 0), u16(central, 0), u16(central, 0), u32(central, 0), u32(central, offset);  // comment, disk, attributes
    central += e.name + extra;
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50), u16(out, 0), u16(out, 0), u16(out, entries.size()), u16(out, entries.size());
  u32(out, static_cast<std::uint32_t>(central.size())), u32(out, central_offset), u16(out, 0);
  return out;
}

}  // namespace sam3::test
