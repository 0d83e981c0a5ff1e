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

}  // namespace

std::string TrackerSessions::add(std::shared_ptr<TrackerSession> session) {
  std::lock_guard lock(mutex_);
  std::string id;
  do id = random_id();
  while (by_id_.count(id));
  order_.push_front(id);
  by_id_[id] = {std::move(session), order_.begin()};
  while (by_id_.size() > capacity_) {
    by_id_.erase(order_.back());
    order_.pop_back();
  }
  return id;
}

std::shared_ptr<TrackerSession> TrackerSessions::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second.second);  // iterators stay valid
  return it->second.first;
}

void TrackerSessions::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  order_.erase(it->second.second);
  by_id_.erase(it);
}

std::size_t TrackerSessions::size() const {
  std::lock_guard lock(mutex_);
  return by_id_.size();
}

}  // namespace sam3::server
