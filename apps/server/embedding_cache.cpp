#include "embedding_cache.h"

#include "sam3/error.h"

namespace sam3::server {

std::shared_ptr<const CachedImage> EmbeddingCache::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  ++hits_;
  return *it->second;
}

std::shared_ptr<const CachedImage> EmbeddingCache::get_or_encode(const std::string& id, const std::function<ImageEmbedding()>& encode,
                                                                 bool* was_cached, std::shared_ptr<const Image> keep_image) {
  std::promise<std::shared_ptr<const CachedImage>> promise;
  {
    std::unique_lock lock(mutex_);
    if (auto it = index_.find(id); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      ++hits_;
      if (was_cached) *was_cached = true;
      return *it->second;
    }
    if (auto p = pending_.find(id); p != pending_.end()) {
      auto future = p->second;
      ++hits_;
      lock.unlock();
      if (was_cached) *was_cached = true;
      try {
        return future.get();  // rethrows the encoder's error, if any
      } catch (const Error& e) {
        // That encode was stopped because its own request was given up, not this one: encode
        // it for this caller (the pending entry is gone by now).
        if (e.code() != ErrorCode::kCancelled) throw;
        return get_or_encode(id, encode, was_cached, std::move(keep_image));
      }
    }
    ++misses_;
    pending_.emplace(id, promise.get_future().share());
  }
  if (was_cached) *was_cached = false;
  try {
    auto entry = std::make_shared<const CachedImage>(CachedImage{encode(), id, std::move(keep_image)});
    std::lock_guard lock(mutex_);
    insert_locked(entry);
    pending_.erase(id);
    promise.set_value(entry);
    return entry;
  } catch (...) {
    std::lock_guard lock(mutex_);
    pending_.erase(id);
    promise.set_exception(std::current_exception());
    throw;
  }
}

void EmbeddingCache::insert_locked(std::shared_ptr<const CachedImage> entry) {
  bytes_ += entry->bytes();
  const std::string id = entry->id;
  index_[id] = order_.insert(order_.begin(), std::move(entry));
  // Keep at least the newest entry even if it alone exceeds the budget.
  while (bytes_ > capacity_ && order_.size() > 1) {
    const auto& victim = order_.back();
    bytes_ -= victim->bytes();
    index_.erase(victim->id);
    order_.pop_back();
    ++evictions_;
  }
}

CacheStats EmbeddingCache::stats() {
  std::lock_guard lock(mutex_);
  return {order_.size(), bytes_, capacity_, hits_, misses_, evictions_};
}

}  // namespace sam3::server
