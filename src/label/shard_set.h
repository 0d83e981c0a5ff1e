// The shards handed to a merge, image folders and maps alike: every K of one `--shard K/N`
// run, each once. A merge missing a shard would succeed with less, and merged over an earlier
// merge it would shrink it.
#pragma once

#include <string>
#include <vector>

namespace sam3::label {

struct ShardNumber {
  int k = 1, n = 1;   // --shard K/N, 1-based
  std::string where;  // the folder it came from, for messages
};

// Throws kInvalidArgument naming the folders when the shards are of two N, a K is out of range
// or given twice, or naming every missing K ("shards 2/5 and 4/5 are missing").
void check_shard_set(const std::vector<ShardNumber>& shards);

}  // namespace sam3::label
