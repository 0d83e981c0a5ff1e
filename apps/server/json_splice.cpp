#include "json_splice.h"

#include <random>
#include <stdexcept>

namespace sam3::server {
namespace {

constexpr const char* kMark = "\x01";  // a control character: dump() escapes it as \u0001
constexpr const char* kMarkDumped = "\\u0001";

std::string random_hex(int bytes) {
  thread_local std::random_device device;
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes; i += 4) {
    const std::uint32_t r = device();
    for (int k = 0; k < 8; ++k) out += digits[(r >> (4 * k)) & 15];
  }
  return out;
}

}  // namespace

SplicedJson::SplicedJson() : tag_(random_hex(16) + ":") {}

nlohmann::ordered_json SplicedJson::value(Writer write) {
  writers_.push_back(std::move(write));
  return std::string(kMark) + tag_ + std::to_string(writers_.size() - 1);
}

std::string SplicedJson::dump(const nlohmann::ordered_json& tree) const {
  const std::string text = tree.dump();
  const std::string open = std::string("\"") + kMarkDumped + tag_;
  std::string out;
  std::vector<bool> used(writers_.size(), false);
  size_t at = 0;
  for (size_t found; (found = text.find(open, at)) != std::string::npos;) {
    const size_t digits = found + open.size(), close = text.find('"', digits);
    const size_t index = std::stoul(text.substr(digits, close - digits));
    if (index >= writers_.size() || used[index]) throw std::logic_error("a spliced JSON value is placed twice");
    used[index] = true;
    out.append(text, at, found - at);
    writers_[index](out);
    at = close + 1;
  }
  out.append(text, at, std::string::npos);
  return out;
}

}  // namespace sam3::server
