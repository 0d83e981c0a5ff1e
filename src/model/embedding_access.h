// The library's side of ImageEmbedding: making one from encoder outputs and reading its tensors.
// Users only hold and copy embeddings (sam3/model.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "sam3/image.h"
#include "sam3/model.h"

namespace sam3::detail {

struct EmbeddingAccess {
  static ImageEmbedding make(std::shared_ptr<const EmbeddingData> data, int width, int height, double preprocess_ms, double encode_ms,
                             std::size_t bytes) {
    ImageEmbedding e;
    e.data_ = std::move(data);
    e.width_ = width;
    e.height_ = height;
    e.preprocess_ms_ = preprocess_ms;
    e.encode_ms_ = encode_ms;
    e.bytes_ = bytes;
    return e;
  }
  static const EmbeddingData* data(const ImageEmbedding& e) { return e.data_.get(); }
};

// The hash of an image's pixels an embedding keeps (EmbeddingData::pixels_hash; never 0). Every
// encode pays it: four lanes of 8 bytes, a 12 MP photo in about 20 ms (FNV-1a a byte at a time
// took 110 ms); a check that the same image comes back, not a defence against a forged one.
inline std::uint64_t pixels_hash(const Image& image) {
  constexpr std::uint64_t kPrime = 1099511628211ull;  // FNV-1a's
  std::uint64_t lanes[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull};
  const std::uint8_t* p = image.rgb.data();
  const std::size_t n = image.rgb.size();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      std::uint64_t word;
      std::memcpy(&word, p + i + 8 * k, 8);
      lanes[k] = (lanes[k] ^ word) * kPrime;
      lanes[k] ^= lanes[k] >> 29;
    }
  }
  std::uint64_t h = n;
  for (; i < n; ++i) h = (h ^ p[i]) * kPrime;
  for (const std::uint64_t lane : lanes) {
    h = (h ^ lane) * kPrime;
    h ^= h >> 29;
  }
  return h ? h : 1;
}

// The embedding's tensors for a model of `layout`. Throws kInvalidArgument when the embedding
// is empty or was made by a model of another layout (its tensors would not fit the decoder).
const EmbeddingData& checked_embedding(const ImageEmbedding& embedding, Layout layout);

}  // namespace sam3::detail
