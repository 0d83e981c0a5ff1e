#include "label/shard_set.h"

#include <map>

#include "sam3/error.h"

namespace sam3::label {

void check_shard_set(const std::vector<ShardNumber>& shards) {
  if (shards.empty()) throw Error(ErrorCode::kInvalidArgument, "no shard to merge");
  const ShardNumber& first = shards.front();
  const auto name = [](int k, int n) { return std::to_string(k) + "/" + std::to_string(n); };
  std::map<int, const ShardNumber*> seen;  // N comes from a file: nothing is sized by it
  for (const auto& s : shards) {
    if (s.n != first.n) {
      throw Error(ErrorCode::kInvalidArgument, s.where + " is shard " + name(s.k, s.n) + " and " + first.where + " shard " +
                                                   name(first.k, first.n) +
                                                   ": merge the shards of one 'sam3 label --shard "
                                                   "K/N' run, all with the same N");
    }
    if (s.k < 1 || s.k > s.n) {
      throw Error(ErrorCode::kInvalidArgument, s.where + " records shard " + name(s.k, s.n) +
                                                   ", which no run has; run that "
                                                   "shard again");
    }
    if (const auto [at, added] = seen.emplace(s.k, &s); !added) {
      throw Error(ErrorCode::kInvalidArgument,
                  "shard " + name(s.k, s.n) + " is given twice (" + at->second->where + " and " + s.where + ")");
    }
  }
  const std::int64_t missing = std::int64_t{first.n} - static_cast<std::int64_t>(seen.size());
  if (missing == 0) return;
  std::vector<std::string> named;  // the first few
  for (int k = 1; k <= first.n && named.size() < 8; ++k) {
    if (!seen.contains(k)) named.push_back(name(k, first.n));
  }
  std::string list;
  for (size_t i = 0; i < named.size(); ++i) {
    const bool last = i + 1 == named.size() && static_cast<std::int64_t>(named.size()) == missing;
    list += (i == 0 ? "" : last ? " and " : ", ") + named[i];
  }
  if (missing > static_cast<std::int64_t>(named.size())) {
    list += " and " + std::to_string(missing - static_cast<std::int64_t>(named.size())) + " more";
  }
  const bool one = missing == 1;
  throw Error(ErrorCode::kInvalidArgument, std::string(one ? "shard " : "shards ") + list + (one ? " is" : " are") + " missing; run " +
                                               (one ? "it" : "them") + ", then merge all " + std::to_string(first.n));
}

}  // namespace sam3::label
