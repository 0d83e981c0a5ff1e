// What a loaded Model keeps changing after load, shared by the facades made from it
// (sam3/image_segmenter.h, sam3/interactive_segmenter.h): the text features cache and the
// counters behind Model::stats(). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "model/backend.h"
#include "sam3/error.h"

namespace sam3::detail {

// Bounded LRU of text features by prompt text.
class TextCache {
 public:
  explicit TextCache(size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<const TextFeatures> get(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  void put(const std::string& key, std::shared_ptr<const TextFeatures> value) {
    if (capacity_ == 0) return;
    std::lock_guard lock(mutex_);
    if (index_.contains(key)) return;
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const TextFeatures>>;
  size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

struct ModelState {
  explicit ModelState(size_t cache_entries) : text_cache(cache_entries) {}

  TextCache text_cache;
  std::atomic<std::int64_t> image_encodes{0}, text_encodes{0}, decodes{0}, cache_hits{0}, stopped{0};

  // Runs `call`, counting it in `stopped` when its StopToken ended it.
  template <typename F>
  auto counting_stops(F&& call) {
    try {
      return call();
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kCancelled) ++stopped;
      throw;
    }
  }
};

}  // namespace sam3::detail
