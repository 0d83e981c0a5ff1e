// Tensors joined into groups that change together or not at all (a weight and every zero point
// it shares with other weights): a union-find over names, linear in the graph however they chain.
// For the weight rewrites (onnx_int8.h, onnx_uint8.h).
#pragma once

#include <map>
#include <string>
#include <utility>

namespace sam3::optimize {

class ChangeGroups {
 public:
  // A member; its group changes only if every member can.
  void add(const std::string& name, bool can_change) {
    auto [it, fresh] = can_.try_emplace(name, can_change);
    if (!fresh) it->second = it->second && can_change;
    parent_.try_emplace(name, name);
  }
  void join(const std::string& a, const std::string& b) { parent_[root(a)] = root(b); }
  // Whether `name`'s group changes; only after every add and join.
  bool changes(const std::string& name) {
    if (group_can_.empty()) {
      for (const auto& [member, can] : can_) {
        auto [it, fresh] = group_can_.try_emplace(root(member), can);
        if (!fresh) it->second = it->second && can;
      }
    }
    auto it = group_can_.find(root(name));
    return it != group_can_.end() && it->second;
  }

 private:
  std::string root(std::string name) {
    std::string r = name;
    while (parent_.contains(r) && parent_[r] != r) r = parent_[r];
    while (parent_.contains(name) && parent_[name] != r) name = std::exchange(parent_[name], r);
    return r;
  }
  std::map<std::string, std::string> parent_;
  std::map<std::string, bool> can_, group_can_;
};

}  // namespace sam3::optimize
