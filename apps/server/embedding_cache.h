// Encoded images by content hash, least recently used evicted first, bounded by the memory
// their feature tensors hold. Concurrent requests for the same new image share one encode.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "sam3/model.h"

namespace sam3::server {

struct CachedImage {
  ImageEmbedding embedding;
  std::string id;  // the cache key
  // The decoded pixels, kept when a second model (the interactive one) may need the image
  // later; counted in the cache's budget.
  std::shared_ptr<const Image> image;
  std::size_t bytes() const { return embedding.memory_bytes() + (image ? image->rgb.size() : 0); }
};

struct CacheStats {
  std::size_t entries = 0, bytes = 0, capacity_bytes = 0;
  std::int64_t hits = 0, misses = 0, evictions = 0;
};

class EmbeddingCache {
 public:
  explicit EmbeddingCache(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}

  std::shared_ptr<const CachedImage> find(const std::string& id);
  // Returns the cached entry, or runs `encode` once (other callers for the same id wait for
  // it) and stores the result. *was_cached tells which happened.
  std::shared_ptr<const CachedImage> get_or_encode(const std::string& id, const std::function<ImageEmbedding()>& encode, bool* was_cached,
                                                   std::shared_ptr<const Image> keep_image = nullptr);
  CacheStats stats();

 private:
  void insert_locked(std::shared_ptr<const CachedImage> entry);

  std::size_t capacity_;
  std::mutex mutex_;
  std::list<std::shared_ptr<const CachedImage>> order_;  // front = most recent
  std::unordered_map<std::string, decltype(order_)::iterator> index_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const CachedImage>>> pending_;
  std::size_t bytes_ = 0;
  std::int64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace sam3::server
