// JSON answers whose large arrays are written straight as text. A tree of nlohmann values costs
// 16 bytes and more for every element (CVAT's mask crops: one value per mask pixel, about 26
// bytes of memory each), so such arrays are left out of the tree: it holds a placeholder string
// for each, and dump() writes the array in its place, giving the bytes dumping the whole tree
// would have given. The placeholders carry a random tag, so no string a client sent can pass
// for one.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sam3::server {

class SplicedJson {
 public:
  using Writer = std::function<void(std::string& out)>;  // appends one JSON value's text

  SplicedJson();
  // The value to put in the tree where `write`'s text goes. `write` runs once, in dump(); what
  // it reads must live until then.
  nlohmann::ordered_json value(Writer write);
  // The tree's text with every placeholder replaced by its value's text.
  std::string dump(const nlohmann::ordered_json& tree) const;

 private:
  std::string tag_;  // "\u0001" + random hex + ":" as dump() writes it
  std::vector<Writer> writers_;
};

// Appends a list of integers as dump() writes it ("[0,1,1]"), from any range of integers.
template <typename Range>
void append_integers(std::string& out, const Range& values) {
  out += '[';
  bool first = true;
  for (const auto v : values) {
    if (!first) out += ',';
    first = false;
    out += std::to_string(v);
  }
  out += ']';
}

}  // namespace sam3::server
