// The library's side of ImageEmbedding: making one from encoder outputs and reading its tensors.
// Users only hold and copy embeddings (sam3/model.h).
#pragma once

#include <cstdint>
#include <memory>

#include "core/hash.h"
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

// The hash of an image's pixels an embedding keeps (EmbeddingData::pixels_hash; never 0).
inline std::uint64_t pixels_hash(const Image& image) {
  const std::uint64_t h = core::fnv1a64({reinterpret_cast<const char*>(image.rgb.data()), image.rgb.size()});
  return h ? h : 1;
}

// The embedding's tensors for a model of `layout`. Throws kInvalidArgument when the embedding
// is empty or was made by a model of another layout (its tensors would not fit the decoder).
const EmbeddingData& checked_embedding(const ImageEmbedding& embedding, Layout layout);

}  // namespace sam3::detail
