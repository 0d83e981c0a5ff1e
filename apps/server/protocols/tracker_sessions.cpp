#include "tracker_sessions.h"

#include <random>

namespace sam3::server {
namespace {

std::string random_id() {
  static std::mutex mutex;
  static std::random_device device;
  std::lock_guard lock(mutex);
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (int word = 0; word < 4; ++word) {
    std::uint32_t bits = device();
    for (int k = 0; k < 8; ++k, bits >>= 4) id += hex[bits & 15];
  }
  return id;
}

template <typename Map>
auto value_or_zero(const Map& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? typename Map::mapped_type{} : it->second;
}

}  // namespace

TrackerSessions::TrackerSessions(TrackerBudget budget, std::function<Clock::time_point()> now) : budget_(budget), now_(std::move(now)) {
  if (budget_.client_sessions < 1) budget_.client_sessions = 1;
}

bool TrackerSessions::plan(const std::string& client, std::uint64_t bytes, std::vector<std::string>& victims, Refusal& refusal) const {
  victims.clear();
  if (bytes > budget_.client_bytes || bytes > budget_.total_bytes) {
    refusal = Refusal::kOverClientShare;
    return false;
  }
  std::uint64_t total = bytes_, own = value_or_zero(client_bytes_, client) + bytes;
  std::size_t own_count = value_or_zero(client_count_, client) + 1;
  total += bytes;
  const auto now = now_();
  // Least recently used first: the client's own sessions while its share (bytes or count) is
  // exceeded or the budget is; another client's only while the budget is and once it is idle.
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    const bool own_over = own > budget_.client_bytes || own_count > budget_.client_sessions, total_over = total > budget_.total_bytes;
    if (!own_over && !total_over) break;
    const Entry& e = by_id_.at(*it);
    if (e.client == client) {
      own -= e.bytes, --own_count;
    } else if (!total_over || now - e.used < budget_.idle) {
      continue;
    }
    total -= e.bytes;
    victims.push_back(*it);
  }
  if (own > budget_.client_bytes || own_count > budget_.client_sessions) {
    refusal = Refusal::kOverClientShare;  // not reached: its own sessions can always go
    return false;
  }
  if (total > budget_.total_bytes) {
    refusal = Refusal::kServerFull;
    return false;
  }
  refusal = Refusal::kNone;
  return true;
}

TrackerSessions::Refusal TrackerSessions::check(const std::string& client, std::uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> victims;
  Refusal refusal = Refusal::kNone;
  plan(client, bytes, victims, refusal);
  return refusal;
}

TrackerSessions::Added TrackerSessions::add(std::shared_ptr<TrackerSession> session, const std::string& client, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> victims;
  Added added;
  if (!plan(client, bytes, victims, added.refusal)) return added;
  for (const auto& id : victims) drop(by_id_.find(id));
  do added.id = random_id();
  while (by_id_.count(added.id));
  order_.push_front(added.id);
  by_id_[added.id] = {std::move(session), client, bytes, now_(), order_.begin()};
  bytes_ += bytes;
  client_bytes_[client] += bytes;
  ++client_count_[client];
  return added;
}

std::shared_ptr<TrackerSession> TrackerSessions::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second.order);  // iterators stay valid
  it->second.used = now_();
  return it->second.session;
}

void TrackerSessions::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  if (it != by_id_.end()) drop(it);
}

void TrackerSessions::drop(std::map<std::string, Entry>::iterator it) {
  const Entry& e = it->second;
  bytes_ -= e.bytes;
  client_bytes_[e.client] -= e.bytes;
  if (--client_count_[e.client] == 0) client_bytes_.erase(e.client), client_count_.erase(e.client);
  order_.erase(e.order);
  by_id_.erase(it);
}

std::size_t TrackerSessions::size() const {
  std::lock_guard lock(mutex_);
  return by_id_.size();
}

std::uint64_t TrackerSessions::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::uint64_t TrackerSessions::client_bytes(const std::string& client) const {
  std::lock_guard lock(mutex_);
  return value_or_zero(client_bytes_, client);
}

}  // namespace sam3::server
